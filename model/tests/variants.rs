//! Every fault variant is caught by the model: the property it breaks has a counterexample
//! (BFS on one thread, so the one reported is a shortest), and the correct algorithm passes.

mod common;

use chandy_lamport::Variant;
use common::{config, run_with, verdict};
use model::properties::{CROSSING, RECORDS, TERMINATES};
use model::{InitiatorSpec, Strategy, TopologySpec, Verdict};

/// Each variant, the property that catches it, and the length of the shortest counterexample on
/// 3 houses, complete graph, 2 jars, 1 send each, house 0 initiating one snapshot (the README's
/// table lists the same).
const CAUGHT: [(Variant, &str, usize); 8] = [
    (Variant::SendBeforeMarker, CROSSING, 13),
    (Variant::NoChannelRecording, RECORDS, 9),
    (Variant::CloseAllOnFirstMarker, RECORDS, 7),
    (Variant::KeepRecordingAfterMarker, RECORDS, 9),
    (Variant::NoMarkerForwarding, TERMINATES, 9),
    (Variant::LateRecord, CROSSING, 9),
    (Variant::NonFifo, CROSSING, 9),
    (Variant::LoseMarkers, TERMINATES, 9),
];

fn base() -> model::Config {
    config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]))
}

#[test]
fn every_variant_is_caught_by_the_property_it_breaks() {
    for (variant, property, shortest) in CAUGHT {
        let result = run_with(&model::Config { variant, ..base() }, Strategy::Bfs);
        assert!(!result.ok, "{variant} passed");
        let p = result.properties.iter().find(|p| p.name == property).unwrap();
        assert_eq!(p.verdict, Verdict::Counterexample, "{variant}: {property}");
        let path = p.path.as_ref().unwrap();
        assert_eq!(path.len(), shortest, "{variant}: {path:#?}");
        assert!(p.link.as_ref().unwrap().starts_with("http://127.0.0.1:3000/#/steps/0/"));
    }
}

#[test]
fn every_variant_is_listed_and_the_list_is_complete() {
    let listed: Vec<Variant> = CAUGHT.iter().map(|c| c.0).collect();
    let all: Vec<Variant> = Variant::ALL.iter().copied().filter(|v| *v != Variant::None).collect();
    assert_eq!(listed, all);
}

#[test]
fn the_correct_algorithm_passes_the_same_configuration() {
    let result = run_with(&base(), Strategy::Bfs);
    assert!(result.ok);
    assert!(result.properties.iter().all(|p| !p.verdict.fails()));
    assert_eq!(verdict(&result, CROSSING), Verdict::Holds);
}

#[test]
fn without_channel_recording_no_record_ever_holds_a_message() {
    let result = run_with(&model::Config { variant: Variant::NoChannelRecording, ..base() }, Strategy::Bfs);
    assert_eq!(verdict(&result, model::properties::RECORD_MESSAGE), Verdict::NoExample);
}
