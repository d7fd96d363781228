//! Every fault variant is caught by the model, and exactly the properties it breaks fail: each
//! with a counterexample (BFS on one thread, so the one reported is a shortest) whose length is
//! pinned. Every always-property is broken by some variant. The correct algorithm passes.

mod common;

use chandy_lamport::{Algorithm, Variant};
use common::{config, run_with, verdict};
use model::properties::{
    ACCEPTS, CROSSING, END_REACHABLE, LEDGER, REACHABLE, RECORDS, RECORD_MESSAGE, STABLE, TERMINATES,
};
use model::{InitiatorSpec, Strategy, TopologySpec, Verdict};

/// Each variant, the flags it needs beyond the base configuration (3 houses, complete graph, 2
/// jars, 1 send each, house 0 initiating one snapshot), and every property that fails with the
/// length of its shortest counterexample (the README's table lists the same).
type Caught = (Variant, Extra, &'static [(&'static str, usize)]);

/// What a variant needs: two snapshots in flight, two carts on one road, or a barrier algorithm
/// (checked in basic mode, the one the barrier algorithms support so far).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extra {
    None,
    TwoSnapshots,
    TwoSends,
    Barriers(Algorithm),
}

const CAUGHT: [Caught; 17] = [
    (
        Variant::SendBeforeMarker,
        Extra::None,
        &[(CROSSING, 10), (RECORDS, 10), (LEDGER, 10), (REACHABLE, 10), (END_REACHABLE, 10)],
    ),
    (
        Variant::NoChannelRecording,
        Extra::None,
        &[(RECORDS, 9), (LEDGER, 9), (REACHABLE, 9), (END_REACHABLE, 9), (STABLE, 9)],
    ),
    (
        Variant::CloseAllOnFirstMarker,
        Extra::None,
        &[(RECORDS, 7), (LEDGER, 7), (REACHABLE, 7), (END_REACHABLE, 7), (STABLE, 7)],
    ),
    (Variant::KeepRecordingAfterMarker, Extra::None, &[(RECORDS, 9), (LEDGER, 9), (REACHABLE, 9), (END_REACHABLE, 9)]),
    (Variant::NoMarkerForwarding, Extra::None, &[(TERMINATES, 9)]),
    (Variant::LateRecord, Extra::None, &[(CROSSING, 9), (LEDGER, 9), (REACHABLE, 9), (END_REACHABLE, 9)]),
    (Variant::StaleState, Extra::None, &[(LEDGER, 9), (REACHABLE, 9), (END_REACHABLE, 9), (STABLE, 9)]),
    (Variant::RecordsReversed, Extra::TwoSends, &[(RECORDS, 11), (REACHABLE, 11), (END_REACHABLE, 11)]),
    (
        Variant::SwapRecord,
        Extra::TwoSnapshots,
        &[(RECORDS, 11), (LEDGER, 11), (REACHABLE, 11), (END_REACHABLE, 11), (STABLE, 11)],
    ),
    (Variant::SkipOneMarker, Extra::None, &[(TERMINATES, 9)]),
    (Variant::RecordTwice, Extra::None, &[(RECORDS, 9), (LEDGER, 9), (REACHABLE, 9), (END_REACHABLE, 9)]),
    (Variant::DoubleMarker, Extra::None, &[(ACCEPTS, 3)]),
    (
        Variant::NonFifo,
        Extra::None,
        &[(CROSSING, 9), (RECORDS, 8), (LEDGER, 8), (REACHABLE, 8), (END_REACHABLE, 8), (STABLE, 8)],
    ),
    (Variant::LoseMarkers, Extra::None, &[(TERMINATES, 9)]),
    (Variant::ProcessAfterBarrier, Extra::Barriers(Algorithm::Aligned), &[(LEDGER, 9)]),
    (Variant::AlignedCycleNoBackedge, Extra::Barriers(Algorithm::Aligned), &[(LEDGER, 9)]),
    (Variant::WrongInflightChannels, Extra::Barriers(Algorithm::Unaligned), &[(LEDGER, 8)]),
];

const ALWAYS: [&str; 8] = [ACCEPTS, CROSSING, RECORDS, LEDGER, TERMINATES, REACHABLE, END_REACHABLE, STABLE];

fn base() -> model::Config {
    config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]))
}

fn configured(variant: Variant, extra: Extra) -> model::Config {
    let mut c = model::Config { variant, ..base() };
    match extra {
        Extra::None => {}
        Extra::TwoSnapshots => c.snapshots = 2,
        Extra::TwoSends => c.sends = 2,
        Extra::Barriers(algorithm) => {
            c.algorithm = algorithm;
            c.mode = model::Mode::Basic;
        }
    }
    c
}

#[test]
fn every_variant_fails_exactly_its_properties_with_pinned_shortest_counterexamples() {
    for (variant, extra, fails) in CAUGHT {
        let result = run_with(&configured(variant, extra), Strategy::Bfs);
        assert!(!result.ok, "{variant} passed");
        assert_eq!(common::failing(&result), fails.to_vec(), "{variant}");
        for p in result.properties.iter().filter(|p| p.verdict == Verdict::Counterexample) {
            assert!(p.link.as_ref().unwrap().starts_with("http://127.0.0.1:3000/#/steps/0/"), "{variant}");
        }
    }
}

#[test]
fn every_variant_is_listed_and_every_always_property_is_broken_by_one() {
    let listed: Vec<Variant> = CAUGHT.iter().map(|c| c.0).collect();
    let all: Vec<Variant> = Variant::ALL.iter().copied().filter(|v| *v != Variant::None).collect();
    assert_eq!(listed, all);
    for property in ALWAYS {
        assert!(
            CAUGHT.iter().any(|(_, _, fails)| fails.iter().any(|(name, _)| *name == property)),
            "no variant breaks {property}"
        );
    }
}

#[test]
fn the_correct_algorithm_passes_the_same_configurations() {
    let barriers = [Extra::Barriers(Algorithm::Aligned), Extra::Barriers(Algorithm::Unaligned)];
    for extra in [Extra::None, Extra::TwoSnapshots, Extra::TwoSends].into_iter().chain(barriers) {
        let result = run_with(&configured(Variant::None, extra), Strategy::Bfs);
        assert!(result.ok, "{extra:?}");
        assert!(result.properties.iter().all(|p| !p.verdict.fails()), "{extra:?}");
        if !matches!(extra, Extra::Barriers(_)) {
            assert_eq!(verdict(&result, CROSSING), Verdict::Holds);
        }
    }
}

#[test]
fn without_channel_recording_no_record_ever_holds_a_message() {
    let result = run_with(&model::Config { variant: Variant::NoChannelRecording, ..base() }, Strategy::Bfs);
    assert_eq!(verdict(&result, RECORD_MESSAGE), Verdict::NoExample);
}

#[test]
fn a_house_that_never_records_is_caught_even_when_any_house_may_initiate() {
    // Initiating is a choice: termination is judged wherever nothing but initiations is enabled,
    // so a house left unrecorded cannot hide behind an initiation it could still make.
    for variant in [Variant::SkipOneMarker, Variant::NoMarkerForwarding] {
        let c = model::Config { variant, initiators: InitiatorSpec::Any, ..base() };
        let result = run_with(&c, Strategy::Bfs);
        assert_eq!(verdict(&result, TERMINATES), Verdict::Counterexample, "{variant}");
    }
}
