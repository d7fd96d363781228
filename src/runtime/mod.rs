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

mod collector;
mod process;

use std::collections::HashMap;
use std::fmt::Debug;

use thiserror::Error;

use crate::core::{Application, CoreError, SnapshotId};
use crate::formats::jsonl::{write_logs, LogApp, WriteError};
use crate::snapshot::{AssemblyError, GlobalSnapshot};
use crate::sync::{mpsc, thread};
use crate::topology::{ChannelId, Initiators, ProcessId, Topology, TopologyError};
use crate::trace::{Trace, TraceError};
use crate::variant::Variant;

use collector::{Collector, ToCollector};
use process::{Input, ProcessExit, ProcessThread};

/// An application the runtime can drive with commands from outside.
pub trait Service: Application<Msg: Send + 'static, Step: Send + 'static> + Send + 'static {
    /// A request from outside (e.g. "transfer 3 jars to P2").
    type Command: Send + 'static;
    /// Why a command was refused.
    type Rejection: std::error::Error + Send + 'static;

    /// Handles a command: looks at the local state and queues the steps that carry it out
    /// (sends to neighbours, internal steps). The core then applies them in order through the
    /// application's transitions, so every change of the state is a traced step.
    fn on_command(
        &self,
        cmd: Self::Command,
        out: &mut Outbox<'_, Self::Msg, Self::Step>,
    ) -> Result<(), Self::Rejection>;
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
    /// Fault variant of the marker rules (channel faults are not available here).
    pub variant: Variant,
    /// Who may initiate snapshots.
    pub initiators: Initiators,
}

impl Default for Options {
    fn default() -> Self {
        Options { trace: false, variant: Variant::None, initiators: Initiators::Any }
    }
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

/// What a cluster leaves behind after [`Cluster::shutdown`].
#[derive(Clone, Debug)]
pub struct Outcome<A: Application> {
    /// Final application state of every process.
    pub states: Vec<A>,
    /// Every global snapshot assembled, by id.
    pub snapshots: Vec<GlobalSnapshot<A>>,
    /// Snapshots initiated but never assembled: still open at shutdown (wait for a snapshot
    /// with [`Cluster::wait`] before shutting down to have it complete), or broken by a fault.
    pub incomplete: Vec<SnapshotId>,
    /// The run, when tracing was on.
    pub trace: Option<Trace<A>>,
    /// Commands the applications refused.
    pub rejected: Vec<Rejected>,
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

/// A running cluster.
pub struct Cluster<A: Service> {
    topology: std::sync::Arc<Topology>,
    options: Options,
    initial: Vec<A>,
    inboxes: Vec<mpsc::Sender<Input<A>>>,
    collector: mpsc::Sender<ToCollector<A>>,
    threads: Vec<thread::JoinHandle<Result<ProcessExit<A>, RuntimeError>>>,
    collector_thread: Option<thread::JoinHandle<collector::Collected<A>>>,
    /// Initiations so far (a std mutex: only the cluster's users touch it, never its threads).
    initiated: std::sync::Mutex<HashMap<SnapshotId, Vec<ProcessId>>>,
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
        topology.check_initiators(&options.initiators)?;
        let topology = std::sync::Arc::new(topology);
        let n = topology.len();
        let mut inboxes = Vec::with_capacity(n);
        let mut receivers = Vec::with_capacity(n);
        for _ in 0..n {
            let (tx, rx) = mpsc::channel();
            inboxes.push(tx);
            receivers.push(rx);
        }
        let (collector_tx, collector_rx) = mpsc::channel();
        let collector = Collector::new(std::sync::Arc::clone(&topology), collector_rx);
        let collector_thread = thread::spawn(move || collector.run());
        let mut threads = Vec::with_capacity(n);
        for (i, (app, inbox)) in apps.iter().cloned().zip(receivers).enumerate() {
            let worker = ProcessThread::new(
                ProcessId(i as u16),
                app,
                std::sync::Arc::clone(&topology),
                &options,
                inbox,
                inboxes.clone(),
                collector_tx.clone(),
            );
            threads.push(thread::spawn(move || worker.run()));
        }
        Ok(Cluster {
            topology,
            options,
            initial: apps,
            inboxes,
            collector: collector_tx,
            threads,
            collector_thread: Some(collector_thread),
            initiated: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// The topology the cluster runs on.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    fn inbox(&self, p: ProcessId) -> Result<&mpsc::Sender<Input<A>>, RuntimeError> {
        self.inboxes.get(p.index()).ok_or(RuntimeError::UnknownProcess(p))
    }

    /// Sends an application command to process `p`. Refusals by the application are reported
    /// in the [`Outcome`].
    pub fn command(&self, p: ProcessId, cmd: A::Command) -> Result<(), RuntimeError> {
        self.inbox(p)?.send(Input::Command(cmd)).map_err(|_| RuntimeError::Stopped)
    }

    /// Starts `snapshot` at process `p`. Several processes may initiate the same snapshot, and
    /// several snapshots may be in flight. Like [`Cluster::command`] and [`Cluster::wait`], it
    /// takes `&self`: several threads may drive one cluster.
    pub fn initiate(&self, snapshot: SnapshotId, p: ProcessId) -> Result<(), RuntimeError> {
        let inbox = self.inbox(p)?;
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

    /// Blocks until the global snapshot `snapshot` is assembled, and returns it.
    pub fn wait(&self, snapshot: SnapshotId) -> Result<GlobalSnapshot<A>, RuntimeError> {
        if !self.initiated().contains_key(&snapshot) {
            return Err(RuntimeError::UnknownSnapshot(snapshot));
        }
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Wait { snapshot, reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        rx.recv().map_err(|_| RuntimeError::Stopped)?
    }

    /// Stops every process without losing an application message and returns the final states,
    /// every snapshot assembled, the ids of those still open (incomplete) and, when tracing, the
    /// trace.
    pub fn shutdown(mut self) -> Result<Outcome<A>, RuntimeError> {
        let ids = self.send_shutdown();
        let mut exits = Vec::with_capacity(self.threads.len());
        let mut failure = None;
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
        let initial = std::mem::take(&mut self.initial);
        let trace = match self.options.trace {
            true => Some(Trace::merge(initial, logs)?.with_initiators(self.options.initiators.clone())),
            false => None,
        };
        let incomplete = ids.into_iter().filter(|id| !collected.snapshots.iter().any(|s| s.id == *id)).collect();
        Ok(Outcome { states, snapshots: collected.snapshots, incomplete, trace, rejected })
    }
}

impl<A: Service> Cluster<A> {
    /// Tells every process to shut down; returns the snapshot ids initiated so far.
    fn initiated(&self) -> std::sync::MutexGuard<'_, HashMap<SnapshotId, Vec<ProcessId>>> {
        self.initiated.lock().unwrap_or_else(|e| e.into_inner())
    }

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
