//! The model: houses running the library's core (`chandy_lamport::Process`, with an
//! application inside: any [`Spec`]) joined by FIFO channels (its stateright face is
//! `explorer::graph`). Every marker rule is the core's; the model only chooses
//! which event happens next and carries out the effects the core returns. A step the core
//! refuses is not dropped: it leads to a dead-end state marked refused, which fails the property
//! "the core accepts every step the model offers".

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chandy_lamport::apps::spec::{stable_predicates, Move, Setup, Spec, Stable, View};
use chandy_lamport::check::{EventKind, MsgId, StepInput, Trace, Tracer};
use chandy_lamport::{
    Ack, ChannelId, Coordinator, Effect, Failure, Initiators, Message, Process, ProcessId, Slot, SnapshotId, Topology,
    Variant,
};
use smallvec::SmallVec;

use super::chans::{Chans, Packet};
use super::config::{Mode, Resolved};
use super::ghost::Ghost;
use super::memo::{self, Input, Scratch};
use super::names;
use super::stamp::{Stamp, Stamped};
use super::state::{
    Cart, Checkpoints, Core, History, House, Houses, Recorded, Shared, State, StateData, Stored, MAX_HOUSES,
};

/// One step of the model; `M` and `S` are the application's messages and internal steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action<M, S> {
    /// `from` sends `msg` on `channel` (a move of its application).
    Send {
        /// The sending house.
        from: u8,
        /// One of its outgoing channels.
        channel: u8,
        /// The message.
        msg: M,
    },
    /// `house` takes internal step `step` (a move of its application).
    Internal {
        /// The house.
        house: u8,
        /// The step.
        step: S,
    },
    /// The message at `index` of `channel` arrives (index 0 unless channels are non-FIFO).
    Deliver {
        /// The channel.
        channel: u8,
        /// Position in the channel.
        index: u8,
    },
    /// Bandits steal the cart at `index` of `channel`.
    Steal {
        /// The channel.
        channel: u8,
        /// Position in the channel.
        index: u8,
    },
    /// The marker at `index` of `channel` is lost (`lose-markers`).
    LoseMarker {
        /// The channel.
        channel: u8,
        /// Position in the channel.
        index: u8,
    },
    /// `house` initiates `snapshot`.
    Initiate {
        /// The house.
        house: u8,
        /// The snapshot.
        snapshot: u8,
    },
    /// `house` is idle and does the work a fault variant deferred (held markers, a held-back
    /// recording); enabled only while it has some.
    Flush {
        /// The house.
        house: u8,
    },
    /// Unaligned barriers: the oldest cart in `house`'s output buffer for `channel` goes onto
    /// the wire.
    Transmit {
        /// The sending house.
        house: u8,
        /// One of its outgoing channels.
        channel: u8,
    },
    /// Barrier algorithms: the coordinator triggers its next checkpoint (the trigger goes to
    /// every source; each handles it with an `Initiate`).
    Trigger,
    /// Barrier algorithms: the coordinator's periodic timer fires while `--max-concurrent`
    /// checkpoints are pending. Offered only where it changes the state: under
    /// `trigger-stops-after-abort` (FLINK-13256), which cancels the timer then; Flink's
    /// coordinator drops the request and nothing changes.
    TimerAtMax,
    /// Barrier algorithms: `house` acknowledges its complete part of `snapshot` to the
    /// coordinator (the part is written).
    Ack {
        /// The house.
        house: u8,
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: every house has acknowledged `snapshot`; the coordinator completes it
    /// (its metadata is written, older pending checkpoints are subsumed). Not yet restorable.
    Complete {
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: completed `snapshot` goes into the completed-checkpoint store: a
    /// recovery restores it from now on, and the houses are told (they drop their parts).
    Store {
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: `house` declines `snapshot` (its state could not be written).
    Decline {
        /// The house.
        house: u8,
        /// The checkpoint.
        snapshot: u8,
    },
    /// Barrier algorithms: the job crashes and recovers from the newest completed checkpoint.
    Crash,
}

/// The most states of the failure-free run whose quiet outcomes exactly-once is judged against.
pub const QUIET_STATES: usize = 2_000_000;

/// Why an action taken in a state leads to no ordinary successor.
pub(crate) enum Stop {
    /// The action is not a step of that state.
    NotAStep,
    /// The core refused the step (its error): the successor is the state marked refused.
    Refused(String),
}

/// The model's action type for application `A`.
pub type Act<A> = Action<<A as chandy_lamport::Application>::Msg, <A as chandy_lamport::Application>::Step>;

/// The Chandy–Lamport model of a resolved configuration, running application `A`.
pub struct ChandyLamport<A: Spec> {
    /// The configuration.
    pub cfg: Resolved,
    /// The application's options.
    pub setup: Setup,
    /// The stable predicates checked with the stable-property rule, in bit order.
    pub predicates: Vec<Stable<A>>,
    initial_total: u64,
    core_variant: Variant,
    /// Latches: once a property has a discovery, later states no longer report it, so the
    /// first (with BFS, shortest) path found is the one kept.
    latches: Arc<Vec<AtomicBool>>,
    /// The registered symmetry group, once symmetry reduction is on.
    pub(crate) sym: u16,
    /// Barrier algorithms: every way the failure-free run (the application alone, no
    /// snapshots, crashes or declines) can end quiet, as the houses' states; `None` with
    /// Chandy–Lamport, or if that run has more than [`QUIET_STATES`] states.
    pub expected: Option<std::collections::HashSet<Vec<A>>>,
    /// Barrier algorithms: for each checkpoint stored so far, whether every quiet end its
    /// failure-free continuation reaches is one of [`ChandyLamport::expected`].
    recovers: Mutex<HashMap<Arc<Stored<A>>, bool>>,
    /// Houses of states decoded from other processes (see `wire`), with their encodings, by a
    /// hash of the encoding: a house read again is shared, as a house a step left unchanged is.
    pub(crate) decoded: Houses<A>,
    /// Houses of states encoded for other processes (see `wire`), with their encodings, by
    /// the house's hash.
    pub(crate) encoded: Houses<A>,
    /// Barrier algorithms: what the steps taken so far did (see [`Tallies`]).
    tallies: [AtomicU64; 5],
    /// This model's number among those of the process: whose houses' steps a thread's
    /// `memo` table holds.
    id: u64,
}

/// The counters behind [`Tallies`], in its field order.
#[derive(Clone, Copy)]
enum Tally {
    Stores,
    Crashes,
    Restores,
    RestoresWithChannelState,
    QuietAfterCrash,
}

/// Barrier algorithms: what the steps of a check did, each step counted once per state it was
/// taken from (the state graph's edges), so that a pass can be told from a vacuous one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tallies {
    /// Steps that stored a completed checkpoint.
    pub stores: u64,
    /// Crashes.
    pub crashes: u64,
    /// Crashes that restored a stored checkpoint (the others restart from the initial states).
    pub restores: u64,
    /// Restores that put channel state back in transit.
    pub restores_with_channel_state: u64,
    /// Steps after a crash that reached a quiet state (where exactly-once is judged).
    pub quiet_after_crash: u64,
}

impl<A: Spec> ChandyLamport<A> {
    /// A model of `cfg`.
    pub fn new(cfg: Resolved) -> Self {
        let initial_total = cfg.topology.processes().map(|p| A::initial(p, cfg.tokens[p.index()]).held()).sum();
        let core_variant = if cfg.variant.is_channel_fault() { Variant::None } else { cfg.variant };
        let latches = Arc::new((0..names::KINDS).map(|_| AtomicBool::new(false)).collect());
        let setup = Setup { internal: cfg.internal };
        let predicates = stable_predicates::<A>();
        // Coordinated: exactly-once after a crash is judged against the failure-free run's quiet
        // outcomes.
        let expected = if cfg.algorithm.coordinated() {
            let initial = cfg.topology.processes().map(|p| A::initial(p, cfg.tokens[p.index()])).collect();
            let budgets = vec![cfg.sends; cfg.topology.len()];
            let (t, theft) = (&cfg.topology, cfg.theft);
            chandy_lamport::apps::spec::quiet_outcomes(t, initial, &budgets, &setup, theft, QUIET_STATES)
        } else {
            None
        };
        let recovers = Mutex::new(HashMap::new());
        let tallies = Default::default();
        ChandyLamport {
            cfg,
            setup,
            predicates,
            initial_total,
            core_variant,
            latches,
            sym: 0,
            expected,
            recovers,
            decoded: Mutex::new(Vec::new()),
            encoded: Mutex::new(Vec::new()),
            tallies,
            id: {
                static MODELS: AtomicU64 = AtomicU64::new(0);
                MODELS.fetch_add(1, Ordering::Relaxed)
            },
        }
    }

    /// Runs `f` with this thread's scratch for this model (see `memo`): the effects buffer
    /// empty, the remembered steps kept across calls.
    pub(crate) fn with_scratch<R>(&self, f: impl FnOnce(&mut Scratch<A>) -> R) -> R {
        memo::with(self.id, f)
    }

    /// What the steps taken so far did (barrier algorithms; zeros with Chandy–Lamport).
    pub fn tallies(&self) -> Tallies {
        let [stores, crashes, restores, restores_with_channel_state, quiet_after_crash] = self.tally_counts();
        Tallies { stores, crashes, restores, restores_with_channel_state, quiet_after_crash }
    }

    /// The counters behind [`ChandyLamport::tallies`], in its field order.
    pub(crate) fn tally_counts(&self) -> [u64; 5] {
        self.tallies.each_ref().map(|t| t.load(Ordering::Relaxed))
    }

    /// Sets the counters (to a distributed search's sum over its ranks); missing ones to 0.
    pub(crate) fn set_tally_counts(&self, counts: &[u64]) {
        for (i, t) in self.tallies.iter().enumerate() {
            t.store(counts.get(i).copied().unwrap_or(0), Ordering::Relaxed);
        }
    }

    /// Whether a step has no effect but its successor (and the properties' latches, set once):
    /// only the barrier algorithms' steps count [`Tallies`].
    pub fn steps_are_pure(&self) -> bool {
        !self.cfg.algorithm.coordinated()
    }

    fn tally(&self, which: Tally) {
        self.tallies[which as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Quiet: the trade is over, and nothing is in transit or buffered (where exactly-once is
    /// judged).
    pub fn quiet(&self, s: &State<A>) -> bool {
        self.y_live(s) & 1 != 0 && s.procs.iter().all(|p| p.buffered_all().next().is_none())
    }

    /// Whether `s` comes after a crash (barrier algorithms).
    pub fn after_crash(&self, s: &State<A>) -> bool {
        s.ckpt.as_ref().is_some_and(|ck| ck.failed_over)
    }

    /// Whether `stored`, restored and run failure-free (its houses with their budgets, its
    /// records in transit in front of their channels, as a recovery restores it), ends quiet only
    /// as the failure-free run from the start does, and ends at all. False when either run has
    /// more than [`QUIET_STATES`] states: unjudged is no pass. Computed once per checkpoint.
    pub fn recovers(&self, stored: &Arc<Stored<A>>) -> bool {
        if let Some(&known) = self.recovers.lock().unwrap_or_else(|e| e.into_inner()).get(stored) {
            return known;
        }
        let t = &self.cfg.topology;
        let outcomes = chandy_lamport::apps::spec::quiet_outcomes_from(
            t,
            stored.rec.houses.clone(),
            &stored.budgets,
            stored.rec.messages(),
            &self.setup,
            self.cfg.theft,
            QUIET_STATES,
        );
        let holds = match (outcomes, self.expected.as_ref()) {
            (Some(ends), Some(expected)) => !ends.is_empty() && ends.is_subset(expected),
            _ => false,
        };
        self.recovers.lock().unwrap_or_else(|e| e.into_inner()).insert(stored.clone(), holds);
        holds
    }

    /// The stable predicates that hold in `view`, bit `i` for predicate `i`.
    pub fn y(&self, view: &View<'_, A>) -> u8 {
        self.predicates.iter().enumerate().fold(0, |bits, (i, p)| if (p.holds)(view) { bits | 1 << i } else { bits })
    }

    /// The stable predicates in live state `s`.
    pub fn y_live(&self, s: &State<A>) -> u8 {
        let states = s.apps();
        let mut channels = s.in_transit();
        // Output buffers: a cart in its sender's output buffer is in transit too, behind the
        // road's carts.
        if self.cfg.algorithm.buffers_output() {
            for (c, chan) in channels.iter_mut().enumerate() {
                chan.extend(self.buffered(s, c).into_iter().map(|cart| cart.msg));
            }
        }
        let view = View {
            topology: &self.cfg.topology,
            states: &states,
            budgets: &s.budget[..states.len()],
            channels: &channels,
            initial: self.initial_total,
            setup: self.setup,
        };
        self.y(&view)
    }

    /// The stable predicates in what snapshot `rec` recorded, with each house's budget when it
    /// recorded.
    pub fn y_recorded(&self, rec: &Recorded<A>, budgets: &[u8]) -> u8 {
        let channels = rec.messages();
        let view = View {
            topology: &self.cfg.topology,
            states: &rec.houses,
            budgets,
            channels: &channels,
            initial: self.initial_total,
            setup: self.setup,
        };
        self.y(&view)
    }

    /// Stamps the initial states with symmetry group `sym` (a registered group's index, 0 for
    /// none); see `reduce::symmetry`, whose `enable_symmetry` calls it.
    pub(crate) fn set_symmetry(&mut self, sym: u16) {
        self.sym = sym;
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.cfg.topology
    }

    /// The conserved quantity at the start (jars, for the bank).
    pub fn initial_total(&self) -> u64 {
        self.initial_total
    }

    /// Snapshot ids modelled.
    pub fn snapshot_ids(&self) -> impl Iterator<Item = SnapshotId> {
        (0..u32::from(self.cfg.snapshots)).map(SnapshotId)
    }

    /// Evaluates property number `index` through its latch: `discovery` is the value that makes
    /// a discovery (false for an always-property, true for a sometimes-property).
    pub(crate) fn latched(&self, index: usize, discovery: bool, eval: impl FnOnce() -> bool) -> bool {
        let latch = &self.latches[index];
        if latch.load(Ordering::Relaxed) {
            return !discovery;
        }
        let value = eval();
        if value == discovery {
            latch.store(true, Ordering::Relaxed);
        }
        value
    }

    /// Visits every enabled action in a fixed order; stops early when `visit` returns false. A
    /// state reached by a refused step is a dead end.
    fn each_action(&self, s: &State<A>, mut visit: impl FnMut(Act<A>) -> bool) {
        if s.refused.is_some() {
            return;
        }
        let _ =
            self.house_moves(s, &mut visit) && self.channel_actions(s, &mut visit) && self.later_actions(s, &mut visit);
    }

    /// [`ChandyLamport::each_action`]'s houses' moves (transfers and sales); false once `visit`
    /// said stop.
    fn house_moves(&self, s: &State<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        for p in t.processes() {
            let i = p.index();
            let budget = s.budget[i];
            let mut go = true;
            s.procs[i].app().moves(p, t, &self.setup, &mut |mv| {
                if !go || A::cost(&mv) > budget {
                    return;
                }
                go = visit(match mv {
                    Move::Send { channel, msg } => Action::Send { from: i as u8, channel: channel.0 as u8, msg },
                    Move::Internal(step) => Action::Internal { house: i as u8, step },
                });
            });
            if !go {
                return false;
            }
        }
        true
    }

    /// [`ChandyLamport::each_action`]'s actions on the channels: deliveries, thefts, lost
    /// markers; false once `visit` said stop.
    fn channel_actions(&self, s: &State<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        let non_fifo = self.cfg.variant == Variant::NonFifo;
        let lose = self.cfg.variant == Variant::LoseMarkers;
        let overtaking = self.cfg.algorithm.barriers_overtake();
        for (c, chan) in s.chans.iter().enumerate() {
            let id = ChannelId(c as u32);
            let receiver = &s.procs[t.channel(id).to.index()];
            // Aligned barriers: nothing is taken from a blocked input, barriers and cancellations
            // included (Flink does not poll a blocked channel).
            let blocked = self.cfg.algorithm.aligns() && receiver.is_blocked(t, id);
            // After a recovery the restored carts at the head are already in the receiver's
            // input: nothing overtakes them and bandits cannot reach them.
            let restored = if receiver.is_recovering() { receiver.restored(t, id) } else { 0 };
            for (i, packet) in chan.iter().enumerate() {
                let (c, index) = (c as u8, i as u8);
                // Overtaking barriers overtake the carts queued ahead of them (not other barriers;
                // cancellations never overtake).
                let barrier = matches!(packet.msg, Message::Marker(_));
                let overtakes = overtaking && barrier && chan[..i].iter().all(Packet::is_app);
                let deliverable = if i == 0 { !blocked } else { (non_fifo || overtakes) && restored == 0 };
                if deliverable && !visit(Action::Deliver { channel: c, index }) {
                    return false;
                }
                let reachable = i >= restored;
                if self.cfg.theft && reachable && packet.is_app() && !visit(Action::Steal { channel: c, index }) {
                    return false;
                }
                if lose && !packet.is_app() && !visit(Action::LoseMarker { channel: c, index }) {
                    return false;
                }
            }
        }
        true
    }

    /// [`ChandyLamport::each_action`]'s flushes, transmissions, the coordinator's and the
    /// sources' actions, initiations; false once `visit` said stop.
    fn later_actions(&self, s: &State<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        for p in t.processes() {
            if s.procs[p.index()].faults_pending() && !visit(Action::Flush { house: p.0 as u8 }) {
                return false;
            }
        }
        if self.cfg.algorithm.buffers_output() {
            for p in t.processes() {
                for &c in t.outgoing(p) {
                    let buffered = s.procs[p.index()].buffered(t, c).next().is_some();
                    if buffered && !visit(Action::Transmit { house: p.0 as u8, channel: c.0 as u8 }) {
                        return false;
                    }
                }
            }
        }
        if let Some(ck) = s.ckpt.as_ref() {
            return self.coordinated_actions(s, ck, visit);
        }
        for p in t.processes() {
            if !self.cfg.initiators[p.index()] {
                continue;
            }
            for snapshot in self.snapshot_ids() {
                let house = &s.procs[p.index()];
                let may = !house.has_recorded(snapshot);
                if may && !visit(Action::Initiate { house: p.0 as u8, snapshot: snapshot.0 as u8 }) {
                    return false;
                }
            }
        }
        true
    }

    /// The barrier algorithms' actions of the coordinator, the sources and failures: triggers
    /// handled, parts acknowledged, declines, the next trigger, a crash; false once `visit` said
    /// stop.
    fn coordinated_actions(&self, s: &State<A>, ck: &Checkpoints<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        for p in t.processes() {
            for snapshot in self.snapshot_ids() {
                let waiting = ck.triggers[p.index()] & (1 << snapshot.0) != 0;
                if waiting && !visit(Action::Initiate { house: p.0 as u8, snapshot: snapshot.0 as u8 }) {
                    return false;
                }
            }
        }
        for p in t.processes() {
            for slot in s.procs[p.index()].slots() {
                let (house, snapshot) = (p.0 as u8, slot.id.0 as u8);
                // Acknowledged already, or completed and waiting to be stored.
                if ck.coord.has_acked(slot.id, p) || ck.coord.is_completed(slot.id) {
                    continue;
                }
                if slot.is_complete() && !visit(Action::Ack { house, snapshot }) {
                    return false;
                }
                let declinable = ck.declines > 0 && ck.coord.is_pending(slot.id);
                if declinable && !visit(Action::Decline { house, snapshot }) {
                    return false;
                }
            }
        }
        for snapshot in self.snapshot_ids() {
            let id = snapshot.0 as u8;
            if ck.coord.is_acknowledged(snapshot) && !visit(Action::Complete { snapshot: id }) {
                return false;
            }
            if ck.coord.is_completed(snapshot) && !visit(Action::Store { snapshot: id }) {
                return false;
            }
        }
        let left = ck.coord.next_id().0 < u32::from(self.cfg.snapshots);
        if ck.coord.can_trigger() && left && !visit(Action::Trigger) {
            return false;
        }
        if ck.coord.timer_cancels() && left && !visit(Action::TimerAtMax) {
            return false;
        }
        ck.crashes == 0 || visit(Action::Crash)
    }

    /// Whether `action` is one a run may leave out and still be complete: an initiation in
    /// Chandy–Lamport; a trigger, a decline or a crash with the barrier algorithms' coordinator
    /// (a trigger's handling, an acknowledgement, a delivery are owed).
    pub fn is_optional(&self, action: &Act<A>) -> bool {
        match action {
            Action::Initiate { .. } => !self.cfg.algorithm.coordinated(),
            Action::Trigger | Action::TimerAtMax | Action::Decline { .. } | Action::Crash => true,
            _ => false,
        }
    }

    /// A sentence for `action` taken in `state` (what arrives, who records).
    pub fn describe(&self, state: &State<A>, action: &Act<A>) -> String {
        let t = &self.cfg.topology;
        let ends = |c: u8| {
            let ch = t.channel(ChannelId(u32::from(c)));
            (t.name(ch.from).to_string(), t.name(ch.to).to_string())
        };
        let packet = |c: u8, i: u8| state.chans.iter().nth(c as usize).and_then(|ch| ch.get(i as usize));
        match *action {
            Action::Deliver { channel, index } => {
                let (from, to) = ends(channel);
                let nth = if index == 0 { String::new() } else { format!(" (overtaking {index})") };
                match packet(channel, index).map(|p| &p.msg) {
                    Some(Message::App(cart)) => {
                        format!("{to} receives {} from {from}{nth}", message_words::<A>(cart))
                    }
                    Some(Message::Marker(s)) => {
                        let records =
                            !state.procs[t.channel(ChannelId(u32::from(channel))).to.index()].has_recorded(*s);
                        let first = if records { " (its first)" } else { "" };
                        format!("{to} receives marker {s} from {from}{first}{nth}")
                    }
                    Some(Message::Cancel(s)) => format!("{to} receives the cancellation of checkpoint {s} from {from}"),
                    None => self.describe_action(action),
                }
            }
            _ => self.describe_action(action),
        }
    }

    /// Every enabled action of `s`, in the model's order (the unreduced list, whatever `--por`).
    pub fn enabled(&self, s: &State<A>) -> Vec<Act<A>> {
        let mut all = Vec::new();
        self.each_action(s, |a| {
            all.push(a);
            true
        });
        all
    }

    /// Whether no action is enabled.
    pub fn is_final(&self, s: &State<A>) -> bool {
        let mut any = false;
        self.each_action(s, |_| {
            any = true;
            false
        });
        !any
    }

    /// Whether nothing but optional actions ([`ChandyLamport::is_optional`]) is enabled: the
    /// trade and every snapshot in flight have run their course.
    pub fn is_quiescent(&self, s: &State<A>) -> bool {
        if s.refused.is_some() {
            return true;
        }
        // The same actions as `each_action`'s, the channels' first: in most states a packet is
        // in transit, and its delivery is owed.
        let mut busy = false;
        let mut visit = |a: Act<A>| {
            busy = !self.is_optional(&a);
            !busy
        };
        let _ =
            self.channel_actions(s, &mut visit) && self.house_moves(s, &mut visit) && self.later_actions(s, &mut visit);
        !busy
    }

    /// What snapshot `s` recorded, once every house's part is complete.
    pub fn recorded(&self, state: &State<A>, s: SnapshotId) -> Option<Recorded<A>> {
        let t = &self.cfg.topology;
        let mut houses = Vec::with_capacity(state.procs.len());
        let mut channels = vec![Vec::new(); t.channels().len()];
        for p in &state.procs {
            let slot = p.slot(s).filter(|slot| slot.is_complete())?;
            houses.push(slot.state?.0);
            for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                // The receiver's side first: unaligned senders' sides are appended below.
                let mut record: Vec<Cart<A>> = slot.record(i).copied().collect();
                record.append(&mut channels[c.index()]);
                channels[c.index()] = record;
            }
            for (j, &c) in t.outgoing(p.id()).iter().enumerate() {
                channels[c.index()].extend(slot.output(j).copied());
            }
        }
        Some(Recorded { houses, channels })
    }

    /// The stable predicates in what snapshot `s` recorded, with each house's budget when it
    /// recorded: [`ChandyLamport::y_recorded`] of [`ChandyLamport::recorded`], read where the
    /// houses keep the record into this thread's reused buffers; `None` when `recorded` gives
    /// `None`.
    pub fn y_star(&self, state: &State<A>, s: SnapshotId, budgets: &[u8]) -> Option<u8> {
        let t = &self.cfg.topology;
        self.with_scratch(|scratch| {
            let (states, channels) = &mut scratch.record;
            states.clear();
            channels.resize_with(t.channels().len(), Vec::new);
            channels.iter_mut().for_each(Vec::clear);
            for p in &state.procs {
                let slot = done(p, s)?;
                states.push(slot.state?.0);
                for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                    channels[c.index()].extend(slot.record(i).map(|cart| cart.msg));
                }
            }
            // The receiver's side first, then the sender's (unaligned barriers' output buffers).
            for p in &state.procs {
                let slot = done(p, s)?;
                for (j, &c) in t.outgoing(p.id()).iter().enumerate() {
                    channels[c.index()].extend(slot.output(j).map(|cart| cart.msg));
                }
            }
            let view = View {
                topology: t,
                states,
                budgets,
                channels: &channels[..t.channels().len()],
                initial: self.initial_total,
                setup: self.setup,
            };
            Some(self.y(&view))
        })
    }

    /// Whether snapshot `s` recorded on every channel `c`, cart for cart and in order, the carts
    /// `expected(c)` (the channels of [`ChandyLamport::recorded`], read where the houses keep
    /// them: no record is built); `None` when `recorded` gives `None`.
    pub fn records_equal<'a>(
        &self,
        state: &State<A>,
        s: SnapshotId,
        expected: impl Fn(usize) -> &'a [Cart<A>],
    ) -> Option<bool>
    where
        A: 'a,
    {
        let t = &self.cfg.topology;
        for p in &state.procs {
            done(p, s)?;
        }
        for p in &state.procs {
            let receiver = done(p, s)?;
            for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                let from = t.channel(c).from;
                let sender = done(&state.procs[from.index()], s)?;
                let j = t.outgoing(from).iter().position(|&o| o == c)?;
                let carts = receiver.record(i).chain(sender.output(j)).copied();
                if !carts.eq(expected(c.index()).iter().copied()) {
                    return Some(false);
                }
            }
        }
        Some(true)
    }

    /// The conserved quantity recorded by snapshot `s` (in houses and in transit), once every
    /// house's part is complete; no allocation (the ledger is checked on every state).
    pub fn recorded_accounted(&self, state: &State<A>, s: SnapshotId) -> Option<u64> {
        let mut total = 0u64;
        for p in &state.procs {
            let slot = p.slot(s).filter(|slot| slot.is_complete())?;
            total += slot.state?.held();
            total += slot.recorded().map(|(_, m)| A::carried(&m.msg)).sum::<u64>();
            let outgoing = self.cfg.topology.outgoing(p.id()).len();
            total += (0..outgoing).flat_map(|j| slot.output(j)).map(|m| A::carried(&m.msg)).sum::<u64>();
        }
        Some(total)
    }

    fn done_bits(&self, state: &State<A>) -> u32 {
        self.snapshot_ids().filter(|&s| state.complete(s)).fold(0, |b, s| b | (1 << s.0))
    }

    /// The snapshots `p` has recorded, one bit per id (a cart it sends now carries these as
    /// its full-mode tag: sent after its sender recorded).
    pub fn recorded_bits(&self, p: &Core<A>) -> u32 {
        self.snapshot_ids().filter(|&s| p.has_recorded(s)).fold(0, |b, s| b | (1 << s.0))
    }

    /// Carries out the effects of one core step of `house`, in order; records the trace in
    /// literal mode.
    fn apply(&self, next: &mut State<A>, house: usize, input: StepInput, effects: &[Effect<Cart<A>>], tag: u32) {
        for effect in effects {
            match effect {
                Effect::Send { channel, message } => {
                    let tag = if matches!(message, Message::App(_)) { tag } else { 0 };
                    next.chans.push(channel.index(), Packet { msg: *message, tag });
                }
                Effect::Recorded { snapshot, .. } => {
                    let budget = next.budget[house];
                    if let Some(ck) = next.ckpt.as_mut().filter(|ck| ck.coord.is_pending(*snapshot)) {
                        ck.budgets.push((snapshot.0 as u8, house as u8, budget));
                    }
                    let Some(mut g) = next.ghost.take() else { continue };
                    let p = &next.procs[house];
                    // The recorded state must be the one its pre-cut events produced: the
                    // house's state right now, after the step that recorded.
                    let faithful = p.slot(*snapshot).and_then(|slot| slot.state.as_ref()) == Some(p.app());
                    let incoming: smallvec::SmallVec<[usize; 8]> =
                        self.cfg.topology.incoming(p.id()).iter().map(|c| c.index()).collect();
                    let buffered = |c: usize| self.buffered(next, c);
                    g.on_record(
                        snapshot.0 as usize,
                        house,
                        next.budget[house],
                        faithful,
                        &incoming,
                        &next.chans,
                        &buffered,
                    );
                    next.ghost = Some(g);
                }
                Effect::Aborted { snapshot } => self.abort(next, *snapshot),
                Effect::Closed { .. } | Effect::Completed { .. } => {}
            }
        }
        let app = *next.procs[house].app();
        if let Some(h) = next.history.as_mut() {
            Tracer::step(&mut h.trace.events, ProcessId(house as u16), input, effects, &app);
        }
    }

    /// Unaligned barriers: the carts waiting in the output buffer of channel `c`, oldest first.
    fn buffered(&self, state: &State<A>, c: usize) -> Vec<Cart<A>> {
        let t = &self.cfg.topology;
        let id = ChannelId(c as u32);
        state.procs[t.channel(id).from.index()].buffered(t, id).copied().collect()
    }

    /// A house gave `snapshot` up: the coordinator aborts it if it is pending, and the parts of
    /// it the houses completed are discarded.
    fn abort(&self, next: &mut State<A>, snapshot: SnapshotId) {
        if next.ckpt.as_mut().is_some_and(|ck| ck.coord.decline(snapshot)) {
            self.discard(next, &[snapshot]);
        }
    }

    /// Checkpoints `ids` are over (aborted, subsumed or stored): their triggers not yet handled
    /// are dropped and every house's complete part of them is discarded.
    fn discard(&self, next: &mut State<A>, ids: &[SnapshotId]) {
        let t = &self.cfg.topology;
        if let Some(ck) = next.ckpt.as_mut() {
            for bits in ck.triggers.iter_mut() {
                *bits &= !ids.iter().fold(0u8, |b, id| b | 1 << id.0);
            }
            ck.budgets.retain(|(id, _, _)| !ids.iter().any(|i| i.0 == u32::from(*id)));
        }
        for p in next.procs.iter_mut() {
            for &id in ids {
                if p.slot(id).is_some_and(Slot::is_complete) {
                    p.edit(|house| house.take_local_snapshot(t, id).map(drop)).ok();
                }
            }
        }
    }

    /// A house as a run starts it (or a recovery restores it): `app` inside the core, with the
    /// configured variant and algorithm.
    fn house(&self, p: ProcessId, app: A) -> Shared<A> {
        // Snapshots start at the initiators: the aligned mode's back edges are found from them.
        let roots: SmallVec<[ProcessId; 4]> =
            self.cfg.topology.processes().filter(|p| self.cfg.initiators[p.index()]).collect();
        let core = Process::with_variant(p, Stamped(app), self.core_variant).with_algorithm(
            &self.cfg.topology,
            self.cfg.algorithm,
            &roots,
        );
        Shared::new(core)
    }

    /// Runs completion hooks for snapshots that completed in this step.
    fn completed(&self, next: &mut State<A>, done_before: u32) {
        let Some(mut ghost) = next.ghost.take() else { return };
        let done_after = self.done_bits(next);
        for s in self.snapshot_ids().filter(|s| done_after & !done_before & (1 << s.0) != 0) {
            // Complete everywhere, so every part is there.
            let records = self.recorded(next, s).map(|r| r.channels).unwrap_or_default();
            let y = self.y_live(next);
            let buffered = |c: usize| self.buffered(next, c);
            ghost.on_complete(s.0 as usize, &next.chans, &records, y, next.ckpt.is_none(), &buffered);
        }
        next.ghost = Some(ghost);
    }
}

/// House `p`'s part of snapshot `s` when it is complete with a recorded state (what a record
/// is read from).
fn done<A: Spec>(p: &Core<A>, s: SnapshotId) -> Option<&chandy_lamport::Slot<House<A>>> {
    p.slot(s).filter(|slot| slot.is_complete() && slot.state.is_some())
}

/// y(S*) implies y(S_end), and not y(S*) implies not y(S_begin), for every stable predicate
/// (bit `i` for predicate `i`): the rule "stable detection is sound" judges, in full and literal
/// modes alike.
pub(crate) fn sound(begin: u8, star: u8, end: u8) -> bool {
    star & !end == 0 && begin & !star == 0
}

/// A message in words: "a cart of 1 jar", with its stamp when messages carry identity ("a cart
/// of 1 jar (#2)").
pub fn message_words<A: Spec>(cart: &Cart<A>) -> String {
    match cart.seq {
        0 => A::describe(&cart.msg),
        seq => format!("{} (#{seq})", A::describe(&cart.msg)),
    }
}

impl<A: Spec> ChandyLamport<A> {
    /// The initial state (stateright's `init_states`: there is one).
    pub fn initial_states(&self) -> Vec<State<A>> {
        let procs: SmallVec<[Shared<A>; 4]> =
            self.cfg.topology.processes().map(|p| self.house(p, A::initial(p, self.cfg.tokens[p.index()]))).collect();
        let ckpt = self.cfg.algorithm.coordinated().then(|| {
            let c = self.cfg.checkpointing;
            let coord = Coordinator::new(procs.len(), usize::from(c.max_concurrent), self.cfg.variant)
                .with_tolerable_failures(u32::from(c.tolerable_failures));
            Box::new(Checkpoints {
                coord,
                triggers: [0; MAX_HOUSES],
                latest: None,
                budgets: SmallVec::new(),
                ids_decreased: false,
                declines: c.declines,
                crashes: c.crashes,
                failed_over: false,
            })
        });
        let history = (self.cfg.mode == Mode::Literal).then(|| {
            let initiators = self.cfg.topology.processes().filter(|p| self.cfg.initiators[p.index()]).collect();
            let trace =
                Trace::new(procs.iter().map(|p| *p.app()).collect()).with_initiators(Initiators::Only(initiators));
            Box::new(History { trace, next_msg: 0, digest: 0 })
        });
        vec![State(Box::new(StateData {
            chans: Chans::new(self.cfg.topology.channels().len()),
            budget: std::array::from_fn(|i| if i < procs.len() { self.cfg.sends } else { 0 }),
            sent: [0; MAX_HOUSES],
            refused: None,
            procs,
            ghost: (self.cfg.mode == Mode::Full).then(|| Ghost::new(self.cfg.snapshots as usize)),
            history,
            sym: self.sym,
            ckpt,
        }))]
    }

    /// Appends every enabled action of `state` to `actions`, in the model's order (unreduced:
    /// `--por` chooses among them, see `reduce::por`).
    pub fn push_enabled(&self, state: &State<A>, actions: &mut Vec<Act<A>>) {
        self.each_action(state, |a| {
            actions.push(a);
            true
        });
    }

    /// The state `action` leads to from `last` (stateright's `next_state`), or `None` when
    /// `action` is not a step of `last`.
    pub fn successor(&self, last: &State<A>, action: Act<A>) -> Option<State<A>> {
        self.with_scratch(|s| self.step(last, action, s))
    }
}

impl<A: Spec> ChandyLamport<A> {
    /// One step: `action` taken in `last`, the core's effects collected in `s.fx`. A step the
    /// core refuses gives `last` marked refused (the core leaves a house unchanged when it
    /// refuses).
    fn step(&self, last: &State<A>, action: Act<A>, s: &mut Scratch<A>) -> Option<State<A>> {
        let mut next = last.clone();
        match self.advance(&mut next, action, s) {
            Ok(()) => Some(next),
            Err(Stop::NotAStep) => None,
            Err(Stop::Refused(error)) => {
                let mut dead = last.clone();
                dead.refused = Some(error.into_boxed_str());
                Some(dead)
            }
        }
    }

    /// Takes `action` in `next` itself (what `next` held before is the state the step is taken
    /// from); on an error `next` is left part-changed and must be discarded or restored.
    pub(crate) fn advance(&self, next: &mut State<A>, action: Act<A>, scratch: &mut Scratch<A>) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let done_before = if next.ghost.is_some() { self.done_bits(next) } else { 0 };
        let events_before = next.history.as_ref().map_or(0, |h| h.trace.events.len());
        let refused = |error: &dyn std::fmt::Display| Err(Stop::Refused(error.to_string()));
        match action {
            Action::Send { from, channel, msg } => {
                let (p, c) = (from as usize, ChannelId(u32::from(channel)));
                next.budget[p] -= A::cost(&Move::Send { channel: c, msg });
                let seq = match self.cfg.mode {
                    Mode::Basic => 0,
                    Mode::Full | Mode::Literal => {
                        next.sent[p] += 1;
                        next.sent[p]
                    }
                };
                let cart = Stamp { seq, msg };
                let (tag, input) = match next.history.as_mut() {
                    Some(h) => {
                        let id = MsgId(h.next_msg);
                        h.next_msg += 1;
                        (id.0 as u32, StepInput::Send(id))
                    }
                    None => (self.recorded_bits(&next.procs[p]), StepInput::Send(MsgId(0))),
                };
                if let Err(e) = scratch.step(t, &mut next.procs[p], Input::Send(c, cart)) {
                    return refused(&e);
                }
                let receiver = self.recorded_bits(&next.procs[t.channel(c).to.index()]);
                if let Some(g) = next.ghost.as_mut() {
                    g.on_send(c.index(), cart, tag, receiver, done_before);
                    if self.cfg.algorithm.buffers_output() {
                        g.on_buffer(c.index(), tag);
                    }
                }
                self.apply(next, p, input, &scratch.fx, tag);
            }
            Action::Internal { house, step } => {
                let p = house as usize;
                next.budget[p] -= A::cost(&Move::Internal(step));
                if let Err(e) = scratch.step(t, &mut next.procs[p], Input::Internal(step)) {
                    return refused(&e);
                }
                let app = *next.procs[p].app();
                if let Some(h) = next.history.as_mut() {
                    Tracer::event(&mut h.trace.events, ProcessId(p as u16), EventKind::Internal { step }, &app);
                }
                self.apply(next, p, StepInput::Idle, &scratch.fx, 0);
            }
            Action::Deliver { channel, index } => {
                let c = ChannelId(u32::from(channel));
                let q = t.channel(c).to.index();
                let i = index as usize;
                let d = &mut *next.0;
                if let (Some(g), Some(Packet { msg: Message::App(cart), tag })) =
                    (d.ghost.as_mut(), d.chans.get(c.index()).get(i))
                {
                    let recorded = self.recorded_bits(&d.procs[q]);
                    g.on_receive(&d.chans, c.index(), i, *cart, *tag, recorded, done_before);
                }
                let overtaken: smallvec::SmallVec<[Cart<A>; 4]> = next.chans.get(c.index())[..i]
                    .iter()
                    .filter_map(|p| match p.msg {
                        Message::App(cart) if self.cfg.algorithm.barriers_overtake() => Some(cart),
                        _ => None,
                    })
                    .collect();
                let packet = next.chans.remove(c.index(), i);
                let input = match packet.msg {
                    Message::App(_) => StepInput::Receive { channel: c, id: MsgId(u64::from(packet.tag)) },
                    Message::Marker(snapshot) => StepInput::Marker { channel: c, snapshot },
                    Message::Cancel(_) => StepInput::Idle,
                };
                if let Err(e) = scratch.step(t, &mut next.procs[q], Input::Receive(c, packet.msg, overtaken)) {
                    return refused(&e);
                }
                self.apply(next, q, input, &scratch.fx, 0);
            }
            Action::Steal { channel, index } => {
                let c = ChannelId(u32::from(channel));
                let packet = next.chans.remove(c.index(), index as usize);
                let Message::App(cart) = packet.msg else { return Err(Stop::NotAStep) };
                if let Some(g) = next.ghost.as_mut() {
                    g.on_theft(c.index(), cart, A::carried(&cart.msg), packet.tag, done_before);
                }
                let q = t.channel(c).to;
                let app = *next.procs[q.index()].app();
                if let Some(h) = next.history.as_mut() {
                    let kind = EventKind::Lost { channel: c, id: MsgId(u64::from(packet.tag)) };
                    Tracer::event(&mut h.trace.events, q, kind, &app);
                }
            }
            Action::LoseMarker { channel, index } => {
                next.chans.remove(channel as usize, index as usize);
            }
            Action::Initiate { house, snapshot } => {
                let p = house as usize;
                let s = SnapshotId(u32::from(snapshot));
                if let Some(ck) = next.ckpt.as_mut() {
                    ck.triggers[p] &= !(1 << snapshot);
                }
                if next.ghost.as_ref().is_some_and(|g| !g.snaps[s.0 as usize].active) {
                    // Read before the house steps (the triggers are no part of either).
                    let (y, accounted) = (self.y_live(next), next.accounted());
                    let d = &mut *next.0;
                    if let Some(g) = d.ghost.as_mut() {
                        g.activate(s.0 as usize, &d.chans, d.procs.len(), accounted, self.initial_total, y);
                    }
                }
                if let Err(e) = scratch.step(t, &mut next.procs[p], Input::Initiate(s)) {
                    return refused(&e);
                }
                self.apply(next, p, StepInput::Initiate, &scratch.fx, 0);
            }
            Action::Flush { house } => {
                let p = house as usize;
                scratch.step(t, &mut next.procs[p], Input::ReleaseFaults).expect("flushing is never refused");
                self.apply(next, p, StepInput::Idle, &scratch.fx, 0);
            }
            Action::Transmit { house, channel } => {
                let p = house as usize;
                let c = ChannelId(u32::from(channel));
                if let Err(e) = scratch.step(t, &mut next.procs[p], Input::Transmit(c)) {
                    return refused(&e);
                }
                // The cart keeps the tag it was sent with (into the buffer).
                let tag = next.ghost.as_mut().and_then(|g| g.on_transmit(c.index())).unwrap_or(0);
                self.apply(next, p, StepInput::Idle, &scratch.fx, tag);
            }
            Action::Trigger => {
                let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
                match ck.coord.trigger() {
                    Ok(id) => {
                        for p in t.processes().filter(|p| self.cfg.initiators[p.index()]) {
                            ck.triggers[p.index()] |= 1 << id.0;
                        }
                    }
                    Err(e) => return refused(&e),
                }
            }
            Action::TimerAtMax => {
                next.ckpt.as_mut().ok_or(Stop::NotAStep)?.coord.timer_at_max();
            }
            Action::Ack { house, snapshot } => {
                let (p, s) = (house as usize, SnapshotId(u32::from(snapshot)));
                let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
                match ck.coord.acknowledge(ProcessId(u16::from(house)), s) {
                    Ok(Ack::Pending) => {}
                    Ok(Ack::Stale) => {
                        if let Err(e) = next.procs[p].edit(|h| h.take_local_snapshot(t, s).map(drop)) {
                            return refused(&e);
                        }
                    }
                    Ok(Ack::Acknowledged) => {}
                    Err(e) => return refused(&e),
                }
            }
            Action::Complete { snapshot } => {
                let s = SnapshotId(u32::from(snapshot));
                match next.ckpt.as_mut().ok_or(Stop::NotAStep)?.coord.complete(s) {
                    Ok(subsumed) => self.discard(next, &subsumed),
                    Err(e) => return refused(&e),
                }
            }
            Action::Store { snapshot } => {
                let s = SnapshotId(u32::from(snapshot));
                let Some(rec) = self.recorded(next, s) else {
                    return refused(&format!("checkpoint {s} completed, but a house holds no complete part"));
                };
                let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
                let mut over = match ck.coord.store(s) {
                    Ok(subsumed) => subsumed,
                    Err(e) => return refused(&e),
                };
                ck.ids_decreased |= ck.latest.as_ref().is_some_and(|l| l.id > s);
                let mut budgets: SmallVec<[u8; 4]> = SmallVec::from_elem(0, t.len());
                for &(id, house, budget) in &ck.budgets {
                    if u32::from(id) == s.0 {
                        budgets[usize::from(house)] = budget;
                    }
                }
                ck.latest = Some(Arc::new(Stored { id: s, rec, budgets }));
                self.tally(Tally::Stores);
                over.push(s);
                self.discard(next, &over);
            }
            Action::Decline { house, snapshot } => {
                let (p, s) = (house as usize, SnapshotId(u32::from(snapshot)));
                let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
                ck.declines = ck.declines.checked_sub(1).ok_or(Stop::NotAStep)?;
                // A counted failure (the house's part could not be written): one more in a row
                // than tolerated fails the job over.
                let failure = ck.coord.fail(s);
                if let Err(e) = next.procs[p].edit(|h| h.decline(t, s, &mut scratch.fx)) {
                    return refused(&e);
                }
                self.apply(next, p, StepInput::Idle, &scratch.fx, 0);
                match failure {
                    Failure::Stale => {}
                    Failure::Aborted => self.discard(next, &[s]),
                    Failure::FailJob => self.recover(next),
                }
            }
            Action::Crash => {
                let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
                ck.crashes = ck.crashes.checked_sub(1).ok_or(Stop::NotAStep)?;
                self.recover(next);
            }
        }
        if self.after_crash(next) && self.quiet(next) {
            self.tally(Tally::QuietAfterCrash);
        }
        self.completed(next, done_before);
        if let Some(h) = next.history.as_mut() {
            h.seal(events_before);
        }
        Ok(())
    }

    /// The job fails over (a crash, or a failure more than tolerated) and recovers: the
    /// coordinator's pending checkpoints are aborted, every house is restored from the newest
    /// completed checkpoint (or its initial state), and each channel holds exactly that
    /// checkpoint's record of it, in front.
    fn recover(&self, next: &mut State<A>) {
        let t = &self.cfg.topology;
        let Some(ck) = next.ckpt.as_mut() else { return };
        ck.failed_over = true;
        ck.coord.failover();
        ck.triggers = [0; MAX_HOUSES];
        ck.budgets.clear();
        let latest = ck.latest.clone();
        self.tally(Tally::Crashes);
        if let Some(stored) = latest.as_ref() {
            self.tally(Tally::Restores);
            if stored.rec.channels.iter().any(|c| !c.is_empty()) {
                self.tally(Tally::RestoresWithChannelState);
            }
        }
        if let Some(g) = next.ghost.as_mut() {
            g.on_crash(latest.as_ref().map(|l| l.id.0 as usize));
        }
        let mut chans = Chans::new(t.channels().len());
        let procs = match latest.as_deref() {
            Some(stored) => {
                let restored = chandy_lamport::protocol::restored_channels(self.cfg.variant, t, &stored.rec.channels);
                for (c, record) in restored.iter().enumerate() {
                    for cart in record {
                        chans.push(c, Packet { msg: Message::App(*cart), tag: 0 });
                    }
                }
                next.budget[..t.len()].copy_from_slice(&stored.budgets);
                t.processes().map(|p| self.house(p, stored.rec.houses[p.index()])).collect()
            }
            None => {
                next.budget[..t.len()].fill(self.cfg.sends);
                t.processes().map(|p| self.house(p, A::initial(p, self.cfg.tokens[p.index()]))).collect()
            }
        };
        next.procs = procs;
        for (c, channel) in t.channels().iter().enumerate() {
            let count = chans.get(c).len();
            if count > 0 {
                let restored = next.procs[channel.to.index()].edit(|h| h.restore_input(t, ChannelId(c as u32), count));
                restored.expect("a channel is an input of its receiver");
            }
        }
        next.chans = chans;
    }

    /// A label for `action` (the Explorer's).
    pub fn describe_action(&self, action: &Act<A>) -> String {
        let t = &self.cfg.topology;
        let name = |p: u8| t.name(ProcessId(u16::from(p))).to_string();
        let chan = |c: u8| t.channel_label(ChannelId(u32::from(c)));
        match *action {
            Action::Send { from, channel, msg } => {
                let mv = Move::Send { channel: ChannelId(u32::from(channel)), msg };
                format!("{} {}", name(from), A::describe_move(&mv, t))
            }
            Action::Internal { house, step } => {
                format!("{} {}", name(house), A::describe_move(&Move::Internal(step), t))
            }
            Action::Deliver { channel, index: 0 } => format!("deliver head of {}", chan(channel)),
            Action::Deliver { channel, index } => format!("deliver message {index} of {}", chan(channel)),
            Action::Steal { channel, index } => format!("bandits steal cart {index} on {}", chan(channel)),
            Action::LoseMarker { channel, index } => format!("marker {index} on {} is lost", chan(channel)),
            Action::Initiate { house, snapshot } => format!("{} initiates snapshot {snapshot}", name(house)),
            Action::Flush { house } => format!("{} is idle: the work it deferred happens", name(house)),
            Action::Transmit { house, channel } => {
                format!("{} puts the oldest cart of its buffer for {} on the road", name(house), chan(channel))
            }
            Action::Trigger => "the coordinator triggers a checkpoint".to_string(),
            Action::TimerAtMax => {
                "the periodic timer fires with --max-concurrent checkpoints pending: it is cancelled".to_string()
            }
            Action::Ack { house, snapshot } => format!("{} acknowledges checkpoint {snapshot}", name(house)),
            Action::Decline { house, snapshot } => format!("{} declines checkpoint {snapshot}", name(house)),
            Action::Complete { snapshot } => {
                format!("every house acknowledged checkpoint {snapshot}: the coordinator completes it")
            }
            Action::Store { snapshot } => {
                format!("checkpoint {snapshot} is stored: recoveries restore it, the houses drop their parts")
            }
            Action::Crash => "crash: every house recovers from the latest completed checkpoint".to_string(),
        }
    }
}
