//! Shuttle can fail too: with 8 houses, each core fault variant of the marker rules is caught by
//! the random scheduler (fixed seed) with the violation the trace checker names (double-marker:
//! with the core's refusal, which the cluster reports). The correct runtime passes the same
//! scenarios in `shuttle_scenarios.rs`. The faults whose snapshot never terminates run
//! scenarios that shut down without waiting; every other fault is caught in a snapshot that
//! was waited for and assembled.
#![cfg(shuttle)]

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::runtime::RuntimeError;
use chandy_lamport::{Clause, CoreError, SnapshotId, Variant, Violation};
use loom_tests::judge::Failure;
use loom_tests::scenario::Scenario;
use loom_tests::schedule::{find_failure, Draw, Schedules};

const HOUSES: usize = 8;

/// At most this many schedules to find the fault.
const SCHEDULES: Schedules = Schedules { draw: Draw::Random, seed: 0x5eed, iterations: 200 };

/// Runs `scenario` with `variant` until shuttle finds a run the trace checker rejects for
/// `clause`; returns that violation.
fn caught(scenario: fn(usize) -> Scenario<Bank>, variant: Variant, clause: Clause) -> Violation {
    let failure = find_failure(variant.name(), SCHEDULES, move || scenario(HOUSES).run(variant));
    let Failure::Violation(violation) = failure else { panic!("{variant}: expected a violation, got {failure:?}") };
    assert_eq!(violation.clause(), clause, "{variant}: {violation}");
    violation
}

#[test]
fn send_before_marker_is_an_inward_crossing() {
    let v = caught(Scenario::fan_out, Variant::SendBeforeMarker, Clause::NoInwardCrossing);
    assert!(matches!(v, Violation::InwardCrossing { .. }), "{v}");
}

#[test]
fn no_channel_recording_misses_a_cart_in_transit() {
    let v = caught(Scenario::exchange, Variant::NoChannelRecording, Clause::ExactRecords);
    assert!(matches!(v, Violation::MissingMessage { .. }), "{v}");
}

#[test]
fn close_all_on_first_marker_misses_a_cart_in_transit() {
    let v = caught(Scenario::exchange, Variant::CloseAllOnFirstMarker, Clause::ExactRecords);
    assert!(matches!(v, Violation::MissingMessage { .. }), "{v}");
}

#[test]
fn keep_recording_after_marker_records_a_cart_sent_after_the_cut() {
    let v = caught(Scenario::exchange, Variant::KeepRecordingAfterMarker, Clause::ExactRecords);
    assert!(matches!(v, Violation::ExtraMessage { .. }), "{v}");
}

#[test]
fn no_marker_forwarding_never_terminates() {
    let v = caught(Scenario::in_flight_at_shutdown, Variant::NoMarkerForwarding, Clause::Terminated);
    assert!(matches!(v, Violation::NotClosed { .. }), "{v}");
}

#[test]
fn late_record_is_an_inward_crossing() {
    let v = caught(Scenario::exchange, Variant::LateRecord, Clause::NoInwardCrossing);
    assert!(matches!(v, Violation::InwardCrossing { .. }), "{v}");
}

#[test]
fn stale_state_records_a_state_the_run_was_not_in() {
    let v = caught(Scenario::exchange, Variant::StaleState, Clause::RecordedReachable);
    assert!(matches!(v, Violation::RecordedUnreachable { event: None, .. }), "{v}");
}

#[test]
fn records_reversed_lists_carts_out_of_order() {
    let v = caught(Scenario::two_carts_in_flight, Variant::RecordsReversed, Clause::ExactRecords);
    assert!(matches!(v, Violation::OutOfOrder { ref expected, .. } if expected.len() == 2), "{v}");
}

#[test]
fn swap_record_records_a_cart_in_the_other_snapshot() {
    let v = caught(Scenario::two_snapshots_around_a_cart, Variant::SwapRecord, Clause::ExactRecords);
    assert!(matches!(v, Violation::ExtraMessage { snapshot: SnapshotId(0), .. }), "{v}");
}

#[test]
fn skip_one_marker_never_terminates() {
    let v = caught(Scenario::in_flight_at_shutdown, Variant::SkipOneMarker, Clause::Terminated);
    let Violation::NotClosed { channel, .. } = v else { panic!("expected a record never closed, got {v}") };
    let topology = Scenario::in_flight_at_shutdown(HOUSES).topology;
    let sender = topology.channel(channel).from;
    assert_eq!(topology.outgoing(sender).last(), Some(&channel), "{v}");
}

#[test]
fn record_twice_records_a_cart_twice() {
    let v = caught(Scenario::exchange, Variant::RecordTwice, Clause::ExactRecords);
    assert!(matches!(v, Violation::ExtraMessage { .. }), "{v}");
}

#[test]
fn double_marker_is_refused() {
    let failure =
        find_failure(Variant::DoubleMarker.name(), SCHEDULES, || Scenario::exchange(HOUSES).run(Variant::DoubleMarker));
    assert!(
        matches!(
            failure,
            Failure::Runtime(RuntimeError::Core {
                error: CoreError::DuplicateMarker { .. } | CoreError::SnapshotCompleted { .. },
                ..
            })
        ),
        "{failure:?}"
    );
}
