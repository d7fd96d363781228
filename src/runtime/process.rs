//! One process thread: the core plus the application, fed from one inbox.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::collector::ToCollector;
use super::{Options, Outbox, Queued, Rejected, RuntimeError, Service};
use crate::core::{CoreError, Effect, Message, Process, SnapshotId};
use crate::sync::mpsc;
use crate::topology::{ChannelId, ProcessId, Topology};
use crate::trace::{Event, EventKind, MsgId, StepInput, Tracer};

/// What a process thread receives.
pub(crate) enum Input<A: Service> {
    /// A command from the cluster handle.
    Command(A::Command),
    /// Initiate a snapshot.
    Initiate(SnapshotId),
    /// A message or marker arriving on an incoming channel.
    Deliver { channel: ChannelId, wire: Wire<A::Msg> },
    /// The sender of `channel` has shut down: nothing more will arrive on it.
    Flush { channel: ChannelId },
    /// Shut down: flush, then drain. Snapshots this process has not recorded stay unrecorded
    /// here unless a marker still arrives: nothing is recorded on its behalf.
    Shutdown,
}

/// A message as it travels: application messages carry their id for the trace.
pub(crate) enum Wire<M> {
    App(MsgId, M),
    Marker(SnapshotId),
    Cancel(SnapshotId),
}

/// What a process thread returns when it stops cleanly.
pub(crate) struct ProcessExit<A: Service> {
    pub(crate) state: A,
    pub(crate) log: Vec<Event<A>>,
    pub(crate) rejected: Vec<Rejected>,
}

pub(crate) struct ProcessThread<A: Service> {
    core: Process<A>,
    topology: Arc<Topology>,
    trace: bool,
    inbox: mpsc::Receiver<Input<A>>,
    peers: Vec<mpsc::Sender<Input<A>>>,
    collector: mpsc::Sender<ToCollector<A>>,
    log: Vec<Event<A>>,
    rejected: Vec<Rejected>,
    effects: Vec<Effect<A::Msg>>,
    queued: Vec<Queued<A::Msg, A::Step>>,
    next_msg: u64,
    /// `Shutdown` has arrived.
    shutting_down: bool,
    /// Flushes have been sent on every outgoing channel.
    flush_sent: bool,
    /// Which incoming channels have been flushed.
    flushed: Vec<bool>,
    /// The first failure here; a failed process only drains until shutdown.
    failure: Option<RuntimeError>,
}

impl<A: Service> ProcessThread<A> {
    pub(crate) fn new(
        id: ProcessId,
        app: A,
        topology: Arc<Topology>,
        options: &Options,
        inbox: mpsc::Receiver<Input<A>>,
        peers: Vec<mpsc::Sender<Input<A>>>,
        collector: mpsc::Sender<ToCollector<A>>,
    ) -> Self {
        let flushed = vec![false; topology.incoming(id).len()];
        ProcessThread {
            core: Process::with_variant(id, app, options.variant),
            topology,
            trace: options.trace,
            inbox,
            peers,
            collector,
            log: Vec::new(),
            rejected: Vec::new(),
            effects: Vec::new(),
            queued: Vec::new(),
            next_msg: 0,
            shutting_down: false,
            flush_sent: false,
            flushed,
            failure: None,
        }
    }

    fn name(&self) -> String {
        self.topology.name(self.core.id()).to_string()
    }

    /// The thread body: handle inputs until shut down. A process whose application panics, or
    /// whose core refuses a step, reports the failure to the collector, flushes its outgoing
    /// channels and from then on only drains its inbox until shutdown, so no thread blocks
    /// forever and no message is left unreceived.
    pub(crate) fn run(mut self) -> Result<ProcessExit<A>, RuntimeError> {
        loop {
            let input = match self.inbox.try_recv() {
                Ok(input) => input,
                Err(_) => {
                    // Idle: work a fault variant deferred happens now.
                    if self.failure.is_none() && self.core.has_deferred() {
                        self.core.flush(&self.topology, &mut self.effects);
                        if let Err(e) = self.apply(StepInput::Idle) {
                            let _ = self.collector.send(ToCollector::Failed(e.clone()));
                            self.failure = Some(e);
                            self.flush();
                        }
                    }
                    let Ok(input) = self.inbox.recv() else {
                        return Err(self.failure.unwrap_or(RuntimeError::Stopped));
                    };
                    input
                }
            };
            if self.failure.is_some() {
                self.drain(input);
            } else {
                let result = catch_unwind(AssertUnwindSafe(|| self.handle(input)));
                let error = match result {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(e),
                    Err(panic) => {
                        let message = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "non-string panic".to_string());
                        Some(RuntimeError::Panicked { process: self.name(), message })
                    }
                };
                if let Some(error) = error {
                    let _ = self.collector.send(ToCollector::Failed(error.clone()));
                    self.failure = Some(error);
                    self.flush();
                }
            }
            if self.shutting_down && self.flushed.iter().all(|&f| f) {
                return match self.failure {
                    Some(e) => Err(e),
                    None => Ok(ProcessExit { state: self.core.app().clone(), log: self.log, rejected: self.rejected }),
                };
            }
        }
    }

    /// After a failure: keep only the shutdown protocol.
    fn drain(&mut self, input: Input<A>) {
        match input {
            Input::Flush { channel } => self.mark_flushed(channel),
            Input::Shutdown => self.shutting_down = true,
            Input::Command(_) | Input::Initiate(_) | Input::Deliver { .. } => {}
        }
    }

    fn mark_flushed(&mut self, channel: ChannelId) {
        if let Some(i) = self.topology.incoming(self.core.id()).iter().position(|&c| c == channel) {
            self.flushed[i] = true;
        }
    }

    /// Tells every outgoing neighbour that nothing more will come from here.
    fn flush(&mut self) {
        if std::mem::replace(&mut self.flush_sent, true) {
            return;
        }
        for &channel in self.topology.outgoing(self.core.id()) {
            let to = self.topology.channel(channel).to;
            let _ = self.peers[to.index()].send(Input::Flush { channel });
        }
    }

    fn handle(&mut self, input: Input<A>) -> Result<(), RuntimeError> {
        match input {
            Input::Command(cmd) => self.command(cmd),
            Input::Initiate(snapshot) => self.initiate(snapshot),
            Input::Deliver { channel, wire } => self.deliver(channel, wire),
            Input::Flush { channel } => {
                self.mark_flushed(channel);
                Ok(())
            }
            Input::Shutdown => {
                self.shutting_down = true;
                // Deferred work first, so that its markers precede the flush.
                if self.core.has_deferred() {
                    self.core.flush(&self.topology, &mut self.effects);
                    self.apply(StepInput::Idle)?;
                }
                self.flush();
                Ok(())
            }
        }
    }

    fn core_error(&self, error: CoreError) -> RuntimeError {
        RuntimeError::Core { process: self.name(), error }
    }

    fn command(&mut self, cmd: A::Command) -> Result<(), RuntimeError> {
        let me = self.core.id();
        let mut queued = std::mem::take(&mut self.queued);
        let result = self.core.app().on_command(cmd, &mut Outbox::new(&self.topology, me, &mut queued));
        if let Err(reason) = result {
            self.rejected.push(Rejected { process: me, reason: reason.to_string() });
        }
        for step in queued.drain(..) {
            let (result, input) = match step {
                Queued::Send(channel, msg) => {
                    let id = MsgId::new(me, self.next_msg);
                    (self.core.send(&self.topology, channel, msg, &mut self.effects), StepInput::Send(id))
                }
                Queued::Internal(step) => {
                    let result = self.core.internal(&self.topology, &step, &mut self.effects);
                    if result.is_ok() && self.trace {
                        Tracer::event(&mut self.log, me, EventKind::Internal { step }, self.core.app());
                    }
                    (result, StepInput::Idle)
                }
            };
            match result {
                Ok(()) => {
                    if let StepInput::Send(_) = input {
                        self.next_msg += 1;
                    }
                    self.apply(input)?;
                }
                // The application refused the step: nothing changed, the command is rejected.
                Err(CoreError::Refused { reason, .. }) => {
                    self.rejected.push(Rejected { process: me, reason: reason.to_string() });
                }
                Err(e) => return Err(self.core_error(e)),
            }
        }
        self.queued = queued;
        Ok(())
    }

    fn initiate(&mut self, snapshot: SnapshotId) -> Result<(), RuntimeError> {
        match self.core.initiate(&self.topology, snapshot, &mut self.effects) {
            Ok(()) => self.apply(StepInput::Initiate),
            // Several initiators race: this process already recorded through a marker.
            Err(CoreError::AlreadyRecorded { .. } | CoreError::SnapshotCompleted { .. }) => Ok(()),
            Err(e) => Err(self.core_error(e)),
        }
    }

    fn deliver(&mut self, channel: ChannelId, wire: Wire<A::Msg>) -> Result<(), RuntimeError> {
        // After its flush a process has promised its neighbours that nothing more comes: a
        // marker that would make it record now (and send markers) is left unreceived, so the
        // snapshot stays open here and is reported incomplete.
        if let Wire::Marker(snapshot) = wire {
            if self.flush_sent && !self.core.has_recorded(snapshot) {
                return Ok(());
            }
        }
        let (input, message) = match wire {
            Wire::App(id, msg) => (StepInput::Receive { channel, id }, Message::App(msg)),
            Wire::Marker(snapshot) => (StepInput::Marker { channel, snapshot }, Message::Marker(snapshot)),
            Wire::Cancel(snapshot) => (StepInput::Idle, Message::Cancel(snapshot)),
        };
        let result = self.core.receive(&self.topology, channel, message, &mut self.effects);
        result.map_err(|e| self.core_error(e))?;
        self.apply(input)
    }

    /// Records the step in the trace and carries out its effects, in order.
    fn apply(&mut self, input: StepInput) -> Result<(), RuntimeError> {
        let me = self.core.id();
        if self.trace {
            Tracer::step(&mut self.log, me, input, &self.effects, self.core.app());
        }
        let effects = std::mem::take(&mut self.effects);
        for effect in &effects {
            match effect {
                Effect::Send { channel, message } => {
                    let wire = match message {
                        Message::App(msg) => match input {
                            StepInput::Send(id) => Wire::App(id, msg.clone()),
                            _ => continue,
                        },
                        Message::Marker(s) => Wire::Marker(*s),
                        Message::Cancel(s) => Wire::Cancel(*s),
                    };
                    let to = self.topology.channel(*channel).to;
                    // A peer that stopped has failed; the collector reports why.
                    let _ = self.peers[to.index()].send(Input::Deliver { channel: *channel, wire });
                }
                Effect::Completed { snapshot } => {
                    let local = self.core.take_local_snapshot(&self.topology, *snapshot);
                    let local = local.map_err(|e| self.core_error(e))?;
                    let _ = self.collector.send(ToCollector::Local(local));
                }
                // Only the barrier algorithms give a checkpoint up.
                Effect::Aborted { .. } | Effect::Recorded { .. } | Effect::Closed { .. } => {}
            }
        }
        self.effects = effects;
        self.effects.clear();
        Ok(())
    }
}
