//! Symmetry reduction over permutations of processes: fewer states, same verdicts.

mod common;

use common::config;
use model::{check, CheckOptions, Config, InitiatorSpec, Mode, SnapshotModel, Strategy, TopologySpec};

fn run(c: &Config, symmetry: bool) -> model::CheckResult {
    let m = SnapshotModel::<chandy_lamport::apps::bank::Bank>::new(c.resolve().unwrap());
    let opts = CheckOptions { strategy: Strategy::Dfs, threads: 1, symmetry, ..CheckOptions::default() };
    check(m, &opts, None).unwrap()
}

#[test]
fn a_complete_graph_with_any_initiator_has_six_symmetries_and_keeps_its_verdicts() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    let group = model::reduce::symmetry::Group::of(&c.resolve().unwrap());
    assert_eq!(group.len(), 6);
    let plain = run(&c, false);
    let reduced = run(&c, true);
    assert_eq!(plain.unique_states, 53_536);
    assert_eq!(reduced.unique_states, 8_998);
    assert_eq!(common::verdicts(&plain), common::verdicts(&reduced));
    assert!(reduced.ok);
}

#[test]
fn symmetry_still_finds_a_fault() {
    let mut c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    c.variant = chandy_lamport::Variant::LateRecord;
    let plain = run(&c, false);
    let reduced = run(&c, true);
    assert!(!reduced.ok);
    assert_eq!(common::verdicts(&plain), common::verdicts(&reduced));
}

#[test]
fn groups_respect_roles_and_roads() {
    let only0 = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    assert_eq!(model::reduce::symmetry::Group::of(&only0.resolve().unwrap()).len(), 2, "swap P1 and P2");
    let ring = config(4, TopologySpec::Ring, 1, 1, InitiatorSpec::Any);
    assert_eq!(model::reduce::symmetry::Group::of(&ring.resolve().unwrap()).len(), 4, "rotations");
    let star = config(4, TopologySpec::Star, 1, 1, InitiatorSpec::Any);
    assert_eq!(model::reduce::symmetry::Group::of(&star.resolve().unwrap()).len(), 6, "leaves");
}

#[test]
fn literal_mode_refuses_symmetry() {
    let mut c = config(2, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    c.mode = Mode::Literal;
    let m = SnapshotModel::<chandy_lamport::apps::bank::Bank>::new(c.resolve().unwrap());
    let opts = CheckOptions { symmetry: true, ..CheckOptions::default() };
    assert!(check(m, &opts, None).is_err());
}
