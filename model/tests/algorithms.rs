//! The barrier algorithms (`--algorithm aligned|unaligned`) run by the same core as
//! Chandy–Lamport: exhaustive checks in basic mode with pinned state counts, walks that show
//! blocked inputs and both sides of unaligned channel state, and the combinations refused.

mod common;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::{Algorithm, ChannelId, Message, ProcessId, SnapshotId};
use common::{bad_input, config, run};
use model::{Action, Config, InitiatorSpec, Mode, SnapshotModel, TopologySpec};
use stateright::Model;

fn basic(algorithm: Algorithm, topology: TopologySpec, sends: u8) -> Config {
    let mut c = config(3, topology, sends, 1, InitiatorSpec::Only(vec![0]));
    c.mode = Mode::Basic;
    c.algorithm = algorithm;
    c
}

fn dag() -> TopologySpec {
    TopologySpec::File(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dag3.top").into())
}

#[test]
fn barrier_algorithms_keep_the_ledger_and_end_every_checkpoint_with_pinned_counts() {
    use Algorithm::*;
    // One checkpoint triggered by the coordinator, no crash or decline.
    for (algorithm, topology, sends, states) in [
        (Aligned, TopologySpec::Ring, 2, 24_032),
        (ChandyLamport, TopologySpec::Ring, 2, 4_736),
        (Aligned, TopologySpec::Complete, 1, 18_936),
        (Aligned, TopologySpec::Complete, 2, 1_598_549),
        (Aligned, dag(), 2, 6_200),
        (ChandyLamport, dag(), 2, 2_093),
        (Unaligned, TopologySpec::Ring, 1, 13_680),
        (Unaligned, TopologySpec::Ring, 2, 1_557_487),
        (Unaligned, TopologySpec::Complete, 1, 715_886),
        (Unaligned, dag(), 2, 280_194),
    ] {
        let c = basic(algorithm, topology.clone(), sends);
        let result = run(&c);
        assert!(result.ok && result.exhaustive, "{algorithm} {topology} K={sends}: {}", result.summary);
        assert_eq!(result.unique_states, states, "{algorithm} {topology} K={sends}");
    }
}

/// Takes `action` in `state`, which must offer it.
fn take(
    m: &SnapshotModel<Bank>,
    state: &model::system::state::State<Bank>,
    action: model::system::action::Act<Bank>,
) -> model::system::state::State<Bank> {
    assert!(m.enabled(state).contains(&action), "{action:?} not enabled in {state:?}");
    let next = m.next_state(state, action).expect("a step");
    assert!(next.refused.is_none(), "{action:?} refused: {:?}", next.refused);
    next
}

#[test]
fn unaligned_channel_state_is_the_overtaken_input_then_the_senders_buffer() {
    let mut c = basic(Algorithm::Unaligned, TopologySpec::Complete, 2);
    c.procs = Some(2);
    let m = SnapshotModel::<Bank>::new(c.resolve().expect("valid"));
    let t = m.topology().clone();
    let c01 = t.channel_between(ProcessId(0), ProcessId(1)).expect("0->1").0 as u8;
    let c10 = t.channel_between(ProcessId(1), ProcessId(0)).expect("1->0").0 as u8;
    let s = m.init_states().remove(0);
    let send =
        m.enabled(&s).into_iter().find(|a| matches!(a, Action::Send { from: 0, channel, .. } if *channel == c01));
    let send = send.expect("house 0 may send on 0->1");
    let s = take(&m, &s, send);
    let s = take(&m, &s, Action::Transmit { process: 0, channel: c01 });
    let s = take(&m, &s, send);
    let s = take(&m, &s, Action::Trigger);
    let s = take(&m, &s, Action::Initiate { process: 0, snapshot: 0 });
    // On the wire: message, barrier; one message still buffered. The barrier may overtake the message.
    let wire: Vec<bool> = s.chans.get(c01 as usize).iter().map(|p| p.is_app()).collect();
    assert_eq!(wire, [true, false]);
    let s = take(&m, &s, Action::Deliver { channel: c01, index: 1 });
    let s = take(&m, &s, Action::Deliver { channel: c10, index: 0 });
    let recorded = m.recorded(&s, SnapshotId(0)).expect("complete");
    assert_eq!(recorded.channels[c01 as usize].len(), 2, "the overtaken cart, then the buffered one");
    assert_eq!(recorded.accounted(), m.initial_total());
    assert_eq!(m.recorded_accounted(&s, SnapshotId(0)), Some(m.initial_total()));
    assert_eq!(s.accounted(), m.initial_total(), "a buffered cart is still counted");
}

#[test]
fn an_aligned_process_takes_nothing_from_an_input_whose_barrier_is_in() {
    let c = basic(Algorithm::Aligned, TopologySpec::Complete, 2);
    let m = SnapshotModel::<Bank>::new(c.resolve().expect("valid"));
    let t = m.topology().clone();
    let ch = |a: u16, b: u16| t.channel_between(ProcessId(a), ProcessId(b)).expect("a channel").0 as u8;
    let s = m.init_states().remove(0);
    // Process 0 initiates, then sends a message to 2 behind its barrier; 1 sends a message to 2.
    let s = take(&m, &s, Action::Trigger);
    let s = take(&m, &s, Action::Initiate { process: 0, snapshot: 0 });
    let to2 = |from: u8, c: u8| {
        m.enabled(&s)
            .into_iter()
            .find(|a| matches!(a, Action::Send { from: f, channel, .. } if *f == from && *channel == c))
    };
    let s = take(&m, &s, to2(0, ch(0, 2)).expect("0 sends to 2"));
    let s = take(&m, &s, to2(1, ch(1, 2)).expect("1 sends to 2"));
    // Process 2 takes the barrier from 0: that input is blocked, the other is not.
    let s = take(&m, &s, Action::Deliver { channel: ch(0, 2), index: 0 });
    let p2 = &s.procs[2];
    assert!(p2.is_blocked(&t, ChannelId(u32::from(ch(0, 2)))) && !p2.has_recorded(SnapshotId(0)));
    assert!(matches!(s.chans.get(ch(0, 2) as usize)[0].msg, Message::App(_)));
    assert!(!m.enabled(&s).contains(&Action::Deliver { channel: ch(0, 2), index: 0 }));
    let s = take(&m, &s, Action::Deliver { channel: ch(1, 2), index: 0 });
    assert!(!s.procs[2].has_recorded(SnapshotId(0)), "still waiting for the barrier from 1");
}

#[test]
fn barrier_algorithms_refuse_what_they_do_not_support_yet() {
    bad_input(
        &["check", "--algorithm", "aligned", "--properties", "literal", "--procs", "2"],
        "--algorithm aligned is checked with --properties basic or full",
    );
    bad_input(
        &["check", "--algorithm", "unaligned", "--properties", "basic", "--por"],
        "--algorithm unaligned cannot be used with --por",
    );
    bad_input(
        &["check", "--algorithm", "aligned", "--properties", "basic", "--variant", "late-record"],
        "--variant late-record is a fault of --algorithm chandy-lamport, not of --algorithm aligned",
    );
    bad_input(&["check", "--algorithm", "flink"], "unknown algorithm \"flink\"");
    bad_input(&["check", "--algorithm", "aligned", "--properties", "basic", "--symmetry"], "--symmetry");
}
