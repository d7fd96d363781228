//! The simulator: its scheduling rules on small hand-made runs, refused commands, and fault
//! variants — channel faults simulated by the channels, core faults in the core — each caught by
//! the trace checker while the correct algorithm never is.

use chandy_lamport::apps::bank::{Bank, BankError, Jars};
use chandy_lamport::check::{Clause, VerifyError, Violation};
use chandy_lamport::protocol::Refusal;
use chandy_lamport::sim::{DelaySequence, DelaySource, SimConfig, SimError, Simulator, SnapshotFailure, SETTLE_TICKS};
use chandy_lamport::{ProcessId, SnapshotId, Topology, Variant};
mod common;

use common::workload;

const S0: SnapshotId = SnapshotId(0);

fn delays(values: &[u32]) -> SimConfig {
    SimConfig::new(DelaySource::Sequence(DelaySequence::new("test delays", values.to_vec())))
}

fn jars(sim: &Simulator<Bank>, p: u16) -> u32 {
    sim.process(ProcessId(p)).expect("a process of the topology").app().jars
}

/// `a -> b`, `a -> c`, `b -> a`, `c -> a`.
fn fan() -> Topology {
    Topology::from_names(&["a", "b", "c"], &[("a", "b"), ("a", "c"), ("b", "a"), ("c", "a")]).expect("valid")
}

#[test]
fn a_send_is_due_one_tick_plus_its_delay_later() {
    let mut sim = Simulator::<Bank>::new(fan(), &[10, 0, 0], delays(&[2])).expect("sim");
    sim.transfer(ProcessId(0), ProcessId(1), 4).expect("transfer");
    assert_eq!((jars(&sim, 0), jars(&sim, 1)), (6, 0), "withdrawn at once");
    sim.tick(2).expect("tick");
    assert_eq!(jars(&sim, 1), 0);
    sim.tick(1).expect("tick");
    assert_eq!((sim.time(), jars(&sim, 1)), (3, 4), "due at 0 + 1 + 2");
}

#[test]
fn each_source_delivers_at_most_one_message_per_tick_first_link_in_name_order() {
    // Both due at tick 1 on a's two links: b (first in name order) gets its cart at tick 1,
    // c at tick 2; b -> a is another source and delivers in the same tick.
    let mut sim = Simulator::<Bank>::new(fan(), &[10, 5, 0], delays(&[0, 0, 0])).expect("sim");
    sim.transfer(ProcessId(0), ProcessId(2), 3).expect("transfer");
    sim.transfer(ProcessId(0), ProcessId(1), 2).expect("transfer");
    sim.transfer(ProcessId(1), ProcessId(0), 1).expect("transfer");
    sim.tick(1).expect("tick");
    assert_eq!((jars(&sim, 0), jars(&sim, 1), jars(&sim, 2)), (6, 6, 0));
    sim.tick(1).expect("tick");
    assert_eq!(jars(&sim, 2), 3);
}

#[test]
fn a_head_not_yet_due_blocks_its_link() {
    let mut sim = Simulator::<Bank>::new(fan(), &[10, 0, 0], delays(&[3, 0])).expect("sim");
    sim.transfer(ProcessId(0), ProcessId(1), 1).expect("due at 4");
    sim.transfer(ProcessId(0), ProcessId(1), 2).expect("due at 1, behind the first");
    sim.tick(3).expect("tick");
    assert_eq!(jars(&sim, 1), 0);
    sim.tick(1).expect("tick");
    assert_eq!(jars(&sim, 1), 1);
    sim.tick(1).expect("tick");
    assert_eq!(jars(&sim, 1), 3);
    assert_eq!(sim.in_flight(), 0);
}

#[test]
fn markers_draw_their_delays_in_destination_name_order() {
    // N1's links are declared N2 first, but "N10" < "N2": the first delay goes to N10.
    let t = Topology::from_names(&["N1", "N2", "N10"], &[("N1", "N2"), ("N1", "N10"), ("N2", "N1"), ("N10", "N1")])
        .expect("valid");
    let mut sim = Simulator::<Bank>::new(t.clone(), &[1, 1, 1], delays(&[0, 4, 0, 0])).expect("sim");
    assert_eq!(sim.start_snapshot(ProcessId(0)), Ok(S0));
    sim.tick(1).expect("tick");
    let recorded = |sim: &Simulator<Bank>, p| sim.process(ProcessId(p)).expect("process").has_recorded(S0);
    assert!(recorded(&sim, 2), "N10's marker had delay 0");
    assert!(!recorded(&sim, 1), "N2's marker had delay 4");
    assert!(sim.run_to_completion().expect("run"));
    let done = sim.finish();
    assert_eq!(done.snapshots.len(), 1);
    done.check(&t).expect("verified");
    // Nodes in name order in the .snap block.
    assert_eq!(done.snapshots[0].to_block(&t).to_string(), "0\nN1 1\nN10 1\nN2 1\n");
}

#[test]
fn a_snapshot_records_in_flight_messages_in_receive_order_across_channels() {
    // b and c each send two carts to a; a records after its initiation and before the markers.
    let t = fan();
    let mut sim = Simulator::<Bank>::new(t.clone(), &[0, 10, 10], delays(&[0; 16])).expect("sim");
    assert_eq!(sim.start_snapshot(ProcessId(0)), Ok(S0));
    sim.transfer(ProcessId(2), ProcessId(0), 1).expect("c -> a");
    sim.transfer(ProcessId(1), ProcessId(0), 2).expect("b -> a");
    sim.tick(1).expect("tick");
    sim.transfer(ProcessId(2), ProcessId(0), 3).expect("c -> a");
    assert!(sim.run_to_completion().expect("run"));
    sim.tick(SETTLE_TICKS).expect("tick");
    let done = sim.finish();
    done.check(&t).expect("verified and conserved");
    let block = done.snapshots[0].to_block(&t);
    let into_a: Vec<(String, u64)> =
        block.messages.iter().filter(|m| m.dst == "a").map(|m| (m.src.clone(), m.tokens)).collect();
    // Tick 1: sources in name order, b's cart (2) before c's (1); c's second cart (3) at tick 2.
    assert_eq!(into_a, vec![("b".to_string(), 2), ("c".to_string(), 1), ("c".to_string(), 3)]);
    assert_eq!(block.total(), 20);
    assert_eq!(done.final_total(), 20);
}

#[test]
fn refused_commands_are_typed_errors_and_change_nothing() {
    let t = fan();
    assert_eq!(
        Simulator::<Bank>::new(t.clone(), &[1, 2], delays(&[])).err(),
        Some(SimError::TokenCount { expected: 3, got: 2 })
    );
    let mut sim = Simulator::<Bank>::new(t, &[3, 0, 0], delays(&[])).expect("sim");
    assert_eq!(
        sim.transfer(ProcessId(0), ProcessId(1), 4),
        Err(SimError::Refused {
            process: "a".into(),
            reason: Refusal(BankError::NotEnoughJars { have: 3, want: 4 }.to_string())
        })
    );
    assert_eq!(sim.transfer(ProcessId(1), ProcessId(2), 1), Err(SimError::NoLink { from: "b".into(), to: "c".into() }));
    assert_eq!(sim.transfer(ProcessId(0), ProcessId(9), 1), Err(SimError::UnknownProcess(ProcessId(9))));
    assert_eq!(sim.start_snapshot(ProcessId(3)), Err(SimError::UnknownProcess(ProcessId(3))));
    assert_eq!(sim.join_snapshot(S0, ProcessId(0)), Err(SimError::UnknownSnapshot(S0)));
    assert_eq!(jars(&sim, 0), 3);
    // The empty delay sequence: the first draw fails with an error naming it.
    let e = sim.transfer(ProcessId(0), ProcessId(1), 1).unwrap_err();
    assert_eq!(e, SimError::DelaysExhausted { file: "test delays".into(), available: 0 });
    assert!(e.to_string().contains("ran out of delays: test delays"), "{e}");
}

#[test]
fn long_ticks_skip_idle_time() {
    let mut sim = Simulator::<Bank>::new(fan(), &[10, 0, 0], delays(&[1_000_000_000])).expect("sim");
    sim.transfer(ProcessId(0), ProcessId(1), 1).expect("transfer");
    sim.tick(u64::MAX / 2).expect("tick");
    assert_eq!((jars(&sim, 1), sim.time()), (1, u64::MAX / 2));
}

#[test]
fn several_initiators_join_one_snapshot() {
    let t = Topology::ring(4).expect("ring");
    let mut sim = Simulator::<Bank>::new(t.clone(), &[5; 4], SimConfig::new(DelaySource::Seeded(3))).expect("sim");
    assert_eq!(sim.start_snapshot(ProcessId(0)), Ok(S0));
    sim.transfer(ProcessId(2), ProcessId(3), 2).expect("transfer");
    assert_eq!(sim.join_snapshot(S0, ProcessId(2)), Ok(true));
    assert_eq!(sim.join_snapshot(S0, ProcessId(2)), Ok(false), "already recorded");
    assert!(sim.run_to_completion().expect("run"));
    let done = sim.finish();
    assert!(done.incomplete.is_empty());
    done.check(&t).expect("verified");
}

/// The first seed in `0..64` whose run the checks reject, with the failure.
fn first_caught(topology: &Topology, variant: Variant) -> Option<(u64, SnapshotFailure)> {
    (0..64).find_map(|seed| {
        let run = workload(topology, variant, seed).unwrap_or_else(|e| panic!("{variant} seed {seed}: {e}"));
        assert_eq!(run.final_total(), run.total(), "{variant} seed {seed}: the run itself loses no token");
        run.check(topology).err().map(|f| (seed, f))
    })
}

/// The first seed in `0..64` whose run fails: the core refuses a step (an error of the run) or
/// the checks reject it.
fn first_failure(topology: &Topology, variant: Variant) -> Option<(u64, String)> {
    (0..64).find_map(|seed| match workload(topology, variant, seed) {
        Err(e) => Some((seed, format!("the run fails: {e}"))),
        Ok(run) => run.check(topology).err().map(|f| (seed, f.to_string())),
    })
}

fn violation(failure: &SnapshotFailure) -> Option<&Violation> {
    match failure {
        SnapshotFailure::Verify { error: VerifyError::Violation(v), .. } => Some(v),
        _ => None,
    }
}

#[test]
fn the_correct_algorithm_passes_every_check_on_every_seed() {
    for t in [Topology::complete(3), Topology::ring(4), Topology::star(4)] {
        let t = t.expect("valid");
        assert_eq!(first_caught(&t, Variant::None).map(|(s, f)| format!("seed {s}: {f}")), None);
    }
}

#[test]
fn non_fifo_channels_are_caught_by_the_trace_checker() {
    let t = Topology::complete(3).expect("valid");
    let (seed, failure) = first_caught(&t, Variant::NonFifo).expect("some seed in 0..64 breaks FIFO visibly");
    let v = violation(&failure).unwrap_or_else(|| panic!("seed {seed}: not a checker violation: {failure}"));
    assert!(
        matches!(v.clause(), Clause::NoInwardCrossing | Clause::ExactRecords | Clause::RecordedReachable),
        "seed {seed}: {failure}"
    );
    println!("non-fifo, seed {seed}: {failure}");
}

#[test]
fn lost_markers_leave_a_snapshot_unterminated_and_the_simulator_stops() {
    let t = Topology::complete(3).expect("valid");
    let (seed, failure) = first_caught(&t, Variant::LoseMarkers).expect("some seed in 0..64 loses a marker");
    match &failure {
        SnapshotFailure::Unterminated { violations, .. } => {
            assert!(violations.iter().any(|v| matches!(v, Violation::NotClosed { .. })), "seed {seed}: {failure}");
            assert!(failure.to_string().contains("never completed"), "{failure}");
        }
        other => panic!("seed {seed}: expected an unterminated snapshot, got {other}"),
    }
    let run = workload(&t, Variant::LoseMarkers, seed).expect("run");
    assert!(!run.incomplete.is_empty(), "reported as incomplete");
    assert!(run.snapshots.len() + run.incomplete.len() >= 1);
}

#[test]
fn a_core_fault_no_channel_recording_is_caught_as_a_missing_message() {
    // a sends 3 jars to b (delay 2, due at 3); b initiates (marker to a, delay 0); a records on
    // the marker at tick 1 and sends its marker behind the cart. The cart is in flight at the
    // cut, so b must record it on a -> b; under no-channel-recording it does not.
    let t = Topology::complete(2).expect("valid");
    for (variant, caught) in [(Variant::None, false), (Variant::NoChannelRecording, true)] {
        let config = SimConfig { variant, ..delays(&[2, 0, 0]) };
        let mut sim = Simulator::<Bank>::new(t.clone(), &[5, 0], config).expect("sim");
        sim.transfer(ProcessId(0), ProcessId(1), 3).expect("transfer");
        sim.start_snapshot(ProcessId(1)).expect("snapshot");
        assert!(sim.run_to_completion().expect("run"));
        let done = sim.finish();
        let recorded = &done.snapshots[0].global.state;
        assert_eq!(recorded.processes, vec![Bank::new(2), Bank::new(0)]);
        match done.check(&t) {
            Ok(()) => {
                assert!(!caught, "{variant}");
                assert_eq!(recorded.channels, vec![vec![Jars(3)], vec![]]);
            }
            Err(failure) => {
                assert!(caught, "{variant}: {failure}");
                assert!(
                    matches!(violation(&failure), Some(Violation::MissingMessage { snapshot: S0, .. })),
                    "{failure}"
                );
                assert!(failure.to_string().contains("is missing from the record"), "{failure}");
            }
        }
    }
}

#[test]
fn every_core_variant_is_caught_on_some_seed() {
    let t = Topology::complete(3).expect("valid");
    for variant in
        Variant::of(chandy_lamport::Algorithm::ChandyLamport).filter(|v| *v != Variant::None && !v.is_channel_fault())
    {
        let (seed, failure) =
            first_failure(&t, variant).unwrap_or_else(|| panic!("{variant}: no seed in 0..64 is caught"));
        println!("{variant}, seed {seed}: {failure}");
        if variant == Variant::DoubleMarker {
            assert!(failure.contains("second marker") || failure.contains("already complete here"), "{failure}");
        }
    }
}

#[test]
fn runs_are_deterministic_for_given_seeds_including_channel_faults() {
    let t = Topology::complete(4).expect("valid");
    for variant in [Variant::None, Variant::NonFifo, Variant::LoseMarkers] {
        for seed in 0..4 {
            let a = workload(&t, variant, seed).expect("run");
            let b = workload(&t, variant, seed).expect("run");
            assert_eq!(a, b, "{variant} seed {seed}");
        }
    }
    let a = workload(&t, Variant::NonFifo, 1).expect("run");
    let b = workload(&t, Variant::NonFifo, 2).expect("run");
    assert_ne!(a.trace, b.trace, "different seeds, different runs");
}

#[test]
fn the_tick_limit_bounds_a_run_to_completion() {
    let t = Topology::ring(5).expect("valid");
    let config = SimConfig { tick_limit: 2, ..SimConfig::new(DelaySource::Seeded(0)) };
    let mut sim = Simulator::<Bank>::new(t.clone(), &[1; 5], config).expect("sim");
    sim.start_snapshot(ProcessId(0)).expect("snapshot");
    assert_eq!(sim.run_to_completion(), Ok(false), "a marker needs five deliveries around the ring");
    assert!(!sim.all_complete());
    let done = sim.finish();
    assert_eq!(done.incomplete, vec![S0]);
    assert!(matches!(done.check(&t), Err(SnapshotFailure::Unterminated { snapshot: S0, .. })));
}

#[test]
fn the_simulator_runs_any_application_orders_on_a_ring() {
    use chandy_lamport::apps::orders::{OrderMsg, Orders};
    use chandy_lamport::check::verify;

    // P0 -> P1 -> P2 -> P0; only P1 has a jar. P0 orders one from P1, whose cart for P0 goes
    // round the ring through P2; P2 takes a snapshot while the cart is on P1 -> P2.
    let t = Topology::ring(3).expect("ring");
    let p = ProcessId;
    let name = |i: u16| t.name(p(i)).to_string();
    let mut sim = Simulator::<Orders>::new(t.clone(), &[0, 1, 0], delays(&[0; 16])).expect("sim");
    sim.send(p(0), p(1), OrderMsg::Order).expect("P0 orders from P1");
    assert_eq!(
        sim.send(p(0), p(1), OrderMsg::Order),
        Err(SimError::Refused { process: name(0), reason: Refusal("already waiting on P1".into()) }),
        "the application's refusal, generically"
    );
    assert_eq!(sim.send(p(1), p(0), OrderMsg::Order), Err(SimError::NoLink { from: name(1), to: name(0) }));
    sim.tick(1).expect("tick");
    assert_eq!(sim.process(p(1)).expect("P1").app().pending, 0b001, "P1 holds P0's order");
    sim.send(p(1), p(2), OrderMsg::Cart { to: 0 }).expect("P1 ships, towards P2");
    assert_eq!(sim.start_snapshot(p(2)), Ok(S0));
    sim.tick(1).expect("tick");
    assert_eq!(sim.process(p(2)).expect("P2").app().relay, 0b001, "P2 holds the cart to pass on");
    sim.send(p(2), p(0), OrderMsg::Cart { to: 0 }).expect("P2 passes the cart on");
    assert!(sim.run_to_completion().expect("run"));
    sim.tick(SETTLE_TICKS).expect("tick");
    let done = sim.finish();

    done.check(&t).expect("verified and conserved");
    let snapshot = &done.snapshots[0].global;
    let verified = verify(&t, &done.trace, snapshot).expect("the theorem holds");
    assert_eq!(verified.star, snapshot.state);
    let p1_p2 = t.channel_between(p(1), p(2)).expect("a channel");
    assert_eq!(snapshot.state.channels[p1_p2.index()], vec![OrderMsg::Cart { to: 0 }], "the cart in transit");
    assert!(snapshot.state.processes.iter().all(|o| o.jars == 0 && o.relay == 0));
    assert_eq!(snapshot.state.processes[0].waiting, Some(1), "P0 recorded waiting on P1");
    assert_eq!((done.total(), done.final_total()), (1, 1));
    assert_eq!(done.states[0], Orders { jars: 1, ..Orders::new(p(0), 0) }, "P0 got its jar and waits no more");
    assert!(done.in_transit.iter().all(Vec::is_empty));
}
