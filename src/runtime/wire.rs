//! What the threads send each other: a process thread's inputs, the messages on its channels,
//! and what the collector receives.

use super::outcome::{CheckpointOutcome, RuntimeError};
use super::service::Service;
use super::sync::mpsc;
use crate::check::{Event, MsgId};
use crate::protocol::{ChannelId, GlobalSnapshot, LocalSnapshot, ProcessId, SnapshotId};

/// What a process thread receives.
pub(crate) enum Input<A: Service> {
    /// A command from the cluster handle.
    Command(A::Command),
    /// Initiate a snapshot (barrier algorithms: the coordinator's trigger).
    Initiate(SnapshotId),
    /// A message or marker arriving on an incoming channel.
    Deliver { channel: ChannelId, wire: Wire<A::Msg> },
    /// The sender of `channel` has shut down: nothing more will arrive on it.
    Flush { channel: ChannelId },
    /// Shut down: flush, then drain. Snapshots this process has not recorded stay unrecorded
    /// here unless a marker still arrives: nothing is recorded on its behalf.
    Shutdown,
    /// Test hook (barrier algorithms): decline the next checkpoint this process records.
    DeclineNext,
    /// Crash: end this incarnation and report to the sender.
    Crash(mpsc::Sender<Halted<A>>),
    /// The sender of `channel` crashed: nothing more of its incarnation arrives on it.
    Halt { channel: ChannelId },
    /// Start a new incarnation.
    Restart(Restart<A>),
}

/// A message as it travels: application messages carry their id for the trace.
pub(crate) enum Wire<M> {
    App(MsgId, M),
    Marker(SnapshotId),
    Cancel(SnapshotId),
}

/// What a crashed incarnation leaves: its log and its failure, if it had one.
pub(crate) struct Halted<A: Service> {
    pub(crate) process: ProcessId,
    pub(crate) log: Vec<Event<A>>,
    pub(crate) failure: Option<RuntimeError>,
}

/// A new incarnation: the state to restart from and, by incoming channel number, the messages
/// to put in front of each incoming channel.
pub(crate) struct Restart<A: Service> {
    pub(crate) state: A,
    pub(crate) channels: Vec<Vec<A::Msg>>,
}

pub(crate) type Reply<A> = mpsc::Sender<Result<GlobalSnapshot<A>, RuntimeError>>;
pub(crate) type OutcomeReply<A> = mpsc::Sender<Result<CheckpointOutcome<A>, RuntimeError>>;
pub(crate) type IdReply = mpsc::Sender<Result<SnapshotId, RuntimeError>>;

/// What the collector receives.
pub(crate) enum ToCollector<A: Service> {
    /// One process's completed part of a snapshot.
    Local(LocalSnapshot<A>),
    /// Barrier algorithms: a process gave this checkpoint up (not a failure Flink counts: it
    /// was not ready, or a cancellation barrier or a newer checkpoint ended it).
    Aborted(SnapshotId),
    /// Barrier algorithms: a process could not take its part of this checkpoint (a failure the
    /// coordinator counts against the tolerable number).
    Declined(SnapshotId),
    /// Barrier algorithms: a restarted process has taken in its restored input (until then it
    /// declines checkpoints as not ready).
    Recovered,

    /// A process failed.
    Failed(RuntimeError),
    /// Reply with the global snapshot once assembled.
    Wait { snapshot: SnapshotId, reply: Reply<A> },
    /// Barrier algorithms: trigger a checkpoint; reply with its id once its triggers are sent.
    Trigger { reply: IdReply },
    /// Barrier algorithms: reply once the checkpoint has completed or been aborted.
    Await { snapshot: SnapshotId, reply: OutcomeReply<A> },
    /// Barrier algorithms, before a shutdown: stop triggering on request; trigger a final
    /// checkpoint and reply once one has completed (so no barrier is in flight).
    Finish { reply: IdReply },
    /// Barrier algorithms: every process has crashed; fail over and reply with the latest
    /// completed checkpoint.
    Failover { reply: mpsc::Sender<Option<GlobalSnapshot<A>>> },
    /// Every process has stopped: reply to pending waits and stop.
    Stop,
}
