//! One process thread: the core plus the application, fed from one inbox.
//!
//! What arrives is queued in the thread ([`ProcessThread::arrivals`], arrival order) and taken
//! from there one step at a time, so that each mode's rules decide what goes next:
//! - every incoming channel stays FIFO: an item is taken only once everything ahead of it on
//!   its channel has been;
//! - aligned barriers: nothing is taken from a blocked input (barriers and cancellations
//!   included): it stays queued until the barriers align or the checkpoint is given up;
//! - unaligned barriers: a barrier (or a trigger) goes first, overtaking the application
//!   messages queued ahead of it on its channel, which the core records as channel state and
//!   which stay queued; then one buffered message is transmitted per step (so a barrier may
//!   overtake the output buffer too); then the queue in order.
//!
//! Barriers and triggers never overtake a command, a shutdown or another barrier.
//!
//! A crash ends an incarnation: the thread sends a halt on every outgoing channel, drops
//! everything it holds and everything that arrives until a halt has come on every incoming
//! channel (so nothing of the old incarnation is left in its inbox), reports its log, and
//! waits for its restart: a new core from the restored state, with the restored channel state
//! in front of each incoming channel. Messages that peers already restarted send meanwhile are
//! kept, behind the restored ones. The thread itself lives on (loom counts every thread an
//! execution ever spawns, at most 5).

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::outcome::{Options, Rejected, RuntimeError};
use super::service::{Outbox, Queued, Service};
use super::sync::mpsc;
use super::wire::{Halted, Input, Restart, ToCollector, Wire};
use crate::check::{Event, EventKind, MsgId, StepInput, Tracer};
use crate::protocol::Algorithm;
use crate::protocol::Variant;
use crate::protocol::{ChannelId, ProcessId, Topology};
use crate::protocol::{CoreError, Effect, Message, Process, SnapshotId};

/// What a process thread returns when it stops cleanly.
pub(crate) struct ProcessExit<A: Service> {
    pub(crate) state: A,
    pub(crate) log: Vec<Event<A>>,
    pub(crate) rejected: Vec<Rejected>,
}

/// The next step of a process.
enum Next {
    /// The queued item at this position, in order.
    At(usize),
    /// Unaligned: the barrier queued at this position, ahead of the data queued before it on
    /// its channel.
    Overtake(usize),
    /// Unaligned: the oldest message buffered for this channel goes on the wire.
    Transmit(ChannelId),
}

/// Ids of restored messages: above any id a process gives its own sends.
const RESTORED: u64 = 1 << 47;

pub(crate) struct ProcessThread<A: Service> {
    core: Process<A>,
    topology: Arc<Topology>,
    trace: bool,
    variant: Variant,
    algorithm: Algorithm,
    /// Where checkpoints start (the aligned mode's back edges are found from them).
    roots: Vec<ProcessId>,
    inbox: mpsc::Receiver<Input<A>>,
    peers: Vec<mpsc::Sender<Input<A>>>,
    collector: mpsc::Sender<ToCollector<A>>,
    /// Inputs taken from the inbox and not handled yet, in arrival order.
    arrivals: VecDeque<Input<A>>,
    log: Vec<Event<A>>,
    rejected: Vec<Rejected>,
    effects: Vec<Effect<A::Msg>>,
    queued: Vec<Queued<A::Msg, A::Step>>,
    next_msg: u64,
    /// Unaligned: the ids of the messages in each output buffer, by outgoing channel number.
    buffered_ids: Vec<VecDeque<MsgId>>,
    /// `Shutdown` has arrived.
    shutting_down: bool,
    /// Flushes have been sent on every outgoing channel.
    flush_sent: bool,
    /// Which incoming channels have been flushed.
    flushed: Vec<bool>,
    /// Decline the next checkpoint recorded here.
    decline_next: bool,
    /// After a restart: whether the collector was told that the restored input is taken in.
    recovered_told: bool,
    /// The first failure here; a failed process only drains until shutdown.
    failure: Option<RuntimeError>,
}

impl<A: Service> ProcessThread<A> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: ProcessId,
        app: A,
        topology: Arc<Topology>,
        options: &Options,
        roots: Vec<ProcessId>,
        inbox: mpsc::Receiver<Input<A>>,
        peers: Vec<mpsc::Sender<Input<A>>>,
        collector: mpsc::Sender<ToCollector<A>>,
    ) -> Self {
        let incoming = topology.incoming(id).len();
        let outgoing = topology.outgoing(id).len();
        let core = Process::with_variant(id, app, options.variant).with_algorithm(&topology, options.algorithm, &roots);
        ProcessThread {
            core,
            topology,
            trace: options.trace,
            variant: options.variant,
            algorithm: options.algorithm,
            roots,
            inbox,
            peers,
            collector,
            arrivals: VecDeque::new(),
            log: Vec::new(),
            rejected: Vec::new(),
            effects: Vec::new(),
            queued: Vec::new(),
            next_msg: 0,
            buffered_ids: vec![VecDeque::new(); outgoing],
            shutting_down: false,
            flush_sent: false,
            flushed: vec![false; incoming],
            decline_next: false,
            recovered_told: true,
            failure: None,
        }
    }

    fn name(&self) -> String {
        self.topology.name(self.core.id()).to_string()
    }

    /// The thread body: handle inputs until shut down. A process whose application panics, or
    /// whose core refuses a step, reports the failure to the collector, flushes its outgoing
    /// channels and from then on only drains its inbox until shutdown (or a crash), so no
    /// thread blocks forever and no message is left unreceived.
    pub(crate) fn run(mut self) -> Result<ProcessExit<A>, RuntimeError> {
        self.guarded(|p| p.react());
        loop {
            if !self.recovered_told && !self.core.is_recovering() {
                // The restored input is taken in: checkpoints are taken here again.
                self.recovered_told = true;
                let _ = self.collector.send(ToCollector::Recovered);
            }
            while let Ok(input) = self.inbox.try_recv() {
                self.arrivals.push_back(input);
            }
            if let Some(at) = self.arrivals.iter().position(|i| matches!(i, Input::Crash(_))) {
                let Some(Input::Crash(reply)) = self.arrivals.remove(at) else { continue };
                self.crash(reply)?;
                continue;
            }
            match self.next() {
                // A failed process only drains (a step that cannot fail).
                Some(next) if self.failure.is_some() => {
                    let _ = self.step(next);
                }
                Some(next) => self.guarded(|p| p.step(next)),
                None => {
                    // Idle: work a fault variant deferred happens now.
                    if self.failure.is_none() && self.core.faults_pending() {
                        self.guarded(|p| {
                            p.core.release_faults(&p.topology, &mut p.effects);
                            p.apply(StepInput::Idle)
                        });
                        continue;
                    }
                    let Ok(input) = self.inbox.recv() else {
                        return Err(self.failure.unwrap_or(RuntimeError::Stopped));
                    };
                    self.arrivals.push_back(input);
                    continue;
                }
            }
            if self.failure.is_none() {
                self.maybe_flush();
            }
            if self.shutting_down && self.flush_sent && self.flushed.iter().all(|&f| f) {
                return match self.failure {
                    Some(e) => Err(e),
                    None => Ok(ProcessExit { state: self.core.app().clone(), log: self.log, rejected: self.rejected }),
                };
            }
        }
    }

    /// Runs `f`; a failure or a panic makes this process failed: reported, flushed, draining.
    fn guarded(&mut self, f: impl FnOnce(&mut Self) -> Result<(), RuntimeError>) {
        if self.failure.is_some() {
            return;
        }
        let result = catch_unwind(AssertUnwindSafe(|| f(self)));
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

    fn incoming_index(&self, channel: ChannelId) -> usize {
        self.topology.incoming(self.core.id()).iter().position(|&c| c == channel).unwrap_or(usize::MAX)
    }

    fn outgoing_index(&self, channel: ChannelId) -> usize {
        self.topology.outgoing(self.core.id()).iter().position(|&c| c == channel).unwrap_or(usize::MAX)
    }

    /// Chooses the next step (see the module documentation), or `None` when nothing queued can
    /// be taken now.
    fn next(&self) -> Option<Next> {
        if self.failure.is_some() {
            return (!self.arrivals.is_empty()).then_some(Next::At(0));
        }
        let n = self.flushed.len();
        if self.algorithm.barriers_overtake() {
            // Barriers and triggers first, past queued data only.
            let mut held = vec![false; n];
            for (i, item) in self.arrivals.iter().enumerate() {
                match item {
                    Input::Deliver { wire: Wire::App(..), .. } => {}
                    Input::Deliver { channel, wire: Wire::Marker(_) } => {
                        // Nothing overtakes restored data, which is already in the input.
                        let restored = self.core.restored(&self.topology, *channel) > 0;
                        if !restored && !held.get(self.incoming_index(*channel)).copied().unwrap_or(true) {
                            return Some(Next::Overtake(i));
                        }
                    }
                    Input::Deliver { channel, .. } | Input::Flush { channel } | Input::Halt { channel } => {
                        if let Some(h) = held.get_mut(self.incoming_index(*channel)) {
                            *h = true;
                        }
                    }
                    Input::Initiate(_) => return Some(Next::At(i)),
                    _ => break,
                }
            }
        }
        if self.algorithm.buffers_output() {
            for &c in self.topology.outgoing(self.core.id()) {
                if self.core.buffered(&self.topology, c).next().is_some() {
                    return Some(Next::Transmit(c));
                }
            }
        }
        let mut stuck = vec![false; n];
        for (i, item) in self.arrivals.iter().enumerate() {
            match item {
                Input::Deliver { channel, .. } => {
                    let ci = self.incoming_index(*channel);
                    if stuck.get(ci).copied().unwrap_or(false) {
                        continue;
                    }
                    if self.core.is_blocked(&self.topology, *channel) {
                        stuck[ci] = true;
                        continue;
                    }
                    return Some(Next::At(i));
                }
                Input::Flush { channel } => {
                    if !stuck.get(self.incoming_index(*channel)).copied().unwrap_or(false) {
                        return Some(Next::At(i));
                    }
                }
                // A peer crashed before this process: nothing follows on that channel, and the
                // halt waits for this process's own crash.
                Input::Halt { channel } => {
                    if let Some(s) = stuck.get_mut(self.incoming_index(*channel)) {
                        *s = true;
                    }
                }
                _ => return Some(Next::At(i)),
            }
        }
        None
    }

    fn step(&mut self, next: Next) -> Result<(), RuntimeError> {
        let input = match next {
            Next::Transmit(channel) => {
                self.core.transmit(&self.topology, channel, &mut self.effects).map_err(|e| self.core_error(e))?;
                return self.apply(StepInput::Idle);
            }
            Next::Overtake(at) => {
                let Some(Input::Deliver { channel, wire }) = self.arrivals.remove(at) else {
                    return Err(RuntimeError::Stopped);
                };
                let overtaken: Vec<A::Msg> = self
                    .arrivals
                    .iter()
                    .take(at)
                    .filter_map(|i| match i {
                        Input::Deliver { channel: c, wire: Wire::App(_, m) } if *c == channel => Some(m.clone()),
                        _ => None,
                    })
                    .collect();
                return self.deliver(channel, wire, &overtaken);
            }
            Next::At(at) => match self.arrivals.remove(at) {
                Some(input) => input,
                None => return Ok(()),
            },
        };
        if self.failure.is_some() {
            self.drain(input);
            return Ok(());
        }
        match input {
            Input::Command(cmd) => self.command(cmd),
            Input::Initiate(snapshot) => self.initiate(snapshot),
            Input::Deliver { channel, wire } => self.deliver(channel, wire, &[]),
            Input::Flush { channel } => {
                self.mark_flushed(channel);
                Ok(())
            }
            Input::Shutdown => {
                self.shutting_down = true;
                // Deferred work first, so that its markers precede the flush.
                if self.core.faults_pending() {
                    self.core.release_faults(&self.topology, &mut self.effects);
                    self.apply(StepInput::Idle)?;
                }
                Ok(())
            }
            Input::DeclineNext => {
                self.decline_next = true;
                Ok(())
            }
            Input::Crash(_) | Input::Halt { .. } | Input::Restart(_) => Ok(()),
        }
    }

    /// After a failure: keep only the shutdown protocol.
    fn drain(&mut self, input: Input<A>) {
        match input {
            Input::Flush { channel } => self.mark_flushed(channel),
            Input::Shutdown => self.shutting_down = true,
            _ => {}
        }
    }

    fn mark_flushed(&mut self, channel: ChannelId) {
        let i = self.incoming_index(channel);
        if let Some(f) = self.flushed.get_mut(i) {
            *f = true;
        }
    }

    /// Flushes once shutting down with nothing left to transmit; an application that reacts
    /// to what it receives also waits until every incoming channel is flushed (its topology
    /// has no cycle, so this ends).
    fn maybe_flush(&mut self) {
        if !self.shutting_down || self.flush_sent || self.core.buffered_all().next().is_some() {
            return;
        }
        if A::REACTIVE && !self.flushed.iter().all(|&f| f) {
            return;
        }
        self.flush();
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

    /// Ends this incarnation (see the module documentation) and starts the next one.
    fn crash(&mut self, reply: mpsc::Sender<Halted<A>>) -> Result<(), RuntimeError> {
        let me = self.core.id();
        for &channel in self.topology.outgoing(me) {
            let to = self.topology.channel(channel).to;
            let _ = self.peers[to.index()].send(Input::Halt { channel });
        }
        let mut halted = vec![false; self.flushed.len()];
        let mark = |halted: &mut Vec<bool>, input: Input<A>, this: &Self| {
            if let Input::Halt { channel } = input {
                if let Some(h) = halted.get_mut(this.incoming_index(channel)) {
                    *h = true;
                }
            }
        };
        for input in std::mem::take(&mut self.arrivals) {
            mark(&mut halted, input, self);
        }
        while !halted.iter().all(|&h| h) {
            let Ok(input) = self.inbox.recv() else { return Err(RuntimeError::Stopped) };
            mark(&mut halted, input, self);
        }
        let halted = Halted { process: me, log: std::mem::take(&mut self.log), failure: self.failure.take() };
        let _ = reply.send(halted);
        let mut stash = VecDeque::new();
        let restart = loop {
            match self.inbox.recv() {
                Ok(Input::Restart(restart)) => break restart,
                Ok(other) => stash.push_back(other),
                Err(_) => return Err(RuntimeError::Stopped),
            }
        };
        self.restart(restart, stash);
        self.guarded(|p| p.react());
        Ok(())
    }

    /// A fresh incarnation: a new core from `restart.state`, the restored channel state in
    /// front of each incoming channel, then what already arrived for this incarnation.
    fn restart(&mut self, restart: Restart<A>, stash: VecDeque<Input<A>>) {
        let me = self.core.id();
        self.core = Process::with_variant(me, restart.state, self.variant).with_algorithm(
            &self.topology,
            self.algorithm,
            &self.roots,
        );
        let mut arrivals = VecDeque::new();
        let mut k = 0;
        let mut refused = None;
        for (i, msgs) in restart.channels.into_iter().enumerate() {
            let Some(&channel) = self.topology.incoming(me).get(i) else { continue };
            // The core declines checkpoints until it has taken these in.
            if let Err(e) = self.core.restore_input(&self.topology, channel, msgs.len()) {
                refused.get_or_insert(self.core_error(e));
            }
            for msg in msgs {
                arrivals.push_back(Input::Deliver { channel, wire: Wire::App(MsgId::new(me, RESTORED + k), msg) });
                k += 1;
            }
        }
        arrivals.extend(stash);
        self.arrivals = arrivals;
        self.log.clear();
        self.effects.clear();
        self.queued.clear();
        self.next_msg = 0;
        self.buffered_ids.iter_mut().for_each(VecDeque::clear);
        self.shutting_down = false;
        self.flush_sent = false;
        self.flushed.iter_mut().for_each(|f| *f = false);
        self.decline_next = false;
        self.recovered_told = false;
        self.failure = refused;
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
        self.run_queued(&mut queued)?;
        self.queued = queued;
        self.react()
    }

    /// The application's own steps after a step of this process ([`Service::react`]).
    fn react(&mut self) -> Result<(), RuntimeError> {
        if !A::REACTIVE {
            return Ok(());
        }
        let me = self.core.id();
        let mut queued = std::mem::take(&mut self.queued);
        self.core.app().react(&mut Outbox::new(&self.topology, me, &mut queued));
        self.run_queued(&mut queued)?;
        self.queued = queued;
        Ok(())
    }

    /// Applies queued steps in order through the core.
    fn run_queued(&mut self, queued: &mut Vec<Queued<A::Msg, A::Step>>) -> Result<(), RuntimeError> {
        let me = self.core.id();
        for step in queued.drain(..) {
            let (result, input) = match step {
                Queued::Send(channel, msg) => {
                    let id = MsgId::new(me, self.next_msg);
                    let traced = (self.trace && self.algorithm.buffers_output()).then(|| msg.clone());
                    let result = self.core.send(&self.topology, channel, msg, &mut self.effects);
                    if result.is_ok() && self.algorithm.buffers_output() {
                        // Into the output buffer: the send is the application's, now; the
                        // message goes on the wire when transmitted.
                        let j = self.outgoing_index(channel);
                        if let Some(ids) = self.buffered_ids.get_mut(j) {
                            ids.push_back(id);
                        }
                        if let Some(msg) = traced {
                            Tracer::event(&mut self.log, me, EventKind::Send { channel, id, msg }, self.core.app());
                        }
                    }
                    (result, StepInput::Send(id))
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

    fn deliver(&mut self, channel: ChannelId, wire: Wire<A::Msg>, overtaken: &[A::Msg]) -> Result<(), RuntimeError> {
        // After its flush a process has promised its neighbours that nothing more comes: a
        // marker that would make it record now (and send markers), or a cancellation it would
        // pass on, is left unreceived, so the snapshot stays open here and is reported
        // incomplete.
        match wire {
            Wire::Marker(snapshot) if self.flush_sent && !self.core.has_recorded(snapshot) => return Ok(()),
            Wire::Cancel(_) if self.flush_sent => return Ok(()),
            _ => {}
        }
        let (input, message) = match wire {
            Wire::App(id, msg) => (StepInput::Receive { channel, id }, Message::App(msg)),
            Wire::Marker(snapshot) => (StepInput::Marker { channel, snapshot }, Message::Marker(snapshot)),
            Wire::Cancel(snapshot) => (StepInput::Idle, Message::Cancel(snapshot)),
        };
        let received = matches!(message, Message::App(_));
        let result = self.core.receive_overtaking(&self.topology, channel, message, overtaken, &mut self.effects);
        result.map_err(|e| self.core_error(e))?;
        self.apply(input)?;
        if received {
            self.react()?;
        }
        Ok(())
    }

    /// Records the step in the trace and carries out its effects, in order.
    fn apply(&mut self, input: StepInput) -> Result<(), RuntimeError> {
        let me = self.core.id();
        if self.trace {
            Tracer::step(&mut self.log, me, input, &self.effects, self.core.app());
        }
        let effects = std::mem::take(&mut self.effects);
        let mut declined = None;
        for effect in &effects {
            match effect {
                Effect::Send { channel, message } => {
                    let wire = match message {
                        Message::App(msg) => {
                            let id = match input {
                                StepInput::Send(id) if !self.algorithm.buffers_output() => Some(id),
                                _ => {
                                    let j = self.outgoing_index(*channel);
                                    self.buffered_ids.get_mut(j).and_then(VecDeque::pop_front)
                                }
                            };
                            let Some(id) = id else { continue };
                            Wire::App(id, msg.clone())
                        }
                        Message::Marker(s) => Wire::Marker(*s),
                        Message::Cancel(s) => Wire::Cancel(*s),
                    };
                    let to = self.topology.channel(*channel).to;
                    // A peer that stopped has failed; the collector reports why.
                    let _ = self.peers[to.index()].send(Input::Deliver { channel: *channel, wire });
                }
                Effect::Recorded { snapshot, .. } => {
                    if self.decline_next && self.algorithm.coordinated() {
                        self.decline_next = false;
                        declined = Some(*snapshot);
                    }
                }
                Effect::Completed { snapshot } if declined == Some(*snapshot) => {}
                Effect::Completed { snapshot } => {
                    let local = self.core.take_local_snapshot(&self.topology, *snapshot);
                    let local = local.map_err(|e| self.core_error(e))?;
                    let _ = self.collector.send(ToCollector::Local(local));
                }
                Effect::Aborted { snapshot } => {
                    let _ = self.collector.send(ToCollector::Aborted(*snapshot));
                }
                Effect::Closed { .. } => {}
            }
        }
        self.effects = effects;
        self.effects.clear();
        if let Some(snapshot) = declined {
            // The test hook: this process declines the checkpoint it just recorded (a failure
            // the coordinator counts), then gives its part up.
            let _ = self.collector.send(ToCollector::Declined(snapshot));
            self.core.decline(&self.topology, snapshot, &mut self.effects).map_err(|e| self.core_error(e))?;
            self.apply(StepInput::Idle)?;
        }
        Ok(())
    }
}
