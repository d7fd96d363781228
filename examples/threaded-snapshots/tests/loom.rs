//! The implementation under loom (`--cfg loom`): three processes (`Scenario::loom`: main, P1's
//! driver, P1's reader and P2's two readers, loom's 5 threads), every execution up to the
//! preemption bound judged. The correct copy holds in every one; each broken copy is caught,
//! with the judge's finding in its own words.
#![cfg(loom)]

use chandy_lamport::testing::loom::check;
use threaded_snapshots::{Bug, Scenario};

#[test]
fn the_correct_implementation_holds_in_every_execution_explored() {
    let explored = check(Some(3), || Scenario::loom(Bug::None, 1).run());
    assert!(explored.executions > 100, "{explored}");
}

#[test]
fn the_correct_implementation_holds_with_two_snapshots_at_once() {
    let explored = check(Some(2), || Scenario::loom(Bug::None, 2).run());
    assert!(explored.executions > 10, "{explored}");
}

#[test]
#[should_panic(expected = "- the logs' claims: P2 records its state for snapshot 0 a second time")]
fn the_racing_first_marker_records_twice() {
    check(Some(2), || Scenario::loom(Bug::RacingFirstMarker, 1).run());
}

#[test]
#[should_panic(
    expected = r#"(b) channel records hold exactly the in-flight messages: the record of P1->P2 ["P1-0"] holds message "P1-0", which was not in flight at the cut"#
)]
fn a_send_between_the_record_and_the_markers_is_recorded_in_transit() {
    check(Some(2), || Scenario::loom(Bug::SendBetweenRecordAndMarkers, 1).run());
}

#[test]
#[should_panic(
    expected = r#"(b) channel records hold exactly the in-flight messages: message "P1-0", in flight on P1->P2 at the cut, is missing from its record []"#
)]
fn a_recording_flag_shared_by_two_snapshots_loses_messages_from_a_channel_record() {
    check(Some(2), || Scenario::loom(Bug::SharedRecordingFlag, 2).run());
}
