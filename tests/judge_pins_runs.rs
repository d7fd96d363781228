//! The theorem's judge pinned through the drivers' own verification (issue 54): the
//! simulator's ([`Finished::check`], which calls the trace checker on the whole trace for the
//! first snapshot and on each later snapshot's part of it) and the threaded runtime's
//! (`runtime::workload::run`, which calls it on every snapshot of a bank run).
//!
//! The seam of the simulator is [`Finished`]: its trace and snapshots are public fields, so a
//! finished run is tampered with (a channel record reversed, a recorded state changed, two
//! receipts swapped) and [`Finished::check`] must fail with the exact violation. The runtime
//! has no such seam: `workload::run` checks the snapshots of the run it drives before returning,
//! and nothing in between takes a trace and a snapshot. Its verification is pinned by the fault
//! variants that make its records wrong. `loom-tests/tests/verify.rs (module judge_pins)` tampers with a runtime
//! run's outcome and judges it with the loom and shuttle tests' judge.
//!
//! A claim (a record's ids, as logs carry them) does not exist on these paths: the drivers'
//! snapshots hold messages, judged by content; a claim out of order is pinned on the library
//! path (`tests/verify.rs` (module `judge_pins`), `check_ids`) and through `model verify`
//! (`model/tests/verify_pins.rs`).

use chandy_lamport::apps::bank::{Bank, Jars};
use chandy_lamport::check::{Clause, EventKind, MsgId, VerifyError, Violation};
use chandy_lamport::runtime::workload::{run, Workload, WorkloadError};
use chandy_lamport::sim::{DelaySequence, DelaySource, Finished, SimConfig, Simulator, SnapshotFailure, SETTLE_TICKS};
use chandy_lamport::{ChannelId, ProcessId, SnapshotId, Topology, Variant};

const P0: ProcessId = ProcessId(0);
const P1: ProcessId = ProcessId(1);
const S0: SnapshotId = SnapshotId(0);
const S1: SnapshotId = SnapshotId(1);

fn two() -> Topology {
    Topology::complete(2).unwrap()
}

fn ch(from: ProcessId, to: ProcessId) -> ChannelId {
    two().channel_between(from, to).unwrap()
}

/// A simulator of two bank houses with 10 jars each, drawing `delays` in order.
fn sim(delays: &[u32], variant: Variant) -> Simulator<Bank> {
    let config = SimConfig {
        variant,
        ..SimConfig::new(DelaySource::Sequence(DelaySequence::new("test delays", delays.to_vec())))
    };
    Simulator::new(two(), &[10, 10], config).unwrap()
}

/// Two snapshots, each recording carts in flight: P0 initiates snapshot 0 and P1 then sends it
/// one cart of each of `amounts` (all recorded on P1->P0); when it has completed, P1 initiates
/// snapshot 1 and P0 sends it the same carts (recorded on P0->P1). Snapshot 0 is checked
/// against the whole trace, snapshot 1 against its own part of it (then, failing, against the
/// whole). Returns the run and each snapshot's in-flight ids.
fn two_snapshots(amounts: &[u32]) -> (Finished<Bank>, [Vec<MsgId>; 2]) {
    let mut sim = sim(&[0; 32], Variant::None);
    let mut ids = [Vec::new(), Vec::new()];
    for (k, (initiator, sender)) in [(P0, P1), (P1, P0)].into_iter().enumerate() {
        assert_eq!(sim.start_snapshot(initiator).unwrap(), SnapshotId(k as u32));
        ids[k] = amounts.iter().map(|&a| sim.transfer(sender, initiator, a).unwrap()).collect();
        assert!(sim.run_to_completion().unwrap());
    }
    sim.tick(SETTLE_TICKS).unwrap();
    let done = sim.finish();
    done.check(&two()).expect("the untampered run passes");
    let jars: Vec<Jars> = amounts.iter().map(|&a| Jars(a)).collect();
    assert_eq!(done.snapshots[0].global.state.channels[ch(P1, P0).index()], jars, "recorded on P1->P0");
    assert_eq!(done.snapshots[1].global.state.channels[ch(P0, P1).index()], jars, "recorded on P0->P1");
    (done, ids)
}

/// The channel snapshot `k` of [`two_snapshots`] records the carts on.
fn recorded_on(k: usize) -> ChannelId {
    [ch(P1, P0), ch(P0, P1)][k]
}

/// The violation [`Finished::check`] fails snapshot `id` with.
fn violation(done: &Finished<Bank>, id: SnapshotId) -> Violation {
    match done.check(&two()) {
        Err(SnapshotFailure::Verify { snapshot, error: VerifyError::Violation(v) }) => {
            assert_eq!(snapshot, id, "{v}");
            v
        }
        other => panic!("expected snapshot {id} to fail the trace checker, got {other:?}"),
    }
}

/// Tampers with snapshot `k`'s record of its carts by `edit`, and returns the violation.
fn tamper_record(done: &Finished<Bank>, k: usize, edit: impl Fn(&mut Vec<Jars>)) -> Violation {
    let mut done = done.clone();
    edit(&mut done.snapshots[k].global.state.channels[recorded_on(k).index()]);
    violation(&done, SnapshotId(k as u32))
}

#[test]
fn sim_check_fails_a_reversed_channel_record() {
    let (done, ids) = two_snapshots(&[1, 2]);
    for (k, sent) in ids.iter().enumerate() {
        let v = tamper_record(&done, k, |record| record.reverse());
        let expected = Violation::OutOfOrder {
            snapshot: SnapshotId(k as u32),
            channel: recorded_on(k),
            expected: sent.clone(),
            recorded: "[Jars(2), Jars(1)]".into(),
        };
        assert_eq!(v, expected, "snapshot {k}");
    }
}

#[test]
fn sim_check_fails_a_reordered_channel_record() {
    let (done, ids) = two_snapshots(&[1, 2, 3]);
    for (k, sent) in ids.iter().enumerate() {
        // A rotation: neither the sending order nor its reversal.
        let v = tamper_record(&done, k, |record| record.rotate_left(1));
        let expected = Violation::OutOfOrder {
            snapshot: SnapshotId(k as u32),
            channel: recorded_on(k),
            expected: sent.clone(),
            recorded: "[Jars(2), Jars(3), Jars(1)]".into(),
        };
        assert_eq!(v, expected, "snapshot {k}");
    }
}

#[test]
fn sim_check_fails_clause_a_inward_crossing() {
    // Under SendBeforeMarker the initiator's markers wait for its next step, and the cart it
    // sends as that step overtakes them: P1 receives it before recording. (a) cannot break
    // alone: P1's recorded state counts a cart P0's does not (c), and the rest of the run
    // replayed from it receives the cart a second time (d); the checker reports (a) first.
    let mut sim = sim(&[0; 8], Variant::SendBeforeMarker);
    sim.start_snapshot(P0).unwrap();
    let cart = sim.transfer(P0, P1, 3).unwrap();
    sim.run_to_completion().unwrap();
    let done = sim.finish();
    match violation(&done, S0) {
        Violation::InwardCrossing { snapshot, msg, channel, send, receive } => {
            assert_eq!((snapshot, msg, channel), (S0, cart, ch(P0, P1)));
            assert_eq!((send.process, receive.process), (P0, P1));
        }
        other => panic!("expected an inward crossing, got {other}"),
    }
}

#[test]
fn sim_check_fails_clause_b_missing_message() {
    // (b) cannot break alone: a record short of a message is a recorded state no run reaches
    // (c), and from which the message's receipt after the cut fails (d).
    let (done, ids) = two_snapshots(&[1, 2]);
    for k in 0..2 {
        match tamper_record(&done, k, |record| {
            record.remove(0);
        }) {
            Violation::MissingMessage { snapshot, channel, msg, send } => {
                assert_eq!((snapshot, channel, msg), (SnapshotId(k as u32), recorded_on(k), ids[k][0]));
                assert_eq!(send.process, [P1, P0][k]);
            }
            other => panic!("snapshot {k}: expected a missing message, got {other}"),
        }
    }
}

#[test]
fn sim_check_fails_clause_b_extra_message() {
    // (b) cannot break alone: the extra message is part of a recorded state no run reaches
    // (c), and is still in its channel at the end (d).
    let (done, _) = two_snapshots(&[1, 2]);
    for k in 0..2 {
        match tamper_record(&done, k, |record| record.push(Jars(4))) {
            Violation::ExtraMessage { snapshot, channel, message, index, .. } => {
                assert_eq!(
                    (snapshot, channel, message.as_str(), index),
                    (SnapshotId(k as u32), recorded_on(k), "Jars(4)", 2)
                );
            }
            other => panic!("snapshot {k}: expected an extra message, got {other}"),
        }
    }
}

#[test]
fn sim_check_fails_clause_c_by_a_wrong_recorded_state() {
    // The recorded state changed: a jar less for the sender of the carts. (d) breaks too: the
    // rest of the run is replayed from the wrong state.
    let (done, _) = two_snapshots(&[1, 2]);
    for k in 0..2 {
        let mut tampered = done.clone();
        let sender = [P1, P0][k];
        tampered.snapshots[k].global.state.processes[sender.index()].jars -= 1;
        match violation(&tampered, SnapshotId(k as u32)) {
            Violation::RecordedUnreachable { snapshot, event: None, reason } => {
                assert_eq!(snapshot, SnapshotId(k as u32));
                assert!(reason.contains(&format!("{} recorded", two().name(sender))), "{reason}");
            }
            other => panic!("snapshot {k}: expected the recorded state unreachable, got {other}"),
        }
    }
}

/// Swaps `p`'s receipts at trace positions `i < j` (no event of `p` between them), as a
/// non-FIFO channel would deliver them; the state logged with the first is the one its new
/// cart gives (the second's is the same either way), so the logged states stay right.
fn swap_receipts(done: &mut Finished<Bank>, i: usize, j: usize) {
    let events = &mut done.trace.events;
    let p = events[i].process;
    assert!(events[i + 1..j].iter().all(|e| e.process != p), "no event of {p} between");
    let amount = |events: &[chandy_lamport::check::Event<Bank>], position: usize| {
        let EventKind::Receive { id, .. } = events[position].kind else { panic!("a receipt at {position}") };
        events.iter().find_map(|e| match e.kind {
            EventKind::Send { id: sent, msg: Jars(a), .. } if sent == id => Some(a),
            _ => None,
        })
    };
    let (first, second) = (amount(events, i).unwrap(), amount(events, j).unwrap());
    let (a, b) = (events[i].kind.clone(), events[j].kind.clone());
    events[i].kind = b;
    events[j].kind = a;
    let state = events[i].state.as_mut().unwrap();
    state.jars = state.jars - first + second;
}

/// The positions of `p`'s receipts in the trace.
fn receipts(done: &Finished<Bank>, p: ProcessId) -> Vec<usize> {
    let events = done.trace.events.iter().enumerate();
    events.filter(|(_, e)| e.process == p && matches!(e.kind, EventKind::Receive { .. })).map(|(i, _)| i).collect()
}

#[test]
fn sim_check_fails_clause_c_alone() {
    // P0 sends carts of 1 and 2; P1 receives both; then P0 initiates. The run is tampered
    // with: P1 received the 2 first (a non-FIFO channel). The recorded state is the state at
    // the cut, but no FIFO run reaches it: only (c) breaks. (A snapshot tampered with alone
    // cannot break (c) without (d): a recorded state other than the one at the cut is also
    // where the rest of the run is replayed from.)
    let mut sim = sim(&[0; 8], Variant::None);
    sim.transfer(P0, P1, 1).unwrap();
    sim.transfer(P0, P1, 2).unwrap();
    sim.tick(2).unwrap();
    sim.start_snapshot(P0).unwrap();
    assert!(sim.run_to_completion().unwrap());
    let mut done = sim.finish();
    done.check(&two()).expect("the untampered run passes");
    let r = receipts(&done, P1);
    assert_eq!(r.len(), 2);
    let record = done.trace.events.iter().position(|e| e.process == P1 && matches!(e.kind, EventKind::Record { .. }));
    assert!(r[1] < record.unwrap(), "both receipts before P1 records");
    swap_receipts(&mut done, r[0], r[1]);
    match violation(&done, S0) {
        Violation::RecordedUnreachable { snapshot, event: Some(e), reason } => {
            assert_eq!((snapshot, e.position, e.process), (S0, r[0], P1));
            assert!(reason.contains("at the head"), "{reason}");
        }
        other => panic!("expected the recorded state unreachable at the swapped receipt, got {other}"),
    }
}

#[test]
fn sim_check_fails_clause_d_alone() {
    // P0 initiates and sends carts of 1 and 2 behind its marker; P1 records on the marker and
    // receives both carts before its own marker (delayed 5 ticks) closes P0's record. The run is
    // tampered with: P1 received the 2 first. Only (d) breaks. (A snapshot tampered with alone
    // cannot break (d): a recorded state that passes (c) is the state at the cut, from which
    // a FIFO run's remaining events replay to its end.)
    let mut sim = sim(&[0, 0, 0, 5, 0, 0], Variant::None);
    sim.start_snapshot(P0).unwrap();
    sim.transfer(P0, P1, 1).unwrap();
    sim.transfer(P0, P1, 2).unwrap();
    assert!(sim.run_to_completion().unwrap());
    let mut done = sim.finish();
    done.check(&two()).expect("the untampered run passes");
    let r = receipts(&done, P1);
    assert_eq!(r.len(), 2);
    let events = &done.trace.events;
    let close = events.iter().position(|e| e.process == P0 && matches!(e.kind, EventKind::MarkerReceive { .. }));
    assert!(r[1] < close.unwrap(), "both receipts before the last record closes");
    swap_receipts(&mut done, r[0], r[1]);
    match violation(&done, S0) {
        Violation::EndUnreachable { snapshot, event: Some(e), .. } => {
            assert_eq!((snapshot, e.position, e.process), (S0, r[0], P1));
        }
        other => panic!("expected the end state unreachable at the swapped receipt, got {other}"),
    }
}

#[test]
fn sim_check_fails_clause_e_not_recorded() {
    // Under SkipOneMarker a recording house sends no marker on its last outgoing channel: with
    // two houses, the initiator sends none, and P1 never records. The snapshot never completes;
    // the simulator's check reports (e) from the trace: P1's record and both channels' closes
    // missing (there is no cut, so nothing else is judged).
    let mut sim = sim(&[0; 8], Variant::SkipOneMarker);
    sim.start_snapshot(P0).unwrap();
    assert!(!sim.run_to_completion().unwrap());
    let done = sim.finish();
    assert_eq!(done.incomplete, vec![S0]);
    let expected = vec![
        Violation::NotRecorded { snapshot: S0, process: P1 },
        Violation::NotClosed { snapshot: S0, channel: ch(P0, P1) },
        Violation::NotClosed { snapshot: S0, channel: ch(P1, P0) },
    ];
    assert_eq!(done.check(&two()), Err(SnapshotFailure::Unterminated { snapshot: S0, violations: expected }));
    // A complete snapshot whose trace is tampered with, P1's record taken out: the trace
    // checker's first violation is the same.
    let (mut done, _) = two_snapshots(&[1, 2]);
    let at = done
        .trace
        .events
        .iter()
        .position(|e| e.process == P1 && matches!(e.kind, EventKind::Record { snapshot, .. } if snapshot == S1));
    done.trace.events.remove(at.expect("P1 records snapshot 1"));
    assert_eq!(violation(&done, S1), Violation::NotRecorded { snapshot: S1, process: P1 });
}

#[test]
fn sim_check_fails_clause_e_not_closed() {
    // Under NoMarkerForwarding a house that records on a marker sends none: P1 records and
    // P1->P0's record never closes. Everything else holds.
    let mut sim = sim(&[0; 8], Variant::NoMarkerForwarding);
    sim.start_snapshot(P0).unwrap();
    assert!(!sim.run_to_completion().unwrap());
    let done = sim.finish();
    let expected = vec![Violation::NotClosed { snapshot: S0, channel: ch(P1, P0) }];
    assert_eq!(done.check(&two()), Err(SnapshotFailure::Unterminated { snapshot: S0, violations: expected }));
    // A complete snapshot whose trace is tampered with, P0's receipt of P1's marker of
    // snapshot 0 taken out: the same violation.
    let (mut done, _) = two_snapshots(&[1, 2]);
    let at =
        done.trace.events.iter().position(|e| {
            e.process == P0 && matches!(e.kind, EventKind::MarkerReceive { snapshot, .. } if snapshot == S0)
        });
    done.trace.events.remove(at.expect("P0 receives P1's marker"));
    assert_eq!(violation(&done, S0), Violation::NotClosed { snapshot: S0, channel: ch(P1, P0) });
}

/// The violation `workload::run` fails the first bad snapshot of a bank run of `variant` with:
/// 3 houses, 2,000 transfers, 6 snapshots, on the first of the seeds 1, 2, … that shows one.
fn runtime_violation(variant: Variant) -> Violation {
    for seed in 1..=5 {
        let mut w = Workload::new(Topology::complete(3).unwrap(), 2_000, 6);
        w.variant = variant;
        w.seed = seed;
        match run(&w) {
            Err(WorkloadError::Verify { error: VerifyError::Violation(v), .. }) => return v,
            Ok(_) => continue,
            Err(e) => panic!("{variant}, seed {seed}: expected a violation, got {e}"),
        }
    }
    panic!("{variant}: no run of seeds 1..=5 shows a wrong record")
}

#[test]
fn runtime_workload_fails_a_reversed_channel_record() {
    // RecordsReversed: every channel record lists its carts in reverse arrival order. The
    // first snapshot with two carts of different sizes on one channel fails (b), and names the
    // record out of order (not a missing or extra message, nor (c) first).
    match runtime_violation(Variant::RecordsReversed) {
        Violation::OutOfOrder { expected, .. } => assert!(expected.len() >= 2, "{expected:?}"),
        other => panic!("expected a record out of order, got {other}"),
    }
}

#[test]
fn runtime_workload_fails_clause_b_missing_message() {
    match runtime_violation(Variant::NoChannelRecording) {
        v @ Violation::MissingMessage { .. } => assert_eq!(v.clause(), Clause::ExactRecords),
        other => panic!("expected a missing message, got {other}"),
    }
}

#[test]
fn runtime_workload_fails_clause_b_extra_message() {
    // RecordTwice: a cart recorded on a channel is recorded once more when the record closes.
    match runtime_violation(Variant::RecordTwice) {
        v @ Violation::ExtraMessage { .. } => assert_eq!(v.clause(), Clause::ExactRecords),
        other => panic!("expected an extra message, got {other}"),
    }
}

#[test]
fn runtime_workload_fails_clause_c_by_a_stale_recorded_state() {
    // StaleState: a house records its state as it was before its latest receipt. (The
    // runtime's channels are FIFO, so (c) cannot break without a wrong recorded state, which
    // breaks (d) too; nor can (d) break alone: the runtime refuses the NonFifo variant.)
    match runtime_violation(Variant::StaleState) {
        v @ Violation::RecordedUnreachable { .. } => assert_eq!(v.clause(), Clause::RecordedReachable),
        other => panic!("expected the recorded state unreachable, got {other}"),
    }
}

#[test]
fn runtime_workload_fails_clause_e_unterminated() {
    // NoMarkerForwarding: a house that records on a marker sends none, so records stay open
    // (and houses only such a house would tell never record). The runtime's own check of (e)
    // is the shutdown's list of snapshots never assembled, before any is verified.
    let mut w = Workload::new(Topology::complete(3).unwrap(), 500, 3);
    w.variant = Variant::NoMarkerForwarding;
    match run(&w) {
        Err(WorkloadError::Incomplete(ids)) => assert!(!ids.is_empty()),
        other => panic!("expected snapshots never completed, got {other:?}"),
    }
}
