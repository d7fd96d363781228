//! The threaded runtime with aligned and unaligned barriers: checkpoints triggered by the
//! coordinator, a decline, a crash and recovery (exactly-once with the stream application),
//! and typed errors for requests that do not fit the algorithm.

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::spec::{quiet_outcomes, Setup};
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::runtime::BankCommand;
use chandy_lamport::runtime::{AbortReason, CheckpointOutcome, Cluster, Options, RuntimeError, StreamCommand};
use chandy_lamport::{verify, Algorithm, Initiators, ProcessId, SnapshotId, Topology};

const BARRIERS: [Algorithm; 2] = [Algorithm::Aligned, Algorithm::Unaligned];

fn options(algorithm: Algorithm) -> Options {
    Options { trace: true, algorithm, initiators: Initiators::Only(vec![ProcessId(0)]), ..Options::default() }
}

fn transfer(cluster: &Cluster<Bank>, from: u16, to: u16) {
    cluster.command(ProcessId(from), BankCommand::Transfer { to: ProcessId(to), amount: 1 }).unwrap();
}

#[test]
fn checkpoints_of_both_barrier_algorithms_verify_and_conserve_the_jars() {
    for algorithm in BARRIERS {
        let t = Topology::complete(4).unwrap();
        let mut cluster = Cluster::start(t.clone(), vec![Bank::new(10); 4], options(algorithm)).unwrap();
        let mut ids = Vec::new();
        for round in 0..5u16 {
            for i in 0..4u16 {
                transfer(&cluster, i, (i + 1 + round % 3) % 4);
            }
            ids.push(cluster.trigger_checkpoint().unwrap());
            for i in 0..4u16 {
                transfer(&cluster, (i + 2) % 4, i);
            }
            let CheckpointOutcome::Completed(c) = cluster.await_checkpoint(ids[ids.len() - 1]).unwrap() else {
                panic!("{algorithm}: aborted")
            };
            assert_eq!(c.state.total(), 40, "{algorithm}");
        }
        let outcome = cluster.shutdown().unwrap();
        assert_eq!(outcome.states.iter().map(|b| b.jars).sum::<u32>(), 40);
        let trace = outcome.trace.as_ref().unwrap();
        // The five checkpoints and the shutdown's final one.
        assert_eq!(outcome.snapshots.len(), 6, "{algorithm}: {:?}", outcome.aborted);
        for s in &outcome.snapshots {
            verify(&t, trace, s).unwrap_or_else(|e| panic!("{algorithm} {}: {e}", s.id));
        }
        assert!(outcome.incomplete.is_empty() && outcome.aborted.is_empty());
    }
}

#[test]
fn a_declined_checkpoint_is_aborted_and_the_next_one_completes() {
    for algorithm in BARRIERS {
        let t = Topology::complete(3).unwrap();
        let tolerant = Options { tolerable_failures: 1, ..options(algorithm) };
        let mut cluster = Cluster::start(t.clone(), vec![Bank::new(10); 3], tolerant).unwrap();
        cluster.decline_next(ProcessId(2)).unwrap();
        let first = cluster.trigger_checkpoint().unwrap();
        transfer(&cluster, 1, 2);
        assert_eq!(cluster.await_checkpoint(first).unwrap(), CheckpointOutcome::Aborted(AbortReason::Declined));
        assert_eq!(cluster.wait(first), Err(RuntimeError::Aborted { snapshot: first, reason: AbortReason::Declined }));
        let second = cluster.trigger_checkpoint().unwrap();
        transfer(&cluster, 2, 0);
        let CheckpointOutcome::Completed(c) = cluster.await_checkpoint(second).unwrap() else { panic!("aborted") };
        assert_eq!(c.state.total(), 30);
        let outcome = cluster.shutdown().unwrap();
        assert_eq!(outcome.aborted, vec![(first, AbortReason::Declined)], "{algorithm}");
        assert_eq!(outcome.incarnations.len(), 1, "{algorithm}: one failure is tolerated");
        for s in &outcome.snapshots {
            verify(&t, outcome.trace.as_ref().unwrap(), s).unwrap();
        }
    }
}

#[test]
fn a_decline_beyond_the_tolerable_failures_fails_the_job_over() {
    for algorithm in BARRIERS {
        let t = Topology::complete(3).unwrap();
        // Flink's default: no failed checkpoint is tolerated.
        let mut cluster = Cluster::start(t.clone(), vec![Bank::new(10); 3], options(algorithm)).unwrap();
        let first = cluster.trigger_checkpoint().unwrap();
        let CheckpointOutcome::Completed(_) = cluster.await_checkpoint(first).unwrap() else { panic!("aborted") };
        transfer(&cluster, 0, 1);
        cluster.decline_next(ProcessId(1)).unwrap();
        let second = cluster.trigger_checkpoint().unwrap();
        assert_eq!(cluster.await_checkpoint(second).unwrap(), CheckpointOutcome::Aborted(AbortReason::Declined));
        // The job failed over to the first checkpoint: the transfer after it is undone.
        let third = cluster.trigger_checkpoint().unwrap();
        let CheckpointOutcome::Completed(c) = cluster.await_checkpoint(third).unwrap() else { panic!("aborted") };
        assert_eq!(c.state.processes, vec![Bank::new(10); 3], "{algorithm}");
        let outcome = cluster.shutdown().unwrap();
        assert_eq!(outcome.incarnations.len(), 2, "{algorithm}: the decline failed the job over");
        assert_eq!(outcome.incarnations[1].restored_from, Some(first), "{algorithm}");
        assert!(outcome.incarnations[0].crashed && outcome.incarnations[1].failed_over, "{algorithm}");
        assert_eq!(outcome.aborted, vec![(second, AbortReason::Declined)], "{algorithm}");
    }
}

#[test]
fn a_stream_recovered_from_a_checkpoint_ends_as_the_failure_free_run_exactly_once() {
    let n = 4;
    // No cycle, as a reactive application needs.
    let t = Topology::dataflow(n).unwrap();
    let initial: Vec<Stream> =
        (0..n).map(|i| Stream::new(ProcessId(i as u16), [3, 2][..].get(i).copied().unwrap_or(0))).collect();
    // Houses with two or more inputs take them in any interleaving: the failure-free run ends in
    // any of these states, each item taken in once, each channel's items in the order sent.
    let ends = quiet_outcomes(&t, initial.clone(), &[0; 4], &Setup::default(), false, 1 << 20).unwrap();
    assert_eq!(ends.len(), 120);
    for algorithm in BARRIERS {
        for crashes in 0..3 {
            let mut cluster = Cluster::start(t.clone(), initial.clone(), options(algorithm)).unwrap();
            let emit = |c: &Cluster<Stream>, at: u16, count: u8| {
                c.command(ProcessId(at), StreamCommand::Emit { count }).unwrap()
            };
            emit(&cluster, 0, 1);
            let first = cluster.trigger_checkpoint().unwrap();
            emit(&cluster, 1, 1);
            emit(&cluster, 0, 1);
            cluster.await_checkpoint(first).unwrap();
            for _ in 0..crashes {
                let restored = cluster.crash_and_recover().unwrap();
                assert!(restored.is_some(), "{algorithm}: the first checkpoint completed");
                emit(&cluster, 0, 8);
                emit(&cluster, 1, 8);
                cluster.trigger_checkpoint().unwrap();
            }
            emit(&cluster, 0, 8);
            emit(&cluster, 1, 8);
            let outcome = cluster.shutdown().unwrap();
            assert!(ends.contains(&outcome.states), "{algorithm}, {crashes} crashes: {:?}", outcome.states);
            assert_eq!(outcome.incarnations.len(), crashes + 1);
            assert!(outcome.incarnations.iter().skip(1).all(|i| i.restored_from.is_some()));
        }
    }
}

#[test]
fn a_crash_before_any_checkpoint_restarts_from_the_initial_states() {
    for algorithm in BARRIERS {
        let t = Topology::complete(3).unwrap();
        let mut cluster = Cluster::start(t.clone(), vec![Bank::new(5); 3], options(algorithm)).unwrap();
        transfer(&cluster, 0, 1);
        assert_eq!(cluster.crash_and_recover(), Ok(None));
        transfer(&cluster, 1, 2);
        let id = cluster.trigger_checkpoint().unwrap();
        assert!(matches!(cluster.await_checkpoint(id), Ok(CheckpointOutcome::Completed(_))));
        let outcome = cluster.shutdown().unwrap();
        assert_eq!(outcome.states.iter().map(|b| b.jars).sum::<u32>(), 15);
        assert_eq!(outcome.incarnations[1].start.processes, vec![Bank::new(5); 3]);
        // The new incarnation started with empty channels: it is traced, and its checkpoints verify.
        let trace = outcome.incarnations[1].trace.as_ref().unwrap();
        for s in &outcome.snapshots {
            verify(&t, trace, s).unwrap();
        }
    }
}

#[test]
fn requests_that_do_not_fit_the_algorithm_are_typed_errors() {
    let t = Topology::complete(2).unwrap();
    let mut cl = Cluster::start(t.clone(), vec![Bank::new(1); 2], Options::default()).unwrap();
    assert_eq!(cl.trigger_checkpoint(), Err(RuntimeError::NotBarriers));
    assert_eq!(cl.decline_next(ProcessId(0)), Err(RuntimeError::NotBarriers));
    cl.shutdown().unwrap();
    let mut aligned = Cluster::start(t.clone(), vec![Bank::new(1); 2], options(Algorithm::Aligned)).unwrap();
    assert_eq!(aligned.initiate(SnapshotId(0), ProcessId(0)), Err(RuntimeError::Coordinated(Algorithm::Aligned)));
    assert_eq!(aligned.await_checkpoint(SnapshotId(7)), Err(RuntimeError::UnknownSnapshot(SnapshotId(7))));
    assert_eq!(aligned.crash_and_recover(), Ok(None));
    aligned.trigger_checkpoint().unwrap();
    aligned.shutdown().unwrap();
    let wrong = Options { variant: chandy_lamport::Variant::ProcessAfterBarrier, ..options(Algorithm::Unaligned) };
    assert!(matches!(
        Cluster::start(t.clone(), vec![Bank::new(1); 2], wrong).unwrap_err(),
        RuntimeError::VariantNotApplicable { .. }
    ));
    // Flink has no concurrent unaligned checkpoints; aligned ones may be concurrent.
    let concurrent = |algorithm| Options { max_concurrent: 2, ..options(algorithm) };
    let refused = Cluster::start(t.clone(), vec![Bank::new(1); 2], concurrent(Algorithm::Unaligned)).unwrap_err();
    assert_eq!(refused, RuntimeError::UnalignedConcurrent(2));
    Cluster::start(t.clone(), vec![Bank::new(1); 2], concurrent(Algorithm::Aligned)).unwrap().shutdown().unwrap();
    let ring = Topology::ring(2).unwrap();
    let streams = vec![Stream::new(ProcessId(0), 1), Stream::new(ProcessId(1), 0)];
    assert_eq!(Cluster::start(ring, streams, Options::default()).unwrap_err(), RuntimeError::ReactiveOnCycle);
}
