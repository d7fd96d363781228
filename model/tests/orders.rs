//! The second application, `orders`, through the same harness: processes that order jars from each
//! other and wait for them can deadlock; the stable-property rule is checked for "deadlock" and
//! "distribution terminated", and the model finds a snapshot that detects a deadlock and a
//! deadlock that comes after a snapshot that saw none.

mod common;

use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::TERMINATED;
use chandy_lamport::Variant;
use common::{config, run_app, verdict};
use model::system::properties::{END_REACHABLE, LEDGER, REACHABLE, STABLE};
use model::{check, CheckOptions, Config, InitiatorSpec, SnapshotModel, Strategy, TopologySpec, Verdict};

const DETECTS: &str = "a snapshot detects a deadlock";
const AFTER: &str = "the system deadlocks after a snapshot that saw none";

fn orders(topology: TopologySpec, sends: u8) -> Config {
    config(3, topology, sends, 1, InitiatorSpec::Only(vec![0]))
}

fn assert_passes_with_both_examples(result: &model::CheckResult) {
    assert!(result.ok, "{}", result.summary);
    assert_eq!(verdict(result, STABLE), Verdict::Holds);
    assert_eq!(verdict(result, LEDGER), Verdict::Holds);
    assert_eq!(verdict(result, DETECTS), Verdict::ExampleFound);
    assert_eq!(verdict(result, AFTER), Verdict::ExampleFound);
}

#[test]
fn the_stable_predicates_are_deadlock_and_distribution_terminated() {
    let m = SnapshotModel::<Orders>::new(orders(TopologySpec::Ring, 1).resolve().unwrap());
    let names: Vec<&str> = m.predicates.iter().map(|p| p.name).collect();
    assert_eq!(names, [TERMINATED, chandy_lamport::apps::orders::DEADLOCK]);
}

#[test]
fn a_ring_of_three_ordering_processes_default_configuration() {
    // `model check --app orders --procs 3 --topology ring`
    let result = run_app::<Orders>(&orders(TopologySpec::Ring, 2), Strategy::Dfs);
    assert_passes_with_both_examples(&result);
    assert_eq!(result.unique_states, 379_902);
}

#[test]
fn three_ordering_processes_on_a_complete_graph_one_order_each() {
    let result = run_app::<Orders>(&orders(TopologySpec::Complete, 1), Strategy::Dfs);
    assert_passes_with_both_examples(&result);
    assert_eq!(result.unique_states, 1_448_354);
}

#[test]
fn three_ordering_processes_on_a_complete_graph_default_configuration() {
    // `model check --app orders --procs 3 --topology complete`: the largest test of the suite.
    let result = run_app::<Orders>(&orders(TopologySpec::Complete, 2), Strategy::Dfs);
    assert_passes_with_both_examples(&result);
    assert_eq!(result.unique_states, 29_847_364);
}

#[test]
fn a_stale_recorded_state_breaks_stable_detection_for_orders() {
    // The stale state misses the message that released a process: S* shows it still waiting, in a
    // deadlock that S_end does not have.
    let c = Config { variant: Variant::StaleState, ..orders(TopologySpec::Ring, 1) };
    let result = run_app::<Orders>(&c, Strategy::Bfs);
    assert_eq!(common::failing(&result), [(LEDGER, 10), (REACHABLE, 8), (END_REACHABLE, 8), (STABLE, 16)]);
}

#[test]
fn symmetry_reduces_orders_and_keeps_the_verdicts() {
    // Orders name processes (who waits on whom, whose message): symmetry relabels them.
    let c = config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Any);
    let run = |symmetry: bool| {
        let m = SnapshotModel::<Orders>::new(c.resolve().unwrap());
        let opts = CheckOptions { strategy: Strategy::Dfs, threads: 1, symmetry, ..CheckOptions::default() };
        check(m, &opts, None).unwrap()
    };
    let (plain, reduced) = (run(false), run(true));
    assert_eq!(plain.unique_states, 184_902);
    assert_eq!(reduced.unique_states, 61_668);
    assert_eq!(common::verdicts(&plain), common::verdicts(&reduced));
    assert!(reduced.ok);
}
