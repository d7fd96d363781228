//! Every fault variant is caught by the model, and exactly the properties it breaks fail: each
//! with a counterexample (BFS on one thread, so the one reported is a shortest) whose length is
//! pinned. Every always-property is broken by some variant. The correct algorithm passes.

mod common;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::{Algorithm, Variant};
use common::{config, run_app, run_distributed, run_with, verdict};
use model::system::properties::{
    ACCEPTS, CHECKPOINTS_END, CROSSING, END_REACHABLE, EXACTLY_ONCE, IDS_INCREASE, LEDGER, REACHABLE, RECORDS,
    RECORD_MESSAGE, STABLE, STORED_RECOVERS, TERMINATES, TRIGGERING,
};
use model::{InitiatorSpec, Strategy, TopologySpec, Verdict};

/// Each variant, the flags it needs beyond the base configuration (3 processes, complete graph, 2
/// jars, 1 send each, process 0 initiating one snapshot), and every property that fails with the
/// length of its shortest counterexample (the README's table lists the same).
type Caught = (Variant, Extra, &'static [(&'static str, usize)]);

/// What a variant needs: two snapshots in flight, two messages on one road, or a barrier algorithm
/// with its coordinator (checked in basic mode, the one the barrier algorithms support so far).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extra {
    None,
    TwoSnapshots,
    TwoSends,
    Barriers(Barriers),
    /// The stream application on `join3.top` (sources A and B each feeding C), triggered at
    /// both sources: C's state depends on the order and the origin of what it takes in.
    StreamJoin(Barriers),
}

/// A barrier algorithm's run: the algorithm, the graph, and the coordinator's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Barriers {
    algorithm: Algorithm,
    graph: Graph,
    snapshots: u8,
    max_concurrent: u8,
    declines: u8,
    crashes: u8,
}

/// The complete graph, a ring, or `--topology dataflow` (`Pi -> Pj` for `i < j`: `P2` joins
/// two inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Graph {
    Complete,
    Ring,
    Dataflow,
}

const fn barriers(algorithm: Algorithm, graph: Graph) -> Barriers {
    Barriers { algorithm, graph, snapshots: 1, max_concurrent: 1, declines: 0, crashes: 0 }
}

const fn crash(b: Barriers) -> Barriers {
    Barriers { crashes: 1, ..b }
}

const fn decline(b: Barriers) -> Barriers {
    Barriers { declines: 1, ..b }
}

const fn two(b: Barriers, max_concurrent: u8) -> Barriers {
    Barriers { snapshots: 2, max_concurrent, ..b }
}

const ALIGNED_COMPLETE: Barriers = barriers(Algorithm::Aligned, Graph::Complete);
const ALIGNED_RING: Barriers = barriers(Algorithm::Aligned, Graph::Ring);
const UNALIGNED_COMPLETE: Barriers = barriers(Algorithm::Unaligned, Graph::Complete);
const UNALIGNED_RING: Barriers = barriers(Algorithm::Unaligned, Graph::Ring);
const UNALIGNED_DATAFLOW: Barriers = barriers(Algorithm::Unaligned, Graph::Dataflow);

const CAUGHT: [Caught; 26] = [
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
    (
        Variant::ProcessAfterBarrier,
        Extra::Barriers(crash(ALIGNED_COMPLETE)),
        &[(LEDGER, 15), (EXACTLY_ONCE, 22), (STORED_RECOVERS, 15)],
    ),
    (
        Variant::AlignedCycleNoBackedge,
        Extra::Barriers(crash(ALIGNED_RING)),
        &[(LEDGER, 12), (EXACTLY_ONCE, 17), (STORED_RECOVERS, 12)],
    ),
    (
        Variant::PartialOutputBuffers,
        Extra::Barriers(crash(UNALIGNED_COMPLETE)),
        &[(LEDGER, 14), (EXACTLY_ONCE, 17), (STORED_RECOVERS, 14)],
    ),
    (
        Variant::MixedBarriersAfterDecline,
        Extra::Barriers(crash(decline(two(UNALIGNED_RING, 1)))),
        &[(LEDGER, 18), (EXACTLY_ONCE, 23), (STORED_RECOVERS, 18)],
    ),
    // FLINK-13256: the timer fires at max-concurrent and is cancelled; a crash's failover aborts
    // the pending checkpoint and never reschedules it.
    (Variant::TriggerStopsAfterAbort, Extra::Barriers(crash(two(ALIGNED_RING, 1))), &[(TRIGGERING, 3)]),
    (Variant::NoCancellationBarriers, Extra::Barriers(decline(ALIGNED_COMPLETE)), &[(CHECKPOINTS_END, 13)]),
    (Variant::NoSubsumption, Extra::Barriers(two(ALIGNED_RING, 2)), &[(IDS_INCREASE, 20)]),
    // The ledger holds: every item is restored once, but out of order or on the wrong input.
    (Variant::RestoreReversed, Extra::StreamJoin(crash(UNALIGNED_RING)), &[(EXACTLY_ONCE, 19)]),
    (Variant::RestoreMisrouted, Extra::StreamJoin(crash(UNALIGNED_RING)), &[(EXACTLY_ONCE, 19)]),
    (
        Variant::DeferredUnalignedCheckpoint,
        Extra::Barriers(crash(UNALIGNED_DATAFLOW)),
        &[(LEDGER, 13), (EXACTLY_ONCE, 16), (STORED_RECOVERS, 13)],
    ),
    (
        Variant::WrongInflightChannels,
        Extra::Barriers(crash(UNALIGNED_DATAFLOW)),
        &[(LEDGER, 15), (EXACTLY_ONCE, 16), (STORED_RECOVERS, 15)],
    ),
    // FLINK-20654: after the first crash P2 still holds a restored message on one input when the
    // next checkpoint's barrier comes on the other; it checkpoints and does not record the message.
    (
        Variant::CheckpointDuringRecovery,
        Extra::Barriers(Barriers { crashes: 2, ..two(UNALIGNED_DATAFLOW, 1) }),
        &[(LEDGER, 23), (EXACTLY_ONCE, 24), (STORED_RECOVERS, 23)],
    ),
];

const ALWAYS: [&str; 13] = [
    ACCEPTS,
    CROSSING,
    RECORDS,
    LEDGER,
    TERMINATES,
    REACHABLE,
    END_REACHABLE,
    STABLE,
    CHECKPOINTS_END,
    IDS_INCREASE,
    TRIGGERING,
    EXACTLY_ONCE,
    STORED_RECOVERS,
];

fn base() -> model::Config {
    config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]))
}

fn configured(variant: Variant, extra: Extra) -> model::Config {
    let mut c = model::Config { variant, ..base() };
    match extra {
        Extra::None => {}
        Extra::TwoSnapshots => c.snapshots = 2,
        Extra::TwoSends => c.sends = 2,
        Extra::Barriers(b) | Extra::StreamJoin(b) => {
            c.algorithm = b.algorithm;
            c.mode = model::Mode::Basic;
            c.topology = match b.graph {
                Graph::Complete => TopologySpec::Complete,
                Graph::Ring => TopologySpec::Ring,
                Graph::Dataflow => TopologySpec::Dataflow,
            };
            c.snapshots = b.snapshots;
            c.checkpointing = model::Checkpointing {
                max_concurrent: b.max_concurrent,
                declines: b.declines,
                crashes: b.crashes,
                tolerable_failures: b.declines,
            };
        }
    }
    if let Extra::StreamJoin(_) = extra {
        c.topology = TopologySpec::File(format!("{}/tests/data/join3.top", env!("CARGO_MANIFEST_DIR")).into());
        c.procs = None;
        c.tokens = None;
        c.initiators = InitiatorSpec::Only(vec![0, 1]);
    }
    c
}

/// Checks `variant` with `extra` exhaustively, BFS on one thread, with the application `extra` names.
fn checked(variant: Variant, extra: Extra) -> model::CheckResult {
    let c = configured(variant, extra);
    match extra {
        Extra::StreamJoin(_) => run_app::<Stream>(&c, Strategy::Bfs),
        _ => run_with(&c, Strategy::Bfs),
    }
}

#[test]
fn every_variant_fails_exactly_its_properties_with_pinned_shortest_counterexamples() {
    // And the distributed search on three ranks (threads of this process), each owning a third
    // of the states, finds the same: the unique and generated states, depth, verdicts, tallies
    // and exit code of stateright's breadth-first search, and (level by level, so shortest) the
    // pinned counterexample lengths, with every level kept on disk (`--rank-memory 0`).
    let opts = model::CheckOptions { strategy: Strategy::Bfs, rank_memory: Some(0), ..model::CheckOptions::default() };
    for (variant, extra, fails) in CAUGHT {
        let result = checked(variant, extra);
        assert!(!result.ok, "{variant} passed");
        assert_eq!(common::failing(&result), fails.to_vec(), "{variant}");
        for p in result.properties.iter().filter(|p| p.verdict == Verdict::Counterexample) {
            assert!(p.link.as_ref().unwrap().starts_with("http://127.0.0.1:3000/#/steps/0/"), "{variant}");
        }
        let c = configured(variant, extra);
        let spread = match extra {
            Extra::StreamJoin(_) => run_distributed::<Stream>(&c, 3, &opts),
            _ => run_distributed::<Bank>(&c, 3, &opts),
        };
        assert_eq!(common::failing(&spread), fails.to_vec(), "{variant}: distributed");
        assert_eq!(common::verdicts(&spread), common::verdicts(&result), "{variant}: distributed");
        assert_eq!(
            (spread.unique_states, spread.states, spread.max_depth, spread.tallies, spread.exit_code),
            (result.unique_states, result.states, result.max_depth, result.tallies, result.exit_code),
            "{variant}: distributed"
        );
        let d = spread.distributed.expect("a distributed result");
        assert_eq!(d.ranks, 3);
        assert!(d.fingerprints_sent > 0 && d.largest_share < spread.unique_states as u64, "{variant}: {d:?}");
        assert_eq!(d.spilled_states, spread.unique_states as u64 - 1, "{variant}: all but the initial state on disk");
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
    let barriers = CAUGHT.iter().filter_map(|(_, extra, _)| match extra {
        Extra::Barriers(_) | Extra::StreamJoin(_) => Some(*extra),
        _ => None,
    });
    for extra in [Extra::None, Extra::TwoSnapshots, Extra::TwoSends].into_iter().chain(barriers) {
        let result = checked(Variant::None, extra);
        assert!(result.ok, "{extra:?}");
        assert!(result.properties.iter().all(|p| !p.verdict.fails()), "{extra:?}");
        if !matches!(extra, Extra::Barriers(_) | Extra::StreamJoin(_)) {
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
fn a_process_that_never_records_is_caught_even_when_any_process_may_initiate() {
    // Initiating is a choice: termination is judged wherever nothing but initiations is enabled,
    // so a process left unrecorded cannot hide behind an initiation it could still make.
    for variant in [Variant::SkipOneMarker, Variant::NoMarkerForwarding] {
        let c = model::Config { variant, initiators: InitiatorSpec::Any, ..base() };
        let result = run_with(&c, Strategy::Bfs);
        assert_eq!(verdict(&result, TERMINATES), Verdict::Counterexample, "{variant}");
    }
}
