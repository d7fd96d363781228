//! Partial-order reduction (`--por`): from each state the model offers a persistent subset of
//! the enabled actions instead of all of them, so every checker (BFS, DFS, simulation) and the
//! Explorer see the same reduced graph. The README ("Partial-order reduction") gives the
//! argument; in short:
//!
//! - every step decreases the measure `2·Σ budget + Σ (carts in flight) + Σ (markers still to
//!   send or in flight) + (deferred work)`, so the state graph is acyclic and nothing is ignored;
//! - the persistent sets are built as stubborn sets over *groups* of actions (a house's moves,
//!   its initiations, its deferred work, and every removal from one channel), closed under a
//!   dependency relation that holds in the current state and in every state reachable from it by
//!   actions outside the set, and under necessary enabling sets for disabled members; every set
//!   holds an enabled action other than an initiation whenever there is one, so terminal and
//!   quiescent states are all reached;
//! - the properties are judged where a violation (or an example) is permanent, or, for "two
//!   snapshots overlap", on states the reduced search reaches anyway (see the README).
//!
//! [`Analysis::dependent`] is the declared relation on enabled actions, which the tests check
//! semantically (both orders enabled and equal states) on random reachable states.

use chandy_lamport::spec::Spec;
use chandy_lamport::{ChannelId, Message, ProcessId, SnapshotId, Variant};
use smallvec::SmallVec;

use crate::config::Mode;
use crate::model::{Act, Action, ChandyLamport};
use crate::state::State;

/// A group of actions that the stubborn sets take or leave together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// The application moves (sends and internal steps) of a house.
    Moves(u8),
    /// The initiations of a house.
    Init(u8),
    /// The deferred work of a house (fault variants only).
    Flush(u8),
    /// Every removal from a channel: deliveries, thefts, lost markers.
    Recv(u8),
}

/// The group of `action`.
pub fn group<M, S>(action: &Action<M, S>) -> Group {
    match *action {
        Action::Send { from, .. } => Group::Moves(from),
        Action::Internal { house, .. } => Group::Moves(house),
        Action::Deliver { channel, .. } | Action::Steal { channel, .. } | Action::LoseMarker { channel, .. } => {
            Group::Recv(channel)
        }
        Action::Initiate { house, .. } => Group::Init(house),
        Action::Flush { house } => Group::Flush(house),
    }
}

/// Whether the reduction applies to `cfg` (otherwise every enabled action is explored). The
/// dependency relation below is argued for the correct algorithm on FIFO channels; the fault
/// variants change what a receipt or a marker does, so they keep the full graph.
fn reducible<A: Spec>(m: &ChandyLamport<A>) -> bool {
    m.cfg.por && m.cfg.mode != Mode::Literal && m.cfg.variant == Variant::None
}

/// Replaces `actions` (every enabled action of `s`, in the model's order) by the persistent set
/// chosen for `s`, keeping their order.
pub fn reduce<A: Spec>(m: &ChandyLamport<A>, s: &State<A>, actions: &mut Vec<Act<A>>) {
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
pub fn persistent_set<A: Spec>(m: &ChandyLamport<A>, s: &State<A>) -> Vec<Act<A>> {
    let mut actions = Vec::new();
    m.each_action(s, |a| {
        actions.push(a);
        true
    });
    let mut reduced = actions.clone();
    if m.cfg.por {
        reduce(m, s, &mut reduced);
    }
    reduced
}

/// What the choice of a persistent set needs to know of one state.
pub struct Analysis<'a, A: Spec> {
    m: &'a ChandyLamport<A>,
    s: &'a State<A>,
    actions: &'a [Act<A>],
    n: usize,
    /// The enabled actions of each group (indices into `actions`).
    members: Vec<SmallVec<[usize; 4]>>,
    /// Snapshots each house has recorded, one bit per id.
    rec: SmallVec<[u32; 8]>,
    /// Every snapshot id.
    all: u32,
    /// Per house: the snapshots started somewhere whose part is not complete here.
    open: SmallVec<[u32; 8]>,
    /// Per house: it holds deferred work.
    deferred: SmallVec<[bool; 8]>,
}

impl<'a, A: Spec> Analysis<'a, A> {
    /// Analyses `s`, whose enabled actions are `actions`.
    pub fn new(m: &'a ChandyLamport<A>, s: &'a State<A>, actions: &'a [Act<A>]) -> Self {
        let t = m.topology();
        let n = t.len();
        let groups = 3 * n + t.channels().len();
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
            deferred: s.procs.iter().map(|p| p.has_deferred()).collect(),
        };
        let started: u32 = m.snapshot_ids().filter(|&x| s.started(x)).fold(0, |b, x| b | 1 << x.0);
        this.open = s
            .procs
            .iter()
            .map(|p| m.snapshot_ids().filter(|&x| started & (1 << x.0) != 0 && !p.is_complete(x)).fold(0, |b, x| b | 1 << x.0))
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
            Group::Recv(c) => 3 * self.n + c as usize,
        }
    }

    fn group_at(&self, i: usize) -> Group {
        let n = self.n;
        match i {
            i if i < n => Group::Moves(i as u8),
            i if i < 2 * n => Group::Init((i - n) as u8),
            i if i < 3 * n => Group::Flush((i - 2 * n) as u8),
            i => Group::Recv((i - 3 * n) as u8),
        }
    }

    fn ends(&self, c: u8) -> (usize, usize) {
        let ch = self.m.topology().channel(ChannelId(u32::from(c)));
        (ch.from.index(), ch.to.index())
    }

    fn incoming(&self, q: usize) -> impl Iterator<Item = u8> + '_ {
        self.m.topology().incoming(ProcessId(q as u16)).iter().map(|c| c.0 as u8)
    }

    /// Channel `c` may, now or after steps of others, bring its receiver a marker of a snapshot
    /// the receiver has not recorded (a receipt there may make it record).
    fn hazard(&self, c: u8) -> bool {
        let (r, q) = self.ends(c);
        let unrecorded = self.all & !self.rec[q];
        if unrecorded == 0 {
            return false;
        }
        let in_channel = self.s.chans.get(c as usize).iter().any(|p| match p.msg {
            Message::Marker(x) => unrecorded & (1 << x.0) != 0,
            Message::App(_) => false,
        });
        in_channel || unrecorded & !self.rec[r] != 0 || self.deferred[r]
    }

    /// House `r` may still put something on its outgoing channels: a move, or a marker.
    fn may_push(&self, r: usize) -> (bool, bool) {
        let moves = self.s.procs[r].app().0.may_move_again(self.s.budget[r]);
        let markers = self.all & !self.rec[r] != 0 || self.deferred[r];
        (moves, markers)
    }

    /// Whether enabled action `a` (of house `owner`'s groups) may complete a snapshot: its owner
    /// is the last house whose part of some started snapshot is open, and it is a marker's
    /// receipt, an initiation or deferred work. Such a step reads the whole state (full mode's
    /// ghost data: the stable predicates and every channel at S_end), so it is dependent with
    /// every application step of every house.
    fn completing(&self, a: &Act<A>) -> bool {
        if self.m.cfg.mode != Mode::Full {
            return false;
        }
        let owner = match *a {
            Action::Deliver { channel, index } => {
                let packet = self.s.chans.get(channel as usize).get(index as usize);
                if !packet.is_some_and(|p| !p.is_app()) {
                    return false;
                }
                self.ends(channel).1
            }
            Action::Initiate { house, .. } | Action::Flush { house } => house as usize,
            _ => return false,
        };
        let others: u32 = (0..self.n).filter(|&w| w != owner).fold(0, |b, w| b | self.open[w]);
        self.open[owner] & !others != 0
    }

    /// Whether enabled action `a` reads the whole state: an initiation that starts a snapshot
    /// (full mode records S_begin's stable predicates and what was stolen so far), or a step that
    /// may complete one.
    pub fn global(&self, a: &Act<A>) -> bool {
        match *a {
            Action::Initiate { snapshot, .. } => {
                self.m.cfg.mode == Mode::Full && !self.s.started(SnapshotId(u32::from(snapshot))) || self.completing(a)
            }
            _ => self.completing(a),
        }
    }

    /// The packet delivered by enabled delivery `a`, if it is one.
    fn delivered(&self, a: &Act<A>) -> Option<(usize, bool, u32)> {
        match *a {
            Action::Deliver { channel, index } => {
                let p = self.s.chans.get(channel as usize).get(index as usize)?;
                let q = self.ends(channel).1;
                match p.msg {
                    Message::App(_) => Some((q, true, 0)),
                    Message::Marker(x) => Some((q, false, 1 << x.0)),
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

    fn house_groups(&self, q: usize, out: &mut SmallVec<[usize; 16]>) {
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
                    if !A::RECEIPTS_COMMUTE || self.deferred[q] || self.hazard(c) {
                        out.push(self.index(Group::Recv(c)));
                    }
                }
            }
            Group::Init(q) | Group::Flush(q) => self.house_groups(q as usize, out),
            Group::Recv(c) => {
                let q = self.ends(c).1;
                if self.recording_receipt(g) {
                    self.house_groups(q, out);
                } else if self.members[g].iter().any(|&i| self.delivered(&self.actions[i]).is_some_and(|d| d.1)) {
                    // A cart's receipt, commuting with the receiver's moves: it depends on what
                    // may make the receiver record.
                    out.push(self.index(Group::Init(q as u8)));
                    out.push(self.index(Group::Flush(q as u8)));
                    for c2 in self.incoming(q) {
                        if c2 != c && self.hazard(c2) {
                            out.push(self.index(Group::Recv(c2)));
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
            Group::Recv(c) => {
                let more_labels = self.m.cfg.theft || self.s.chans.get(c as usize).is_empty();
                if !more_labels {
                    return;
                }
                let r = self.ends(c).0;
                let (moves, markers) = self.may_push(r);
                if moves {
                    out.push(self.index(Group::Moves(r as u8)));
                }
                if markers {
                    out.push(self.index(Group::Init(r as u8)));
                    out.push(self.index(Group::Flush(r as u8)));
                    for c2 in self.incoming(r) {
                        if self.hazard(c2) {
                            out.push(self.index(Group::Recv(c2)));
                        }
                    }
                }
            }
        }
    }

    /// The stubborn set grown from group `seed`: one flag per group, or `None` when it holds a
    /// step that reads the whole state (then every enabled action is explored).
    fn closure(&self, seed: usize) -> Option<Vec<bool>> {
        let mut in_t = vec![false; self.members.len()];
        let mut work: Vec<usize> = vec![seed];
        in_t[seed] = true;
        let mut out: SmallVec<[usize; 16]> = SmallVec::new();
        loop {
            while let Some(g) = work.pop() {
                out.clear();
                if !self.members[g].is_empty() {
                    if self.members[g].iter().any(|&i| self.global(&self.actions[i])) {
                        return None;
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
            // No step outside the set may complete a snapshot (full mode reads the whole state
            // then): some house whose part is open keeps a channel whose record is open inside
            // the set.
            match self.unfrozen(&in_t) {
                Some(extra) => {
                    in_t[extra] = true;
                    work.push(extra);
                }
                None => return Some(in_t),
            }
        }
    }

    /// In full mode, a group to add so that some started, incomplete snapshot cannot complete
    /// outside the set; `None` when every one is held.
    fn unfrozen(&self, in_t: &[bool]) -> Option<usize> {
        if self.m.cfg.mode != Mode::Full {
            return None;
        }
        let t = self.m.topology();
        for x in self.m.snapshot_ids() {
            let bit = 1 << x.0;
            let mut best: Option<(bool, usize)> = None;
            let mut held = false;
            for w in (0..self.n).filter(|&w| self.open[w] & bit != 0) {
                let slot = self.s.procs[w].slot(x);
                for (i, &c) in t.incoming(ProcessId(w as u16)).iter().enumerate() {
                    if slot.is_some_and(|sl| sl.marker(i)) {
                        continue;
                    }
                    let g = self.index(Group::Recv(c.0 as u8));
                    if in_t[g] {
                        held = true;
                    }
                    let busy = !self.s.chans.get(c.index()).is_empty();
                    if best.is_none_or(|(b, _)| busy && !b) {
                        best = Some((busy, g));
                    }
                }
            }
            if !held {
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
            let size: usize = (0..in_t.len()).filter(|&g| in_t[g]).map(|g| self.members[g].len()).sum();
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
