//! Property tests. The simulator: random strongly connected topologies of 2–7 processes, random
//! bank workloads, random initiators (several per snapshot, too), overlapping snapshots and
//! random delays — every snapshot passes the trace checker and conserves tokens, and a failure
//! shrinks to a small case. The parsers (`.top`, `.events`, `.snap`): any input gives a value or
//! an error, never a panic.
//!
//! Case counts are chosen for a release build on two cores; `PROPTEST_CASES` overrides them.
//! Failing cases are saved under `proptest-regressions/sim_props.txt`.

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::check::{check, unterminated, verify, Clause};
use chandy_lamport::formats::events::EventsFile;
use chandy_lamport::formats::snap::{compare, write, SnapFile};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::sim::{
    run_events, DelaySource, Finished, ReplayError, SimConfig, SimError, Simulator, SnapshotFailure, SETTLE_TICKS,
};
use chandy_lamport::{ProcessId, SnapshotId, Topology, Variant};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{FileFailurePersistence, RngAlgorithm, TestError, TestRng, TestRunner};

/// `cases` unless `PROPTEST_CASES` is set, which wins (it is already in the default config).
fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() { base.cases } else { cases };
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/sim_props.txt"))),
        ..base
    }
}

/// One step of a workload. Indices are resolved against the topology at run time, so they
/// shrink independently of it.
#[derive(Clone, Debug)]
enum Op {
    /// From a process to one of its neighbours (refused when it holds fewer tokens).
    Transfer(Index, Index, u32),
    /// Start a new snapshot at a process.
    Snapshot(Index),
    /// Another initiator for a started snapshot.
    Join(Index, Index),
    /// Advance time.
    Tick(u64),
}

/// A topology (a Hamiltonian cycle plus extra links: strongly connected), balances, a workload
/// and a delay seed.
#[derive(Clone, Debug)]
struct Case {
    cycle: Vec<usize>,
    extra: Vec<(Index, Index)>,
    tokens: Vec<u32>,
    ops: Vec<Op>,
    seed: u64,
}

impl Case {
    /// Names whose string order differs from their index order (`N10` < `N4`).
    fn topology(&self) -> Topology {
        let n = self.cycle.len();
        let names: Vec<String> = (0..n).map(|i| format!("N{}", 3 * i + 1)).collect();
        let mut links: Vec<(ProcessId, ProcessId)> = Vec::new();
        let p = |i: usize| ProcessId(i as u16);
        for i in 0..n {
            links.push((p(self.cycle[i]), p(self.cycle[(i + 1) % n])));
        }
        for (a, b) in &self.extra {
            let link = (p(a.index(n)), p(b.index(n)));
            if link.0 != link.1 && !links.contains(&link) {
                links.push(link);
            }
        }
        Topology::new(names, links).expect("a cycle plus distinct extra links is a valid topology")
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<Index>(), any::<Index>(), 1u32..=8).prop_map(|(a, b, k)| Op::Transfer(a, b, k)),
        2 => any::<Index>().prop_map(Op::Snapshot),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(s, a)| Op::Join(s, a)),
        3 => (1u64..=4).prop_map(Op::Tick),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (2usize..=7)
        .prop_flat_map(|n| {
            (
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
                prop::collection::vec((any::<Index>(), any::<Index>()), 0..=2 * n),
                prop::collection::vec(0u32..=20, n),
                prop::collection::vec(op(), 0..40),
                any::<u64>(),
            )
        })
        .prop_map(|(cycle, extra, tokens, ops, seed)| Case { cycle, extra, tokens, ops, seed })
}

fn fail(e: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Runs the workload, then ticks until every snapshot completed and a few ticks more.
fn run(case: &Case, variant: Variant) -> Result<(Topology, Finished<Bank>), TestCaseError> {
    let t = case.topology();
    let n = t.len();
    let config = SimConfig { variant, fault_seed: case.seed, ..SimConfig::new(DelaySource::Seeded(case.seed)) };
    let mut sim = Simulator::<Bank>::new(t.clone(), &case.tokens, config).map_err(fail)?;
    let jars = |sim: &Simulator<Bank>, p| sim.process(p).map(|q| q.app().jars).map_err(fail);
    for op in &case.ops {
        match op {
            Op::Transfer(a, b, k) => {
                let from = ProcessId(a.index(n) as u16);
                let out = t.outgoing(from);
                let to = t.channel(out[b.index(out.len())]).to;
                let before = jars(&sim, from)?;
                match sim.transfer(from, to, *k) {
                    Ok(_) => prop_assert_eq!(jars(&sim, from)?, before - k),
                    Err(SimError::Refused { .. }) => {
                        prop_assert!(before < *k);
                        prop_assert_eq!(jars(&sim, from)?, before, "a refused transfer changes nothing");
                    }
                    Err(e) => return Err(fail(e)),
                }
            }
            Op::Snapshot(a) => {
                sim.start_snapshot(ProcessId(a.index(n) as u16)).map_err(fail)?;
            }
            Op::Join(s, a) => {
                if sim.started() > 0 {
                    let id = SnapshotId(s.index(sim.started() as usize) as u32);
                    sim.join_snapshot(id, ProcessId(a.index(n) as u16)).map_err(fail)?;
                }
            }
            Op::Tick(k) => sim.tick(*k).map_err(fail)?,
        }
    }
    let complete = sim.run_to_completion().map_err(fail)?;
    sim.tick(SETTLE_TICKS).map_err(fail)?;
    let done = sim.finish();
    prop_assert_eq!(complete, done.incomplete.is_empty());
    Ok((t, done))
}

/// Every snapshot completed, passes the trace checker and conserves tokens.
fn snapshots_hold(t: &Topology, done: &Finished<Bank>) -> Result<(), TestCaseError> {
    prop_assert!(done.incomplete.is_empty(), "incomplete: {:?}", done.incomplete);
    for s in &done.snapshots {
        verify(t, &done.trace, &s.global).map_err(|e| fail(format!("snapshot {}: {e}", s.global.id)))?;
        prop_assert_eq!(s.global.state.total(), done.total(), "snapshot {} conserves tokens", s.global.id);
    }
    done.check(t).map_err(fail)
}

proptest! {
    #![proptest_config(config(4096))]

    #[test]
    fn every_snapshot_verifies_and_conserves_tokens(case in case()) {
        let (t, done) = run(&case, Variant::None)?;
        snapshots_hold(&t, &done)?;
        prop_assert_eq!(done.final_total(), done.total(), "the run itself conserves tokens");
        // The .snap form round-trips and agrees with itself by the suite's rules.
        let blocks = done.blocks(&t);
        let parsed = SnapFile::parse(&write(&blocks), "round-trip.snap").map_err(fail)?;
        prop_assert_eq!(&parsed.blocks, &blocks);
        prop_assert!(compare(&[parsed], &blocks, Some(done.total())).matches());
    }
}

/// Clause `clause` of the theorem on every snapshot, by the trace checker: (e) on the snapshots
/// that never completed, the others on those that did.
fn clause_holds(t: &Topology, done: &Finished<Bank>, clause: Clause) -> Result<(), TestCaseError> {
    if clause == Clause::Terminated {
        for &id in &done.incomplete {
            if let Some(v) = unterminated(t, &done.trace, id).map_err(fail)?.first() {
                return Err(fail(v));
            }
        }
        return Ok(());
    }
    for s in &done.snapshots {
        let report = check(t, &done.trace, &s.global).map_err(fail)?;
        if let Some(v) = report.violations.iter().find(|v| v.clause() == clause) {
            return Err(fail(v));
        }
    }
    Ok(())
}

/// Every fault variant the threaded runtime can run (the core's), the clause it breaks and how
/// the trace checker names the violation (any of the names). `double-marker` makes the core
/// refuse a step: the run itself fails, naming the refusal, before any clause is judged.
const CORE_VARIANTS: [(Variant, Clause, &[&str]); 12] = [
    (Variant::SendBeforeMarker, Clause::NoInwardCrossing, &["crosses the cut inward"]),
    (Variant::NoChannelRecording, Clause::ExactRecords, &["is missing from the record"]),
    (Variant::CloseAllOnFirstMarker, Clause::ExactRecords, &["is missing from the record"]),
    (Variant::KeepRecordingAfterMarker, Clause::ExactRecords, &["which was not in flight at the cut"]),
    (Variant::NoMarkerForwarding, Clause::Terminated, &["was never closed"]),
    (Variant::LateRecord, Clause::NoInwardCrossing, &["crosses the cut inward"]),
    (Variant::StaleState, Clause::RecordedReachable, &["recorded Bank"]),
    (Variant::RecordsReversed, Clause::ExactRecords, &["out of order"]),
    (
        Variant::SwapRecord,
        Clause::ExactRecords,
        &["is missing from the record", "which was not in flight at the cut", "out of order"],
    ),
    (Variant::SkipOneMarker, Clause::Terminated, &["was never closed", "never recorded its state"]),
    (Variant::RecordTwice, Clause::ExactRecords, &["which was not in flight at the cut"]),
    (Variant::DoubleMarker, Clause::Terminated, &["second marker of snapshot", "is already complete here"]),
];

/// Proptest finds each broken algorithm: the clause it breaks fails on some random case, the
/// violation is the one the trace checker names, and the failure shrinks to a small case. The
/// correct algorithm passes the same cases.
#[test]
fn every_core_variant_is_caught_and_shrinks_to_a_small_case() {
    let core = Variant::of(chandy_lamport::Algorithm::ChandyLamport)
        .filter(|v| *v != Variant::None && !v.is_channel_fault())
        .count();
    assert_eq!(CORE_VARIANTS.len(), core, "every core variant is listed");
    for (variant, clause, named) in CORE_VARIANTS {
        let config = ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() };
        let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        let result = runner.run(&case(), |case| {
            let (t, done) = run(&case, variant)?;
            clause_holds(&t, &done, clause)
        });
        match result {
            Err(TestError::Fail(reason, minimal)) => {
                assert!(named.iter().any(|n| reason.message().contains(n)), "{variant}: {reason}");
                let steps = minimal.ops.iter().filter(|op| !matches!(op, Op::Tick(_))).count();
                assert!(minimal.cycle.len() <= 4 && steps <= 6, "{variant}: not shrunk far: {minimal:?}\n{reason}");
                println!("{variant}: shrunk to {} processes, ops {:?}: {reason}", minimal.cycle.len(), minimal.ops);
            }
            other => panic!("{variant} should break {clause:?}: {other:?}"),
        }
        let mut runner = TestRunner::new_with_rng(
            ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() },
            TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        );
        runner
            .run(&case(), |case| {
                let (t, done) = run(&case, Variant::None)?;
                clause_holds(&t, &done, clause)
            })
            .unwrap_or_else(|e| panic!("the correct algorithm fails {clause:?}: {e}"));
    }
}

/// [`Finished::check`] as it was before it checked snapshots against their parts of the trace:
/// every started snapshot, in id order, against the whole trace.
fn check_against_the_whole_trace(t: &Topology, done: &Finished<Bank>) -> Result<(), SnapshotFailure> {
    let mut ids: Vec<SnapshotId> =
        done.snapshots.iter().map(|s| s.global.id).chain(done.incomplete.iter().copied()).collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        match done.snapshots.iter().find(|s| s.global.id == id) {
            Some(s) => {
                verify(t, &done.trace, &s.global).map_err(|error| SnapshotFailure::Verify { snapshot: id, error })?;
                let recorded = s.global.state.total();
                if recorded != done.total() {
                    return Err(SnapshotFailure::NotConserved { snapshot: id, recorded, total: done.total() });
                }
            }
            None => {
                let violations = unterminated(t, &done.trace, id)
                    .map_err(|e| SnapshotFailure::Verify { snapshot: id, error: e.into() })?;
                return Err(SnapshotFailure::Unterminated { snapshot: id, violations });
            }
        }
    }
    Ok(())
}

/// [`Finished::check`] (each snapshot but the first against its own part of the trace) gives
/// the verdict, and the same error, as checking every snapshot against the whole trace: under
/// the correct algorithm and every fault variant.
#[test]
fn check_agrees_with_checking_against_the_whole_trace() {
    for variant in Variant::of(chandy_lamport::Algorithm::ChandyLamport) {
        let config = ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() };
        let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        runner
            .run(&case(), |case| {
                // A run the core refuses (`double-marker`) has nothing to check.
                let Ok((t, done)) = run(&case, variant) else { return Ok(()) };
                prop_assert_eq!(done.check(&t), check_against_the_whole_trace(&t, &done), "{}", variant);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{variant}: {e}"));
    }
}

fn lines(line: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n"))
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("N1".to_string()),
        Just("N2".to_string()),
        Just("N3".to_string()),
        Just("N4".to_string()),
        "[0-9]{1,3}",
        "-?[0-9]{1,25}",
        "token\\([0-9+-]{0,4}\\)?",
        "#[a-z]{0,3}",
        "send|snapshot|tick",
        "\\PC{0,4}",
    ]
}

fn structured() -> impl Strategy<Value = String> {
    lines(prop::collection::vec(word(), 0..5).prop_map(|w| w.join(" ")))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![structured(), "\\PC{0,200}", "[0-9a-zA-Z #()\n\t-]{0,120}"]
}

/// Scripts that are mostly well-formed commands between neighbours of [`EVENTS_TOP`], with some
/// self-sends, the unknown node N4, zero or huge amounts, huge ticks and junk lines mixed in.
fn script() -> impl Strategy<Value = String> {
    let node = prop_oneof![30 => "N[1-3]", 1 => Just("N4".to_string())];
    let pair = prop_oneof![
        30 => (1usize..=3, 1usize..=2).prop_map(|(a, d)| (format!("N{a}"), format!("N{}", (a - 1 + d) % 3 + 1))),
        1 => (node.clone(), node.clone()),
    ];
    let amount = prop_oneof![60 => 1u64..=6, 1 => Just(0u64), 1 => any::<u32>().prop_map(u64::from), 1 => any::<u64>()];
    let line = prop_oneof![
        10 => (pair, amount).prop_map(|((a, b), k)| format!("send {a} {b} {k}")),
        4 => node.prop_map(|a| format!("snapshot {a}")),
        4 => prop_oneof![Just("tick".to_string()), (0u64..=5).prop_map(|k| format!("tick {k}"))],
        1 => Just(format!("tick {}", u64::MAX)),
        1 => prop::collection::vec(word(), 0..5).prop_map(|w| w.join(" ")),
    ];
    lines(line)
}

/// Three houses, every one linked to every other.
const EVENTS_TOP: &str = "3\nN1 20\nN2 20\nN3 20\nN1 N2\nN1 N3\nN2 N1\nN2 N3\nN3 N1\nN3 N2\n";

/// Parses and runs a script on [`EVENTS_TOP`]: a run, or an error naming the script and a line.
fn run_script(text: &str, seed: u64) -> Result<Option<Finished<Bank>>, TestCaseError> {
    let Ok(events) = EventsFile::parse(text, "p.events") else { return Ok(None) };
    let top = TopFile::parse(EVENTS_TOP, "p.top").map_err(fail)?;
    match run_events(&top, &events, SimConfig::new(DelaySource::Seeded(seed))) {
        Ok(done) => {
            snapshots_hold(&top.topology, &done)?;
            prop_assert_eq!(done.snapshots.len(), events.snapshot_count());
            Ok(Some(done))
        }
        Err(ReplayError::Format(e)) => {
            prop_assert_eq!(e.file.as_str(), "p.events");
            prop_assert!((1..=text.lines().count()).contains(&e.line), "{}", e);
            Ok(None)
        }
        Err(e) => Err(fail(format!("unexpected error: {e}"))),
    }
}

#[test]
fn the_script_generator_reaches_runs_with_snapshots() {
    use proptest::strategy::ValueTree;
    let mut runner = TestRunner::deterministic();
    let mut with_snapshots = 0;
    for _ in 0..200 {
        let text = script().new_tree(&mut runner).expect("a script").current();
        if let Ok(Some(done)) = run_script(&text, 0) {
            with_snapshots += usize::from(!done.snapshots.is_empty());
        }
    }
    assert!(with_snapshots >= 30, "only {with_snapshots} of 200 scripts ran with a snapshot");
}

proptest! {
    #![proptest_config(config(4096))]

    #[test]
    fn top_parser_never_panics(text in text()) {
        if let Ok(top) = TopFile::parse(&text, "p.top") {
            prop_assert!(top.topology.len() >= 2);
            prop_assert_eq!(top.tokens.len(), top.topology.len());
        }
    }

    #[test]
    fn events_parser_and_runner_never_panic(text in prop_oneof![text(), script()], seed in 0u64..4) {
        run_script(&text, seed)?;
    }

    #[test]
    fn snap_parser_never_panics_and_round_trips(text in text()) {
        if let Ok(snap) = SnapFile::parse(&text, "p.snap") {
            let again = SnapFile::parse(&write(&snap.blocks), "p.snap").map_err(fail)?;
            prop_assert_eq!(&again.blocks, &snap.blocks);
            prop_assert!(compare(std::slice::from_ref(&snap), &again.blocks, None).matches());
        }
    }
}

/// Regression: a huge announced node count once made `TopFile::parse` allocate for it (a panic
/// or an abort); it is an error naming the line.
#[test]
fn top_parser_refuses_a_huge_node_count() {
    for count in ["1000000000000000000", "10000000000000"] {
        let text = format!("{count}\nN1 1\nN2 1\n");
        let result = std::panic::catch_unwind(|| TopFile::parse(&text, "p.top").map(|_| ()));
        assert!(matches!(result, Ok(Err(_))), "count {count}: {result:?}");
    }
}
