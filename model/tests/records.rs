//! Full mode compares what a snapshot recorded with the messages in flight at its cut where the
//! processes keep the records (`SnapshotModel::records_equal`), without building them: on every
//! reachable state of small configurations (every variant, algorithm) it must say what the
//! built record (`SnapshotModel::recorded`) says; so must the stable predicates read the same way
//! (`SnapshotModel::y_star`), and the ghost's completion flag (`SnapGhost::done`) must be the
//! processes' completion.

mod common;

use std::collections::HashSet;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::{Algorithm, Variant};
use common::config;
use model::system::state::State;
use model::{InitiatorSpec, Mode, SnapshotModel, TopologySpec};
use stateright::Model;

/// Per configuration: complete snapshots compared; of them, records equal to the ghost's, and
/// records where a stable predicate holds.
fn walk(m: &SnapshotModel<Bank>, limit: usize, completions: &mut usize) -> (usize, usize, usize) {
    let mut seen = HashSet::new();
    let mut stack: Vec<State<Bank>> = m.init_states();
    let (mut compared, mut exact, mut states, mut stars) = (0, 0, 0, 0);
    let mut actions = Vec::new();
    while let Some(s) = stack.pop() {
        if states == limit || !seen.insert(s.clone()) {
            continue;
        }
        states += 1;
        let ghost = s.ghost.as_ref().expect("full mode keeps ghost data");
        for id in m.snapshot_ids() {
            // The ghost's completion flag (what the properties read) is the processes' completion
            // without a coordinator; with one, it is never set.
            let done = ghost.snaps[id.0 as usize].done;
            assert_eq!(done, s.ckpt.is_none() && s.complete(id), "{:?} snapshot {}", m.topology(), id.0);
            *completions += usize::from(done);
            let expected = &ghost.snaps[id.0 as usize].expected;
            let built = m.recorded(&s, id);
            let in_place = m.records_equal(&s, id, |c| expected.get(c));
            let want =
                built.as_ref().map(|rec| rec.channels.iter().enumerate().all(|(c, r)| r[..] == *expected.get(c)));
            assert_eq!(in_place, want, "{:?} snapshot {}", m.topology(), id.0);
            // The stable predicates in the record, read the same way.
            let budgets = &ghost.snaps[id.0 as usize].rec_budget;
            let y = built.as_ref().map(|rec| m.y_recorded(rec, budgets));
            assert_eq!(m.y_star(&s, id, budgets), y, "{:?} snapshot {}", m.topology(), id.0);
            stars += usize::from(y.is_some_and(|y| y != 0));
            let Some(rec) = built else { continue };
            compared += 1;
            exact += usize::from(want == Some(true));
            // A record equals itself, and differs from itself with a message less or more.
            assert_eq!(m.records_equal(&s, id, |c| &rec.channels[c][..]), Some(true));
            for (c, r) in rec.channels.iter().enumerate() {
                let shorter = |d: usize| if d == c { &r[..r.len().saturating_sub(1)] } else { &rec.channels[d][..] };
                if !r.is_empty() {
                    assert_eq!(m.records_equal(&s, id, shorter), Some(false), "a cart less on channel {c}");
                }
                let mut longer = r.clone();
                longer.push(r.first().copied().unwrap_or(bank_message(&rec)));
                let longer = |d: usize| if d == c { &longer[..] } else { &rec.channels[d][..] };
                assert_eq!(m.records_equal(&s, id, longer), Some(false), "a cart more on channel {c}");
            }
        }
        m.actions(&s, &mut actions);
        stack.extend(actions.drain(..).filter_map(|a| m.next_state(&s, a)));
    }
    (compared, exact, stars)
}

/// Some message recorded anywhere, else one made up.
fn bank_message(rec: &model::system::state::Recorded<Bank>) -> model::system::state::StampedMsg<Bank> {
    rec.channels
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or(model::system::stamp::Stamp { seq: 1, msg: chandy_lamport::apps::bank::Jars(1) })
}

#[test]
fn records_read_in_place_judge_as_the_built_records() {
    let (mut compared, mut exact, mut inexact, mut stars, mut configs, mut done) = (0, 0, 0, 0, [0; 3], 0);
    for variant in Variant::ALL {
        for algorithm in [Algorithm::ChandyLamport, Algorithm::Aligned, Algorithm::Unaligned] {
            let mut cfg = config(3, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0, 1]));
            // Full mode refuses theft where messages are recorded before they are received.
            let theft = !algorithm.records_before_receipt();
            (cfg.mode, cfg.variant, cfg.algorithm, cfg.theft) = (Mode::Full, variant, algorithm, theft);
            let Ok(resolved) = cfg.resolve() else { continue };
            configs[algorithm as usize] += 1;
            let limit = if theft { 3000 } else { 300_000 };
            let (c, e, y) = walk(&SnapshotModel::<Bank>::new(resolved), limit, &mut done);
            compared += c;
            exact += e;
            inexact += c - e;
            stars += y;
        }
    }
    assert!(configs.iter().all(|&n| n > 0), "configurations resolved per algorithm: {configs:?}");
    // Both answers occur: the faulty variants record other messages than were in flight.
    assert!(exact > 10_000 && inexact > 100, "{compared} compared: {exact} exact, {inexact} not");
    assert!(stars > 1000, "{stars} records where a stable predicate holds");
    assert!(done > 10_000, "{done} snapshots flagged complete");
}
