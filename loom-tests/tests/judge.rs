//! The judge itself can fail: a correct run of the std runtime passes, and each way a run can
//! be wrong, made by editing that run's outcome, fails with the failure it is about.

#![cfg(not(any(loom, shuttle)))]

use chandy_lamport::apps::bank::{Bank, Jars};
use chandy_lamport::runtime::Outcome;
use chandy_lamport::{Application, ChannelId, Event, EventKind, ProcessId, SnapshotId, Topology, Variant, Violation};

use loom_tests::judge::*;
use loom_tests::scenario::Scenario;

type Kind<A> = EventKind<<A as Application>::Msg, <A as Application>::Step>;

const S0: SnapshotId = SnapshotId(0);
const P0: ProcessId = ProcessId(0);
const P1: ProcessId = ProcessId(1);

/// Two houses, one snapshot waited for: a correct run, and its channels `P0 -> P1`,
/// `P1 -> P0`.
fn correct_run() -> (Topology, Requests<Bank>, Outcome<Bank>, ChannelId, ChannelId) {
    let scenario = Scenario::exchange(2);
    let (requests, outcome) = scenario.execute(Variant::None).expect("a correct run");
    let c01 = scenario.topology.channel_between(P0, P1).expect("a channel");
    let c10 = scenario.topology.channel_between(P1, P0).expect("a channel");
    (scenario.topology, requests, outcome, c01, c10)
}

fn events(outcome: &mut Outcome<Bank>) -> &mut Vec<Event<Bank>> {
    &mut outcome.trace.as_mut().expect("traced").events
}

/// Removes the event of `process` of this kind.
fn remove(outcome: &mut Outcome<Bank>, process: ProcessId, kind: Kind<Bank>) {
    let events = events(outcome);
    let at = events.iter().position(|e| e.process == process && e.kind == kind).expect("the event");
    events.remove(at);
}

/// The correct run, as if the shutdown had come before `P1`'s marker reached `P0`: not
/// waited for, not assembled, reported incomplete.
fn left_open() -> (Topology, Requests<Bank>, Outcome<Bank>, ChannelId, ChannelId) {
    let (topology, mut requests, mut outcome, c01, c10) = correct_run();
    requests.waited.clear();
    outcome.snapshots.clear();
    outcome.incomplete.push(S0);
    remove(&mut outcome, P0, EventKind::MarkerReceive { snapshot: S0, channel: c10 });
    (topology, requests, outcome, c01, c10)
}

#[test]
fn a_correct_run_passes() {
    let (topology, requests, outcome, ..) = correct_run();
    let judged = judge(&topology, &requests, &outcome).expect("passes");
    assert!(judged.open.is_empty() && judged.in_transit.len() == 1, "{judged:?}");
}

#[test]
fn a_snapshot_left_open_by_the_shutdown_passes() {
    let (topology, requests, outcome, ..) = left_open();
    assert_eq!(judge(&topology, &requests, &outcome).map(|j| j.open), Ok(vec![S0]));
}

#[test]
fn a_snapshot_left_open_by_a_missing_marker_fails() {
    let (topology, requests, mut outcome, _, c10) = left_open();
    remove(&mut outcome, P1, EventKind::MarkerSend { snapshot: S0, channel: c10 });
    let violation = Violation::NotClosed { snapshot: S0, channel: c10 };
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Violation(violation)));
}

#[test]
fn a_house_that_received_a_marker_and_never_recorded_fails() {
    let (topology, requests, mut outcome, _, c10) = left_open();
    remove(&mut outcome, P1, EventKind::Record { snapshot: S0, initiated: false });
    remove(&mut outcome, P1, EventKind::MarkerSend { snapshot: S0, channel: c10 });
    let violation = Violation::NotRecorded { snapshot: S0, process: P1 };
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Violation(violation)));
}

#[test]
fn an_open_snapshot_not_reported_incomplete_fails() {
    let (topology, requests, mut outcome, ..) = left_open();
    outcome.incomplete.clear();
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Misreported(S0)));
}

#[test]
fn an_assembled_snapshot_reported_incomplete_fails() {
    let (topology, requests, mut outcome, ..) = correct_run();
    outcome.incomplete.push(S0);
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Misreported(S0)));
}

#[test]
fn a_terminated_snapshot_never_assembled_fails() {
    let (topology, mut requests, mut outcome, ..) = correct_run();
    requests.waited.clear();
    outcome.snapshots.clear();
    outcome.incomplete.push(S0);
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Unassembled(S0)));
}

#[test]
fn a_snapshot_waited_for_and_not_assembled_fails() {
    let (topology, requests, mut outcome, ..) = correct_run();
    outcome.snapshots.clear();
    outcome.incomplete.push(S0);
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::WaitedDiffers(S0)));
}

#[test]
fn a_recording_no_initiation_caused_fails() {
    // As the runtime's shutdown used to "complete" a snapshot: P1 records as an initiator.
    let (topology, requests, mut outcome, ..) = correct_run();
    let record = EventKind::Record { snapshot: S0, initiated: false };
    let event = events(&mut outcome).iter_mut().find(|e| e.process == P1 && e.kind == record).expect("P1 records");
    event.kind = EventKind::Record { snapshot: S0, initiated: true };
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Uncaused { snapshot: S0, process: P1 }));
}

#[test]
fn a_recording_no_marker_caused_fails() {
    let (topology, requests, mut outcome, c01, _) = left_open();
    remove(&mut outcome, P1, EventKind::MarkerReceive { snapshot: S0, channel: c01 });
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Uncaused { snapshot: S0, process: P1 }));
}

#[test]
fn a_cart_never_received_fails() {
    let (topology, requests, mut outcome, ..) = left_open();
    let events = events(&mut outcome);
    let at = events.iter().position(|e| matches!(e.kind, EventKind::Receive { .. })).expect("a receipt");
    events.remove(at);
    let failure = Failure::Undelivered { what: "carts", sent: 2, received: 1 };
    assert_eq!(judge(&topology, &requests, &outcome), Err(failure));
}

#[test]
fn jars_lost_fail() {
    let (topology, requests, mut outcome, ..) = left_open();
    outcome.states[0].jars -= 1;
    let ledger = 2 * u64::from(loom_tests::houses::JARS);
    assert_eq!(judge(&topology, &requests, &outcome), Err(Failure::Lost { start: ledger, end: ledger - 1 }));
}

#[test]
fn an_assembled_snapshot_that_fails_verification_fails() {
    let (topology, mut requests, mut outcome, _, c10) = correct_run();
    requests.waited.clear();
    outcome.snapshots[0].state.channels[c10.index()].push(Jars(5));
    let Err(Failure::Violation(v)) = judge(&topology, &requests, &outcome) else { panic!("expected a violation") };
    assert!(matches!(v, Violation::ExtraMessage { channel, .. } if channel == c10), "{v}");
}

#[test]
fn an_unreceived_marker_of_an_assembled_snapshot_fails() {
    let (topology, requests, mut outcome, c01, _) = correct_run();
    let send = EventKind::MarkerSend { snapshot: S0, channel: c01 };
    let events = events(&mut outcome);
    let at = events.iter().position(|e| e.process == P0 && e.kind == send).expect("P0's marker");
    let again = events[at].clone();
    events.insert(at + 1, again);
    let failure = Failure::Undelivered { what: "markers", sent: 3, received: 2 };
    assert_eq!(judge(&topology, &requests, &outcome), Err(failure));
}
