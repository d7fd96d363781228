//! The tick-based simulator: the core's [`Process`] at every node, channels as queues with due
//! times, and the course suite's scheduling rules.

use std::collections::{BTreeMap, HashMap};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use smallvec::SmallVec;

use super::delays::{DelaySource, Delays};
use super::error::SimError;
use super::finished::{Finished, SimSnapshot};
use super::links::{Link, Order, Wire};
use crate::apps::spec::Spec;
use crate::check::{MsgId, StepInput, Trace, Tracer};
use crate::protocol::Assembler;
use crate::protocol::Variant;
use crate::protocol::{ChannelId, ProcessId, Topology};
use crate::protocol::{CoreError, Effect, Message, Process, SnapshotId};

/// Under [`Variant::LoseMarkers`], the chance (in percent) that a marker due for delivery is lost
/// instead (it still uses up its source's one delivery of that tick).
pub const MARKER_LOSS_PERCENT: u32 = 25;

/// How to run a simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Where message delays come from.
    pub delays: DelaySource,
    /// The fault variant: core variants go to every [`Process`]; the channel faults
    /// ([`Variant::NonFifo`], [`Variant::LoseMarkers`]) are simulated by the channels.
    pub variant: Variant,
    /// Seed of the generator making the channel faults' choices.
    pub fault_seed: u64,
    /// [`Simulator::run_to_completion`] gives up after this many ticks that deliver something.
    pub tick_limit: u64,
}

impl SimConfig {
    /// The correct algorithm with these delays; fault seed 0, tick limit 1,000,000.
    pub fn new(delays: DelaySource) -> Self {
        SimConfig { delays, variant: Variant::None, fault_seed: 0, tick_limit: 1_000_000 }
    }
}

/// A deterministic discrete-time simulation of an application `A` over a topology: the
/// application is plugged in by the caller (the bank by the course replay, any [`Spec`] by
/// tests and examples), and its messages are sent with [`Simulator::send`].
///
/// Rules (those of the course suite): nodes and links are visited in string order of their
/// names; every send, application message or marker, draws one delay `d` and is due at `time + 1 + d`; draws
/// happen in program order, and a node sending markers draws for its links in destination-name
/// order. A tick advances time by one, then each source node in order delivers the head of the
/// first of its links (in order) whose head is due, handling it completely, so each source
/// delivers at most one message per tick and a head not yet due blocks its link.
pub struct Simulator<A: Spec> {
    topology: Topology,
    processes: Vec<Process<A>>,
    links: Vec<Link<A::Msg>>,
    /// Source nodes in name order, each with its outgoing channels in destination-name order.
    schedule: Vec<Vec<ChannelId>>,
    /// Each channel's position among its source's channels in destination-name order.
    marker_rank: Vec<usize>,
    /// Each channel's position in its receiver's incoming channels.
    incoming_index: Vec<usize>,
    delays: Delays,
    faults: StdRng,
    variant: Variant,
    order: Order,
    tick_limit: u64,
    time: u64,
    next_msg: Vec<u64>,
    next_snapshot: u32,
    /// The tokens each initial state was made from ([`Spec::initial`]).
    tokens: Vec<u32>,
    trace: Trace<A>,
    assembler: Assembler<A>,
    /// Per snapshot in progress, the channel of each recorded message, in recording order.
    arrivals: HashMap<SnapshotId, Vec<ChannelId>>,
    done: BTreeMap<SnapshotId, SimSnapshot<A>>,
}

impl<A: Spec> Simulator<A> {
    /// A simulation of `topology` where process `i` starts in state
    /// [`Spec::initial`]`(i, tokens[i])` (for the bank: `tokens[i]` jars).
    pub fn new(topology: Topology, tokens: &[u32], config: SimConfig) -> Result<Self, SimError> {
        if tokens.len() != topology.len() {
            return Err(SimError::TokenCount { expected: topology.len(), got: tokens.len() });
        }
        let variant = config.variant;
        let processes: Vec<Process<A>> =
            topology.processes().map(|p| Process::with_variant(p, A::initial(p, tokens[p.index()]), variant)).collect();
        let name = |p: ProcessId| topology.name(p).to_string();
        let mut sources: Vec<ProcessId> = topology.processes().collect();
        sources.sort_by_key(|&p| name(p));
        let mut marker_rank = vec![0; topology.channels().len()];
        let schedule: Vec<Vec<ChannelId>> = sources
            .iter()
            .map(|&p| {
                let mut out = topology.outgoing(p).to_vec();
                out.sort_by_key(|&c| name(topology.channel(c).to));
                for (rank, c) in out.iter().enumerate() {
                    marker_rank[c.index()] = rank;
                }
                out
            })
            .collect();
        let mut incoming_index = vec![0; topology.channels().len()];
        for p in topology.processes() {
            for (i, c) in topology.incoming(p).iter().enumerate() {
                incoming_index[c.index()] = i;
            }
        }
        let initial = processes.iter().map(|p| *p.app()).collect();
        Ok(Simulator {
            links: (0..topology.channels().len()).map(|_| Link::default()).collect(),
            next_msg: vec![0; topology.len()],
            topology,
            processes,
            schedule,
            marker_rank,
            incoming_index,
            delays: Delays::new(config.delays),
            faults: StdRng::seed_from_u64(config.fault_seed),
            variant,
            order: if variant == Variant::NonFifo { Order::Any } else { Order::Fifo },
            tick_limit: config.tick_limit,
            time: 0,
            next_snapshot: 0,
            tokens: tokens.to_vec(),
            trace: Trace::new(initial),
            assembler: Assembler::new(),
            arrivals: HashMap::new(),
            done: BTreeMap::new(),
        })
    }

    /// The topology simulated.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The current time (ticks so far).
    pub fn time(&self) -> u64 {
        self.time
    }

    /// The process at node `p` (its application state and snapshot slots).
    pub fn process(&self, p: ProcessId) -> Result<&Process<A>, SimError> {
        self.processes.get(p.index()).ok_or(SimError::UnknownProcess(p))
    }

    /// Messages and markers in transit.
    pub fn in_flight(&self) -> usize {
        self.links.iter().map(Link::len).sum()
    }

    /// Snapshots started so far (their ids are `0..started`).
    pub fn started(&self) -> u32 {
        self.next_snapshot
    }

    /// Whether every started snapshot has completed at every node.
    pub fn all_complete(&self) -> bool {
        self.done.len() == self.next_snapshot as usize
    }

    fn check(&self, p: ProcessId) -> Result<ProcessId, SimError> {
        self.topology.check_process(p).map_err(|_| SimError::UnknownProcess(p))
    }

    /// Sends `msg` from `from` to its neighbour `to` now: the sender's side of the send
    /// ([`crate::protocol::Application::on_send`], e.g. a debit) happens at once, the receipt later.
    /// Refused, with nothing changed, when a process is unknown, there is no link
    /// ([`SimError::NoLink`]) or the sender's application refuses ([`SimError::Refused`]).
    pub fn send(&mut self, from: ProcessId, to: ProcessId, msg: A::Msg) -> Result<MsgId, SimError> {
        self.check(from)?;
        self.check(to)?;
        let name = |p| self.topology.name(p).to_string();
        let channel = self
            .topology
            .channel_between(from, to)
            .ok_or_else(|| SimError::NoLink { from: name(from), to: name(to) })?;
        let mut effects = Vec::new();
        // A refused send leaves the process unchanged (the core's contract).
        self.processes[from.index()].send(&self.topology, channel, msg, &mut effects).map_err(|e| match e {
            CoreError::Refused { reason, .. } => SimError::Refused { process: name(from), reason },
            other => SimError::Core(other),
        })?;
        let id = MsgId::new(from, self.next_msg[from.index()]);
        self.next_msg[from.index()] += 1;
        self.carry_out(from, StepInput::Send(id), effects)?;
        Ok(id)
    }

    /// Starts the next snapshot (ids 0, 1, 2… in order) at `at`: it records and sends its
    /// markers now.
    pub fn start_snapshot(&mut self, at: ProcessId) -> Result<SnapshotId, SimError> {
        self.check(at)?;
        let id = SnapshotId(self.next_snapshot);
        let mut effects = Vec::new();
        self.processes[at.index()].initiate(&self.topology, id, &mut effects)?;
        self.next_snapshot += 1;
        self.carry_out(at, StepInput::Initiate, effects)?;
        Ok(id)
    }

    /// Makes `at` one more initiator of the started snapshot `id`. Returns false, doing nothing,
    /// when `at` has already recorded for it.
    pub fn join_snapshot(&mut self, id: SnapshotId, at: ProcessId) -> Result<bool, SimError> {
        self.check(at)?;
        if id.0 >= self.next_snapshot {
            return Err(SimError::UnknownSnapshot(id));
        }
        if self.processes[at.index()].has_recorded(id) {
            return Ok(false);
        }
        let mut effects = Vec::new();
        self.processes[at.index()].initiate(&self.topology, id, &mut effects)?;
        self.carry_out(at, StepInput::Initiate, effects)?;
        Ok(true)
    }

    /// Advances time by `n` ticks. Ticks with nothing due are skipped in one step, so a large
    /// `n` costs only the deliveries it makes.
    pub fn tick(&mut self, n: u64) -> Result<(), SimError> {
        let mut remaining = n;
        while remaining > 0 {
            let Some(due) = self.next_due() else {
                self.time = self.time.saturating_add(remaining);
                return Ok(());
            };
            let idle = due.saturating_sub(self.time.saturating_add(1)).min(remaining);
            self.time += idle;
            remaining -= idle;
            if remaining > 0 {
                self.step()?;
                remaining -= 1;
            }
        }
        Ok(())
    }

    /// Ticks until every started snapshot has completed everywhere. Returns false when it stops
    /// earlier: nothing is left in transit (a broken variant can leave a snapshot incomplete
    /// forever), or [`SimConfig::tick_limit`] ticks delivered something.
    pub fn run_to_completion(&mut self) -> Result<bool, SimError> {
        let mut busy = 0;
        while !self.all_complete() {
            let Some(due) = self.next_due() else {
                // Idle: deferred work (only a fault variant defers any) happens now.
                if self.release_faults()? {
                    continue;
                }
                return Ok(false);
            };
            if busy >= self.tick_limit {
                return Ok(false);
            }
            self.time = self.time.max(due.saturating_sub(1));
            self.step()?;
            busy += 1;
        }
        Ok(true)
    }

    /// Ends the run: the snapshots assembled, the ids that never completed, the final states
    /// and the trace.
    pub fn finish(self) -> Finished<A> {
        let incomplete =
            (0..self.next_snapshot).map(SnapshotId).filter(|id| !self.done.contains_key(id)).collect::<Vec<_>>();
        Finished {
            snapshots: self.done.into_values().collect(),
            incomplete,
            states: self.processes.iter().map(|p| *p.app()).collect(),
            tokens: self.tokens,
            in_transit: self.links.iter().map(Link::app_messages).collect(),
            trace: self.trace,
            time: self.time,
        }
    }

    /// Fault variants only: every process whose fault deferred work does it; returns whether
    /// any did (never, for the correct algorithm, which defers nothing).
    fn release_faults(&mut self) -> Result<bool, SimError> {
        let mut any = false;
        for i in 0..self.processes.len() {
            let p = ProcessId(i as u16);
            if self.processes[i].faults_pending() {
                let mut effects = Vec::new();
                self.processes[p.index()].release_faults(&self.topology, &mut effects);
                self.carry_out(p, StepInput::Idle, effects)?;
                any = true;
            }
        }
        Ok(any)
    }

    /// The earliest tick at which some link can deliver.
    fn next_due(&self) -> Option<u64> {
        self.links.iter().filter_map(|l| l.next_due(self.order)).min()
    }

    /// One tick: time advances, then each source node delivers at most one due message.
    fn step(&mut self) -> Result<(), SimError> {
        self.time = self.time.saturating_add(1);
        for s in 0..self.schedule.len() {
            for k in 0..self.schedule[s].len() {
                let channel = self.schedule[s][k];
                let Some(wire) = self.links[channel.index()].take_due(self.time, self.order, &mut self.faults) else {
                    continue;
                };
                let lost = self.variant == Variant::LoseMarkers
                    && matches!(wire, Wire::Marker(_))
                    && self.faults.random_ratio(MARKER_LOSS_PERCENT, 100);
                if !lost {
                    self.deliver(channel, wire)?;
                }
                break;
            }
        }
        Ok(())
    }

    /// Hands a message or marker to its receiver and carries out what follows.
    fn deliver(&mut self, channel: ChannelId, wire: Wire<A::Msg>) -> Result<(), SimError> {
        let to = self.topology.channel(channel).to;
        let process = &mut self.processes[to.index()];
        let mut effects = Vec::new();
        match wire {
            Wire::App(id, msg) => {
                // Which snapshots record this message: the records that grow.
                let idx = self.incoming_index[channel.index()];
                let recorded = |p: &Process<A>| -> SmallVec<[(SnapshotId, usize); 4]> {
                    p.slots().iter().map(|s| (s.id, s.record(idx).count())).collect()
                };
                let before = recorded(process);
                process.receive(&self.topology, channel, Message::App(msg), &mut effects)?;
                let after = recorded(process);
                for (id, n) in before {
                    if after.iter().any(|&(s, m)| s == id && m > n) {
                        self.arrivals.entry(id).or_default().push(channel);
                    }
                }
                self.carry_out(to, StepInput::Receive { channel, id }, effects)
            }
            Wire::Marker(snapshot) => {
                process.receive(&self.topology, channel, Message::Marker(snapshot), &mut effects)?;
                self.carry_out(to, StepInput::Marker { channel, snapshot }, effects)
            }
        }
    }

    /// Records a core step in the trace, then carries out its effects in order.
    fn carry_out(&mut self, p: ProcessId, input: StepInput, effects: Vec<Effect<A::Msg>>) -> Result<(), SimError> {
        Tracer::step(&mut self.trace.events, p, input, &effects, self.processes[p.index()].app());
        let mut i = 0;
        while i < effects.len() {
            match &effects[i] {
                Effect::Send { message: Message::Marker(snapshot), .. } => {
                    // One node's markers for one snapshot: draw in destination-name order.
                    let run: Vec<ChannelId> = effects[i..]
                        .iter()
                        .map_while(|e| match e {
                            Effect::Send { channel, message: Message::Marker(s) } if s == snapshot => Some(*channel),
                            _ => None,
                        })
                        .collect();
                    let mut by_rank: Vec<usize> = (0..run.len()).collect();
                    by_rank.sort_by_key(|&k| self.marker_rank[run[k].index()]);
                    let mut delays = vec![0; run.len()];
                    for k in by_rank {
                        delays[k] = self.delays.draw()?;
                    }
                    for (channel, d) in run.iter().zip(delays) {
                        let due = self.due(d);
                        self.links[channel.index()].push(due, Wire::Marker(*snapshot));
                    }
                    i += run.len();
                    continue;
                }
                Effect::Send { channel, message: Message::App(msg) } => {
                    if let StepInput::Send(id) = input {
                        let delay = self.delays.draw()?;
                        let due = self.due(delay);
                        self.links[channel.index()].push(due, Wire::App(id, *msg));
                    }
                }
                Effect::Completed { snapshot } => self.complete(p, *snapshot)?,
                // The simulator runs Chandy–Lamport, which neither cancels nor gives up.
                Effect::Send { message: Message::Cancel(_), .. } | Effect::Aborted { .. } => {}
                Effect::Recorded { .. } | Effect::Closed { .. } => {}
            }
            i += 1;
        }
        Ok(())
    }

    fn due(&self, delay: u32) -> u64 {
        self.time.saturating_add(1).saturating_add(u64::from(delay))
    }

    /// Takes `p`'s completed part of `snapshot` and assembles the global snapshot when it is the
    /// last part.
    fn complete(&mut self, p: ProcessId, snapshot: SnapshotId) -> Result<(), SimError> {
        let local = self.processes[p.index()].take_local_snapshot(&self.topology, snapshot)?;
        if let Some(global) = self.assembler.add(&self.topology, local)? {
            let arrivals = self.arrivals.remove(&snapshot).unwrap_or_default();
            self.done.insert(snapshot, SimSnapshot { global, arrivals });
        }
        Ok(())
    }
}
