//! The collector thread: assembles local snapshots into global snapshots and answers waits.

use std::collections::HashMap;
use std::sync::Arc;

use super::{RuntimeError, Service};
use crate::core::SnapshotId;
use crate::snapshot::{Assembler, GlobalSnapshot, LocalSnapshot};
use crate::sync::mpsc;
use crate::topology::Topology;

type Reply<A> = mpsc::Sender<Result<GlobalSnapshot<A>, RuntimeError>>;

/// What the collector receives.
pub(crate) enum ToCollector<A: Service> {
    /// One process's completed part of a snapshot.
    Local(LocalSnapshot<A>),
    /// A process failed.
    Failed(RuntimeError),
    /// Reply with the global snapshot once assembled.
    Wait { snapshot: SnapshotId, reply: Reply<A> },
    /// Every process has stopped: reply to pending waits and stop.
    Stop,
}

/// What the collector hands back when it stops.
pub(crate) struct Collected<A: Service> {
    pub(crate) snapshots: Vec<GlobalSnapshot<A>>,
    pub(crate) failure: Option<RuntimeError>,
}

pub(crate) struct Collector<A: Service> {
    topology: Arc<Topology>,
    inbox: mpsc::Receiver<ToCollector<A>>,
    assembler: Assembler<A>,
    done: HashMap<SnapshotId, GlobalSnapshot<A>>,
    waiting: HashMap<SnapshotId, Vec<Reply<A>>>,
    failure: Option<RuntimeError>,
}

impl<A: Service> Collector<A> {
    pub(crate) fn new(topology: Arc<Topology>, inbox: mpsc::Receiver<ToCollector<A>>) -> Self {
        Collector {
            topology,
            inbox,
            assembler: Assembler::new(),
            done: HashMap::new(),
            waiting: HashMap::new(),
            failure: None,
        }
    }

    fn fail(&mut self, error: RuntimeError) {
        if self.failure.is_none() {
            for (_, replies) in self.waiting.drain() {
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
            self.failure = Some(error);
        }
    }

    pub(crate) fn run(mut self) -> Collected<A> {
        loop {
            let Ok(msg) = self.inbox.recv() else { break };
            match msg {
                ToCollector::Local(local) => match self.assembler.add(&self.topology, local) {
                    Ok(Some(global)) => {
                        for reply in self.waiting.remove(&global.id).unwrap_or_default() {
                            let _ = reply.send(Ok(global.clone()));
                        }
                        self.done.insert(global.id, global);
                    }
                    Ok(None) => {}
                    Err(e) => self.fail(e.into()),
                },
                ToCollector::Failed(error) => self.fail(error),
                ToCollector::Wait { snapshot, reply } => {
                    if let Some(global) = self.done.get(&snapshot) {
                        let _ = reply.send(Ok(global.clone()));
                    } else if let Some(error) = &self.failure {
                        let _ = reply.send(Err(error.clone()));
                    } else {
                        self.waiting.entry(snapshot).or_default().push(reply);
                    }
                }
                ToCollector::Stop => break,
            }
        }
        for (_, replies) in self.waiting.drain() {
            for reply in replies {
                let _ = reply.send(Err(RuntimeError::Stopped));
            }
        }
        let mut snapshots: Vec<_> = self.done.into_values().collect();
        snapshots.sort_by_key(|s| s.id);
        Collected { snapshots, failure: self.failure }
    }
}
