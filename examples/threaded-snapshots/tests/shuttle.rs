//! The implementation under shuttle (`--cfg shuttle`): 5 and 6 processes, every channel both
//! ways (`Scenario::shuttle`: 25 and 36 threads), schedules drawn at random from fixed seeds or
//! by PCT, every execution judged. The correct copy holds in every one; each broken copy is
//! caught with the judge's finding and a schedule, and replaying that schedule fails again with
//! the same finding.
#![cfg(shuttle)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use chandy_lamport::testing::shuttle::{check_pct, check_random, replay};
use threaded_snapshots::{Bug, Scenario};

/// The text a helper panicked with.
fn failure(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("every execution passed");
    payload.downcast_ref::<String>().cloned().expect("a judged failure's text")
}

/// The schedule a failure prints: `schedule: "…"`.
fn schedule(text: &str) -> String {
    let line = text.lines().find_map(|l| l.strip_prefix("schedule: ")).expect("a schedule line");
    line.trim_matches('"').to_string()
}

/// Catches `bug` with 5 processes under the random scheduler from `seed`, checks the finding's
/// words, and replays the schedule: the same findings again.
fn caught(bug: Bug, snapshots: u32, seed: u64, finding: &str) {
    let text = failure(|| {
        check_random(move || Scenario::shuttle(5, bug, snapshots).run(), 2000, Some(seed));
    });
    assert!(text.contains(finding), "{text}");
    let again = failure(|| replay(move || Scenario::shuttle(5, bug, snapshots).run(), &schedule(&text)));
    let findings = |t: &str| t.split("schedule: ").next().unwrap_or_default().to_string();
    assert_eq!(findings(&again), findings(&text));
    println!("{bug:?} caught, and caught again by replaying its schedule");
}

#[test]
fn the_correct_implementation_holds_in_random_schedules_of_five_processes() {
    let checked = check_random(|| Scenario::shuttle(5, Bug::None, 2).run(), 1000, Some(52));
    assert_eq!(checked.executions, 1000);
}

#[test]
fn the_correct_implementation_holds_in_pct_schedules_of_six_processes() {
    let checked = check_pct(|| Scenario::shuttle(6, Bug::None, 2).run(), 1000, 3);
    assert_eq!(checked.executions, 1000);
}

#[test]
fn the_racing_first_marker_records_twice() {
    caught(Bug::RacingFirstMarker, 1, 1, "records its state for snapshot 0 a second time");
}

#[test]
fn a_send_between_the_record_and_the_markers_breaks_the_cut() {
    caught(Bug::SendBetweenRecordAndMarkers, 1, 1, "which was not in flight at the cut");
}

#[test]
fn a_recording_flag_shared_by_two_snapshots_loses_messages_from_a_channel_record() {
    caught(Bug::SharedRecordingFlag, 2, 1, "is missing from its record");
}
