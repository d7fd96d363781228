//! Partial-order reduction (`--por`): from each state the model offers a persistent subset of
//! the enabled actions instead of all of them, so every checker (BFS, DFS, simulation) and the
//! Explorer see the same reduced graph. The README ("Partial-order reduction") gives the
//! argument; in short:
//!
//! - the state graph is acyclic (every step spends budget, removes a message in transit or
//!   records a snapshot), so no step is ignored forever;
//! - the persistent sets are built as stubborn sets over *groups* of actions (a process's moves,
//!   its initiations, its deferred work, and every removal from one channel), closed under a
//!   dependency relation that holds in the current state and in every state reachable from it by
//!   actions outside the set, and under necessary enabling sets for disabled members; every set
//!   holds an enabled action other than an initiation whenever there is one, so terminal and
//!   quiescent states are all reached;
//! - full mode's ghost data reads the whole state when a snapshot starts (every state where one
//!   may still start is fully expanded) and when it completes (the set keeps the stable
//!   predicates unchanged, see [`Analysis`]'s `quiet`, or keeps completions out of reach);
//! - the properties are judged where a violation (or an example) is permanent, or, for "two
//!   snapshots overlap", on states the reduced search reaches anyway.
//!
//! [`Analysis::dependent`] is the declared relation on enabled actions, which the tests check
//! semantically (both orders enabled and equal states) on random reachable states; the tests
//! also check each chosen set's persistence directly, on bounded paths outside it.

use chandy_lamport::apps::spec::{Spec, StepKind};
use chandy_lamport::{ChannelId, Message, ProcessId, SnapshotId, Variant};
use smallvec::SmallVec;

use crate::system::action::{Act, Action};
use crate::system::config::Mode;
use crate::system::machine::SnapshotModel;
use crate::system::state::State;

/// A group of actions that the stubborn sets take or leave together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// The application moves (sends and internal steps) of a process.
    Moves(u8),
    /// The initiations of a process.
    Init(u8),
    /// The deferred work of a process (fault variants only).
    Flush(u8),
    /// Every removal from a channel: deliveries, thefts, lost markers.
    Recv(u8),
    /// No action of its own: the groups that keep a process from recording outside the set (its
    /// initiations and deferred work, and every channel that may bring it a first marker).
    Guard(u8),
}

/// The group of `action`.
pub fn group<M, S>(action: &Action<M, S>) -> Group {
    match *action {
        Action::Send { from, .. } => Group::Moves(from),
        Action::Internal { process, .. } => Group::Moves(process),
        Action::Deliver { channel, .. } | Action::Steal { channel, .. } | Action::LoseMarker { channel, .. } => {
            Group::Recv(channel)
        }
        Action::Initiate { process, .. } => Group::Init(process),
        Action::Flush { process } => Group::Flush(process),
        // Never reduced: --por is refused with the barrier algorithms.
        Action::Transmit { process, .. } | Action::Ack { process, .. } | Action::Decline { process, .. } => {
            Group::Moves(process)
        }
        Action::Trigger | Action::TimerAtMax | Action::Complete { .. } | Action::Store { .. } | Action::Crash => {
            Group::Moves(0)
        }
    }
}

/// Whether the reduction applies to `cfg` (otherwise every enabled action is explored). The
/// dependency relation below is argued for the correct algorithm, and holds as well for the
/// fault variants that only change what is recorded on one channel, send fewer markers, or
/// reorder or lose messages (without theft: a message that overtakes a marker could be stolen after
/// its snapshot completed, changing that snapshot's data). The others change what a receipt or
/// a marker does to the rest of its process (a stale copy written on every receipt, work deferred
/// to the next step, records closed together or kept open until the process completes, a
/// duplicate marker refused, a marker closing another snapshot's record): they keep the full
/// graph.
fn reducible<A: Spec>(m: &SnapshotModel<A>) -> bool {
    let variant_ok = match m.cfg.variant {
        Variant::None
        | Variant::NoChannelRecording
        | Variant::RecordsReversed
        | Variant::RecordTwice
        | Variant::SkipOneMarker
        | Variant::NoMarkerForwarding
        | Variant::LoseMarkers => true,
        Variant::NonFifo => !m.cfg.theft,
        _ => false,
    };
    m.cfg.por && m.cfg.mode != Mode::Literal && variant_ok
}

/// Replaces `actions` (every enabled action of `s`, in the model's order) by the persistent set
/// chosen for `s`, keeping their order.
pub fn reduce<A: Spec>(m: &SnapshotModel<A>, s: &State<A>, actions: &mut Vec<Act<A>>) {
    if actions.len() <= 1 || !reducible(m) {
        return;
    }
    let analysis = Analysis::new(m, s, actions);
    if let Some(chosen) = analysis.choose() {
        let mut k = 0;
        actions.retain(|_| {
            k += 1;
            chosen[k - 1]
        });
    }
}

/// The persistent set the reduction explores from `s`, as a subset of the enabled actions (for
/// tests; [`reduce`] is what the model runs).
pub fn persistent_set<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> Vec<Act<A>> {
    let mut reduced = m.enabled(s);
    if m.cfg.por {
        reduce(m, s, &mut reduced);
    }
    reduced
}

/// What the choice of a persistent set needs to know of one state.
pub struct Analysis<'a, A: Spec> {
    m: &'a SnapshotModel<A>,
    s: &'a State<A>,
    actions: &'a [Act<A>],
    n: usize,
    /// The enabled actions of each group (indices into `actions`).
    members: Vec<SmallVec<[usize; 4]>>,
    /// Snapshots each process has recorded, one bit per id.
    rec: SmallVec<[u32; 8]>,
    /// Every snapshot id.
    all: u32,
    /// Per process: the snapshots started somewhere whose part is not complete here.
    open: SmallVec<[u32; 8]>,
    /// Per process: it holds deferred work.
    deferred: SmallVec<[bool; 8]>,
    /// Full mode: no step can turn on a stable predicate of the application that is false here,
    /// and receipts commute with moves: a completing step then commutes with every step that
    /// leaves "distribution terminated" as it is (see `quiet`).
    quiet_app: bool,
    /// "Distribution terminated" holds here.
    terminated: bool,
}

impl<'a, A: Spec> Analysis<'a, A> {
    /// Analyses `s`, whose enabled actions are `actions`.
    pub fn new(m: &'a SnapshotModel<A>, s: &'a State<A>, actions: &'a [Act<A>]) -> Self {
        let t = m.topology();
        let n = t.len();
        let groups = 4 * n + t.channels().len();
        let mut members: Vec<SmallVec<[usize; 4]>> = vec![SmallVec::new(); groups];
        let mut this = Analysis {
            m,
            s,
            actions,
            n,
            members: Vec::new(),
            rec: s.procs.iter().map(|p| m.recorded_bits(p)).collect(),
            all: m.snapshot_ids().fold(0, |b, x| b | 1 << x.0),
            open: SmallVec::new(),
            deferred: s.procs.iter().map(|p| p.faults_pending()).collect(),
            quiet_app: false,
            terminated: false,
        };
        // The completing step's other reading (every channel's messages, against the messages sent and
        // received since the cut) commutes with sends and receipts on FIFO channels only.
        if m.cfg.mode == Mode::Full && A::RECEIPTS_COMMUTE && !m.cfg.theft && m.cfg.variant != Variant::NonFifo {
            // "Distribution terminated": no move enabled and no message in transit.
            let moves = actions.iter().any(|a| matches!(a, Action::Send { .. } | Action::Internal { .. }));
            this.terminated = !moves && s.chans.all().iter().all(|p| !p.is_app());
            let kinds = [StepKind::Send, StepKind::Receive, StepKind::Internal];
            let may_turn_on = |i: usize| kinds.iter().any(|&k| A::stable_may_turn_on(i - 1, k, &m.setup));
            let fragile: SmallVec<[usize; 4]> = (1..m.predicates.len()).filter(|&i| may_turn_on(i)).collect();
            this.quiet_app = fragile.is_empty() || {
                let y = m.y_live(s);
                fragile.iter().all(|&i| y & (1 << i) != 0)
            };
        }
        let started: u32 = m.snapshot_ids().filter(|&x| s.started(x)).fold(0, |b, x| b | 1 << x.0);
        this.open = s
            .procs
            .iter()
            .map(|p| {
                m.snapshot_ids()
                    .filter(|&x| started & (1 << x.0) != 0 && !p.is_complete(x))
                    .fold(0, |b, x| b | 1 << x.0)
            })
            .collect();
        for (i, a) in actions.iter().enumerate() {
            let g = this.index(group(a));
            members[g].push(i);
        }
        this.members = members;
        this
    }

    fn index(&self, g: Group) -> usize {
        match g {
            Group::Moves(q) => q as usize,
            Group::Init(q) => self.n + q as usize,
            Group::Flush(q) => 2 * self.n + q as usize,
            Group::Guard(q) => 3 * self.n + q as usize,
            Group::Recv(c) => 4 * self.n + c as usize,
        }
    }

    fn group_at(&self, i: usize) -> Group {
        let n = self.n;
        match i {
            i if i < n => Group::Moves(i as u8),
            i if i < 2 * n => Group::Init((i - n) as u8),
            i if i < 3 * n => Group::Flush((i - 2 * n) as u8),
            i if i < 4 * n => Group::Guard((i - 3 * n) as u8),
            i => Group::Recv((i - 4 * n) as u8),
        }
    }

    fn ends(&self, c: u8) -> (usize, usize) {
        let ch = self.m.topology().channel(ChannelId(u32::from(c)));
        (ch.from.index(), ch.to.index())
    }

    fn incoming(&self, q: usize) -> impl Iterator<Item = u8> + '_ {
        self.m.topology().incoming(ProcessId(q as u16)).iter().map(|c| c.0 as u8)
    }

    /// Channel `c` holds a marker of a snapshot its receiver has not recorded: its receipt, once
    /// the messages ahead of it are delivered, makes the receiver record.
    fn first_marker_in(&self, c: u8) -> bool {
        let q = self.ends(c).1;
        let unrecorded = self.all & !self.rec[q];
        unrecorded != 0
            && self.s.chans.get(c as usize).iter().any(|p| match p.msg {
                Message::Marker(x) => unrecorded & (1 << x.0) != 0,
                // (Cancellations belong to the barrier algorithms, which --por refuses.)
                Message::App(_) | Message::Cancel(_) => false,
            })
    }

    /// The sender of `c` may still put on it a marker of a snapshot its receiver has not
    /// recorded (it has not recorded that snapshot itself, or holds deferred markers).
    fn may_send_first_marker(&self, c: u8) -> bool {
        let (r, q) = self.ends(c);
        let unrecorded = self.all & !self.rec[q];
        unrecorded != 0 && (unrecorded & !self.rec[r] != 0 || self.deferred[r])
    }

    /// What keeps the receiver of `c` from receiving a first marker on `c` outside the set: the
    /// channel's removals if one is in it, else the sender's guard if it may still send one.
    fn keep_first_markers_off(&self, c: u8, out: &mut SmallVec<[usize; 16]>) {
        if self.first_marker_in(c) {
            out.push(self.index(Group::Recv(c)));
        } else if self.may_send_first_marker(c) {
            out.push(self.index(Group::Guard(self.ends(c).0 as u8)));
        }
    }

    /// Process `r` may still put something on its outgoing channels: a move, or a marker.
    fn may_push(&self, r: usize) -> (bool, bool) {
        let moves = self.s.procs[r].app().0.may_move_again(self.s.budget[r]);
        let markers = self.all & !self.rec[r] != 0 || self.deferred[r];
        (moves, markers)
    }

    /// Whether enabled action `a` (of process `owner`'s groups) may complete a snapshot: its owner
    /// is the last process whose part of some started snapshot is open, and it is a marker's
    /// receipt, an initiation or deferred work. Such a step reads the whole state (full mode's
    /// ghost data: the stable predicates and every channel at S_end), so it is dependent with
    /// every application step of every process.
    fn completing(&self, a: &Act<A>) -> bool {
        if self.m.cfg.mode != Mode::Full {
            return false;
        }
        let owner = match *a {
            Action::Deliver { channel, index } => {
                let tagged = self.s.chans.get(channel as usize).get(index as usize);
                let Some(Message::Marker(x)) = tagged.map(|p| p.msg) else { return false };
                let q = self.ends(channel).1;
                let bit = 1 << x.0;
                if (0..self.n).any(|w| w != q && self.open[w] & bit != 0) {
                    return false;
                }
                // The last process open for x: completing if this closes its last open record.
                let t = self.m.topology();
                let slot = self.s.procs[q].slot(x);
                let open = t
                    .incoming(ProcessId(q as u16))
                    .iter()
                    .enumerate()
                    .filter(|&(i, &c)| c.0 != u32::from(channel) && !slot.is_some_and(|sl| sl.marker(i)))
                    .count();
                return self.open[q] & bit != 0 && open == 0;
            }
            Action::Initiate { process, .. } | Action::Flush { process } => process as usize,
            _ => return false,
        };
        let others: u32 = (0..self.n).filter(|&w| w != owner).fold(0, |b, w| b | self.open[w]);
        self.open[owner] & !others != 0
    }

    /// Whether enabled action `a` reads the whole state: an initiation that starts a snapshot
    /// (full mode records S_begin's stable predicates and what was stolen so far), or a step that
    /// may complete one.
    pub fn global(&self, a: &Act<A>) -> bool {
        self.starting(a) || self.completing(a)
    }

    /// Whether enabled action `a` starts a snapshot (full mode records S_begin's stable
    /// predicates and what was stolen so far).
    fn starting(&self, a: &Act<A>) -> bool {
        match *a {
            Action::Initiate { snapshot, .. } => {
                self.m.cfg.mode == Mode::Full && !self.s.started(SnapshotId(u32::from(snapshot)))
            }
            _ => false,
        }
    }

    /// The message delivered by enabled delivery `a`, if it is one.
    fn delivered(&self, a: &Act<A>) -> Option<(usize, bool, u32)> {
        match *a {
            Action::Deliver { channel, index } => {
                let p = self.s.chans.get(channel as usize).get(index as usize)?;
                let q = self.ends(channel).1;
                match p.msg {
                    Message::App(_) => Some((q, true, 0)),
                    Message::Marker(x) => Some((q, false, 1 << x.0)),
                    Message::Cancel(_) => None,
                }
            }
            _ => None,
        }
    }

    /// A receipt in group `g` may change what its receiver records (a first marker, deferred
    /// work, or, when receipts do not commute with moves, any receipt).
    fn recording_receipt(&self, g: usize) -> bool {
        self.members[g].iter().any(|&i| match self.delivered(&self.actions[i]) {
            Some((q, true, _)) => !A::RECEIPTS_COMMUTE || self.deferred[q],
            Some((q, false, bit)) => self.rec[q] & bit == 0 || self.deferred[q],
            None => false,
        })
    }

    fn process_groups(&self, q: usize, out: &mut SmallVec<[usize; 16]>) {
        out.push(self.index(Group::Moves(q as u8)));
        out.push(self.index(Group::Init(q as u8)));
        out.push(self.index(Group::Flush(q as u8)));
        for c in self.incoming(q) {
            out.push(self.index(Group::Recv(c)));
        }
    }

    /// The groups an enabled member of group `g` may depend on, now or after any steps outside
    /// a set holding `g`.
    fn deps(&self, g: usize, out: &mut SmallVec<[usize; 16]>) {
        match self.group_at(g) {
            Group::Moves(q) => {
                let q = q as usize;
                out.push(self.index(Group::Init(q as u8)));
                out.push(self.index(Group::Flush(q as u8)));
                for c in self.incoming(q) {
                    if !A::RECEIPTS_COMMUTE || self.deferred[q] {
                        out.push(self.index(Group::Recv(c)));
                    } else {
                        self.keep_first_markers_off(c, out);
                    }
                }
            }
            Group::Init(q) | Group::Flush(q) => self.process_groups(q as usize, out),
            Group::Guard(_) => {}
            Group::Recv(c) => {
                let q = self.ends(c).1;
                if self.recording_receipt(g) {
                    self.process_groups(q, out);
                } else if self.members[g].iter().any(|&i| self.delivered(&self.actions[i]).is_some_and(|d| d.1)) {
                    // A message's receipt, commuting with the receiver's moves: it depends on what
                    // may make the receiver record.
                    out.push(self.index(Group::Init(q as u8)));
                    out.push(self.index(Group::Flush(q as u8)));
                    for c2 in self.incoming(q) {
                        if c2 != c {
                            self.keep_first_markers_off(c2, out);
                        }
                    }
                }
                // A marker closing a record, a theft, a lost marker: only the channel's other
                // removals (the same group).
            }
        }
    }

    /// A necessary enabling set of the actions of group `g` that are disabled here and may be
    /// enabled later (empty when none can be).
    fn nes(&self, g: usize, out: &mut SmallVec<[usize; 16]>) {
        match self.group_at(g) {
            Group::Moves(q) => {
                let q = q as usize;
                if self.members[g].is_empty() && self.may_push(q).0 {
                    // Moves appear only through receipts.
                    for c in self.incoming(q) {
                        out.push(self.index(Group::Recv(c)));
                    }
                }
            }
            // An initiation disabled here (recorded) never comes back; no deferred work arises
            // in the correct algorithm.
            Group::Init(_) | Group::Flush(_) => {}
            // A process records by initiating, by deferred work, or on a first marker.
            Group::Guard(r) => {
                out.push(self.index(Group::Init(r)));
                out.push(self.index(Group::Flush(r)));
                for c in self.incoming(r as usize) {
                    self.keep_first_markers_off(c, out);
                }
            }
            Group::Recv(c) => {
                // Thefts, lost markers and non-FIFO deliveries name positions: a message appended
                // later brings a new action of the group.
                let positional =
                    self.m.cfg.theft || matches!(self.m.cfg.variant, Variant::NonFifo | Variant::LoseMarkers);
                let more_labels = positional || self.s.chans.get(c as usize).is_empty();
                if !more_labels {
                    return;
                }
                let r = self.ends(c).0;
                let (moves, markers) = self.may_push(r);
                if moves {
                    out.push(self.index(Group::Moves(r as u8)));
                }
                if markers {
                    out.push(self.index(Group::Guard(r as u8)));
                }
            }
        }
    }

    /// The stubborn set grown from group `seed`: one flag per group, or `None` when it holds a
    /// step that reads the whole state (then every enabled action is explored).
    fn closure(&self, seed: usize) -> Option<Vec<bool>> {
        let plain = self.grow(seed, false).flatten();
        if !self.quiet_app {
            return plain;
        }
        let Some(Some(quiet)) = self.grow(seed, true) else { return plain };
        match plain {
            Some(p) if self.size(&p) <= self.size(&quiet) => Some(p),
            _ => Some(quiet),
        }
    }

    /// The enabled actions in the set.
    fn size(&self, in_t: &[bool]) -> usize {
        (0..in_t.len()).filter(|&g| in_t[g]).map(|g| self.members[g].len()).sum()
    }

    /// Grows the set from `seed`. With `quiet`, completing steps are ordinary marker receipts
    /// and the set keeps "distribution terminated" false (two blockers, see `quiet`):
    /// `None` when it cannot. Without, completions are kept out of reach (see
    /// `unfrozen`): `Some(None)` when the set holds a step that reads the whole
    /// state.
    #[allow(clippy::option_option)]
    fn grow(&self, seed: usize, quiet: bool) -> Option<Option<Vec<bool>>> {
        let mut in_t = vec![false; self.members.len()];
        let mut work: Vec<usize> = vec![seed];
        in_t[seed] = true;
        let mut out: SmallVec<[usize; 16]> = SmallVec::new();
        loop {
            while let Some(g) = work.pop() {
                out.clear();
                if !self.members[g].is_empty() {
                    let global = |i: &usize| {
                        let a = &self.actions[*i];
                        self.starting(a) || !quiet && self.completing(a)
                    };
                    if self.members[g].iter().any(global) {
                        return if quiet { None } else { Some(None) };
                    }
                    self.deps(g, &mut out);
                }
                self.nes(g, &mut out);
                for &d in &out {
                    if !in_t[d] {
                        in_t[d] = true;
                        work.push(d);
                    }
                }
            }
            let extra = if quiet { self.quiet(&in_t)? } else { self.unfrozen(&in_t) };
            match extra {
                Some(extra) => {
                    in_t[extra] = true;
                    work.push(extra);
                }
                None => return Some(Some(in_t)),
            }
        }
    }

    /// With receipts commuting with moves and no stable predicate of the application able to
    /// come true, a snapshot's completing step (which reads the stable predicates, and every
    /// channel's messages, which FIFO receipts and sends change alike in either order) commutes
    /// with every step that leaves "distribution terminated" false. That holds of every step
    /// outside the set, and of one step of the set after them, while the set keeps two
    /// *blockers*: a process with an enabled move whose moves are in the set (steps outside
    /// cannot disable them: receipts disable no move; it counts twice when none of its moves is
    /// an internal step, since a send of its own keeps a message in transit), or a message in a
    /// channel whose removals are in the set (a channel with two messages counts twice); one step
    /// removes at most one, and a send keeps a message in transit. Returns `Some(None)` when the set is quiet, a group
    /// to add, or `None` when no blocker is left to add.
    #[allow(clippy::option_option)]
    fn quiet(&self, in_t: &[bool]) -> Option<Option<usize>> {
        if self.terminated {
            return Some(None);
        }
        let mut blockers = 0;
        let mut candidate: Option<(usize, usize)> = None;
        for q in 0..self.n {
            let g = self.index(Group::Moves(q as u8));
            let size = self.members[g].len();
            if size == 0 {
                continue;
            }
            if in_t[g] {
                // Only an internal step of its own may disable its moves.
                let internal = self.members[g].iter().any(|&i| matches!(self.actions[i], Action::Internal { .. }));
                blockers += if internal { 1 } else { 2 };
            } else if candidate.is_none_or(|(s, _)| size < s) {
                candidate = Some((size, g));
            }
        }
        for c in 0..self.m.topology().channels().len() {
            let messages = self.s.messages(c).min(2);
            if messages == 0 {
                continue;
            }
            let g = self.index(Group::Recv(c as u8));
            if in_t[g] {
                blockers += messages;
            } else if candidate.is_none_or(|(s, _)| self.members[g].len() < s) {
                candidate = Some((self.members[g].len(), g));
            }
        }
        if blockers >= 2 {
            return Some(None);
        }
        candidate.map(|(_, g)| Some(g))
    }

    /// In full mode, a group to add so that no started, incomplete snapshot can complete by
    /// steps outside the set, nor by one step of the set taken after them (a completing step
    /// reads the whole state); `None` when every snapshot is held. A snapshot completes when its
    /// last open record (a process's incoming channel whose marker has not arrived) closes, and
    /// only the receipt of its marker closes one. Steps outside the set cannot close a record
    /// on a channel whose removals are in the set ("held"); so one held record keeps a snapshot
    /// from completing outside the set, and two keep any one step of the set from completing it
    /// after steps outside, which matters when the set delivers a marker of it.
    fn unfrozen(&self, in_t: &[bool]) -> Option<usize> {
        if self.m.cfg.mode != Mode::Full {
            return None;
        }
        let t = self.m.topology();
        for x in self.m.snapshot_ids() {
            let bit = 1 << x.0;
            let mut best: Option<(bool, usize)> = None;
            let (mut held, mut open, mut closing) = (0, 0, false);
            for w in (0..self.n).filter(|&w| self.open[w] & bit != 0) {
                let slot = self.s.procs[w].slot(x);
                for (i, &c) in t.incoming(ProcessId(w as u16)).iter().enumerate() {
                    if slot.is_some_and(|sl| sl.marker(i)) {
                        continue;
                    }
                    open += 1;
                    let g = self.index(Group::Recv(c.0 as u8));
                    if in_t[g] {
                        held += 1;
                        closing |= self.members[g]
                            .iter()
                            .any(|&k| matches!(self.delivered(&self.actions[k]), Some((_, false, b)) if b == bit));
                        continue;
                    }
                    let busy = !self.s.chans.get(c.index()).is_empty();
                    if best.is_none_or(|(b, _)| busy && !b) {
                        best = Some((busy, g));
                    }
                }
            }
            if held < open.min(if closing { 2 } else { 1 }) {
                if let Some((_, g)) = best {
                    return Some(g);
                }
            }
        }
        None
    }

    /// The chosen persistent set: one flag per enabled action, or `None` for all of them.
    pub fn choose(&self) -> Option<Vec<bool>> {
        // Only initiations enabled: all of them (quiescent states must all be reached).
        if self.actions.iter().all(|a| matches!(a, Action::Initiate { .. })) {
            return None;
        }
        // A snapshot may still start: full mode's initiation reads the whole state.
        if self.actions.iter().any(|a| matches!(a, Action::Initiate { .. }) && self.global(a)) {
            return None;
        }
        let mut best: Option<(usize, Vec<bool>)> = None;
        for seed in 0..self.members.len() {
            let seeds_ok = self.members[seed].iter().any(|&i| !matches!(self.actions[i], Action::Initiate { .. }));
            if !seeds_ok {
                continue;
            }
            let Some(in_t) = self.closure(seed) else { continue };
            let size = self.size(&in_t);
            if best.as_ref().is_none_or(|(b, _)| size < *b) {
                best = Some((size, in_t));
                if size == 1 {
                    break;
                }
            }
        }
        let (size, in_t) = best?;
        if size == self.actions.len() {
            return None;
        }
        Some(self.actions.iter().map(|a| in_t[self.index(group(a))]).collect())
    }

    /// Per seed group with an enabled action: the groups of its stubborn set, or `None` when it
    /// holds a step reading the whole state (a debugging aid).
    pub fn seeds(&self) -> Vec<(Group, Option<Vec<Group>>)> {
        (0..self.members.len())
            .filter(|&g| !self.members[g].is_empty())
            .map(|g| {
                let set = self
                    .closure(g)
                    .map(|in_t| (0..in_t.len()).filter(|&h| in_t[h]).map(|h| self.group_at(h)).collect());
                (self.group_at(g), set)
            })
            .collect()
    }

    /// The declared dependency of two distinct enabled actions in this state: one's group is
    /// among the other's dependencies, or one reads the whole state. Independent actions are
    /// both enabled after the other and lead to equal states in either order (the tests check
    /// this on random reachable states).
    pub fn dependent(&self, a: &Act<A>, b: &Act<A>) -> bool {
        let (ga, gb) = (self.index(group(a)), self.index(group(b)));
        if ga == gb || self.global(a) || self.global(b) {
            return true;
        }
        let mut out = SmallVec::new();
        self.deps(ga, &mut out);
        if out.contains(&gb) {
            return true;
        }
        out.clear();
        self.deps(gb, &mut out);
        out.contains(&ga)
    }
}
