//! The properties, named exactly as reported. Clause properties are judged on every snapshot
//! whose parts are complete at every process: from ghost data in full mode, by the library's trace
//! checker on the recorded history in literal mode.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::SnapshotId;
use stateright::{Expectation, Property};

use super::config::Mode;
use super::ghost::SnapGhost;
use super::literal;
use super::machine::SnapshotModel;
use super::names::{index, AFTER, DETECTS};
pub use super::names::{
    ACCEPTS, CHECKPOINTS_END, CROSSING, END_REACHABLE, EXACTLY_ONCE, IDS_INCREASE, LEDGER, NEVER_OCCURRED,
    NO_CHANNEL_STATE, OVERLAP, QUIET_AFTER_CRASH, REACHABLE, RECORDS, RECORD_MESSAGE, STABLE, STORED, STORED_RECOVERS,
    TERMINATES, TRIGGERING,
};
use super::predicates::sound;
use super::state::{Recorded, State};

type Condition<A> = fn(&SnapshotModel<A>, &State<A>) -> bool;

/// The fixed property kinds, with the fixed index of their latches; the application's example
/// properties (see [`chandy_lamport::Stable::examples`]) take the two latches after them.
fn fixed<A: Spec>() -> [(&'static str, Expectation, Condition<A>); 19] {
    [
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
        (CHECKPOINTS_END, Expectation::Always, checkpoints_end),
        (IDS_INCREASE, Expectation::Always, ids_increase),
        (TRIGGERING, Expectation::Always, triggering),
        (NO_CHANNEL_STATE, Expectation::Always, no_channel_state),
        (EXACTLY_ONCE, Expectation::Always, exactly_once),
        (STORED_RECOVERS, Expectation::Always, stored_recovers),
        (STORED, Expectation::Sometimes, stored),
        (QUIET_AFTER_CRASH, Expectation::Sometimes, quiet_after_crash),
    ]
}

/// The stable predicate the application asks examples of (its index and the two names).
fn sought<A: Spec>(m: &SnapshotModel<A>) -> Option<(usize, &'static str, &'static str)> {
    m.predicates.iter().enumerate().find_map(|(i, p)| p.examples.map(|(d, a)| (i, d, a)))
}

/// The properties checked in this configuration, in report order.
pub fn list<A: Spec>(m: &SnapshotModel<A>) -> Vec<Property<SnapshotModel<A>>> {
    let cfg = &m.cfg;
    let coordinated = cfg.algorithm.coordinated();
    let mut list: Vec<Property<SnapshotModel<A>>> = fixed::<A>()
        .into_iter()
        .filter(|(name, _, _)| match *name {
            LEDGER => A::CONSERVES,
            ACCEPTS => true,
            TERMINATES => !coordinated,
            CHECKPOINTS_END | IDS_INCREASE | TRIGGERING => coordinated,
            NO_CHANNEL_STATE => cfg.algorithm.aligns() && acyclic(m),
            EXACTLY_ONCE | STORED_RECOVERS | STORED => coordinated,
            QUIET_AFTER_CRASH => coordinated && cfg.checkpointing.crashes > 0,
            _ if cfg.mode == Mode::Basic => false,
            OVERLAP => cfg.snapshots >= 2,
            NEVER_OCCURRED => cfg.mode == Mode::Literal && cfg.internal,
            _ => true,
        })
        .map(|(name, expectation, condition)| Property { expectation, name, condition })
        .collect();
    if let (Some((_, detects, after)), false) = (sought(m), cfg.mode == Mode::Basic) {
        list.push(Property { expectation: Expectation::Sometimes, name: detects, condition: detects_example });
        list.push(Property { expectation: Expectation::Sometimes, name: after, condition: after_example });
    }
    list
}

/// Whether `f` holds for every snapshot complete everywhere in `s` (in full mode without a
/// coordinator, as the ghost data say: set when it completed, never undone). A property judged on
/// what a snapshot recorded fails, rather than passes, when that record cannot be read.
fn every_done<A: Spec>(m: &SnapshotModel<A>, s: &State<A>, mut f: impl FnMut(SnapshotId) -> bool) -> bool {
    match s.ghost.as_ref().filter(|_| s.ckpt.is_none()) {
        Some(g) => (0u32..).zip(&g.snaps).filter(|(_, g)| g.done).all(|(id, _)| f(SnapshotId(id))),
        None => m.snapshot_ids().filter(|&id| s.complete(id)).all(&mut f),
    }
}

/// The snapshots a clause is judged on, with what each recorded: with the barrier algorithms,
/// the checkpoint the coordinator stored (every completed checkpoint is judged in the state
/// where it is stored); otherwise every snapshot complete everywhere (`None`: its record cannot
/// be read, which fails the clause).
fn judged<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> Vec<(SnapshotId, Option<Recorded<A>>)> {
    match s.ckpt.as_ref() {
        Some(ck) => ck.latest.iter().map(|l| (l.id, Some(l.rec.clone()))).collect(),
        None => m.snapshot_ids().filter(|&id| s.complete(id)).map(|id| (id, m.recorded(s, id))).collect(),
    }
}

/// Judges a clause on every completed snapshot: `full` reads the ghost data, `lit` the trace
/// checker's judgement.
fn clause<A: Spec>(
    m: &SnapshotModel<A>,
    s: &State<A>,
    name: &str,
    full: impl Fn(&SnapGhost<A::Msg>, &Recorded<A>) -> bool,
    lit: impl Fn(&literal::Judgement) -> bool,
) -> bool {
    m.books.latched(index(name), false, || {
        judged(m, s).into_iter().all(|(id, rec)| {
            let Some(rec) = rec else { return false };
            match m.cfg.mode {
                // A full-mode state without ghost data would be a bug: report it as a failure.
                Mode::Full => s.ghost.as_ref().is_some_and(|g| full(&g.snaps[id.0 as usize], &rec)),
                Mode::Literal => literal::judge(m, s, id, &rec).as_ref().is_some_and(&lit),
                Mode::Basic => true,
            }
        })
    })
}

/// [`clause`] for a clause full mode judges on the ghost data alone: in full mode without a
/// coordinator the records are not built (only checked readable: an unreadable record fails the
/// clause, as in [`judged`]).
fn ghost_clause<A: Spec>(
    m: &SnapshotModel<A>,
    s: &State<A>,
    name: &str,
    full: impl Fn(&SnapGhost<A::Msg>) -> bool,
    lit: impl Fn(&literal::Judgement) -> bool,
) -> bool {
    if m.cfg.mode != Mode::Full || s.ckpt.is_some() {
        return clause(m, s, name, |g, _| full(g), lit);
    }
    m.books.latched(index(name), false, || {
        every_done(m, s, |id| {
            m.recorded_accounted(s, id).is_some() && s.ghost.as_ref().is_some_and(|g| full(&g.snaps[id.0 as usize]))
        })
    })
}

fn crossing<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    ghost_clause(m, s, CROSSING, |g| !g.crossed, |j| j.crossing)
}

/// Every record is, message for message and in order, the messages in flight at the cut.
fn records_exact<A: Spec>(g: &SnapGhost<A::Msg>, rec: &Recorded<A>) -> bool {
    rec.channels.iter().enumerate().all(|(c, r)| r.as_slice() == g.expected.get(c))
}

fn records<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    exact_clause(m, s, RECORDS, |_| true, |j| j.records)
}

/// [`clause`] for a clause that holds when the ghost's `flags` do and every record is exact (see
/// [`records_exact`]): in full mode without a coordinator the records are compared where the
/// processes keep them, none built.
fn exact_clause<A: Spec>(
    m: &SnapshotModel<A>,
    s: &State<A>,
    name: &str,
    flags: impl Fn(&SnapGhost<A::Msg>) -> bool,
    lit: impl Fn(&literal::Judgement) -> bool,
) -> bool {
    if m.cfg.mode != Mode::Full || s.ckpt.is_some() {
        return clause(m, s, name, |g, rec| flags(g) && records_exact(g, rec), lit);
    }
    m.books.latched(index(name), false, || {
        every_done(m, s, |id| {
            let Some(g) = s.ghost.as_ref().map(|g| &g.snaps[id.0 as usize]) else { return false };
            flags(g) && m.records_equal(s, id, |c| g.expected.get(c)) == Some(true)
        })
    })
}

fn ledger<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    let total = m.initial_total();
    let theft = m.cfg.theft;
    let check = |recorded: u64, stolen: Option<u64>| match stolen {
        Some(stolen) => recorded + stolen == total,
        // Basic mode keeps no count of what was stolen: with theft, only an upper bound holds.
        None if theft => recorded <= total,
        None => recorded == total,
    };
    m.books.latched(index(LEDGER), false, || {
        // Barrier algorithms: the newest checkpoint the coordinator completed, as stored.
        if let Some(ck) = s.ckpt.as_ref() {
            let stolen = |id: SnapshotId| {
                s.ghost
                    .as_ref()
                    .map(|g| u64::from(g.snaps[id.0 as usize].stolen_pre))
                    .filter(|_| m.cfg.mode == Mode::Full)
            };
            return ck.latest.as_ref().is_none_or(|l| check(l.rec.accounted(), stolen(l.id)));
        }
        every_done(m, s, |id| {
            let Some(totals) = m.recorded_accounted(s, id) else { return false };
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
fn terminates<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(TERMINATES), false, || {
        s.refused.is_some()
            || !m.is_quiescent(s)
            || (s.chans.all().is_empty() && m.snapshot_ids().all(|id| !s.started(id) || s.complete(id)))
    })
}

/// Judged wherever nothing but optional steps (triggers, declines, crashes) is enabled: no
/// checkpoint is pending at the coordinator, no process holds a part, nothing is in transit.
fn checkpoints_end<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(CHECKPOINTS_END), false, || {
        s.refused.is_some()
            || !m.is_quiescent(s)
            || (s.chans.all().is_empty()
                && s.procs.iter().all(|p| p.slots().is_empty())
                && s.ckpt.as_ref().is_some_and(|ck| ck.coord.pending().next().is_none()))
    })
}

fn ids_increase<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(IDS_INCREASE), false, || s.ckpt.as_ref().is_some_and(|ck| !ck.ids_decreased))
}

/// While the job runs (the trade has not terminated) and checkpoints are left to trigger in
/// this run, with none pending, the coordinator can trigger one.
fn triggering<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(TRIGGERING), false, || {
        let Some(ck) = s.ckpt.as_ref() else { return false };
        let idle = ck.coord.pending().next().is_none() && ck.coord.next_id().0 < u32::from(m.cfg.snapshots);
        let runs = m.y_live(s) & 1 == 0 || s.procs.iter().any(|p| p.buffered_all().next().is_some());
        !(idle && runs) || ck.coord.can_trigger()
    })
}

/// Whether the topology has no back edge from the initiators (aligned barriers wait on every
/// input).
fn acyclic<A: Spec>(m: &SnapshotModel<A>) -> bool {
    let roots: Vec<_> = m.cfg.topology.processes().filter(|p| m.cfg.initiators[p.index()]).collect();
    !m.cfg.topology.back_edges(&roots).contains(&true)
}

fn no_channel_state<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(NO_CHANNEL_STATE), false, || {
        s.ckpt.as_ref().is_some_and(|ck| ck.latest.as_ref().is_none_or(|l| l.rec.channels.iter().all(Vec::is_empty)))
    })
}

/// Once the trade is over and nothing is in transit or buffered (quiet), the processes' states are
/// those of a failure-free run's quiet end, whatever crashes and recoveries happened: nothing
/// lost, nothing taken in twice (for an application whose outcome does not depend on the
/// interleaving, that run has one end). Without the failure-free outcomes (too many states),
/// the property fails rather than pass.
fn exactly_once<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(EXACTLY_ONCE), false, || {
        let Some(expected) = m.expected.as_ref() else { return false };
        !m.quiet(s) || expected.contains(&s.apps())
    })
}

/// Every checkpoint is judged in the state where the coordinator stores it, not only if a crash
/// later restores it: restored and run failure-free, it ends quiet only as the failure-free run
/// from the start does ([`SnapshotModel::recovers`]).
fn stored_recovers<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(STORED_RECOVERS), false, || {
        s.ckpt.as_ref().is_some_and(|ck| ck.latest.as_ref().is_none_or(|l| m.recovers(l)))
    })
}

/// The premise of the ledger and of the stored checkpoints' restores: they judge something.
fn stored<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(STORED), true, || s.ckpt.as_ref().is_some_and(|ck| ck.latest.is_some()))
}

/// The premise of exactly-once beyond the failure-free run: a run that crashed ends quiet.
fn quiet_after_crash<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(QUIET_AFTER_CRASH), true, || m.after_crash(s) && m.quiet(s))
}

fn accepts<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(ACCEPTS), false, || s.refused.is_none())
}

fn reachable<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    exact_clause(m, s, REACHABLE, |g| !g.crossed && !g.prefifo && !g.state_bad, |j| j.reachable)
}

fn end_reachable<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    // A recorded state other than the true one is not one from which the post-cut steps lead
    // to the true S_end (for the bank, they shift a process's jars).
    ghost_clause(m, s, END_REACHABLE, |g| !g.end_bad && !g.state_bad, |j| j.end_reachable)
}

fn stable<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    if m.cfg.mode != Mode::Full || s.ckpt.is_some() {
        return clause(
            m,
            s,
            STABLE,
            |g, rec| sound(g.y_begin, m.y_recorded(rec, &g.rec_budget), g.y_end),
            |j| j.stable,
        );
    }
    // Full mode without a coordinator: the record read where the processes keep it, none built.
    m.books.latched(index(STABLE), false, || {
        every_done(m, s, |id| {
            let Some(g) = s.ghost.as_ref().map(|g| &g.snaps[id.0 as usize]) else { return false };
            m.y_star(s, id, &g.rec_budget).is_some_and(|y| sound(g.y_begin, y, g.y_end))
        })
    })
}

/// The recorded y(S*) of every snapshot complete in `s`, by the mode's records (full mode: the
/// budgets at recording from the ghost; literal: from the history).
fn y_stars<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> Vec<u8> {
    judged(m, s)
        .into_iter()
        .filter_map(|(id, rec)| {
            let rec = rec?;
            match m.cfg.mode {
                Mode::Full => s.ghost.as_ref().map(|g| m.y_recorded(&rec, &g.snaps[id.0 as usize].rec_budget)),
                Mode::Literal => literal::judge(m, s, id, &rec).map(|j| j.y_star),
                Mode::Basic => None,
            }
        })
        .collect()
}

fn detects_example<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    let Some((i, _, _)) = sought(m) else { return false };
    m.books.latched(DETECTS, true, || y_stars(m, s).iter().any(|y| y & (1 << i) != 0))
}

fn after_example<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    let Some((i, _, _)) = sought(m) else { return false };
    m.books.latched(AFTER, true, || {
        let stars = y_stars(m, s);
        stars.iter().any(|y| y & (1 << i) == 0) && m.y_live(s) & (1 << i) != 0
    })
}

fn record_message<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(RECORD_MESSAGE), true, || {
        s.procs.iter().any(|p| p.slots().iter().any(|slot| slot.recorded().next().is_some()))
    })
}

fn overlap<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books
        .latched(index(OVERLAP), true, || m.snapshot_ids().filter(|&id| s.started(id) && !s.complete(id)).count() >= 2)
}

fn never_occurred<A: Spec>(m: &SnapshotModel<A>, s: &State<A>) -> bool {
    m.books.latched(index(NEVER_OCCURRED), true, || {
        m.snapshot_ids().filter(|&id| s.complete(id)).any(|id| {
            m.recorded(s, id).and_then(|rec| literal::judge(m, s, id, &rec)).is_some_and(|j| j.never_occurred)
        })
    })
}
