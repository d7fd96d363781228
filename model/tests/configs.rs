//! The correct algorithm on several configurations: every always-property holds, every
//! sometimes-property finds its example, and the state counts are pinned.

mod common;

use common::{config, run};
use model::system::properties::{OVERLAP, RECORD_MESSAGE};
use model::{Config, InitiatorSpec, Mode, TopologySpec, Verdict};

fn expect_all_good(config: &Config, unique_states: usize) {
    let result = run(config);
    for p in &result.properties {
        let want = if p.expectation == "sometimes" { Verdict::ExampleFound } else { Verdict::Holds };
        assert_eq!(p.verdict, want, "{}: {:?}", p.name, p.path);
    }
    assert!(result.ok && result.exhaustive);
    assert_eq!(result.unique_states, unique_states, "{config:?}");
}

#[test]
fn the_reference_configuration_k1_reaches_exactly_the_state_count_of_spin_rumur_and_tlc() {
    // 3 processes, complete graph, 2 tokens each, at most 1 send each, process 0 initiates.
    let mut c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    c.mode = Mode::Basic;
    let result = run(&c);
    assert!(result.ok);
    assert_eq!(result.unique_states, 20_963);
    // The same configuration with every property and its ghost data.
    c.mode = Mode::Full;
    expect_all_good(&c, 21_752);
}

#[test]
fn the_reference_configuration_k2_reaches_exactly_the_state_count_of_rumur_and_tlc() {
    let mut c = config(3, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0]));
    c.mode = Mode::Basic;
    let result = run(&c);
    assert!(result.ok && result.exhaustive);
    assert_eq!(result.unique_states, 2_009_291);
}

#[test]
fn complete_graph_of_three() {
    expect_all_good(&config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0])), 21_752);
}

#[test]
fn ring_of_three_with_two_overlapping_snapshots_from_any_initiator() {
    let c = config(3, TopologySpec::Ring, 1, 2, InitiatorSpec::Any);
    expect_all_good(&c, 196_199);
    let result = run(&c);
    assert_eq!(common::verdict(&result, OVERLAP), Verdict::ExampleFound);
    assert_eq!(common::verdict(&result, RECORD_MESSAGE), Verdict::ExampleFound);
}

#[test]
fn star_of_four() {
    expect_all_good(&config(4, TopologySpec::Star, 1, 1, InitiatorSpec::Only(vec![0])), 27_842);
}

#[test]
fn two_processes_with_internal_steps_and_two_snapshots() {
    let mut c = config(2, TopologySpec::Complete, 2, 2, InitiatorSpec::Any);
    c.internal = true;
    expect_all_good(&c, 206_246);
}

#[test]
fn complete_graph_of_three_with_theft() {
    let mut c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    c.theft = true;
    expect_all_good(&c, 49_779);
}

#[test]
fn bidirectional_ring_of_four_with_two_initiators() {
    expect_all_good(&config(4, TopologySpec::BidiRing, 1, 1, InitiatorSpec::Only(vec![0, 2])), 910_839);
}

#[test]
fn two_processes_with_internal_steps_theft_and_two_snapshots() {
    let mut c = config(2, TopologySpec::Complete, 2, 2, InitiatorSpec::Any);
    c.internal = true;
    c.theft = true;
    expect_all_good(&c, 1_324_996);
}
