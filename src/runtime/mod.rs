//! The threaded runtime: one OS thread per process, one FIFO inbox per process (so every
//! channel is FIFO), a collector thread that assembles global snapshots, and the core's marker
//! rules inside each process thread.
//!
//! Threads and channels come from the crate's `sync` shim, so loom and shuttle can run this very code.
//! Threads block only in `recv` (an idle process first does the work a fault variant deferred),
//! and shutdown is explicit: each process sends a flush on every outgoing channel and keeps
//! handling messages until a flush has arrived on every incoming channel, so no application
//! message is lost. Nothing is recorded on a process's behalf at shutdown, and a process that
//! has flushed no longer records on a marker (it would have to send markers after its flush): a
//! snapshot still open at shutdown is reported as incomplete, never assembled from fabricated
//! parts.
//!
//! # Barrier algorithms
//!
//! With [`Options::algorithm`] set to [`Algorithm::Aligned`] or [`Algorithm::Unaligned`],
//! snapshots are checkpoints of a coordinator that runs in the collector thread
//! ([`Cluster::trigger_checkpoint`], [`Cluster::await_checkpoint`]); each process thread
//! honours its mode (see the `process` module: blocked inputs stay queued, unaligned barriers
//! overtake queued data and output buffers). [`Cluster::crash_and_recover`] ends every
//! process's incarnation and restarts it from the latest completed checkpoint, its channel
//! state in front of each channel. A shutdown first takes a final checkpoint, so that no
//! barrier or cancellation is in flight when the processes flush.

mod collector;
mod process;
mod stream;

pub use stream::StreamCommand;

use std::collections::HashMap;
use std::fmt::Debug;

use thiserror::Error;

use crate::algorithm::Algorithm;
use crate::coordinator::{Coordinator, CoordinatorError};
use crate::core::{Application, CoreError, SnapshotId};
use crate::formats::jsonl::{write_logs, LogApp, WriteError};
use crate::snapshot::{AssemblyError, GlobalSnapshot, GlobalState};
use crate::sync::{mpsc, thread};
use crate::topology::{ChannelId, Initiators, ProcessId, Topology, TopologyError};
use crate::trace::{Event, Trace, TraceError};
use crate::variant::Variant;

use collector::{Checkpointing, Collector, ToCollector};
use process::{Halted, Input, ProcessExit, ProcessThread, Restart};

/// An application the runtime can drive with commands from outside.
pub trait Service: Application<Msg: Send + 'static, Step: Send + 'static> + Send + 'static {
    /// A request from outside (e.g. "transfer 3 jars to P2").
    type Command: Send + 'static;
    /// Why a command was refused.
    type Rejection: std::error::Error + Send + 'static;

    /// Whether the application takes steps of its own ([`Service::react`]). A reactive
    /// application runs only on a topology without cycles: at shutdown a process flushes only
    /// once every incoming channel has been flushed, so it never has to send after its flush.
    const REACTIVE: bool = false;

    /// Handles a command: looks at the local state and queues the steps that carry it out
    /// (sends to neighbours, internal steps). The core then applies them in order through the
    /// application's transitions, so every change of the state is a traced step.
    fn on_command(
        &self,
        cmd: Self::Command,
        out: &mut Outbox<'_, Self::Msg, Self::Step>,
    ) -> Result<(), Self::Rejection>;

    /// Reactive applications ([`Service::REACTIVE`]): the steps the application takes by
    /// itself after each command, each message received and each (re)start, e.g. a dataflow
    /// passing on what it took in. None by default.
    fn react(&self, _out: &mut Outbox<'_, Self::Msg, Self::Step>) {}
}

/// A step queued by a command.
pub(crate) enum Queued<M, S> {
    /// Send a message on a channel.
    Send(ChannelId, M),
    /// An internal step.
    Internal(S),
}

/// Where a command's steps go (messages `M`, internal steps `S`); only neighbours can be sent
/// to.
pub struct Outbox<'a, M, S> {
    topology: &'a Topology,
    me: ProcessId,
    queued: &'a mut Vec<Queued<M, S>>,
}

/// A send to a process that is not a neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{to} is not a neighbour")]
pub struct NotANeighbour {
    /// The destination asked for.
    pub to: ProcessId,
}

impl<'a, M, S> Outbox<'a, M, S> {
    pub(crate) fn new(topology: &'a Topology, me: ProcessId, queued: &'a mut Vec<Queued<M, S>>) -> Self {
        Outbox { topology, me, queued }
    }

    /// The process whose steps these are.
    pub fn me(&self) -> ProcessId {
        self.me
    }

    /// The topology the process runs on.
    pub fn topology(&self) -> &Topology {
        self.topology
    }

    /// Whether there is a channel to `to`.
    pub fn is_neighbour(&self, to: ProcessId) -> bool {
        self.topology.channel_between(self.me, to).is_some()
    }

    /// The processes this one has channels to.
    pub fn neighbours(&self) -> impl Iterator<Item = ProcessId> + '_ {
        self.topology.outgoing(self.me).iter().map(|&c| self.topology.channel(c).to)
    }

    /// Queues a send of `msg` to `to`; it happens when the command returns.
    pub fn send(&mut self, to: ProcessId, msg: M) -> Result<(), NotANeighbour> {
        let channel = self.topology.channel_between(self.me, to).ok_or(NotANeighbour { to })?;
        self.queued.push(Queued::Send(channel, msg));
        Ok(())
    }

    /// Queues internal step `step`; it happens when the command returns, in queue order.
    pub fn internal(&mut self, step: S) {
        self.queued.push(Queued::Internal(step));
    }
}

/// How to run a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Record a trace of every event (returned by [`Cluster::shutdown`]).
    pub trace: bool,
    /// Fault variant of the marker rules (channel faults are not available here); a
    /// coordinator fault applies to the checkpoint coordinator.
    pub variant: Variant,
    /// Who may initiate snapshots; with the barrier algorithms, where the coordinator's
    /// triggers go (every one of them gets each trigger).
    pub initiators: Initiators,
    /// The marker rules: Chandy–Lamport (snapshots initiated with [`Cluster::initiate`]), or
    /// aligned or unaligned barriers (checkpoints triggered by the coordinator).
    pub algorithm: Algorithm,
    /// Barrier algorithms: the most checkpoints pending at once (at least 1).
    pub max_concurrent: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            trace: false,
            variant: Variant::None,
            initiators: Initiators::Any,
            algorithm: Algorithm::ChandyLamport,
            max_concurrent: 1,
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
    /// A reactive application ([`Service::REACTIVE`]) on a topology with a cycle.
    #[error("a reactive application needs a topology without cycles")]
    ReactiveOnCycle,
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
    /// A checkpoint waited for with [`Cluster::wait`] was aborted.
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
}

/// What a cluster leaves behind after [`Cluster::shutdown`].
#[derive(Clone, Debug)]
pub struct Outcome<A: Application> {
    /// Final application state of every process.
    pub states: Vec<A>,
    /// Every global snapshot assembled (barrier algorithms: every checkpoint completed), by id.
    pub snapshots: Vec<GlobalSnapshot<A>>,
    /// Snapshots initiated but never assembled: still open at shutdown (wait for a snapshot
    /// with [`Cluster::wait`] before shutting down to have it complete), or broken by a fault.
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

/// An incarnation still running, or ended and not yet reported.
struct Life<A: Application> {
    restored_from: Option<SnapshotId>,
    start: GlobalState<A>,
    logs: Option<Vec<Vec<Event<A>>>>,
    crashed: bool,
}

type ProcessResult<A> = Result<ProcessExit<A>, RuntimeError>;

/// A running cluster.
pub struct Cluster<A: Service> {
    topology: std::sync::Arc<Topology>,
    options: Options,
    initial: Vec<A>,
    inboxes: Vec<mpsc::Sender<Input<A>>>,
    collector: mpsc::Sender<ToCollector<A>>,
    threads: Vec<thread::JoinHandle<ProcessResult<A>>>,
    collector_thread: Option<thread::JoinHandle<collector::Collected<A>>>,
    /// Initiations so far (a std mutex: only the cluster's users touch it, never its threads).
    initiated: std::sync::Mutex<HashMap<SnapshotId, Vec<ProcessId>>>,
    /// Incarnations that ended in a crash, then the current one.
    lives: Vec<Life<A>>,
    /// The first failure a crashed incarnation reported.
    failure: Option<RuntimeError>,
}

impl<A: Service> Cluster<A> {
    /// Starts one thread per process and a collector. `apps[i]` runs at process `i`.
    pub fn start(topology: Topology, apps: Vec<A>, options: Options) -> Result<Self, RuntimeError> {
        if apps.len() != topology.len() {
            return Err(RuntimeError::WrongAppCount { expected: topology.len(), got: apps.len() });
        }
        if options.variant.is_channel_fault() {
            return Err(RuntimeError::UnsupportedVariant(options.variant));
        }
        if !options.variant.applies_to(options.algorithm) {
            return Err(RuntimeError::VariantNotApplicable { variant: options.variant, algorithm: options.algorithm });
        }
        topology.check_initiators(&options.initiators)?;
        if A::REACTIVE && topology.back_edges(&[]).iter().any(|&b| b) {
            return Err(RuntimeError::ReactiveOnCycle);
        }
        let topology = std::sync::Arc::new(topology);
        let n = topology.len();
        let mut inboxes = Vec::with_capacity(n);
        let mut receivers = Vec::with_capacity(n);
        for _ in 0..n {
            let (tx, rx) = mpsc::channel();
            inboxes.push(tx);
            receivers.push(rx);
        }
        let roots: Vec<ProcessId> = topology.processes().filter(|&p| options.initiators.allows(p)).collect();
        let checkpointing = (options.algorithm != Algorithm::ChandyLamport).then(|| Checkpointing {
            coordinator: Coordinator::new(n, options.max_concurrent, options.variant),
            initiators: roots.clone(),
            processes: inboxes.clone(),
        });
        let (collector_tx, collector_rx) = mpsc::channel();
        let collector = Collector::new(std::sync::Arc::clone(&topology), collector_rx, checkpointing);
        let collector_thread = thread::spawn(move || collector.run());
        let mut threads = Vec::with_capacity(n);
        for (i, (app, inbox)) in apps.iter().cloned().zip(receivers).enumerate() {
            let worker = ProcessThread::new(
                ProcessId(i as u16),
                app,
                std::sync::Arc::clone(&topology),
                &options,
                roots.clone(),
                inbox,
                inboxes.clone(),
                collector_tx.clone(),
            );
            threads.push(thread::spawn(move || worker.run()));
        }
        let start = GlobalState { processes: apps.clone(), channels: vec![Vec::new(); topology.channels().len()] };
        Ok(Cluster {
            topology,
            options,
            initial: apps,
            inboxes,
            collector: collector_tx,
            threads,
            collector_thread: Some(collector_thread),
            initiated: std::sync::Mutex::new(HashMap::new()),
            lives: vec![Life { restored_from: None, start, logs: None, crashed: false }],
            failure: None,
        })
    }

    /// The topology the cluster runs on.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    fn inbox(&self, p: ProcessId) -> Result<&mpsc::Sender<Input<A>>, RuntimeError> {
        self.inboxes.get(p.index()).ok_or(RuntimeError::UnknownProcess(p))
    }

    fn barriers(&self) -> Result<(), RuntimeError> {
        match self.options.algorithm {
            Algorithm::ChandyLamport => Err(RuntimeError::NotBarriers),
            _ => Ok(()),
        }
    }

    /// Sends an application command to process `p`. Refusals by the application are reported
    /// in the [`Outcome`].
    pub fn command(&self, p: ProcessId, cmd: A::Command) -> Result<(), RuntimeError> {
        self.inbox(p)?.send(Input::Command(cmd)).map_err(|_| RuntimeError::Stopped)
    }

    /// Starts `snapshot` at process `p`. Several processes may initiate the same snapshot, and
    /// several snapshots may be in flight. Like [`Cluster::command`] and [`Cluster::wait`], it
    /// takes `&self`: several threads may drive one cluster. Chandy–Lamport only: the barrier
    /// algorithms' checkpoints are triggered by the coordinator.
    pub fn initiate(&self, snapshot: SnapshotId, p: ProcessId) -> Result<(), RuntimeError> {
        let inbox = self.inbox(p)?;
        if self.options.algorithm != Algorithm::ChandyLamport {
            return Err(RuntimeError::Coordinated(self.options.algorithm));
        }
        if !self.options.initiators.allows(p) {
            return Err(RuntimeError::NotAnInitiator(p));
        }
        let mut initiated = self.initiated();
        let initiators = initiated.entry(snapshot).or_default();
        if initiators.contains(&p) {
            return Err(RuntimeError::AlreadyInitiated { snapshot, process: p });
        }
        initiators.push(p);
        inbox.send(Input::Initiate(snapshot)).map_err(|_| RuntimeError::Stopped)
    }

    /// Blocks until the global snapshot `snapshot` is assembled, and returns it (barrier
    /// algorithms: until the checkpoint completes; an aborted one is an error).
    pub fn wait(&self, snapshot: SnapshotId) -> Result<GlobalSnapshot<A>, RuntimeError> {
        if self.options.algorithm == Algorithm::ChandyLamport && !self.initiated().contains_key(&snapshot) {
            return Err(RuntimeError::UnknownSnapshot(snapshot));
        }
        if self.options.algorithm != Algorithm::ChandyLamport {
            return match self.await_checkpoint(snapshot)? {
                CheckpointOutcome::Completed(global) => Ok(global),
                CheckpointOutcome::Aborted(reason) => Err(RuntimeError::Aborted { snapshot, reason }),
            };
        }
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Wait { snapshot, reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        rx.recv().map_err(|_| RuntimeError::Stopped)?
    }

    /// Barrier algorithms: the coordinator triggers a checkpoint (refused while
    /// [`Options::max_concurrent`] are pending); its trigger is on its way to every initiator
    /// when this returns its id.
    pub fn trigger_checkpoint(&self) -> Result<SnapshotId, RuntimeError> {
        self.barriers()?;
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Trigger { reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        rx.recv().map_err(|_| RuntimeError::Stopped)?
    }

    /// Barrier algorithms: blocks until checkpoint `snapshot` has completed or been aborted.
    pub fn await_checkpoint(&self, snapshot: SnapshotId) -> Result<CheckpointOutcome<A>, RuntimeError> {
        self.barriers()?;
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Await { snapshot, reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        rx.recv().map_err(|_| RuntimeError::Stopped)?
    }

    /// Barrier algorithms, a test hook: process `p` declines the next checkpoint it records
    /// (as if its state could not be written): it gives its part up and sends cancellation
    /// barriers downstream, and the coordinator aborts the checkpoint.
    pub fn decline_next(&self, p: ProcessId) -> Result<(), RuntimeError> {
        self.barriers()?;
        self.inbox(p)?.send(Input::DeclineNext).map_err(|_| RuntimeError::Stopped)
    }

    /// Barrier algorithms: every process crashes and recovers. Each process ends its
    /// incarnation (whatever it held or had queued is lost, and nothing of it reaches the next
    /// incarnation), the coordinator fails over (its pending checkpoints are aborted), and
    /// every process restarts from the latest completed checkpoint, with that checkpoint's
    /// record of each channel in front of the channel, or from its initial state when none has
    /// completed. Returns the checkpoint restored from. A failure of the crashed incarnation
    /// is returned here, and again by [`Cluster::shutdown`].
    pub fn crash_and_recover(&mut self) -> Result<Option<SnapshotId>, RuntimeError> {
        self.barriers()?;
        let (tx, rx) = mpsc::channel();
        for inbox in &self.inboxes {
            inbox.send(Input::Crash(tx.clone())).map_err(|_| RuntimeError::Stopped)?;
        }
        let n = self.topology.len();
        let mut logs: Vec<Vec<Event<A>>> = vec![Vec::new(); n];
        let mut failure = None;
        for _ in 0..n {
            let halted: Halted<A> = rx.recv().map_err(|_| RuntimeError::Stopped)?;
            if let Some(e) = halted.failure {
                failure.get_or_insert(e);
            }
            if let Some(log) = logs.get_mut(halted.process.index()) {
                *log = halted.log;
            }
        }
        if let Some(life) = self.lives.last_mut() {
            life.logs = Some(logs);
            life.crashed = true;
        }
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Failover { reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        let latest = rx.recv().map_err(|_| RuntimeError::Stopped)?;
        let start = match &latest {
            Some(checkpoint) => checkpoint.state.clone(),
            None => GlobalState {
                processes: self.initial.clone(),
                channels: vec![Vec::new(); self.topology.channels().len()],
            },
        };
        for (p, inbox) in self.topology.processes().zip(&self.inboxes) {
            let channels = self.topology.incoming(p).iter().map(|c| start.channels[c.index()].clone()).collect();
            let restart = Restart { state: start.processes[p.index()].clone(), channels };
            inbox.send(Input::Restart(restart)).map_err(|_| RuntimeError::Stopped)?;
        }
        let restored_from = latest.as_ref().map(|c| c.id);
        self.lives.push(Life { restored_from, start, logs: None, crashed: false });
        if let Some(e) = failure {
            self.failure.get_or_insert(e.clone());
            return Err(e);
        }
        Ok(restored_from)
    }

    /// Stops every process without losing an application message and returns the final states,
    /// every snapshot assembled, the ids of those still open (incomplete) and, when tracing, the
    /// trace. Barrier algorithms: a final checkpoint is taken first (see the module
    /// documentation), so every checkpoint triggered ends completed or aborted.
    pub fn shutdown(mut self) -> Result<Outcome<A>, RuntimeError> {
        let mut failure = self.failure.take();
        if self.options.algorithm != Algorithm::ChandyLamport {
            let (tx, rx) = mpsc::channel();
            if self.collector.send(ToCollector::Finish { reply: tx }).is_ok() {
                if let Err(e) = rx.recv().map_err(|_| RuntimeError::Stopped).and_then(|r| r) {
                    failure.get_or_insert(e);
                }
            }
        }
        let ids = self.send_shutdown();
        let mut exits = Vec::with_capacity(self.threads.len());
        for (i, handle) in std::mem::take(&mut self.threads).into_iter().enumerate() {
            match handle.join() {
                Ok(Ok(exit)) => exits.push(exit),
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(_) => {
                    failure.get_or_insert(RuntimeError::Panicked {
                        process: self.topology.name(ProcessId(i as u16)).to_string(),
                        message: "the process thread died".to_string(),
                    });
                }
            }
        }
        let _ = self.collector.send(ToCollector::Stop);
        let collector_thread = self.collector_thread.take().ok_or(RuntimeError::Stopped)?;
        let collected = collector_thread.join().map_err(|_| RuntimeError::Stopped)?;
        if let Some(e) = collected.failure {
            return Err(e);
        }
        if let Some(e) = failure {
            return Err(e);
        }
        let mut states = Vec::with_capacity(exits.len());
        let mut logs = Vec::with_capacity(exits.len());
        let mut rejected = Vec::new();
        for exit in exits {
            states.push(exit.state);
            logs.push(exit.log);
            rejected.extend(exit.rejected);
        }
        if let Some(life) = self.lives.last_mut() {
            life.logs = Some(logs);
        }
        let mut incarnations = Vec::with_capacity(self.lives.len());
        for (epoch, life) in std::mem::take(&mut self.lives).into_iter().enumerate() {
            let untraceable = life.start.channels.iter().any(|c| !c.is_empty());
            let trace = match (self.options.trace && !untraceable, life.logs) {
                (true, Some(logs)) => Some(
                    Trace::merge(life.start.processes.clone(), logs)?.with_initiators(self.options.initiators.clone()),
                ),
                _ => None,
            };
            let completed = collected.completed_in.iter().filter(|(_, e)| *e == epoch).map(|(id, _)| *id).collect();
            incarnations.push(Incarnation {
                restored_from: life.restored_from,
                start: life.start,
                trace,
                completed,
                crashed: life.crashed,
            });
        }
        let trace = incarnations.last().and_then(|i| i.trace.clone());
        let done = |id: &SnapshotId| collected.snapshots.iter().any(|s| s.id == *id);
        let incomplete = match self.options.algorithm {
            Algorithm::ChandyLamport => ids.into_iter().filter(|id| !done(id)).collect(),
            _ => collected
                .triggered
                .iter()
                .copied()
                .filter(|id| !done(id) && !collected.aborted.iter().any(|(a, _)| a == id))
                .collect(),
        };
        Ok(Outcome {
            states,
            snapshots: collected.snapshots,
            incomplete,
            trace,
            rejected,
            triggered: collected.triggered,
            aborted: collected.aborted,
            incarnations,
        })
    }
}

impl<A: Service> Cluster<A> {
    fn initiated(&self) -> std::sync::MutexGuard<'_, HashMap<SnapshotId, Vec<ProcessId>>> {
        self.initiated.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells every process to shut down; returns the snapshot ids initiated so far.
    fn send_shutdown(&self) -> Vec<SnapshotId> {
        let mut ids: Vec<SnapshotId> = self.initiated().keys().copied().collect();
        ids.sort();
        for inbox in &self.inboxes {
            // A process thread that has stopped has nothing left to shut down.
            let _ = inbox.send(Input::Shutdown);
        }
        ids
    }
}

impl<A: Service> Drop for Cluster<A> {
    /// A cluster dropped without [`Cluster::shutdown`] still stops its threads (detached).
    fn drop(&mut self) {
        if self.collector_thread.is_some() && !self.threads.is_empty() {
            self.send_shutdown();
            let _ = self.collector.send(ToCollector::Stop);
        }
    }
}

impl<A: Service> Debug for Cluster<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("processes", &self.topology.len()).field("options", &self.options).finish()
    }
}
