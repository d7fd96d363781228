//! How a cluster is run ([`Options`]), what it reports ([`Outcome`], checkpoints and
//! incarnations) and what can go wrong ([`RuntimeError`]).

use std::fmt::Debug;

use thiserror::Error;

use crate::check::{Trace, TraceError};
use crate::formats::jsonl::{write_logs, LogApp, WriteError};
use crate::protocol::{
    Algorithm, Application, AssemblyError, CoordinatorError, CoreError, GlobalSnapshot, GlobalState, Initiators,
    ProcessId, SnapshotId, Topology, TopologyError, Variant,
};

/// How to run a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Record a trace of every event (returned by [`Cluster::shutdown`](super::Cluster::shutdown)).
    pub trace: bool,
    /// Fault variant of the marker rules (channel faults are not available here); a
    /// coordinator fault applies to the checkpoint coordinator.
    pub variant: Variant,
    /// Who may initiate snapshots; with the barrier algorithms, where the coordinator's
    /// triggers go (every one of them gets each trigger).
    pub initiators: Initiators,
    /// The marker rules: Chandy–Lamport (snapshots initiated with [`Cluster::initiate`](super::Cluster::initiate)), or
    /// aligned or unaligned barriers (checkpoints triggered by the coordinator).
    pub algorithm: Algorithm,
    /// Barrier algorithms: the most checkpoints pending at once (at least 1).
    pub max_concurrent: usize,
    /// Barrier algorithms: failed checkpoints in a row the coordinator tolerates (Flink's
    /// default 0); one more fails the job over, as [`Cluster::crash_and_recover`](super::Cluster::crash_and_recover)
    /// does, at the cluster's next trigger or await.
    pub tolerable_failures: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            trace: false,
            variant: Variant::None,
            initiators: Initiators::Any,
            algorithm: Algorithm::ChandyLamport,
            max_concurrent: 1,
            tolerable_failures: 0,
        }
    }
}

/// Why a checkpoint was aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AbortReason {
    /// A process gave it up (declined it, was cancelled, or a newer checkpoint subsumed it
    /// there).
    Declined,
    /// A newer checkpoint completed first.
    Subsumed,
    /// It was pending when the processes crashed.
    Failover,
}

/// How a checkpoint ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointOutcome<A: Application> {
    /// Every process acknowledged it: the assembled checkpoint.
    Completed(GlobalSnapshot<A>),
    /// It was aborted.
    Aborted(AbortReason),
}

/// What went wrong in a cluster, or with a request to it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RuntimeError {
    /// The topology cannot run snapshots from the allowed initiators.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// Not one application per process.
    #[error("the topology has {expected} processes but {got} applications were given")]
    WrongAppCount {
        /// Processes.
        expected: usize,
        /// Applications given.
        got: usize,
    },
    /// A channel fault variant, which only the model and the simulator can inject.
    #[error("variant {0} is a channel fault: only the model and the simulator can inject it")]
    UnsupportedVariant(Variant),
    /// A fault variant of another algorithm than the cluster's.
    #[error("variant {variant} does not apply to {algorithm}")]
    VariantNotApplicable {
        /// The variant.
        variant: Variant,
        /// The cluster's algorithm.
        algorithm: Algorithm,
    },
    /// A reactive application ([`Service::REACTIVE`](super::Service::REACTIVE)) on a topology with a cycle.
    #[error("a reactive application needs a topology without cycles")]
    ReactiveOnCycle,
    /// Unaligned checkpoints with more than one pending at once: Flink does not support
    /// concurrent unaligned checkpoints (its documentation's limitations, FLINK-23037).
    #[error("unaligned checkpoints take max_concurrent 1 (Flink has no concurrent unaligned checkpoints), not {0}")]
    UnalignedConcurrent(usize),
    /// A process id outside the topology.
    #[error("unknown process {0}")]
    UnknownProcess(ProcessId),
    /// An initiation at a process that may not initiate.
    #[error("process {0} may not initiate snapshots")]
    NotAnInitiator(ProcessId),
    /// The same process asked twice to initiate one snapshot.
    #[error("snapshot {snapshot} was already initiated at {process}")]
    AlreadyInitiated {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
    },
    /// A wait for a snapshot that was never initiated.
    #[error("snapshot {0} was never initiated")]
    UnknownSnapshot(SnapshotId),
    /// A request of the barrier algorithms' coordinator in a Chandy–Lamport cluster.
    #[error("only the barrier algorithms have a checkpoint coordinator")]
    NotBarriers,
    /// A Chandy–Lamport initiation in a cluster whose checkpoints the coordinator triggers.
    #[error("{0} checkpoints are triggered by the coordinator (Cluster::trigger_checkpoint)")]
    Coordinated(Algorithm),
    /// The coordinator refused a request.
    #[error(transparent)]
    Coordinator(#[from] CoordinatorError),
    /// A checkpoint waited for with [`Cluster::wait`](super::Cluster::wait) was aborted.
    #[error("checkpoint {snapshot} was aborted ({reason:?})")]
    Aborted {
        /// The checkpoint.
        snapshot: SnapshotId,
        /// Why.
        reason: AbortReason,
    },
    /// A checkpoint completed at the coordinator without every part at the collector.
    #[error("checkpoint {0} completed, but parts of it are missing")]
    MissingParts(SnapshotId),
    /// A shutdown's final checkpoint was aborted every time it was tried.
    #[error("no final checkpoint completed in {tries} tries")]
    NoFinalCheckpoint {
        /// Checkpoints tried.
        tries: usize,
    },
    /// The application panicked inside a process thread.
    #[error("the application at {process} panicked: {message}")]
    Panicked {
        /// The process.
        process: String,
        /// The panic message.
        message: String,
    },
    /// The core refused a step (only a fault variant can cause this).
    #[error("the core at {process} refused a step: {error}")]
    Core {
        /// The process.
        process: String,
        /// The refusal.
        error: CoreError,
    },
    /// A local snapshot did not fit its global snapshot.
    #[error(transparent)]
    Assembly(#[from] AssemblyError),
    /// The per-process traces could not be merged.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The cluster stopped (after a failure, or at shutdown) before the request was served.
    #[error("the cluster has stopped")]
    Stopped,
}

/// A command a process refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The process.
    pub process: ProcessId,
    /// Why.
    pub reason: String,
}

/// One run of the processes: from the start, or from a recovery, to a crash or the shutdown.
#[derive(Clone, Debug)]
pub struct Incarnation<A: Application> {
    /// The checkpoint it was restored from (`None`: the initial states).
    pub restored_from: Option<SnapshotId>,
    /// The states it started in and, by channel, the messages put in front of each channel.
    pub start: GlobalState<A>,
    /// Its trace, when tracing was on and it started with every channel empty (a trace
    /// cannot hold messages that were in flight before it began).
    pub trace: Option<Trace<A>>,
    /// The checkpoints that completed during it, by id.
    pub completed: Vec<SnapshotId>,
    /// Whether it ended in a crash (otherwise in the shutdown).
    pub crashed: bool,
    /// Whether it began with a failover because more checkpoints failed in a row than
    /// [`Options::tolerable_failures`] allows (otherwise it is the first, or a requested
    /// [`Cluster::crash_and_recover`](super::Cluster::crash_and_recover) began it).
    pub failed_over: bool,
}

/// What a cluster leaves behind after [`Cluster::shutdown`](super::Cluster::shutdown).
#[derive(Clone, Debug)]
pub struct Outcome<A: Application> {
    /// Final application state of every process.
    pub states: Vec<A>,
    /// Every global snapshot assembled (barrier algorithms: every checkpoint completed), by id.
    pub snapshots: Vec<GlobalSnapshot<A>>,
    /// Snapshots initiated but never assembled: still open at shutdown (wait for a snapshot
    /// with [`Cluster::wait`](super::Cluster::wait) before shutting down to have it complete), or broken by a fault.
    /// Barrier algorithms: checkpoints triggered and neither completed nor aborted.
    pub incomplete: Vec<SnapshotId>,
    /// The run, when tracing was on: the last incarnation's trace (see
    /// [`Outcome::incarnations`]).
    pub trace: Option<Trace<A>>,
    /// Commands the applications refused.
    pub rejected: Vec<Rejected>,
    /// Barrier algorithms: the checkpoints triggered, in order.
    pub triggered: Vec<SnapshotId>,
    /// Barrier algorithms: the checkpoints aborted, by id, and why.
    pub aborted: Vec<(SnapshotId, AbortReason)>,
    /// Every incarnation, oldest first: one without crashes.
    pub incarnations: Vec<Incarnation<A>>,
}

impl<A: Application> Outcome<A> {
    /// Writes the run as JSON-lines logs, `DIR/<process>.jsonl`, and its topology as
    /// `DIR/topology.top` with `tokens[i]` at process `i` (see [`crate::formats::jsonl`]); the
    /// record lines carry the assembled snapshots' states and records. Needs a traced run.
    pub fn write_logs(
        &self,
        dir: &std::path::Path,
        topology: &Topology,
        tokens: &[u32],
    ) -> Result<Vec<std::path::PathBuf>, WriteError>
    where
        A: LogApp,
    {
        let trace = self.trace.as_ref().ok_or(WriteError::Untraced)?;
        write_logs(dir, topology, tokens, trace, &self.snapshots)
    }
}
