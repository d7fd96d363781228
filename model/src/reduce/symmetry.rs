//! Symmetry reduction: the permutations of processes that map the configuration onto itself
//! (same roads, same jars, same right to initiate), and a canonical representative of each
//! state's class under them.
//!
//! stateright takes the representative as a plain `fn(&State) -> State`, so the group lives in a
//! process-wide registry and each state carries the index of its group.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock, RwLock};

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, Message, ProcessId};
use rustc_hash::FxHasher;
use thiserror::Error;

use crate::system::chans::{Chans, Tagged};
use crate::system::config::{Mode, Resolved};
use crate::system::machine::SnapshotModel;
use crate::system::setting::{Names, Setting, Wording};
use crate::system::stamp::{Stamp, Stamped};
use crate::system::state::{Shared, State, StateData};

/// Why symmetry reduction cannot be turned on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum SymmetryError {
    /// Literal mode's history names processes.
    Literal,
    /// Partial-order reduction is on.
    Por,
    /// A barrier algorithm, whose channel numbering a permutation does not renumber.
    Algorithm,
}

impl Wording for SymmetryError {
    fn write(&self, f: &mut fmt::Formatter<'_>, names: Names) -> fmt::Result {
        let symmetry = Setting::Symmetry.name(names);
        match self {
            SymmetryError::Literal => write!(
                f,
                "{symmetry} cannot be used with {} (the history names the houses)",
                Setting::Properties.with(Mode::Literal, names)
            ),
            SymmetryError::Por => write!(
                f,
                "{} cannot be combined with {symmetry}: the persistent sets are chosen on each state as stored, not \
                 on its class under the symmetry, and no argument that the two reductions compose is made here (use \
                 one or the other)",
                Setting::Por.name(names)
            ),
            SymmetryError::Algorithm => write!(
                f,
                "{symmetry} is for {} only (the barrier algorithms' back edges and output buffers are numbered by \
                 channel, and a permutation does not renumber them)",
                Setting::Algorithm.with(chandy_lamport::Algorithm::ChandyLamport, names)
            ),
        }
    }
}

impl fmt::Display for SymmetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, Names::Fields)
    }
}

impl<A: Spec> SnapshotModel<A> {
    /// Turns symmetry reduction on: registers the configuration's automorphisms and returns how
    /// many there are. Literal mode's history names processes, so it cannot be reduced.
    pub fn enable_symmetry(&mut self) -> Result<usize, SymmetryError> {
        if self.cfg.mode == Mode::Literal {
            return Err(SymmetryError::Literal);
        }
        if self.cfg.por {
            return Err(SymmetryError::Por);
        }
        if !self.cfg.algorithm.permutable() {
            return Err(SymmetryError::Algorithm);
        }
        let group = Group::of(&self.cfg);
        let size = group.len();
        self.set_symmetry(register(group));
        Ok(size)
    }
}

/// One automorphism of the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Perm {
    /// Process `i` becomes process `procs[i]`.
    procs: Vec<usize>,
    /// Channel `c` becomes channel `chans[c]`.
    chans: Vec<usize>,
    /// Channel `c` comes from channel `from[c]` (the inverse of `chans`).
    from: Vec<usize>,
    /// Whether this is the identity.
    identity: bool,
    /// For each new process `j`: the record at position `m` comes from position `records[j][m]`
    /// of the old process.
    records: Vec<Vec<usize>>,
}

/// The automorphisms of a configuration (the identity included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    perms: Vec<Perm>,
}

impl Group {
    /// Every permutation of processes that preserves channels, initial jars and initiators.
    pub fn of(cfg: &Resolved) -> Group {
        let t = &cfg.topology;
        let n = t.len();
        let mut perms = Vec::new();
        let mut order: Vec<usize> = (0..n).collect();
        let mut visit = |pi: &[usize]| {
            let same_roles =
                (0..n).all(|i| cfg.tokens[pi[i]] == cfg.tokens[i] && cfg.initiators[pi[i]] == cfg.initiators[i]);
            if !same_roles {
                return;
            }
            let mut chans = Vec::with_capacity(t.channels().len());
            for ch in t.channels() {
                match t.channel_between(ProcessId(pi[ch.from.index()] as u16), ProcessId(pi[ch.to.index()] as u16)) {
                    Some(c) => chans.push(c.index()),
                    None => return,
                }
            }
            let mut inverse = vec![0; n];
            for (i, &p) in pi.iter().enumerate() {
                inverse[p] = i;
            }
            let mut from = vec![0; chans.len()];
            for (c, &to) in chans.iter().enumerate() {
                from[to] = c;
            }
            let records = (0..n)
                .map(|j| {
                    let old = ProcessId(inverse[j] as u16);
                    t.incoming(ProcessId(j as u16))
                        .iter()
                        .map(|&c_new| {
                            let c_old = ChannelId(from[c_new.index()] as u32);
                            t.incoming(old).iter().position(|&c| c == c_old).unwrap_or(0)
                        })
                        .collect()
                })
                .collect();
            let identity = pi.iter().enumerate().all(|(i, &p)| i == p);
            perms.push(Perm { procs: pi.to_vec(), chans, from, identity, records });
        };
        permutations(&mut order, 0, &mut visit);
        Group { perms }
    }

    /// Number of automorphisms (1: no symmetry to exploit).
    pub fn len(&self) -> usize {
        self.perms.len()
    }

    /// Always false: the identity is in every group.
    pub fn is_empty(&self) -> bool {
        self.perms.is_empty()
    }
}

/// Calls `visit` on every permutation of `items[k..]` (Heap-style recursion).
fn permutations(items: &mut Vec<usize>, k: usize, visit: &mut impl FnMut(&[usize])) {
    if k == items.len() {
        visit(items);
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, visit);
        items.swap(k, i);
    }
}

fn registry() -> &'static RwLock<Vec<Arc<Group>>> {
    static REGISTRY: OnceLock<RwLock<Vec<Arc<Group>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(Vec::new()))
}

/// Registers `group`; states carrying the returned index use it in [`representative`]. An
/// equal group registered before keeps its index: models of one configuration in one process
/// (a distributed search's ranks as threads) give their states the same index, so the same
/// state has the same digest whichever of them made it.
pub fn register(group: Group) -> u16 {
    let mut groups = registry().write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = groups.iter().position(|g| **g == group) {
        return i as u16 + 1;
    }
    groups.push(Arc::new(group));
    groups.len() as u16
}

fn apply<A: Spec>(perm: &Perm, s: &State<A>) -> State<A> {
    let n = s.procs.len();
    let mut procs = s.procs.clone();
    let mut budget = s.budget;
    let mut sent = s.sent;
    let map = |p: ProcessId| ProcessId(perm.procs.get(p.index()).map_or(p.0, |&j| j as u16));
    let app = |a: &Stamped<A>| Stamped(a.0.relabel(&map));
    let msg = |m: &Stamp<A::Msg>| Stamp { seq: m.seq, msg: A::relabel_msg(&m.msg, &map) };
    for i in 0..n {
        let j = perm.procs[i];
        procs[j] = Shared::new(s.procs[i].relabeled_with(ProcessId(j as u16), &perm.records[j], &app, &msg));
        budget[j] = s.budget[i];
        sent[j] = s.sent[i];
    }
    let mut chans = Chans::new(s.chans.len());
    for (to, &from) in perm.from.iter().enumerate() {
        for p in s.chans.get(from) {
            let tagged = match &p.msg {
                Message::App(m) => Tagged { msg: Message::App(msg(m)), tag: p.tag },
                Message::Marker(_) | Message::Cancel(_) => *p,
            };
            chans.push(to, tagged);
        }
    }
    let ghost = s.ghost.as_ref().map(|g| {
        let mut g = g.clone();
        for snap in g.snaps.iter_mut().filter(|snap| snap.active) {
            snap.edit(|snap| {
                snap.expected = snap.expected.permuted(&perm.chans, &msg);
                snap.post_sent = snap.post_sent.permuted(&perm.chans, &msg);
                snap.post_received = snap.post_received.permuted(&perm.chans, &msg);
                let mut rec = snap.rec_budget.clone();
                for (i, &b) in snap.rec_budget.iter().enumerate() {
                    rec[perm.procs[i]] = b;
                }
                snap.rec_budget = rec;
            });
        }
        g
    });
    State(Box::new(StateData {
        procs,
        chans,
        budget,
        sent,
        refused: s.refused.clone(),
        ghost,
        history: s.history.clone(),
        sym: s.sym,
        // --symmetry is refused with the barrier algorithms, the only ones with a coordinator.
        ckpt: s.ckpt.clone(),
    }))
}

fn digest<A: Spec>(s: &State<A>) -> u64 {
    let mut h = FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// The representative of `state`'s class: of all its images under the group, the one with the
/// least hash. States without a group are their own representative.
pub fn representative<A: Spec>(state: &State<A>) -> State<A> {
    if state.sym == 0 {
        return state.clone();
    }
    let group = {
        let groups = registry().read().unwrap_or_else(|e| e.into_inner());
        match groups.get(usize::from(state.sym) - 1) {
            Some(g) => Arc::clone(g),
            None => return state.clone(),
        }
    };
    let mut best: Option<(u64, State<A>)> = None;
    for perm in &group.perms {
        let image = if perm.identity { None } else { Some(apply(perm, state)) };
        let d = digest(image.as_ref().unwrap_or(state));
        if best.as_ref().is_none_or(|(b, _)| d < *b) {
            best = Some((d, image.unwrap_or_else(|| state.clone())));
        }
    }
    best.map_or_else(|| state.clone(), |(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::config::Config;

    #[test]
    fn an_equal_group_keeps_its_index() {
        let group = |procs| Group::of(&Config { procs: Some(procs), ..Config::default() }.resolve().expect("valid"));
        let (three, four) = (group(3), group(4));
        assert_ne!(three, four);
        let (i3, i4) = (register(three.clone()), register(four.clone()));
        assert!(i3 > 0 && i4 > 0 && i3 != i4, "{i3} {i4}");
        assert_eq!((register(three.clone()), register(four.clone())), (i3, i4));
        let groups = registry().read().unwrap();
        assert_eq!((&*groups[usize::from(i3) - 1], &*groups[usize::from(i4) - 1]), (&three, &four));
    }
}
