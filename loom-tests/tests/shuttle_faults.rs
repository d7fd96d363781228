//! Shuttle can fail too: with 8 houses, each fault variant of the marker rules is caught by the
//! random scheduler (fixed seed) with the violation the trace checker names. The correct runtime
//! passes the same scenarios in `shuttle_scenarios.rs`.
#![cfg(shuttle)]

use chandy_lamport::{Clause, Variant, Violation};
use loom_tests::judge::Failure;
use loom_tests::scenario::Scenario;
use loom_tests::schedule::{find_failure, Draw, Schedules};

const HOUSES: usize = 8;

/// At most this many schedules to find the fault.
const SCHEDULES: Schedules = Schedules { draw: Draw::Random, seed: 0x5eed, iterations: 200 };

/// Runs `scenario` with `variant` until shuttle finds a run the trace checker rejects for
/// `clause`; returns that violation.
fn caught(scenario: fn(usize) -> Scenario, variant: Variant, clause: Clause) -> Violation {
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
    let v = caught(Scenario::in_flight_at_shutdown, Variant::LateRecord, Clause::NoInwardCrossing);
    assert!(matches!(v, Violation::InwardCrossing { .. }), "{v}");
}
