//! The properties, named exactly as reported. Clause properties are judged on every snapshot
//! whose parts are complete at every house: from ghost data in full mode, by the library's trace
//! checker on the recorded history in literal mode.

use chandy_lamport::SnapshotId;
use stateright::{Expectation, Property};

use crate::config::{Mode, Resolved};
use crate::ghost::{DEFICIT, TRADE_OVER};
use crate::literal;
use crate::model::ChandyLamport;
use crate::state::{Recorded, State};

/// (a)
pub const CROSSING: &str = "nothing crosses the cut inward";
/// (b)
pub const RECORDS: &str = "channel records hold exactly the in-flight messages";
/// Conservation.
pub const LEDGER: &str = "recorded total equals the ledger";
/// (e)
pub const TERMINATES: &str = "snapshot terminates";
/// (c)
pub const REACHABLE: &str = "recorded state reachable from start";
/// (d)
pub const END_REACHABLE: &str = "end state reachable from recorded state";
/// Stable properties.
pub const STABLE: &str = "stable detection is sound";
/// No step pruned: the core refuses nothing the model offers.
pub const ACCEPTS: &str = "the core accepts every step the model offers";
/// Example: a non-empty record.
pub const RECORD_MESSAGE: &str = "a channel record holds a message";
/// Example: overlap.
pub const OVERLAP: &str = "two snapshots overlap";
/// Example: S* never occurred (literal mode, internal steps).
pub const NEVER_OCCURRED: &str = "recorded state never occurred";

type Condition = fn(&ChandyLamport, &State) -> bool;

/// Every property kind, with the fixed index of its latch.
const ALL: [(&str, Expectation, Condition); 11] = [
    (ACCEPTS, Expectation::Always, accepts),
    (CROSSING, Expectation::Always, crossing),
    (RECORDS, Expectation::Always, records),
    (LEDGER, Expectation::Always, ledger),
    (TERMINATES, Expectation::Always, terminates),
    (REACHABLE, Expectation::Always, reachable),
    (END_REACHABLE, Expectation::Always, end_reachable),
    (STABLE, Expectation::Always, stable),
    (RECORD_MESSAGE, Expectation::Sometimes, record_message),
    (OVERLAP, Expectation::Sometimes, overlap),
    (NEVER_OCCURRED, Expectation::Sometimes, never_occurred),
];

/// Number of property kinds (latches).
pub const KINDS: usize = ALL.len();

fn index(name: &str) -> usize {
    ALL.iter().position(|(n, _, _)| *n == name).unwrap_or(0)
}

/// The properties checked in this configuration, in report order.
pub fn list(cfg: &Resolved) -> Vec<Property<ChandyLamport>> {
    ALL.iter()
        .filter(|(name, _, _)| match *name {
            ACCEPTS | LEDGER | TERMINATES => true,
            _ if cfg.mode == Mode::Basic => false,
            OVERLAP => cfg.snapshots >= 2,
            NEVER_OCCURRED => cfg.mode == Mode::Literal && cfg.internal,
            _ => true,
        })
        .map(|(name, expectation, condition)| Property {
            expectation: expectation.clone(),
            name,
            condition: *condition,
        })
        .collect()
}

/// Whether `f` holds for every snapshot complete everywhere in `s`. A property judged on what a
/// snapshot recorded fails, rather than passes, when that record cannot be read.
fn every_done(m: &ChandyLamport, s: &State, mut f: impl FnMut(SnapshotId) -> bool) -> bool {
    m.snapshot_ids().filter(|&id| s.complete(id)).all(&mut f)
}

/// Judges a clause on every completed snapshot: `full` reads the ghost data, `lit` the trace
/// checker's judgement.
fn clause(
    m: &ChandyLamport,
    s: &State,
    name: &str,
    full: impl Fn(&crate::ghost::SnapGhost, &Recorded) -> bool,
    lit: impl Fn(&literal::Judgement) -> bool,
) -> bool {
    m.latched(index(name), false, || {
        every_done(m, s, |id| {
            let Some(rec) = m.recorded(s, id) else { return false };
            match m.cfg.mode {
                // A full-mode state without ghost data would be a bug: report it as a failure.
                Mode::Full => s.ghost.as_ref().is_some_and(|g| full(&g.snaps[id.0 as usize], &rec)),
                Mode::Literal => literal::judge(m, s, id, &rec).as_ref().is_some_and(&lit),
                Mode::Basic => true,
            }
        })
    })
}

fn crossing(m: &ChandyLamport, s: &State) -> bool {
    clause(m, s, CROSSING, |g, _| !g.crossed, |j| j.crossing)
}

/// Every record is, cart for cart and in order, the carts in flight at the cut.
fn records_exact(g: &crate::ghost::SnapGhost, rec: &Recorded) -> bool {
    rec.channels.iter().enumerate().all(|(c, r)| r.as_slice() == g.expected.get(c))
}

fn records(m: &ChandyLamport, s: &State) -> bool {
    clause(m, s, RECORDS, records_exact, |j| j.records)
}

fn ledger(m: &ChandyLamport, s: &State) -> bool {
    let total = m.initial_total();
    let theft = m.cfg.theft;
    let check = |(recorded, sold): (u64, u64), stolen: Option<u64>| match stolen {
        Some(stolen) => recorded + sold + stolen == total,
        // Basic mode keeps no count of stolen jars: with theft, only an upper bound holds.
        None if theft => recorded + sold <= total,
        None => recorded + sold == total,
    };
    m.latched(index(LEDGER), false, || {
        every_done(m, s, |id| {
            let Some(totals) = m.recorded_totals(s, id) else { return false };
            match m.cfg.mode {
                Mode::Full => {
                    s.ghost.as_ref().is_some_and(|g| check(totals, Some(u64::from(g.snaps[id.0 as usize].stolen_pre))))
                }
                Mode::Literal => m
                    .recorded(s, id)
                    .and_then(|rec| literal::judge(m, s, id, &rec))
                    .is_some_and(|j| check(totals, Some(j.stolen_pre))),
                Mode::Basic => check(totals, None),
            }
        })
    })
}

/// Judged wherever nothing but initiations is enabled (a refused step's dead end is the other
/// property's failure): every snapshot started by then is complete, and nothing is in transit.
fn terminates(m: &ChandyLamport, s: &State) -> bool {
    m.latched(index(TERMINATES), false, || {
        s.refused.is_some()
            || !m.is_quiescent(s)
            || (s.chans.all().is_empty() && m.snapshot_ids().all(|id| !s.started(id) || s.complete(id)))
    })
}

fn accepts(m: &ChandyLamport, s: &State) -> bool {
    m.latched(index(ACCEPTS), false, || s.refused.is_none())
}

fn reachable(m: &ChandyLamport, s: &State) -> bool {
    clause(m, s, REACHABLE, |g, rec| !g.crossed && !g.prefifo && !g.state_bad && records_exact(g, rec), |j| j.reachable)
}

fn end_reachable(m: &ChandyLamport, s: &State) -> bool {
    // The bank's transitions shift a house's jars: replaying the post-cut steps from a recorded
    // state other than the true one cannot end in the true S_end.
    clause(m, s, END_REACHABLE, |g, _| !g.end_bad && !g.state_bad, |j| j.end_reachable)
}

/// The stable predicates on the recorded state: deficit, trade over.
pub(crate) fn y_star(m: &ChandyLamport, rec: &Recorded, budgets: &[u8]) -> [bool; 2] {
    let deficit = rec.total() + rec.sold() < m.initial_total();
    let over =
        rec.channels.iter().all(Vec::is_empty) && rec.houses.iter().zip(budgets).all(|(h, &b)| b == 0 || h.jars == 0);
    [deficit, over]
}

/// y(S*) implies y(S_end), and not y(S*) implies not y(S_begin); deficit only with theft.
pub(crate) fn sound(theft: bool, begin: [bool; 2], star: [bool; 2], end: [bool; 2]) -> bool {
    let checked: &[usize] = if theft { &[DEFICIT, TRADE_OVER] } else { &[TRADE_OVER] };
    checked.iter().all(|&y| (!star[y] || end[y]) && (star[y] || !begin[y]))
}

fn stable(m: &ChandyLamport, s: &State) -> bool {
    let theft = m.cfg.theft;
    clause(m, s, STABLE, |g, rec| sound(theft, g.y_begin, y_star(m, rec, &g.rec_budget), g.y_end), |j| j.stable)
}

fn record_message(m: &ChandyLamport, s: &State) -> bool {
    m.latched(index(RECORD_MESSAGE), true, || {
        s.procs.iter().any(|p| p.slots().iter().any(|slot| slot.recorded().next().is_some()))
    })
}

fn overlap(m: &ChandyLamport, s: &State) -> bool {
    m.latched(index(OVERLAP), true, || m.snapshot_ids().filter(|&id| s.started(id) && !s.complete(id)).count() >= 2)
}

fn never_occurred(m: &ChandyLamport, s: &State) -> bool {
    m.latched(index(NEVER_OCCURRED), true, || {
        m.snapshot_ids().filter(|&id| s.complete(id)).any(|id| {
            m.recorded(s, id).and_then(|rec| literal::judge(m, s, id, &rec)).is_some_and(|j| j.never_occurred)
        })
    })
}
