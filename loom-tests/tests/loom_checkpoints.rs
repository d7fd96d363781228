//! The threaded runtime's aligned and unaligned barriers under loom, with the checkpoint
//! coordinator in the collector thread: every interleaving loom explores (up to each test's
//! preemption bound) of a checkpoint, a decline and a crash with its recovery ends with every
//! checkpoint completed or aborted, each completed one conserving the jars and accepted by the
//! trace checker (or, for the stream application, ending where the failure-free run ends when
//! the run is finished from it), each recovery restoring the latest completed checkpoint, and
//! the stream's end states the failure-free run's (exactly-once); see
//! `loom_tests::checkpoints`. Loom allows 5 threads: main, the collector (the coordinator) and
//! at most 3 houses; a recovery restarts each house's incarnation on its own thread. The
//! correct runtime is explored with 2 houses (preemption bound 1: 3 houses at bound 1 run for
//! many minutes); two fault variants of the barrier rules are caught with 3 houses, where a
//! house aligns two inputs or has two output buffers (the same scenarios pass under shuttle
//! with 8 houses).
#![cfg(loom)]

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::{Algorithm, Clause, Variant, Violation};
use loom_tests::checkpoints::Scenario;
use loom_tests::explore::{explore, find_failure};
use loom_tests::judge::Failure;

const BARRIERS: [Algorithm; 2] = [Algorithm::Aligned, Algorithm::Unaligned];

#[test]
fn two_houses_one_checkpoint() {
    for algorithm in BARRIERS {
        let explored = explore(&format!("{algorithm}: two houses, one checkpoint"), Some(1), move || {
            Scenario::<Bank>::checkpoint(2, algorithm).run(Variant::None)
        });
        assert!(explored.interleavings > 1);
    }
}

#[test]
fn a_declined_checkpoint_is_aborted_and_the_next_completes() {
    for algorithm in BARRIERS {
        let explored = explore(&format!("{algorithm}: two houses, a decline"), Some(1), move || {
            Scenario::<Bank>::decline(2, algorithm).run(Variant::None)
        });
        // Every run aborts the declined checkpoint.
        assert_eq!(explored.with_open, explored.interleavings, "{explored:?}");
    }
}

#[test]
fn a_decline_beyond_the_tolerable_failures_fails_the_job_over() {
    for algorithm in BARRIERS {
        let explored = explore(&format!("{algorithm}: two houses, a decline fails the job over"), Some(1), move || {
            // Up to the failover (the shutdown's final checkpoint follows it): the whole script
            // has too many interleavings for loom.
            let mut s = Scenario::<Bank>::decline_fails_over(2, algorithm);
            s.steps.truncate(6);
            s.run(Variant::None)
        });
        // Every run aborts the declined checkpoint (and the judge sees the failover restore the
        // first checkpoint).
        assert_eq!(explored.with_open, explored.interleavings, "{explored:?}");
    }
}

#[test]
fn a_crash_and_recovery_conserves_the_jars() {
    for algorithm in BARRIERS {
        explore(&format!("{algorithm}: two houses, a crash"), Some(1), move || {
            Scenario::<Bank>::crash(2, algorithm).run(Variant::None)
        });
    }
}

#[test]
fn a_stream_crashed_and_recovered_is_exactly_once() {
    for algorithm in BARRIERS {
        explore(&format!("{algorithm}: stream of two houses, a crash"), Some(1), move || {
            Scenario::<Stream>::crash(2, algorithm).run(Variant::None)
        });
    }
}

#[test]
fn unaligned_barriers_overtake_output_buffers() {
    let explored =
        explore("unaligned: two houses, buffered carts", Some(1), || Scenario::buffered(2).run(Variant::None));
    // Some checkpoints record the overtaken carts as channel state.
    assert!(explored.with_jars_in_transit > 0, "{explored:?}");
}

#[test]
fn process_after_barrier_is_caught_as_an_inward_crossing() {
    let failure = find_failure("process-after-barrier", Some(1), || {
        Scenario::behind_the_barrier(Algorithm::Aligned).run(Variant::ProcessAfterBarrier)
    });
    let Failure::Violation(v) = failure else { panic!("expected a violation, got {failure:?}") };
    assert_eq!(v.clause(), Clause::NoInwardCrossing, "{v}");
}

#[test]
fn partial_output_buffers_is_caught_as_a_missing_cart() {
    let failure =
        find_failure("partial-output-buffers", Some(1), || Scenario::buffered(3).run(Variant::PartialOutputBuffers));
    let Failure::Violation(v) = failure else { panic!("expected a violation, got {failure:?}") };
    assert!(matches!(v, Violation::MissingMessage { .. }), "{v}");
}
