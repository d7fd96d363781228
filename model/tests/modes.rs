//! Full mode (incremental ghost data) and literal mode (the library's trace checker on the
//! recorded history) reach the same verdict on every property, on every configuration small
//! enough for literal mode, for the correct algorithm and for every fault variant.

mod common;

use chandy_lamport::Variant;
use common::{config, run, verdicts, with};
use model::properties::NEVER_OCCURRED;
use model::{Config, InitiatorSpec, Mode, TopologySpec, Verdict};

fn small_configs() -> Vec<Config> {
    let mut theft = config(2, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    theft.internal = true;
    theft.theft = true;
    vec![
        config(2, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0])),
        config(2, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0])),
        theft,
        config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Only(vec![0])),
        config(3, TopologySpec::Star, 1, 1, InitiatorSpec::Only(vec![0])),
    ]
}

fn same_verdicts(variant: Variant) {
    for c in small_configs() {
        let full = run(&with(&c, Mode::Full, variant));
        let literal = run(&with(&c, Mode::Literal, variant));
        let literal_common: Vec<(String, Verdict)> =
            verdicts(&literal).into_iter().filter(|(name, _)| name != NEVER_OCCURRED).collect();
        assert_eq!(verdicts(&full), literal_common, "{variant} on {c:?}");
    }
}

#[test]
fn correct_algorithm() {
    same_verdicts(Variant::None);
}

#[test]
fn send_before_marker() {
    same_verdicts(Variant::SendBeforeMarker);
}

#[test]
fn no_channel_recording() {
    same_verdicts(Variant::NoChannelRecording);
}

#[test]
fn close_all_on_first_marker() {
    same_verdicts(Variant::CloseAllOnFirstMarker);
}

#[test]
fn keep_recording_after_marker() {
    same_verdicts(Variant::KeepRecordingAfterMarker);
}

#[test]
fn no_marker_forwarding() {
    same_verdicts(Variant::NoMarkerForwarding);
}

#[test]
fn late_record() {
    same_verdicts(Variant::LateRecord);
}

#[test]
fn non_fifo() {
    same_verdicts(Variant::NonFifo);
}

#[test]
fn lose_markers() {
    same_verdicts(Variant::LoseMarkers);
}

#[test]
fn literal_mode_finds_a_recorded_state_that_never_occurred() {
    let mut c = config(2, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    c.internal = true;
    c.mode = Mode::Literal;
    let result = run(&c);
    assert_eq!(common::verdict(&result, NEVER_OCCURRED), Verdict::ExampleFound);
    assert!(result.ok);
}
