//! The collector thread: assembles local snapshots into global snapshots and answers waits.
//! With the barrier algorithms it is also the checkpoint coordinator's driver: it triggers
//! checkpoints (sending the trigger to every initiator), acknowledges parts, aborts a
//! checkpoint a process gave up, completes one when every part is in (subsuming older pending
//! ones), keeps the latest completed checkpoint for a recovery, and fails over.

use std::collections::HashMap;
use std::sync::Arc;

use super::outcome::{AbortReason, CheckpointOutcome, RuntimeError};
use super::service::Service;
use super::sync::atomic::{AtomicBool, Ordering};
use super::sync::mpsc;
use super::wire::{IdReply, Input, OutcomeReply, Reply, ToCollector};
use crate::protocol::SnapshotId;
use crate::protocol::{Ack, Coordinator, Failure};
use crate::protocol::{Assembler, GlobalSnapshot, LocalSnapshot};
use crate::protocol::{ProcessId, Topology};

/// What the collector hands back when it stops.
pub(crate) struct Collected<A: Service> {
    pub(crate) snapshots: Vec<GlobalSnapshot<A>>,
    pub(crate) failure: Option<RuntimeError>,
    /// Barrier algorithms: checkpoints aborted, by id.
    pub(crate) aborted: Vec<(SnapshotId, AbortReason)>,
    /// Barrier algorithms: checkpoints triggered, in order.
    pub(crate) triggered: Vec<SnapshotId>,
    /// Barrier algorithms: the incarnation (0 first, one more per failover) each completed
    /// checkpoint completed in.
    pub(crate) completed_in: Vec<(SnapshotId, usize)>,
}

/// The coordinator's side of the collector (barrier algorithms).
pub(crate) struct Checkpointing<A: Service> {
    pub(crate) coordinator: Coordinator,
    pub(crate) initiators: Vec<ProcessId>,
    pub(crate) processes: Vec<mpsc::Sender<Input<A>>>,
}

pub(crate) struct Collector<A: Service> {
    topology: Arc<Topology>,
    inbox: mpsc::Receiver<ToCollector<A>>,
    assembler: Assembler<A>,
    done: HashMap<SnapshotId, GlobalSnapshot<A>>,
    waiting: HashMap<SnapshotId, Vec<Reply<A>>>,
    failure: Option<RuntimeError>,
    checkpointing: Option<Checkpointing<A>>,
    /// Acknowledged parts of pending checkpoints.
    parts: HashMap<SnapshotId, Vec<LocalSnapshot<A>>>,
    aborted: HashMap<SnapshotId, AbortReason>,
    triggered: Vec<SnapshotId>,
    awaiting: HashMap<SnapshotId, Vec<OutcomeReply<A>>>,
    epoch: usize,
    completed_in: Vec<(SnapshotId, usize)>,
    /// A shutdown waits for a final checkpoint: the reply, the final checkpoint triggered (if
    /// any yet), and how many were tried.
    finishing: Option<(IdReply, Option<SnapshotId>, usize)>,
    /// Processes restarted that have not yet taken in their restored input.
    recovering: usize,
    /// Completed checkpoints waiting to be stored, oldest first.
    to_store: Vec<SnapshotId>,
    /// More checkpoints failed in a row than tolerated: the job must fail over (the cluster
    /// reads and clears it).
    failover_due: Arc<AtomicBool>,
}

impl<A: Service> Collector<A> {
    pub(crate) fn new(
        topology: Arc<Topology>,
        inbox: mpsc::Receiver<ToCollector<A>>,
        checkpointing: Option<Checkpointing<A>>,
        failover_due: Arc<AtomicBool>,
    ) -> Self {
        Collector {
            topology,
            inbox,
            assembler: Assembler::new(),
            done: HashMap::new(),
            waiting: HashMap::new(),
            failure: None,
            checkpointing,
            parts: HashMap::new(),
            aborted: HashMap::new(),
            triggered: Vec::new(),
            awaiting: HashMap::new(),
            epoch: 0,
            completed_in: Vec::new(),
            finishing: None,
            failover_due,
            recovering: 0,
            to_store: Vec::new(),
        }
    }

    fn fail(&mut self, error: RuntimeError) {
        if self.failure.is_none() {
            for (_, replies) in self.waiting.drain() {
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
            for (_, replies) in self.awaiting.drain() {
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
            if let Some((reply, _, _)) = self.finishing.take() {
                let _ = reply.send(Err(error.clone()));
            }
            self.failure = Some(error);
        }
    }

    pub(crate) fn run(mut self) -> Collected<A> {
        loop {
            // A completed checkpoint is stored when nothing else is waiting: a failover
            // requested before it comes first, so a crash can fall between completing and
            // storing.
            let msg = if self.to_store.is_empty() {
                self.inbox.recv().ok()
            } else {
                match self.inbox.try_recv() {
                    Ok(msg) => Some(msg),
                    Err(std::sync::mpsc::TryRecvError::Empty) => {
                        self.store();
                        self.finish();
                        continue;
                    }
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
                }
            };
            let Some(msg) = msg else { break };
            match msg {
                ToCollector::Local(local) if self.checkpointing.is_some() => self.acknowledge(local),
                ToCollector::Local(local) => match self.assembler.add(&self.topology, local) {
                    Ok(Some(global)) => self.completed(global),
                    Ok(None) => {}
                    Err(e) => self.fail(e.into()),
                },
                ToCollector::Aborted(snapshot) => {
                    let aborted = self.checkpointing.as_mut().is_some_and(|c| c.coordinator.decline(snapshot));
                    if aborted {
                        self.abort(snapshot, AbortReason::Declined);
                    }
                }
                ToCollector::Declined(snapshot) => {
                    let failure = self.checkpointing.as_mut().map(|c| c.coordinator.fail(snapshot));
                    // Set before the abort is answered, so that whoever learns of it sees it.
                    if failure == Some(Failure::FailJob) {
                        self.failover_due.store(true, Ordering::SeqCst);
                    }
                    if matches!(failure, Some(Failure::Aborted | Failure::FailJob)) {
                        self.abort(snapshot, AbortReason::Declined);
                    }
                }
                ToCollector::Recovered => self.recovering = self.recovering.saturating_sub(1),
                ToCollector::Failed(error) => self.fail(error),
                ToCollector::Wait { snapshot, reply } => {
                    if let Some(global) = self.done.get(&snapshot) {
                        let _ = reply.send(Ok(global.clone()));
                    } else if let Some(error) = &self.failure {
                        let _ = reply.send(Err(error.clone()));
                    } else if let Some(&reason) = self.aborted.get(&snapshot) {
                        let _ = reply.send(Err(RuntimeError::Aborted { snapshot, reason }));
                    } else {
                        self.waiting.entry(snapshot).or_default().push(reply);
                    }
                }
                ToCollector::Trigger { reply } => {
                    let _ = reply.send(self.trigger());
                }
                ToCollector::Await { snapshot, reply } => {
                    if let Some(global) = self.done.get(&snapshot) {
                        let _ = reply.send(Ok(CheckpointOutcome::Completed(global.clone())));
                    } else if let Some(&reason) = self.aborted.get(&snapshot) {
                        let _ = reply.send(Ok(CheckpointOutcome::Aborted(reason)));
                    } else if let Some(error) = &self.failure {
                        let _ = reply.send(Err(error.clone()));
                    } else if !self.triggered.contains(&snapshot) {
                        let _ = reply.send(Err(RuntimeError::UnknownSnapshot(snapshot)));
                    } else {
                        self.awaiting.entry(snapshot).or_default().push(reply);
                    }
                }
                ToCollector::Finish { reply } => {
                    if let Some(error) = &self.failure {
                        let _ = reply.send(Err(error.clone()));
                    } else {
                        self.finishing = Some((reply, None, 0));
                    }
                }
                ToCollector::Failover { reply } => {
                    // Pending checkpoints and completed ones not yet stored are lost.
                    self.to_store.clear();
                    let aborted = self.checkpointing.as_mut().map(|c| c.coordinator.failover()).unwrap_or_default();
                    for snapshot in aborted {
                        self.abort(snapshot, AbortReason::Failover);
                    }
                    let latest_id = self.checkpointing.as_ref().and_then(|c| c.coordinator.latest());
                    let latest = latest_id.and_then(|id| self.done.get(&id)).cloned();
                    self.epoch += 1;
                    // Every process restarts, and reports once its restored input is taken in.
                    self.recovering = self.topology.len();
                    let _ = reply.send(latest);
                }
                ToCollector::Stop => break,
            }
            self.finish();
        }
        for (_, replies) in self.waiting.drain() {
            for reply in replies {
                let _ = reply.send(Err(RuntimeError::Stopped));
            }
        }
        for (_, replies) in self.awaiting.drain() {
            for reply in replies {
                let _ = reply.send(Err(RuntimeError::Stopped));
            }
        }
        if let Some((reply, _, _)) = self.finishing.take() {
            let _ = reply.send(Err(RuntimeError::Stopped));
        }
        let mut snapshots: Vec<_> = self.done.into_values().collect();
        snapshots.sort_by_key(|s| s.id);
        let mut aborted: Vec<_> = self.aborted.into_iter().collect();
        aborted.sort();
        Collected {
            snapshots,
            failure: self.failure,
            aborted,
            triggered: self.triggered,
            completed_in: self.completed_in,
        }
    }

    /// Starts a checkpoint: the coordinator's id, its trigger sent to every initiator.
    fn trigger(&mut self) -> Result<SnapshotId, RuntimeError> {
        if let Some(error) = &self.failure {
            return Err(error.clone());
        }
        let c = self.checkpointing.as_mut().ok_or(RuntimeError::NotBarriers)?;
        let id = c.coordinator.trigger()?;
        for p in &c.initiators {
            let _ = c.processes[p.index()].send(Input::Initiate(id));
        }
        self.triggered.push(id);
        Ok(id)
    }

    /// A shutdown in progress: triggers the final checkpoint when the coordinator can, and
    /// answers once one has completed (another one is tried when one is aborted).
    fn finish(&mut self) {
        let Some((reply, last, tries)) = self.finishing.take() else { return };
        if let Some(error) = &self.failure {
            let _ = reply.send(Err(error.clone()));
            return;
        }
        match last {
            Some(id) if self.done.contains_key(&id) => {
                let _ = reply.send(Ok(id));
            }
            Some(id) if !self.aborted.contains_key(&id) => self.finishing = Some((reply, last, tries)),
            // The final checkpoint waits until every process has taken in its restored input
            // (it would decline as not ready), as Flink triggers only when every task runs.
            _ if self.recovering > 0 => self.finishing = Some((reply, last, tries)),
            _ => {
                let can = self.checkpointing.as_ref().is_some_and(|c| c.coordinator.can_trigger());
                let pending = self.checkpointing.as_ref().is_some_and(|c| c.coordinator.pending().next().is_some());
                let most = 2 * self.topology.len() + 2;
                if tries >= most {
                    let _ = reply.send(Err(RuntimeError::NoFinalCheckpoint { tries }));
                } else if can {
                    match self.trigger() {
                        Ok(id) => self.finishing = Some((reply, Some(id), tries + 1)),
                        Err(e) => {
                            let _ = reply.send(Err(e));
                        }
                    }
                } else if pending {
                    // Waits for a pending checkpoint to end.
                    self.finishing = Some((reply, None, tries));
                } else {
                    let e = self.checkpointing.as_mut().map(|c| c.coordinator.trigger());
                    let e = match e {
                        Some(Err(e)) => RuntimeError::Coordinator(e),
                        _ => RuntimeError::NotBarriers,
                    };
                    let _ = reply.send(Err(e));
                }
            }
        }
    }

    /// Barrier algorithms: a process's complete part, acknowledged to the coordinator.
    fn acknowledge(&mut self, local: LocalSnapshot<A>) {
        let Some(c) = self.checkpointing.as_mut() else { return };
        let id = local.snapshot;
        match c.coordinator.acknowledge(local.process, id) {
            Ok(Ack::Pending) => self.parts.entry(id).or_default().push(local),
            Ok(Ack::Stale) => {}
            Ok(Ack::Acknowledged) => {
                // Completed now; stored once nothing else waits in the inbox (a failover already
                // requested comes first and loses it).
                let subsumed = match c.coordinator.complete(id) {
                    Ok(subsumed) => subsumed,
                    Err(e) => return self.fail(e.into()),
                };
                self.parts.entry(id).or_default().push(local);
                for s in subsumed {
                    self.abort(s, AbortReason::Subsumed);
                }
                self.to_store.push(id);
            }
            Err(e) => self.fail(e.into()),
        }
    }

    /// Barrier algorithms: the oldest completed checkpoint goes into the store (unless a failover
    /// lost it meanwhile): assembled from its parts, and answered.
    fn store(&mut self) {
        if self.to_store.is_empty() {
            return;
        }
        let id = self.to_store.remove(0);
        let Some(c) = self.checkpointing.as_mut() else { return };
        let subsumed = match c.coordinator.store(id) {
            Ok(subsumed) => subsumed,
            Err(e) => return self.fail(e.into()),
        };
        let parts = self.parts.remove(&id).unwrap_or_default();
        let mut assembler = Assembler::new();
        let mut global = None;
        for part in parts {
            match assembler.add(&self.topology, part) {
                Ok(g) => global = g.or(global),
                Err(e) => return self.fail(e.into()),
            }
        }
        for s in subsumed {
            self.to_store.retain(|&t| t != s);
            self.abort(s, AbortReason::Subsumed);
        }
        match global {
            Some(global) => {
                self.completed_in.push((id, self.epoch));
                self.completed(global);
            }
            None => self.fail(RuntimeError::MissingParts(id)),
        }
    }

    fn completed(&mut self, global: GlobalSnapshot<A>) {
        for reply in self.waiting.remove(&global.id).unwrap_or_default() {
            let _ = reply.send(Ok(global.clone()));
        }
        for reply in self.awaiting.remove(&global.id).unwrap_or_default() {
            let _ = reply.send(Ok(CheckpointOutcome::Completed(global.clone())));
        }
        self.done.insert(global.id, global);
    }

    /// Checkpoint `snapshot` is over without completing: its parts are discarded.
    fn abort(&mut self, snapshot: SnapshotId, reason: AbortReason) {
        self.parts.remove(&snapshot);
        self.aborted.insert(snapshot, reason);
        for reply in self.waiting.remove(&snapshot).unwrap_or_default() {
            let _ = reply.send(Err(RuntimeError::Aborted { snapshot, reason }));
        }
        for reply in self.awaiting.remove(&snapshot).unwrap_or_default() {
            let _ = reply.send(Ok(CheckpointOutcome::Aborted(reason)));
        }
    }
}
