//! Literal mode: judge a completed snapshot by handing the recorded history to the library's
//! trace checker, exactly as a recorded run of the threaded runtime would be judged.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use chandy_lamport::bank::{Bank, Jars};
use chandy_lamport::snapshot::{GlobalSnapshot, GlobalState};
use chandy_lamport::trace::{EventKind, MsgId, Trace};
use chandy_lamport::verify::{check, Clause};
use chandy_lamport::SnapshotId;

use crate::model::ChandyLamport;
use crate::properties::{sound, y_star};
use crate::state::{Recorded, State};

/// The verdicts on one completed snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// (a)
    pub crossing: bool,
    /// (b)
    pub records: bool,
    /// (c)
    pub reachable: bool,
    /// (d)
    pub end_reachable: bool,
    /// Stable detection.
    pub stable: bool,
    /// Jars stolen from carts sent before the cut.
    pub stolen_pre: u64,
    /// S* equals none of the global states the run passed through.
    pub never_occurred: bool,
}

/// Budget of `house` after the events before `position`.
fn budget_at(trace: &Trace<Bank>, sends: u8, house: usize, position: usize) -> u8 {
    let used = trace.events[..position.min(trace.events.len())]
        .iter()
        .filter(|e| e.process.index() == house && matches!(e.kind, EventKind::Send { .. } | EventKind::Internal))
        .count();
    sends.saturating_sub(used as u8)
}

fn y(m: &ChandyLamport, g: &GlobalState<Bank>, budgets: &[u8]) -> [bool; 2] {
    let held: u64 = g.processes.iter().map(|b| u64::from(b.jars) + u64::from(b.sold)).sum();
    let moving: u64 = g.channels.iter().flatten().map(|j| u64::from(j.0)).sum();
    let over =
        g.channels.iter().all(Vec::is_empty) && g.processes.iter().zip(budgets).all(|(b, &k)| k == 0 || b.jars == 0);
    [held + moving < m.initial_total(), over]
}

type CacheKey = (u64, usize, SnapshotId);

thread_local! {
    /// The properties of one state are evaluated one after the other: judge each history once.
    static CACHE: RefCell<Vec<(CacheKey, Option<Judgement>)>> = const { RefCell::new(Vec::new()) };
}

/// Judges snapshot `id` of `state` (which must carry a history) on what it recorded.
pub fn judge(m: &ChandyLamport, state: &State, id: SnapshotId, rec: &Recorded) -> Option<Judgement> {
    let history = state.history.as_ref()?;
    let key = (history.digest, history.trace.events.len(), id);
    if let Some(hit) = CACHE.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|(_, j)| j.clone())) {
        return hit;
    }
    let judgement = judge_uncached(m, &history.trace, id, rec);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 16 {
            c.clear();
        }
        c.push((key, judgement.clone()));
    });
    judgement
}

fn judge_uncached(m: &ChandyLamport, trace: &Trace<Bank>, id: SnapshotId, rec: &Recorded) -> Option<Judgement> {
    let topology = m.topology();
    let snapshot =
        GlobalSnapshot { id, state: GlobalState { processes: rec.houses.clone(), channels: rec.channels.clone() } };
    let report = check(topology, trace, &snapshot).ok()?;
    let cut = report.cut.clone()?;
    let sends = m.cfg.sends;
    let n = topology.len();
    // Thefts of carts sent before the cut count as before the cut.
    let send_pos: HashMap<MsgId, (usize, usize)> = trace
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e.kind {
            EventKind::Send { id, .. } => Some((id, (i, e.process.index()))),
            _ => None,
        })
        .collect();
    let stolen_pre = trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Lost { id, .. } => send_pos.get(&id).filter(|(i, p)| *i < cut[*p]).map(|_| 1u64),
            _ => None,
        })
        .sum();
    let stable = match (&report.begin, &report.end, report.begin_at, report.end_at) {
        (Some(begin), Some(end), Some(b), Some(e)) => {
            let at = |pos: usize| (0..n).map(|p| budget_at(trace, sends, p, pos)).collect::<Vec<_>>();
            let star_budgets: Vec<u8> = (0..n).map(|p| budget_at(trace, sends, p, cut[p])).collect();
            sound(m.cfg.theft, y(m, begin, &at(b)), y_star(m, rec, &star_budgets), y(m, end, &at(e + 1)))
        }
        _ => false,
    };
    let never_occurred = m.cfg.internal && !occurred(trace, topology.channels().len(), &snapshot.state);
    Some(Judgement {
        crossing: report.holds(Clause::NoInwardCrossing),
        records: report.holds(Clause::ExactRecords),
        reachable: report.holds(Clause::RecordedReachable),
        end_reachable: report.holds(Clause::EndReachable),
        stable,
        stolen_pre,
        never_occurred,
    })
}

/// Whether the run passed through global state `g` (process states and carts in transit).
fn occurred(trace: &Trace<Bank>, channels: usize, g: &GlobalState<Bank>) -> bool {
    let mut states = trace.initial.clone();
    let mut chans: Vec<VecDeque<(MsgId, Jars)>> = vec![VecDeque::new(); channels];
    let same = |states: &[Bank], chans: &[VecDeque<(MsgId, Jars)>]| {
        states == g.processes.as_slice()
            && chans.iter().zip(&g.channels).all(|(c, r)| c.iter().map(|(_, j)| j).eq(r.iter()))
    };
    if same(&states, &chans) {
        return true;
    }
    for e in &trace.events {
        match &e.kind {
            EventKind::Send { channel, id, msg } => chans[channel.index()].push_back((*id, *msg)),
            EventKind::Receive { channel, id } | EventKind::Lost { channel, id } => {
                chans[channel.index()].retain(|(m, _)| m != id);
            }
            _ => {}
        }
        states[e.process.index()] = e.state;
        if same(&states, &chans) {
            return true;
        }
    }
    false
}
