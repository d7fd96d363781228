//! The distributed search (`--distributed`) with its ranks as threads of this process: the counts
//! and verdicts of a single search whatever the number of ranks, with the reductions, bounds and
//! stops of a single run. (`mpi.rs` runs it under `mpirun`; `variants.rs` on every fault variant.)

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::Variant;
use common::{config, run_distributed, verdicts};
use model::{check, CheckOptions, CheckResult, Config, InitiatorSpec, Mode, SnapshotModel, Strategy, TopologySpec};

fn single(c: &Config, opts: &CheckOptions) -> CheckResult {
    let model = SnapshotModel::<Bank>::new(c.resolve().expect("valid configuration"));
    check(model, &CheckOptions { threads: 1, ..opts.clone() }, None).expect("options fit the model")
}

fn bfs() -> CheckOptions {
    CheckOptions { strategy: Strategy::Bfs, ..CheckOptions::default() }
}

fn counts(r: &CheckResult) -> (usize, usize, usize, bool, u8) {
    (r.unique_states, r.states, r.max_depth, r.exhaustive, r.exit_code)
}

#[test]
fn the_counts_do_not_depend_on_the_number_of_ranks() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    let one = single(&c, &bfs());
    assert_eq!(one.unique_states, 21_752);
    for ranks in [1, 2, 3, 5] {
        // Every level kept on disk changes nothing but where the states wait.
        let on_disk = run_distributed::<Bank>(&c, ranks, &CheckOptions { rank_memory: Some(0), ..bfs() });
        let spread = run_distributed::<Bank>(&c, ranks, &bfs());
        assert_eq!(counts(&spread), counts(&one), "{ranks} ranks");
        assert_eq!(verdicts(&spread), verdicts(&one), "{ranks} ranks");
        assert_eq!(counts(&on_disk), counts(&one), "{ranks} ranks, on disk");
        assert_eq!(verdicts(&on_disk), verdicts(&one), "{ranks} ranks, on disk");
        assert_eq!(on_disk.distributed.expect("a distributed result").spilled_states, 21_751);
        let d = spread.distributed.expect("a distributed result");
        assert_eq!(d.spilled_states, 0, "half the available memory is far more than this search needs");
        assert_eq!(d.ranks, ranks);
        // Every state has one owner: the shares add up, none above the whole.
        assert!(d.largest_share as usize * ranks >= spread.unique_states, "{ranks}: {d:?}");
        assert_eq!(d.fingerprints_sent == 0, ranks == 1, "{ranks}: {d:?}");
        assert!(d.states_sent <= spread.unique_states as u64, "only new states travel: {d:?}");
    }
}

#[test]
fn reductions_and_modes_count_as_a_single_search() {
    let base = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    let por = Config { mode: Mode::Basic, por: true, ..base.clone() };
    let literal = Config { mode: Mode::Literal, procs: Some(2), sends: 2, ..base.clone() };
    for c in [por, literal] {
        let (one, spread) = (single(&c, &bfs()), run_distributed::<Bank>(&c, 3, &bfs()));
        assert_eq!(counts(&spread), counts(&one), "{c:?}");
        assert_eq!(verdicts(&spread), verdicts(&one), "{c:?}");
    }
    // Symmetry: the depth-first engine's count (stateright's breadth-first search has none).
    let sym = CheckOptions { symmetry: true, ..CheckOptions::default() };
    let (one, spread) =
        (single(&base, &sym), run_distributed::<Bank>(&base, 3, &CheckOptions { symmetry: true, ..bfs() }));
    assert!(one.unique_states < 21_752, "symmetry reduces: {}", one.unique_states);
    assert_eq!((spread.unique_states, spread.exit_code), (one.unique_states, one.exit_code));
    assert_eq!(verdicts(&spread), verdicts(&one));
}

#[test]
fn a_depth_bound_cuts_as_a_breadth_first_search_does() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    let opts = CheckOptions { depth: Some(5), ..bfs() };
    let (one, spread) = (single(&c, &opts), run_distributed::<Bank>(&c, 2, &opts));
    assert!(!spread.exhaustive && spread.exit_code == 3, "{}", spread.summary);
    assert_eq!(spread.bound.as_deref(), Some("paths cut at depth 5"));
    assert_eq!(counts(&spread), counts(&one));
}

#[test]
fn stopping_at_a_failure_ends_after_the_level_whatever_the_ranks() {
    // The search ends after the level of the first failure: the same counts on 1 and 3 ranks,
    // and the failure a shortest counterexample.
    let c = Config {
        variant: Variant::LateRecord,
        ..config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]))
    };
    let opts = CheckOptions { stop_on_failure: true, ..bfs() };
    let one = run_distributed::<Bank>(&c, 1, &opts);
    let three = run_distributed::<Bank>(&c, 3, &opts);
    assert_eq!(counts(&one), counts(&three));
    assert_eq!(verdicts(&one), verdicts(&three));
    assert_eq!(three.bound.as_deref(), Some("stopped at the first failure"));
    let whole = single(&c, &bfs());
    assert!(three.unique_states < whole.unique_states);
    assert_eq!(common::failing(&three)[0], common::failing(&whole)[0]);
}

#[test]
fn an_interrupt_stops_every_rank_and_is_reported() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    let opts = CheckOptions { interrupt: Some(Arc::new(AtomicBool::new(true))), ..bfs() };
    let r = run_distributed::<Bank>(&c, 3, &opts);
    assert!(!r.exhaustive && r.exit_code == 3, "{}", r.summary);
    assert_eq!(r.bound.as_deref(), Some("interrupted"));
    assert!(r.unique_states < 21_752);
}
