//! A running cluster: a thread per process and a collector thread.

use std::collections::HashMap;
use std::fmt::Debug;

use crate::check::{Event, Trace};
use crate::protocol::{
    restored_channels, Application, Coordinator, GlobalSnapshot, GlobalState, ProcessId, SnapshotId, Topology,
};

use super::collector::{Checkpointing, Collector};
use super::outcome::{CheckpointOutcome, Incarnation, Options, Outcome, RuntimeError};
use super::process::{ProcessExit, ProcessThread};
use super::service::Service;
use super::sync::atomic::{AtomicBool, Ordering};
use super::sync::{mpsc, thread};
use super::wire::{Halted, Input, Restart, ToCollector};

/// An incarnation still running, or ended and not yet reported.
struct Life<A: Application> {
    restored_from: Option<SnapshotId>,
    start: GlobalState<A>,
    logs: Option<Vec<Vec<Event<A>>>>,
    crashed: bool,
    failed_over: bool,
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
    collector_thread: Option<thread::JoinHandle<super::collector::Collected<A>>>,
    /// Initiations so far (a std mutex: only the cluster's users touch it, never its threads).
    initiated: std::sync::Mutex<HashMap<SnapshotId, Vec<ProcessId>>>,
    /// Incarnations that ended in a crash, then the current one.
    lives: Vec<Life<A>>,
    /// Set by the collector when more checkpoints failed in a row than tolerated.
    failover_due: std::sync::Arc<AtomicBool>,
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
        if options.algorithm.coordinated() {
            // The collector's coordinator triggers every initiator together.
            topology.check_sources(&options.initiators)?;
        } else {
            topology.check_initiators(&options.initiators)?;
        }
        if !options.algorithm.concurrent_checkpoints() && options.max_concurrent > 1 {
            return Err(RuntimeError::UnalignedConcurrent(options.max_concurrent));
        }
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
        let checkpointing = options.algorithm.coordinated().then(|| Checkpointing {
            coordinator: Coordinator::new(n, options.max_concurrent, options.variant)
                .with_tolerable_failures(options.tolerable_failures),
            initiators: roots.clone(),
            processes: inboxes.clone(),
        });
        let (collector_tx, collector_rx) = mpsc::channel();
        let failover_due = std::sync::Arc::new(AtomicBool::new(false));
        let collector = Collector::new(
            std::sync::Arc::clone(&topology),
            collector_rx,
            checkpointing,
            std::sync::Arc::clone(&failover_due),
        );
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
            lives: vec![Life { restored_from: None, start, logs: None, crashed: false, failed_over: false }],
            failover_due,
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
        if self.options.algorithm.coordinated() {
            Ok(())
        } else {
            Err(RuntimeError::NotBarriers)
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
        if self.options.algorithm.coordinated() {
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
        if !self.options.algorithm.coordinated() && !self.initiated().contains_key(&snapshot) {
            return Err(RuntimeError::UnknownSnapshot(snapshot));
        }
        if self.options.algorithm.coordinated() {
            return match self.outcome_of(snapshot)? {
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
    pub fn trigger_checkpoint(&mut self) -> Result<SnapshotId, RuntimeError> {
        self.barriers()?;
        self.failover_if_due()?;
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Trigger { reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        rx.recv().map_err(|_| RuntimeError::Stopped)?
    }

    /// Barrier algorithms: blocks until checkpoint `snapshot` has completed or been aborted.
    pub fn await_checkpoint(&mut self, snapshot: SnapshotId) -> Result<CheckpointOutcome<A>, RuntimeError> {
        self.barriers()?;
        self.failover_if_due()?;
        let outcome = self.outcome_of(snapshot)?;
        self.failover_if_due()?;
        Ok(outcome)
    }

    /// Blocks until checkpoint `snapshot` has completed or been aborted.
    fn outcome_of(&self, snapshot: SnapshotId) -> Result<CheckpointOutcome<A>, RuntimeError> {
        let (tx, rx) = mpsc::channel();
        self.collector.send(ToCollector::Await { snapshot, reply: tx }).map_err(|_| RuntimeError::Stopped)?;
        rx.recv().map_err(|_| RuntimeError::Stopped)?
    }

    /// Barrier algorithms: when more checkpoints failed in a row than
    /// [`Options::tolerable_failures`] allows, the job fails over now, as
    /// [`Cluster::crash_and_recover`] does (Flink's `CheckpointFailureManager` fails the job).
    fn failover_if_due(&mut self) -> Result<(), RuntimeError> {
        if self.failover_due.swap(false, Ordering::SeqCst) {
            self.recover(true)?;
        }
        Ok(())
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
        self.recover(false)
    }

    /// Ends the incarnation and starts the next one from the latest completed checkpoint
    /// (`failed_over`: because more checkpoints failed in a row than tolerated).
    fn recover(&mut self, failed_over: bool) -> Result<Option<SnapshotId>, RuntimeError> {
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
            Some(checkpoint) => GlobalState {
                processes: checkpoint.state.processes.clone(),
                channels: restored_channels(self.options.variant, &self.topology, &checkpoint.state.channels),
            },
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
        self.lives.push(Life { restored_from, start, logs: None, crashed: false, failed_over });
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
        if self.options.algorithm.coordinated() {
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
                failed_over: life.failed_over,
            });
        }
        let trace = incarnations.last().and_then(|i| i.trace.clone());
        let done = |id: &SnapshotId| collected.snapshots.iter().any(|s| s.id == *id);
        // Coordinated: the checkpoints triggered that ended neither completed nor aborted.
        let incomplete = if self.options.algorithm.coordinated() {
            let aborted = |id: &SnapshotId| collected.aborted.iter().any(|(a, _)| a == id);
            collected.triggered.iter().copied().filter(|id| !done(id) && !aborted(id)).collect()
        } else {
            ids.into_iter().filter(|id| !done(id)).collect()
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
