//! Full mode (incremental ghost data) and literal mode (the library's trace checker on the
//! recorded history) reach the same verdict on every property: on every variant over fixed small
//! configurations, and on small configurations drawn at random by proptest (topology, processes,
//! sends, snapshots, initiators, internal steps, theft, variant).

mod common;

use chandy_lamport::Variant;
use common::{config, run, verdict, verdicts, with};
use model::system::properties::{NEVER_OCCURRED, REACHABLE, RECORDS};
use model::{Config, InitiatorSpec, Mode, TopologySpec, Verdict};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

/// Property names and verdicts.
type Verdicts = Vec<(String, Verdict)>;

/// Full and literal verdicts on `c`, literal's extra sometimes-property left out.
fn both(c: &Config) -> (Verdicts, Verdicts) {
    let full = run(&with(c, Mode::Full, c.variant));
    let literal = run(&with(c, Mode::Literal, c.variant));
    let literal = verdicts(&literal).into_iter().filter(|(name, _)| name != NEVER_OCCURRED).collect();
    (verdicts(&full), literal)
}

fn fixed_configs() -> Vec<Config> {
    let mut theft = config(2, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    theft.internal = true;
    theft.theft = true;
    vec![
        config(2, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0])),
        config(2, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0])),
        theft,
        config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Only(vec![0])),
    ]
}

#[test]
fn every_variant_on_fixed_small_configurations() {
    for variant in Variant::of(chandy_lamport::Algorithm::ChandyLamport) {
        for c in fixed_configs() {
            let c = Config { variant, ..c };
            let (full, literal) = both(&c);
            assert_eq!(full, literal, "{variant} on {c:?}");
        }
    }
}

#[test]
fn stale_state_and_reversed_records_fail_in_both_modes() {
    let mut stale = config(2, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0]));
    stale.variant = Variant::StaleState;
    let reversed = Config { variant: Variant::RecordsReversed, ..stale.clone() };
    for mode in [Mode::Full, Mode::Literal] {
        assert_eq!(verdict(&run(&with(&stale, mode, stale.variant)), REACHABLE), Verdict::Counterexample, "{mode:?}");
        assert_eq!(
            verdict(&run(&with(&reversed, mode, reversed.variant)), RECORDS),
            Verdict::Counterexample,
            "{mode:?}"
        );
    }
}

/// A small configuration. Literal mode keeps the whole history in every state (no two paths
/// merge), so the space stays small: two processes with one send and one snapshot and any of
/// internal steps, theft and any initiator; or two processes with two sends or two snapshots; or
/// three processes on a ring.
fn small_config() -> impl Strategy<Value = Config> {
    let basic = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(internal, theft, any_initiator)| {
        let initiators = if any_initiator { InitiatorSpec::Any } else { InitiatorSpec::Only(vec![0]) };
        Config { internal, theft, ..config(2, TopologySpec::Complete, 1, 1, initiators) }
    });
    let more = prop_oneof![
        Just(config(2, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0]))),
        Just(config(2, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0]))),
        Just(config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Only(vec![0]))),
    ];
    let variant = proptest::sample::select(Variant::of(chandy_lamport::Algorithm::ChandyLamport).collect::<Vec<_>>());
    (prop_oneof![basic, more], variant).prop_map(|(c, variant)| Config { variant, ..c })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..ProptestConfig::default()
    })]

    #[test]
    fn full_and_literal_agree_on_random_small_configurations(c in small_config()) {
        let (full, literal) = both(&c);
        prop_assert_eq!(full, literal, "{:?}", c);
    }
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
