//! Loom can fail: the threaded runtime running each fault variant of the marker rules, explored
//! by loom, fails a scenario with the very violation the trace checker names, while the same
//! exploration of the correct runtime passes.
//!
//! Every test uses preemption bound 1: the smallest that finds every fault (bound 0 misses
//! no-marker-forwarding and late-record, whose failures need a house to handle a marker before
//! the main thread's shutdown reaches it), and the correct runtime is explored with it too.
#![cfg(loom)]

use chandy_lamport::{ChannelId, Clause, ProcessId, Variant, Violation};
use loom_tests::explore::{explore, find_failure};
use loom_tests::judge::Failure;
use loom_tests::scenario::Scenario;

const BOUND: Option<usize> = Some(1);

/// Explores `scenario` on the correct runtime (every run must pass), then with `variant` (loom
/// must find a run the trace checker rejects for `clause`); returns that violation.
fn caught(scenario: fn() -> Scenario, variant: Variant, clause: Clause) -> Violation {
    explore(&format!("{variant}: same scenario, correct runtime"), BOUND, move || scenario().run(Variant::None));
    let failure = find_failure(variant.name(), BOUND, move || scenario().run(variant));
    let Failure::Violation(violation) = failure else { panic!("{variant}: expected a violation, got {failure:?}") };
    assert_eq!(violation.clause(), clause, "{variant}: {violation}");
    violation
}

/// The channel from house `from` to house `to` in `scenario`.
fn channel(scenario: fn() -> Scenario, from: u16, to: u16) -> ChannelId {
    scenario().topology.channel_between(ProcessId(from), ProcessId(to)).expect("a channel")
}

/// The channel a violation names, if it names one.
fn channel_of(violation: &Violation) -> Option<ChannelId> {
    match *violation {
        Violation::NotClosed { channel, .. }
        | Violation::InwardCrossing { channel, .. }
        | Violation::MissingMessage { channel, .. }
        | Violation::ExtraMessage { channel, .. }
        | Violation::OutOfOrder { channel, .. } => Some(channel),
        Violation::NotRecorded { .. } | Violation::RecordedUnreachable { .. } | Violation::EndUnreachable { .. } => {
            None
        }
    }
}

fn two_houses() -> Scenario {
    Scenario::exchange(2)
}

fn three_houses() -> Scenario {
    Scenario::exchange(3)
}

fn in_flight() -> Scenario {
    Scenario::in_flight_at_shutdown(2)
}

fn fan_out() -> Scenario {
    Scenario::fan_out(2)
}

/// `P0` records, then its cart leaves before its marker: `P1` receives a cart sent after the cut
/// before it records (clause a).
#[test]
fn send_before_marker_is_an_inward_crossing() {
    let v = caught(fan_out, Variant::SendBeforeMarker, Clause::NoInwardCrossing);
    assert!(matches!(v, Violation::InwardCrossing { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(fan_out, 0, 1)), "{v}");
}

/// The cart `P1` sent before the cut reaches `P0` after `P0` recorded: in transit, but the
/// record of its channel is empty (clause b).
#[test]
fn no_channel_recording_misses_a_cart_in_transit() {
    let v = caught(two_houses, Variant::NoChannelRecording, Clause::ExactRecords);
    assert!(matches!(v, Violation::MissingMessage { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(two_houses, 1, 0)), "{v}");
}

/// `P1`'s marker closes every record of the initiator `P0`, so `P2`'s cart, sent before the
/// cut and arriving after that marker, is missing from the record of `P2 -> P0` (clause b).
#[test]
fn close_all_on_first_marker_misses_a_cart_in_transit() {
    let v = caught(three_houses, Variant::CloseAllOnFirstMarker, Clause::ExactRecords);
    assert!(matches!(v, Violation::MissingMessage { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(three_houses, 2, 0)), "{v}");
}

/// A cart sent after the cut arrives behind its channel's marker while another channel of the
/// receiver is still open, and is recorded anyway (clause b).
#[test]
fn keep_recording_after_marker_records_a_cart_sent_after_the_cut() {
    let v = caught(three_houses, Variant::KeepRecordingAfterMarker, Clause::ExactRecords);
    assert!(matches!(v, Violation::ExtraMessage { .. }), "{v}");
    let after_the_cut = [channel(three_houses, 0, 1), channel(three_houses, 1, 2)];
    assert!(channel_of(&v).is_some_and(|c| after_the_cut.contains(&c)), "{v}");
}

/// `P1` records on `P0`'s marker before shutdown reaches it and sends no marker, so the record
/// of `P1 -> P0` never closes and the snapshot is never assembled (clause e).
#[test]
fn no_marker_forwarding_never_terminates() {
    let v = caught(in_flight, Variant::NoMarkerForwarding, Clause::Terminated);
    assert!(matches!(v, Violation::NotClosed { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(in_flight, 1, 0)), "{v}");
}

/// `P1` handles `P0`'s cart, sent after the cut, between `P0`'s marker and its own recording
/// (clause a).
#[test]
fn late_record_is_an_inward_crossing() {
    let v = caught(in_flight, Variant::LateRecord, Clause::NoInwardCrossing);
    assert!(matches!(v, Violation::InwardCrossing { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(in_flight, 0, 1)), "{v}");
}
