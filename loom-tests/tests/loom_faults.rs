//! Loom can fail: the threaded runtime running each fault variant of the marker rules, explored
//! by loom, fails a scenario with the very violation the trace checker names, while the same
//! exploration of the correct runtime passes. Every core variant is here (the two channel
//! faults, `non-fifo` and `lose-markers`, are the model's and the simulator's: the runtime's
//! channels are FIFO and lose nothing, and it refuses to start with them).
//!
//! Every test uses preemption bound 1: the smallest that finds every fault (bound 0 finds all
//! but stale-state, whose failure needs `P1`'s cart to reach `P0` before the main thread's
//! initiation does), and the correct runtime is explored with it too. The faults whose
//! snapshot never terminates (no-marker-forwarding, skip-one-marker) run scenarios that shut
//! down without waiting, where a snapshot may be left open: the judge accepts an open snapshot
//! only when the shutdown explains it, and theirs it does not. Every other fault runs a
//! scenario that waits for its snapshots, so each is caught in a snapshot that assembled, with
//! every marker received (send-before-marker's and late-record's deferred work is done when the
//! house goes idle).
#![cfg(loom)]

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::runtime::RuntimeError;
use chandy_lamport::{ChannelId, Clause, CoreError, ProcessId, SnapshotId, Variant, Violation};
use loom_tests::explore::{explore, find_failure};
use loom_tests::judge::Failure;
use loom_tests::scenario::Scenario;

const BOUND: Option<usize> = Some(1);

/// Explores `scenario` on the correct runtime (every run must pass), then with `variant` (loom
/// must find a run the trace checker rejects for `clause`); returns that violation.
fn caught(scenario: fn() -> Scenario<Bank>, variant: Variant, clause: Clause) -> Violation {
    explore(&format!("{variant}: same scenario, correct runtime"), BOUND, move || scenario().run(Variant::None));
    let failure = find_failure(variant.name(), BOUND, move || scenario().run(variant));
    let Failure::Violation(violation) = failure else { panic!("{variant}: expected a violation, got {failure:?}") };
    assert_eq!(violation.clause(), clause, "{variant}: {violation}");
    violation
}

/// The channel from house `from` to house `to` in `scenario`.
fn channel(scenario: fn() -> Scenario<Bank>, from: u16, to: u16) -> ChannelId {
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
        Violation::NotRecorded { .. }
        | Violation::RecordedUnreachable { .. }
        | Violation::EndUnreachable { .. }
        | Violation::NotAnInitiator { .. }
        | Violation::LoggedState { .. } => None,
    }
}

fn two_houses() -> Scenario<Bank> {
    Scenario::exchange(2)
}

fn three_houses() -> Scenario<Bank> {
    Scenario::exchange(3)
}

fn in_flight() -> Scenario<Bank> {
    Scenario::in_flight_at_shutdown(2)
}

fn fan_out_in_flight() -> Scenario<Bank> {
    Scenario::fan_out(3).unwaited()
}

fn fan_out() -> Scenario<Bank> {
    Scenario::fan_out(2)
}

fn two_carts() -> Scenario<Bank> {
    Scenario::two_carts_in_flight(2)
}

fn two_snapshots() -> Scenario<Bank> {
    Scenario::two_snapshots_around_a_cart(2)
}

/// `P0` records on its initiation and holds its marker until its next step: when that step is
/// the transfer (already in its inbox), the cart leaves first, and `P1` receives a cart sent
/// after the cut before it records (clause a). The snapshot is waited for and assembles: the
/// marker does leave (right behind the cart, or at once when `P0` goes idle first).
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

/// `P1` records on `P0`'s marker (which always reaches it: `P0` sends it before its flush) and
/// sends no marker, so the record of `P1 -> P0` never closes. The snapshot is open at shutdown,
/// but the shutdown does not explain it: `P1` recorded and no marker left on that channel
/// (clause e).
#[test]
fn no_marker_forwarding_never_terminates() {
    let v = caught(in_flight, Variant::NoMarkerForwarding, Clause::Terminated);
    assert!(matches!(v, Violation::NotClosed { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(in_flight, 1, 0)), "{v}");
}

/// `P1` holds back its recording on `P0`'s marker until its next message: when `P0`'s cart,
/// sent after the cut, is already in its inbox, `P1` handles it before recording (clause a).
/// The snapshot is waited for and assembles: the recording does happen (after that cart, or
/// at once when `P1` goes idle first).
#[test]
fn late_record_is_an_inward_crossing() {
    let v = caught(two_houses, Variant::LateRecord, Clause::NoInwardCrossing);
    assert!(matches!(v, Violation::InwardCrossing { .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(two_houses, 0, 1)), "{v}");
}

/// `P1`'s cart reaches `P0` before `P0`'s initiation: `P0` records its stock as it was before
/// that cart, a state the run never had at the cut (clause c).
#[test]
fn stale_state_records_a_state_the_run_was_not_in() {
    let v = caught(two_houses, Variant::StaleState, Clause::RecordedReachable);
    let Violation::RecordedUnreachable { event: None, ref reason, .. } = v else {
        panic!("expected a recorded state differing from the replay, got {v}")
    };
    assert!(reason.starts_with("P0 recorded"), "{v}");
}

/// Both of `P1`'s carts (1 jar, then 2) reach `P0` after it recorded: the record of `P1 -> P0`
/// lists them 2, 1 (clause b).
#[test]
fn records_reversed_lists_carts_out_of_order() {
    let v = caught(two_carts, Variant::RecordsReversed, Clause::ExactRecords);
    assert!(matches!(v, Violation::OutOfOrder { ref expected, .. } if expected.len() == 2), "{v}");
    assert_eq!(channel_of(&v), Some(channel(two_carts, 1, 0)), "{v}");
}

/// `P0` records snapshots 0 and 1 first; `P1` records 0, sends a cart, records 1. Snapshot 0's
/// marker closes 1's record of `P1 -> P0`, so the cart lands in 0's record, which 1's marker
/// closes: a cart sent after snapshot 0's cut is in its record (clause b).
#[test]
fn swap_record_records_a_cart_in_the_other_snapshot() {
    let v = caught(two_snapshots, Variant::SwapRecord, Clause::ExactRecords);
    assert!(matches!(v, Violation::ExtraMessage { snapshot: SnapshotId(0), .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(two_snapshots, 1, 0)), "{v}");
}

/// `P0` with one-way channels to `P1` and `P2`, shut down without waiting: `P0` initiates and
/// sends its marker to `P1` but none on its last channel, to `P2`, whose record therefore never
/// closes. The snapshot is open at shutdown, but the shutdown does not explain it: `P0`
/// recorded and no marker left on that channel (clause e). (Houses that cannot send back, so
/// that no marker is ever sent after a flush: see `loom_scenarios.rs` on three houses in flight.)
#[test]
fn skip_one_marker_never_terminates() {
    let v = caught(fan_out_in_flight, Variant::SkipOneMarker, Clause::Terminated);
    assert!(matches!(v, Violation::NotClosed { .. }), "{v}");
    let topology = fan_out_in_flight().topology;
    assert_eq!(topology.outgoing(ProcessId(0)).last().copied(), channel_of(&v), "{v}");
    assert_eq!(channel_of(&v), Some(channel(fan_out_in_flight, 0, 2)), "{v}");
}

/// `P1`'s cart is in flight when `P0` records: `P0` records it, then once more when `P1`'s
/// marker closes the record (clause b).
#[test]
fn record_twice_records_a_cart_twice() {
    let v = caught(two_houses, Variant::RecordTwice, Clause::ExactRecords);
    assert!(matches!(v, Violation::ExtraMessage { index: 1, .. }), "{v}");
    assert_eq!(channel_of(&v), Some(channel(two_houses, 1, 0)), "{v}");
}

/// `P0` sends its marker to `P1` twice: `P1`'s core refuses the second (its record of that
/// channel is closed, or its part of the snapshot already complete and taken), and the cluster
/// reports the refusal instead of a snapshot. The runtime itself catches this fault before the
/// trace checker could see it (were the core to accept it, the judge's count of the snapshot's
/// markers would fail: two sent on one channel, one closing its record).
#[test]
fn double_marker_is_refused() {
    explore("double-marker: same scenario, correct runtime", BOUND, || two_houses().run(Variant::None));
    let failure = find_failure(Variant::DoubleMarker.name(), BOUND, || two_houses().run(Variant::DoubleMarker));
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

/// Every core variant has its test above (update both lists when a variant is added).
#[test]
fn every_core_variant_is_caught() {
    let tested = [
        Variant::SendBeforeMarker,
        Variant::NoChannelRecording,
        Variant::CloseAllOnFirstMarker,
        Variant::KeepRecordingAfterMarker,
        Variant::NoMarkerForwarding,
        Variant::LateRecord,
        Variant::StaleState,
        Variant::RecordsReversed,
        Variant::SwapRecord,
        Variant::SkipOneMarker,
        Variant::RecordTwice,
        Variant::DoubleMarker,
    ];
    let core: Vec<Variant> = Variant::of(chandy_lamport::Algorithm::ChandyLamport)
        .filter(|v| *v != Variant::None && !v.is_channel_fault())
        .collect();
    assert_eq!(core, tested);
}
