//! The theorem's judge pinned on runs of the threaded runtime (issue 54): a real run's outcome
//! (its trace and assembled snapshot, what `Cluster::shutdown` hands back) is tampered with —
//! a channel record reversed or reordered, a message taken out of or added to it, a recorded
//! state changed, a record or a marker receipt taken out of the trace — and the judge of the
//! loom and shuttle tests ([`judge`], which calls the trace checker on every assembled
//! snapshot) must fail it with the exact violation. The runtime's own `workload::run` has no
//! seam taking a trace and a snapshot; `tests/judge_pins_runs.rs` pins it through fault
//! variants.
//!
//! Not here: (a) and (d), which no tampering of a snapshot breaks first (an inward crossing is
//! a property of the run; (d) alone needs a channel that is not FIFO, which the runtime
//! refuses), and a claim out of order (the runtime's snapshots hold messages, not the ids logs
//! claim): `tests/verify.rs` (module `judge_pins`) and `model/tests/verify_pins.rs` pin them.

#![cfg(not(any(loom, shuttle)))]

use chandy_lamport::apps::bank::{Bank, Jars};
use chandy_lamport::runtime::Outcome;
use chandy_lamport::{ChannelId, EventKind, Initiators, MsgId, ProcessId, SnapshotId, Topology, Variant, Violation};

use loom_tests::houses::{transfer, JARS};
use loom_tests::judge::{judge, Failure, Requests};
use loom_tests::scenario::{Scenario, Step};

const S0: SnapshotId = SnapshotId(0);
const P0: ProcessId = ProcessId(0);
const P1: ProcessId = ProcessId(1);

/// Runs before one holds all its carts in flight.
const ATTEMPTS: usize = 200;

/// Two houses: `P0` initiates snapshot 0, then `P1` sends it one cart of each of `amounts`;
/// wait for the snapshot. `P1` handles the transfers before `P0`'s marker reaches it when the
/// marker comes after the commands in its inbox, and `P0` records before the carts reach it
/// when its initiation comes first in its inbox: a run where both happened (the first of up to
/// [`ATTEMPTS`]), so that `P1 -> P0`'s record holds every cart, in sending order. Returns the
/// topology, what was asked (nothing waited for, so the judge compares no snapshot with what
/// `wait` returned), the outcome, `P1 -> P0` and the carts' ids.
fn carts_in_flight(amounts: &[u32]) -> (Topology, Requests<Bank>, Outcome<Bank>, ChannelId, Vec<MsgId>) {
    let topology = Topology::complete(2).expect("two houses");
    let c10 = topology.channel_between(P1, P0).expect("a channel");
    let steps = [Step::Initiate { snapshot: 0, at: 0 }]
        .into_iter()
        .chain(amounts.iter().map(|&a| transfer(1, 0, a)))
        .chain([Step::Wait { snapshot: 0 }])
        .collect();
    let scenario =
        Scenario { topology: topology.clone(), initial: vec![Bank::new(JARS); 2], initiators: Initiators::Any, steps };
    let jars: Vec<Jars> = amounts.iter().map(|&a| Jars(a)).collect();
    for _ in 0..ATTEMPTS {
        let (mut requests, outcome) = scenario.execute(Variant::None).expect("a correct run");
        judge(&topology, &requests, &outcome).expect("the untampered run passes");
        if outcome.snapshots[0].state.channels[c10.index()] == jars {
            requests.waited.clear();
            let trace = outcome.trace.as_ref().expect("traced");
            let ids = trace
                .events
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::Send { id, channel, .. } if channel == c10 => Some(id),
                    _ => None,
                })
                .collect();
            return (topology, requests, outcome, c10, ids);
        }
    }
    panic!("no run of {ATTEMPTS} held all the carts {amounts:?} in flight");
}

/// The violation the judge fails `outcome` with.
fn violation(topology: &Topology, requests: &Requests<Bank>, outcome: &Outcome<Bank>) -> Violation {
    match judge(topology, requests, outcome) {
        Err(Failure::Violation(v)) => v,
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[test]
fn runtime_judge_fails_a_reversed_channel_record() {
    let (topology, requests, mut outcome, c10, ids) = carts_in_flight(&[1, 2]);
    outcome.snapshots[0].state.channels[c10.index()].reverse();
    let expected =
        Violation::OutOfOrder { snapshot: S0, channel: c10, expected: ids, recorded: "[Jars(2), Jars(1)]".into() };
    assert_eq!(violation(&topology, &requests, &outcome), expected);
}

#[test]
fn runtime_judge_fails_a_reordered_channel_record() {
    let (topology, requests, mut outcome, c10, ids) = carts_in_flight(&[1, 2, 3]);
    // A rotation: neither the sending order nor its reversal.
    outcome.snapshots[0].state.channels[c10.index()].rotate_left(1);
    let expected = Violation::OutOfOrder {
        snapshot: S0,
        channel: c10,
        expected: ids,
        recorded: "[Jars(2), Jars(3), Jars(1)]".into(),
    };
    assert_eq!(violation(&topology, &requests, &outcome), expected);
}

#[test]
fn runtime_judge_fails_clause_b_missing_message() {
    // (b) cannot break alone: the record short of a message is a recorded state no run
    // reaches (c), and from which its receipt after the cut fails (d).
    let (topology, requests, mut outcome, c10, ids) = carts_in_flight(&[1, 2]);
    outcome.snapshots[0].state.channels[c10.index()].remove(0);
    match violation(&topology, &requests, &outcome) {
        Violation::MissingMessage { snapshot, channel, msg, send } => {
            assert_eq!((snapshot, channel, msg, send.process), (S0, c10, ids[0], P1));
        }
        other => panic!("expected a missing message, got {other}"),
    }
}

#[test]
fn runtime_judge_fails_clause_b_extra_message() {
    // (b) cannot break alone: the extra message is part of a recorded state no run reaches
    // (c), and is still in its channel at the end (d).
    let (topology, requests, mut outcome, c10, _) = carts_in_flight(&[1, 2]);
    outcome.snapshots[0].state.channels[c10.index()].push(Jars(4));
    match violation(&topology, &requests, &outcome) {
        Violation::ExtraMessage { snapshot, channel, message, index, .. } => {
            assert_eq!((snapshot, channel, message.as_str(), index), (S0, c10, "Jars(4)", 2));
        }
        other => panic!("expected an extra message, got {other}"),
    }
}

#[test]
fn runtime_judge_fails_clause_c_by_a_wrong_recorded_state() {
    // P1 recorded a jar less than it held. (d) breaks too: the rest of the run is replayed
    // from the wrong state. (Alone, (c) needs a channel that is not FIFO.)
    let (topology, requests, mut outcome, ..) = carts_in_flight(&[1, 2]);
    outcome.snapshots[0].state.processes[P1.index()].jars -= 1;
    match violation(&topology, &requests, &outcome) {
        Violation::RecordedUnreachable { snapshot, event: None, reason } => {
            assert_eq!(snapshot, S0);
            assert!(reason.contains("P1 recorded"), "{reason}");
        }
        other => panic!("expected the recorded state unreachable, got {other}"),
    }
}

/// Takes out of the outcome's trace the event of `process` of this kind.
fn remove(outcome: &mut Outcome<Bank>, process: ProcessId, kind: EventKind<Jars, chandy_lamport::apps::bank::Sale>) {
    let events = &mut outcome.trace.as_mut().expect("traced").events;
    let at = events.iter().position(|e| e.process == process && e.kind == kind).expect("the event");
    events.remove(at);
}

#[test]
fn runtime_judge_fails_clause_e_not_recorded() {
    // P1's record taken out of the trace of the assembled snapshot: without it there is no
    // cut, and the first violation is P1's missing record.
    let (topology, requests, mut outcome, ..) = carts_in_flight(&[1, 2]);
    remove(&mut outcome, P1, EventKind::Record { snapshot: S0, initiated: false });
    assert_eq!(violation(&topology, &requests, &outcome), Violation::NotRecorded { snapshot: S0, process: P1 });
}

#[test]
fn runtime_judge_fails_clause_e_not_closed() {
    // P0's receipt of P1's marker taken out of the trace: P1 -> P0's record never closes, and
    // nothing else is wrong.
    let (topology, requests, mut outcome, c10, _) = carts_in_flight(&[1, 2]);
    remove(&mut outcome, P0, EventKind::MarkerReceive { snapshot: S0, channel: c10 });
    assert_eq!(violation(&topology, &requests, &outcome), Violation::NotClosed { snapshot: S0, channel: c10 });
}
