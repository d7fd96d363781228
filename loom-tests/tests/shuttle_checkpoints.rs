//! The threaded runtime's aligned and unaligned barriers under shuttle with 5 to 8 houses,
//! beyond loom's thread limit: the checkpointing scenarios of `loom_checkpoints.rs` (a
//! checkpoint, a decline, a crash and recovery of the bank and of the stream application),
//! under the random scheduler and PCT from fixed seeds, each run judged by
//! `loom_tests::checkpoints` (every checkpoint completed or aborted, each completed one
//! conserving the jars and accepted by the trace checker or consistent with the failure-free
//! run, each recovery from the latest completed checkpoint, and exactly-once for the stream).
//! Two barrier fault variants are caught with 8 houses.
#![cfg(shuttle)]

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::runtime::Service;
use chandy_lamport::{Algorithm, Clause, Spec, Variant, Violation};
use loom_tests::checkpoints::Scenario;
use loom_tests::judge::Failure;
use loom_tests::schedule::{check, find_failure, Checked, Draw, Schedules};

/// House counts: from one past loom's limit of 3 up to 8.
const HOUSES: std::ops::RangeInclusive<usize> = 5..=8;

const BARRIERS: [Algorithm; 2] = [Algorithm::Aligned, Algorithm::Unaligned];

/// The schedules each scenario runs per house count and algorithm.
const SCHEDULES: [Schedules; 2] = [
    Schedules { draw: Draw::Random, seed: 0x5eed, iterations: 1000 },
    Schedules { draw: Draw::Pct { depth: 3 }, seed: 0x5eed, iterations: 1000 },
];

fn check_all<A>(name: &str, scenario: fn(usize, Algorithm) -> Scenario<A>) -> Vec<Checked>
where
    A: Service + Spec,
    A::Command: Clone + std::fmt::Debug,
    Scenario<A>: Send + Sync + 'static,
{
    let mut seen = Vec::new();
    for algorithm in BARRIERS {
        for n in HOUSES.clone() {
            let s = scenario(n, algorithm);
            for schedules in SCHEDULES {
                let s = s.clone();
                let checked =
                    check(&format!("{algorithm}: {name}, {n} houses"), schedules, move || s.run(Variant::None));
                assert_eq!(checked.schedules, schedules.iterations);
                seen.push(checked);
            }
        }
    }
    seen
}

#[test]
fn one_checkpoint() {
    let seen = check_all("one checkpoint", Scenario::<Bank>::checkpoint);
    assert!(seen.iter().any(|c| c.with_jars_in_transit > 0), "{seen:?}");
}

#[test]
fn a_declined_checkpoint_is_aborted_and_the_next_completes() {
    let seen = check_all("a decline", Scenario::<Bank>::decline);
    assert!(seen.iter().all(|c| c.with_open == c.schedules), "{seen:?}");
}

#[test]
fn a_decline_beyond_the_tolerable_failures_fails_the_job_over() {
    let seen = check_all("a decline fails the job over", Scenario::<Bank>::decline_fails_over);
    assert!(seen.iter().all(|c| c.with_open == c.schedules), "{seen:?}");
}

#[test]
fn a_crash_and_recovery_conserves_the_jars() {
    check_all("a crash", Scenario::<Bank>::crash);
}

#[test]
fn a_stream_crashed_and_recovered_is_exactly_once() {
    check_all("stream, a crash", Scenario::<Stream>::crash);
    check_all("stream, checkpoint, crash, decline", Scenario::<Stream>::crash_after_checkpoint);
    check_all("stream, checkpoint, crash, checkpoint", Scenario::<Stream>::checkpoint_during_recovery);
}

const FIND: Schedules = Schedules { draw: Draw::Random, seed: 0x5eed, iterations: 500 };

#[test]
fn partial_output_buffers_is_caught_as_a_missing_cart() {
    let failure =
        find_failure("partial-output-buffers", FIND, || Scenario::buffered(8).run(Variant::PartialOutputBuffers));
    let Failure::Violation(v) = failure else { panic!("expected a violation, got {failure:?}") };
    assert!(matches!(v, Violation::MissingMessage { .. }), "{v}");
}

#[test]
fn process_after_barrier_is_caught_as_an_inward_crossing() {
    let failure = find_failure("process-after-barrier", FIND, || {
        Scenario::behind_the_barrier(Algorithm::Aligned).run(Variant::ProcessAfterBarrier)
    });
    let Failure::Violation(v) = failure else { panic!("expected a violation, got {failure:?}") };
    assert_eq!(v.clause(), Clause::NoInwardCrossing, "{v}");
}

#[test]
fn checkpoint_during_recovery_is_caught_as_a_checkpoint_missing_restored_data() {
    // FLINK-20654: after the crash a join house still takes in a restored item when the next
    // checkpoint's barrier comes on its other input; it checkpoints and does not record the item.
    let failure = find_failure("checkpoint-during-recovery", FIND, || {
        Scenario::<Stream>::checkpoint_during_recovery(3, Algorithm::Unaligned).run(Variant::CheckpointDuringRecovery)
    });
    assert!(matches!(failure, Failure::NotConserved { .. } | Failure::Inconsistent { .. }), "{failure:?}");
}
