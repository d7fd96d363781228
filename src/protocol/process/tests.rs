//! Unit tests of the marker rules.

use super::*;
use crate::apps::bank::{Bank, Jars};

type Out = Vec<Effect<Jars>>;

fn p(i: u16) -> ProcessId {
    ProcessId(i)
}
fn c(topology: &Topology, a: u16, b: u16) -> ChannelId {
    topology.channel_between(p(a), p(b)).unwrap()
}
const S0: SnapshotId = SnapshotId(0);
const S1: SnapshotId = SnapshotId(1);

fn markers(out: &Out) -> Vec<ChannelId> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send { channel, message: Message::Marker(_) } => Some(*channel),
            _ => None,
        })
        .collect()
}

#[test]
fn a_taken_snapshot_with_the_largest_id_is_refused_afterwards() {
    let t = Topology::ring(2).unwrap();
    let mut q = Process::new(p(0), Bank::new(1));
    let mut out = Out::new();
    let last = SnapshotId(u32::MAX);
    q.initiate(&t, last, &mut out).unwrap();
    q.receive(&t, c(&t, 1, 0), Message::Marker(last), &mut out).unwrap();
    q.take_local_snapshot(&t, last).unwrap();
    assert!(q.is_complete(last) && q.has_recorded(last));
    assert_eq!(q.initiate(&t, last, &mut out), Err(CoreError::SnapshotCompleted { process: p(0), snapshot: last }));
}

#[test]
fn sending_rule_initiation_records_then_sends_every_marker() {
    let t = Topology::complete(3).unwrap();
    let mut q = Process::new(p(0), Bank::new(5));
    let mut out = Out::new();
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(out[0], Effect::Recorded { snapshot: S0, initiated: true });
    assert_eq!(markers(&out), t.outgoing(p(0)).to_vec());
    let slot = q.slot(S0).unwrap();
    assert_eq!(slot.state, Some(Bank::new(5)));
    assert!((0..slot.incoming()).all(|i| !slot.marker(i)), "every incoming channel is being recorded");
    // A send after recording goes out after the markers (they are already out).
    out.clear();
    q.send(&t, c(&t, 0, 1), Jars(2), &mut out).unwrap();
    assert_eq!(q.app(), &Bank::new(3), "the send debits the house");
    assert_eq!(out, vec![Effect::Send { channel: c(&t, 0, 1), message: Message::App(Jars(2)) }]);
    assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(5)), "recorded state is unchanged by later steps");
}

#[test]
fn receiving_rule_first_marker_records_and_closes_that_channel_empty() {
    let t = Topology::complete(3).unwrap();
    let mut q = Process::new(p(1), Bank::new(4));
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out[0], Effect::Closed { snapshot: S0, channel: c(&t, 0, 1) });
    assert_eq!(out[1], Effect::Recorded { snapshot: S0, initiated: false });
    assert_eq!(markers(&out), t.outgoing(p(1)).to_vec());
    let slot = q.slot(S0).unwrap();
    let from0 = t.incoming(p(1)).iter().position(|&x| x == c(&t, 0, 1)).unwrap();
    assert!(slot.marker(from0) && slot.record(from0).next().is_none());
    assert!(!q.is_complete(S0));
}

#[test]
fn receiving_rule_recorded_process_closes_record_with_messages_in_between() {
    let t = Topology::complete(3).unwrap();
    let mut q = Process::new(p(0), Bank::new(1));
    let mut out = Out::new();
    // Before recording: not recorded.
    q.receive(&t, c(&t, 1, 0), Message::App(Jars(1)), &mut out).unwrap();
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(2)));
    // Between recording and the marker: recorded, in order.
    q.receive(&t, c(&t, 1, 0), Message::App(Jars(3)), &mut out).unwrap();
    q.receive(&t, c(&t, 1, 0), Message::App(Jars(4)), &mut out).unwrap();
    q.receive(&t, c(&t, 2, 0), Message::App(Jars(5)), &mut out).unwrap();
    out.clear();
    q.receive(&t, c(&t, 1, 0), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out, vec![Effect::Closed { snapshot: S0, channel: c(&t, 1, 0) }]);
    // After the marker: not recorded on that channel, still recorded on the open one.
    q.receive(&t, c(&t, 1, 0), Message::App(Jars(6)), &mut out).unwrap();
    q.receive(&t, c(&t, 2, 0), Message::App(Jars(7)), &mut out).unwrap();
    out.clear();
    q.receive(&t, c(&t, 2, 0), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out, vec![Effect::Closed { snapshot: S0, channel: c(&t, 2, 0) }, Effect::Completed { snapshot: S0 }]);
    let local = q.take_local_snapshot(&t, S0).unwrap();
    assert_eq!(local.state, Bank::new(2));
    assert_eq!(local.channels, vec![(c(&t, 1, 0), vec![Jars(3), Jars(4)]), (c(&t, 2, 0), vec![Jars(5), Jars(7)])]);
    assert_eq!(q.app(), &Bank::new(2 + 3 + 4 + 5 + 6 + 7));
}

#[test]
fn process_with_single_incoming_channel_completes_on_first_marker() {
    let t = Topology::ring(3).unwrap();
    let mut q = Process::new(p(1), Bank::new(0));
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out.last(), Some(&Effect::Completed { snapshot: S0 }));
    assert!(q.is_complete(S0));
}

#[test]
fn overlapping_snapshots_keep_separate_records() {
    let t = Topology::complete(2).unwrap();
    let mut q = Process::new(p(0), Bank::new(10));
    let mut out = Out::new();
    let from1 = c(&t, 1, 0);
    q.initiate(&t, S0, &mut out).unwrap();
    q.receive(&t, from1, Message::App(Jars(1)), &mut out).unwrap();
    q.initiate(&t, S1, &mut out).unwrap();
    q.receive(&t, from1, Message::App(Jars(2)), &mut out).unwrap();
    q.receive(&t, from1, Message::Marker(S0), &mut out).unwrap();
    q.receive(&t, from1, Message::App(Jars(3)), &mut out).unwrap();
    q.receive(&t, from1, Message::Marker(S1), &mut out).unwrap();
    assert_eq!(q.take_local_snapshot(&t, S0).unwrap().channels, vec![(from1, vec![Jars(1), Jars(2)])]);
    let s1 = q.take_local_snapshot(&t, S1).unwrap();
    assert_eq!(s1.state, Bank::new(11));
    assert_eq!(s1.channels, vec![(from1, vec![Jars(2), Jars(3)])]);
}

#[test]
fn refused_steps_are_typed_errors() {
    let t = Topology::ring(3).unwrap();
    let mut q = Process::new(p(1), Bank::new(3));
    let mut out = Out::new();
    let wrong = c(&t, 1, 2); // outgoing, not incoming
    assert_eq!(
        q.receive(&t, wrong, Message::App(Jars(1)), &mut out),
        Err(CoreError::NotIncoming { process: p(1), channel: wrong })
    );
    let not_out = c(&t, 0, 1);
    assert_eq!(q.send(&t, not_out, Jars(1), &mut out), Err(CoreError::NotOutgoing { process: p(1), channel: not_out }));
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(q.initiate(&t, S0, &mut out), Err(CoreError::AlreadyRecorded { process: p(1), snapshot: S0 }));
    assert_eq!(q.take_local_snapshot(&t, S0).unwrap_err(), CoreError::Incomplete { process: p(1), snapshot: S0 });
    assert_eq!(q.take_local_snapshot(&t, S1).unwrap_err(), CoreError::UnknownSnapshot { process: p(1), snapshot: S1 });
    q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    assert!(q.is_complete(S0));
    // A second marker while the slot is still held.
    assert_eq!(
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out),
        Err(CoreError::DuplicateMarker { process: p(1), snapshot: S0, channel: c(&t, 0, 1) })
    );
    q.take_local_snapshot(&t, S0).unwrap();
    assert_eq!(
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out),
        Err(CoreError::SnapshotCompleted { process: p(1), snapshot: S0 })
    );
    assert_eq!(q.initiate(&t, S0, &mut out), Err(CoreError::SnapshotCompleted { process: p(1), snapshot: S0 }));
    // A marker's receipt then an initiation of the same id.
    let mut r = Process::new(p(2), Bank::new(0));
    r.receive(&t, c(&t, 1, 2), Message::Marker(S1), &mut out).unwrap();
    assert_eq!(r.initiate(&t, S1, &mut out), Err(CoreError::AlreadyRecorded { process: p(2), snapshot: S1 }));
}

#[test]
fn deferred_markers_leave_on_the_next_step_or_when_idle() {
    let t = Topology::complete(3).unwrap();
    let mut q = Process::with_variant(p(0), Bank::new(3), Variant::SendBeforeMarker);
    let mut out = Out::new();
    assert!(!q.faults_pending());
    q.initiate(&t, S0, &mut out).unwrap();
    assert!(markers(&out).is_empty(), "held back");
    assert!(q.faults_pending());
    // The next send leaves first, the markers right behind it.
    out.clear();
    q.send(&t, c(&t, 0, 1), Jars(1), &mut out).unwrap();
    assert_eq!(out[0], Effect::Send { channel: c(&t, 0, 1), message: Message::App(Jars(1)) });
    assert_eq!(markers(&out), t.outgoing(p(0)).to_vec());
    assert!(!q.faults_pending());
    // Held again for a second snapshot; this time the process is idle.
    q.initiate(&t, S1, &mut out).unwrap();
    assert!(q.faults_pending());
    out.clear();
    q.release_faults(&t, &mut out);
    assert_eq!(markers(&out), t.outgoing(p(0)).to_vec());
    assert!(!q.faults_pending());
}

#[test]
fn a_deferred_recording_happens_after_one_more_message_or_when_idle() {
    let t = Topology::complete(3).unwrap();
    for idle in [false, true] {
        let mut q = Process::with_variant(p(1), Bank::new(3), Variant::LateRecord);
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert!(!q.has_recorded(S0) && q.faults_pending());
        out.clear();
        if idle {
            q.release_faults(&t, &mut out);
            assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(3)));
        } else {
            q.receive(&t, c(&t, 2, 1), Message::App(Jars(2)), &mut out).unwrap();
            assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(5)), "records after the message");
        }
        assert_eq!(out.iter().filter(|e| matches!(e, Effect::Recorded { .. })).count(), 1);
        assert_eq!(markers(&out), t.outgoing(p(1)).to_vec());
        assert!(!q.faults_pending());
    }
    // The correct algorithm defers nothing.
    let mut q = Process::new(p(1), Bank::new(3));
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    assert!(q.has_recorded(S0) && !q.faults_pending());
}

#[test]
fn swap_record_closes_the_other_snapshots_record() {
    let t = Topology::complete(2).unwrap();
    let from1 = c(&t, 1, 0);
    let mut q = Process::with_variant(p(0), Bank::new(10), Variant::SwapRecord);
    let mut out = Out::new();
    q.initiate(&t, S0, &mut out).unwrap();
    q.initiate(&t, S1, &mut out).unwrap();
    q.receive(&t, from1, Message::App(Jars(1)), &mut out).unwrap();
    out.clear();
    // S0's marker closes S1's record; S0's stays open and records the next message.
    q.receive(&t, from1, Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out[0], Effect::Closed { snapshot: S1, channel: from1 });
    assert!(q.is_complete(S1) && !q.is_complete(S0));
    q.receive(&t, from1, Message::App(Jars(2)), &mut out).unwrap();
    out.clear();
    // S1's marker then closes S0's.
    q.receive(&t, from1, Message::Marker(S1), &mut out).unwrap();
    assert_eq!(out[0], Effect::Closed { snapshot: S0, channel: from1 });
    assert_eq!(q.take_local_snapshot(&t, S0).unwrap().channels, vec![(from1, vec![Jars(1), Jars(2)])]);
    assert_eq!(q.take_local_snapshot(&t, S1).unwrap().channels, vec![(from1, vec![Jars(1)])]);
}

#[test]
fn refused_steps_leave_the_state_unchanged() {
    let t = Topology::complete(3).unwrap();
    let mut q = Process::new(p(0), Bank::new(3));
    let mut out = Out::new();
    q.initiate(&t, S0, &mut out).unwrap();
    let before = q.clone();
    let _ = q.receive(&t, c(&t, 0, 1), Message::App(Jars(1)), &mut out);
    let _ = q.initiate(&t, S0, &mut out);
    assert_eq!(q, before);
}

fn slot(id: u32, incoming: usize, state: Option<u32>, closed: &[usize], recorded: &[(usize, u32)]) -> Slot<Bank> {
    let mut s = Slot::new(SnapshotId(id), incoming);
    s.state = state.map(Bank::new);
    for &i in closed {
        s.closed.set(i);
    }
    for &(i, jars) in recorded {
        s.push(i, Jars(jars), false);
    }
    s
}

fn hash_of<T: Hash>(t: &T) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(t)
}

#[test]
fn slots_compare_each_channel_record_on_its_own() {
    let base = slot(0, 3, Some(2), &[0], &[(0, 1), (1, 2), (0, 3)]);
    // The same records, interleaved differently across channels: equal, same hash.
    let interleaved = slot(0, 3, Some(2), &[0], &[(1, 2), (0, 1), (0, 3)]);
    assert_eq!(base, interleaved);
    assert_eq!(hash_of(&base), hash_of(&interleaved));
    assert_eq!(base.incoming(), 3);
    assert_eq!(base.recorded().map(|(c, m)| (c, m.0)).collect::<Vec<_>>(), [(0, 1), (1, 2), (0, 3)]);
    // Each field on its own makes a difference.
    let differing = [
        slot(1, 3, Some(2), &[0], &[(0, 1), (1, 2), (0, 3)]),
        slot(0, 3, Some(5), &[0], &[(0, 1), (1, 2), (0, 3)]),
        slot(0, 3, None, &[0], &[(0, 1), (1, 2), (0, 3)]),
        slot(0, 4, Some(2), &[0], &[(0, 1), (1, 2), (0, 3)]),
        slot(0, 3, Some(2), &[0, 2], &[(0, 1), (1, 2), (0, 3)]),
        slot(0, 3, Some(2), &[0], &[(0, 1), (1, 2)]),
        slot(0, 3, Some(2), &[0], &[(0, 3), (1, 2), (0, 1)]),
        slot(0, 3, Some(2), &[0], &[(0, 1), (2, 2), (0, 3)]),
    ];
    for (k, other) in differing.iter().enumerate() {
        assert_ne!(&base, other, "case {k}");
        assert_ne!(hash_of(&base), hash_of(other), "case {k}");
    }
}

#[test]
fn a_process_reports_its_variant_and_slots() {
    let t = Topology::ring(2).unwrap();
    let mut q = Process::with_variant(p(0), Bank::new(1), Variant::LateRecord);
    assert_eq!(q.variant(), Variant::LateRecord);
    assert!(q.slots().is_empty());
    q.initiate(&t, S0, &mut Out::new()).unwrap();
    assert_eq!(q.slots().iter().map(|s| s.id).collect::<Vec<_>>(), [S0]);
}

fn aligned(t: &Topology, i: u16, jars: u32) -> Process<Bank> {
    Process::new(p(i), Bank::new(jars)).with_algorithm(t, Algorithm::Aligned, &[p(0)])
}

fn unaligned(t: &Topology, i: u16, jars: u32) -> Process<Bank> {
    Process::new(p(i), Bank::new(jars)).with_algorithm(t, Algorithm::Unaligned, &[p(0)])
}

#[test]
fn aligned_barriers_block_each_input_until_all_are_in_then_record_no_channel_state() {
    // Complete graph from process 0: process 2's inputs 0->2 and 1->2 are no back edges.
    let t = Topology::complete(3).unwrap();
    let mut q = aligned(&t, 2, 0);
    assert_eq!(q.algorithm(), Algorithm::Aligned);
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out, vec![Effect::Closed { snapshot: S0, channel: c(&t, 0, 2) }]);
    assert!(!q.has_recorded(S0));
    assert!(q.is_blocked(&t, c(&t, 0, 2)));
    assert!(!q.is_blocked(&t, c(&t, 1, 2)));
    assert!(!q.faults_pending(), "aligning is not deferred work: releasing faults must not record");
    // Data behind the barrier waits; data on the other input is taken and not recorded.
    let before = q.clone();
    assert_eq!(
        q.receive(&t, c(&t, 0, 2), Message::App(Jars(1)), &mut out),
        Err(CoreError::Blocked { process: p(2), channel: c(&t, 0, 2) })
    );
    assert_eq!(q, before);
    // Barriers and cancellations stay behind it too.
    for message in [Message::Marker(S1), Message::Cancel(S0)] {
        let blocked = Err(CoreError::Blocked { process: p(2), channel: c(&t, 0, 2) });
        assert_eq!(q.receive(&t, c(&t, 0, 2), message, &mut out), blocked);
    }
    assert_eq!(q, before);
    q.receive(&t, c(&t, 1, 2), Message::App(Jars(2)), &mut out).unwrap();
    assert_eq!(q.app(), &Bank::new(2));
    q.release_faults(&t, &mut out);
    assert!(!q.has_recorded(S0));
    // The last barrier: record, forward, complete, unblock.
    out.clear();
    q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(out[0], Effect::Closed { snapshot: S0, channel: c(&t, 1, 2) });
    assert_eq!(out[1], Effect::Recorded { snapshot: S0, initiated: false });
    assert_eq!(markers(&out), vec![c(&t, 2, 0), c(&t, 2, 1)]);
    assert_eq!(out.last(), Some(&Effect::Completed { snapshot: S0 }));
    assert!(!q.is_blocked(&t, c(&t, 0, 2)));
    q.receive(&t, c(&t, 0, 2), Message::App(Jars(1)), &mut out).unwrap();
    let local = q.take_local_snapshot(&t, S0).unwrap();
    assert_eq!(local.state, Bank::new(2));
    assert_eq!(local.channels, vec![(c(&t, 0, 2), vec![]), (c(&t, 1, 2), vec![])]);
    assert!(local.outputs.is_empty());
}

#[test]
fn aligned_barriers_log_back_edges_instead_of_waiting_for_them() {
    // From process 0 on the complete graph, 2->1 is a back edge: process 1 records on the
    // barrier from 0 and logs 2->1 until its barrier, as Chandy–Lamport would.
    let t = Topology::complete(3).unwrap();
    let mut q = aligned(&t, 1, 0);
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    assert!(q.has_recorded(S0));
    assert!(!q.is_blocked(&t, c(&t, 2, 1)));
    q.receive(&t, c(&t, 2, 1), Message::App(Jars(3)), &mut out).unwrap();
    q.receive(&t, c(&t, 2, 1), Message::Marker(S0), &mut out).unwrap();
    let local = q.take_local_snapshot(&t, S0).unwrap();
    assert_eq!(local.channels, vec![(c(&t, 0, 1), vec![]), (c(&t, 2, 1), vec![Jars(3)])]);
    // On a ring the initiator's own input is the back edge: it records at once and logs it.
    let ring = Topology::ring(3).unwrap();
    let mut r = aligned(&ring, 0, 5);
    r.initiate(&ring, S0, &mut out).unwrap();
    r.receive(&ring, c(&ring, 2, 0), Message::App(Jars(1)), &mut out).unwrap();
    r.receive(&ring, c(&ring, 2, 0), Message::Marker(S0), &mut out).unwrap();
    assert_eq!(r.take_local_snapshot(&ring, S0).unwrap().channels, vec![(c(&ring, 2, 0), vec![Jars(1)])]);
}

#[test]
fn unaligned_barriers_overtake_output_buffers_which_become_channel_state() {
    let t = Topology::complete(2).unwrap();
    let (out01, in10) = (c(&t, 0, 1), c(&t, 1, 0));
    let mut q = unaligned(&t, 0, 5);
    let mut out = Out::new();
    q.send(&t, out01, Jars(1), &mut out).unwrap();
    q.send(&t, out01, Jars(2), &mut out).unwrap();
    assert!(out.is_empty(), "sends wait in the output buffer");
    assert_eq!(q.buffered(&t, out01).copied().collect::<Vec<_>>(), [Jars(1), Jars(2)]);
    assert_eq!(q.buffered_all().copied().collect::<Vec<_>>(), [Jars(1), Jars(2)]);
    q.transmit(&t, out01, &mut out).unwrap();
    assert_eq!(out, vec![Effect::Send { channel: out01, message: Message::App(Jars(1)) }]);
    // The barrier leaves at once, ahead of the buffered message, which is recorded.
    out.clear();
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(markers(&out), vec![out01]);
    assert_eq!(q.slot(S0).unwrap().output(0).copied().collect::<Vec<_>>(), [Jars(2)]);
    out.clear();
    q.transmit(&t, out01, &mut out).unwrap();
    assert_eq!(out, vec![Effect::Send { channel: out01, message: Message::App(Jars(2)) }]);
    assert_eq!(q.transmit(&t, out01, &mut out), Err(CoreError::NothingBuffered { process: p(0), channel: out01 }));
    q.receive(&t, in10, Message::Marker(S0), &mut out).unwrap();
    let local = q.take_local_snapshot(&t, S0).unwrap();
    assert_eq!(local.state, Bank::new(2));
    assert_eq!(local.outputs, vec![(out01, vec![Jars(2)])]);
}

#[test]
fn unaligned_barriers_overtake_queued_input_which_becomes_channel_state() {
    let t = Topology::complete(3).unwrap();
    let mut q = unaligned(&t, 1, 0);
    let mut out = Out::new();
    q.receive_overtaking(&t, c(&t, 0, 1), Message::Marker(S0), &[Jars(1), Jars(2)], &mut out).unwrap();
    assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(0)), "recorded before the overtaken data");
    // The overtaken messages still arrive, after the barrier: applied, not recorded again.
    q.receive(&t, c(&t, 0, 1), Message::App(Jars(1)), &mut out).unwrap();
    q.receive(&t, c(&t, 0, 1), Message::App(Jars(2)), &mut out).unwrap();
    // The other input: recorded until its barrier, which overtakes one more message.
    q.receive(&t, c(&t, 2, 1), Message::App(Jars(4)), &mut out).unwrap();
    q.receive_overtaking(&t, c(&t, 2, 1), Message::Marker(S0), &[Jars(8)], &mut out).unwrap();
    q.receive(&t, c(&t, 2, 1), Message::App(Jars(8)), &mut out).unwrap();
    let local = q.take_local_snapshot(&t, S0).unwrap();
    assert_eq!(local.channels, vec![(c(&t, 0, 1), vec![Jars(1), Jars(2)]), (c(&t, 2, 1), vec![Jars(4), Jars(8)])]);
    assert_eq!(q.app(), &Bank::new(15));
}

#[test]
fn only_unaligned_barriers_overtake() {
    let t = Topology::complete(2).unwrap();
    for mut q in [Process::new(p(1), Bank::new(0)), aligned(&t, 1, 0)] {
        let before = q.clone();
        let algorithm = q.algorithm();
        assert_eq!(
            q.receive_overtaking(&t, c(&t, 0, 1), Message::Marker(S0), &[Jars(1)], &mut Out::new()),
            Err(CoreError::Overtaking { process: p(1), channel: c(&t, 0, 1), algorithm })
        );
        assert_eq!(q, before);
    }
    let mut u = unaligned(&t, 1, 0);
    assert!(matches!(
        u.receive_overtaking(&t, c(&t, 0, 1), Message::App(Jars(2)), &[Jars(1)], &mut Out::new()),
        Err(CoreError::Overtaking { .. })
    ));
}

#[test]
fn unaligned_channel_state_is_the_receivers_side_then_the_senders() {
    use crate::protocol::Assembler;
    let t = Topology::complete(2).unwrap();
    let (c01, c10) = (c(&t, 0, 1), c(&t, 1, 0));
    let mut a = unaligned(&t, 0, 5);
    let mut b = unaligned(&t, 1, 0);
    let mut out = Out::new();
    a.send(&t, c01, Jars(1), &mut out).unwrap();
    a.transmit(&t, c01, &mut out).unwrap(); // on the wire
    a.send(&t, c01, Jars(2), &mut out).unwrap(); // buffered
    a.initiate(&t, S0, &mut out).unwrap(); // the barrier is on the wire behind message 1
                                           // b takes the barrier ahead of message 1.
    b.receive_overtaking(&t, c01, Message::Marker(S0), &[Jars(1)], &mut out).unwrap();
    a.receive(&t, c10, Message::Marker(S0), &mut out).unwrap();
    let mut assembler = Assembler::new();
    assert_eq!(assembler.add(&t, a.take_local_snapshot(&t, S0).unwrap()), Ok(None));
    let global = assembler.add(&t, b.take_local_snapshot(&t, S0).unwrap()).unwrap().unwrap();
    assert_eq!(global.state.channels[c01.index()], vec![Jars(1), Jars(2)]);
    assert_eq!(global.state.processes, vec![Bank::new(2), Bank::new(0)]);
}

fn cancels(out: &Out) -> Vec<(ChannelId, SnapshotId)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send { channel, message: Message::Cancel(s) } => Some((*channel, *s)),
            _ => None,
        })
        .collect()
}

fn aborted(out: &Out) -> Vec<SnapshotId> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Aborted { snapshot } => Some(*snapshot),
            _ => None,
        })
        .collect()
}

#[test]
fn a_cancellation_barrier_gives_up_the_checkpoint_unblocks_and_goes_on_downstream() {
    let t = Topology::complete(3).unwrap();
    let mut q = aligned(&t, 2, 0);
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
    assert!(q.is_blocked(&t, c(&t, 0, 2)));
    out.clear();
    q.receive(&t, c(&t, 1, 2), Message::Cancel(S0), &mut out).unwrap();
    assert_eq!(aborted(&out), [S0]);
    assert_eq!(cancels(&out), [(c(&t, 2, 0), S0), (c(&t, 2, 1), S0)]);
    assert!(!q.is_blocked(&t, c(&t, 0, 2)) && q.slots().is_empty() && !q.has_recorded(S0));
    // The late barrier and a second cancellation of the checkpoint given up change nothing.
    let before = q.clone();
    out.clear();
    q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
    q.receive(&t, c(&t, 0, 2), Message::Cancel(S0), &mut out).unwrap();
    assert_eq!((out.len(), &q), (0, &before));
    q.receive(&t, c(&t, 0, 2), Message::App(Jars(1)), &mut out).unwrap();
    // The next checkpoint runs as usual.
    q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
    q.receive(&t, c(&t, 1, 2), Message::Marker(S1), &mut out).unwrap();
    assert!(q.is_complete(S1));
}

#[test]
fn a_cancellation_of_a_checkpoint_never_seen_gives_up_the_older_one_in_progress() {
    let t = Topology::complete(3).unwrap();
    let mut q = unaligned(&t, 2, 0);
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
    assert!(q.has_recorded(S0));
    out.clear();
    q.receive(&t, c(&t, 1, 2), Message::Cancel(S1), &mut out).unwrap();
    assert_eq!(aborted(&out), [S0, S1]);
    assert_eq!(cancels(&out).len(), 2);
    assert!(q.slots().is_empty());
    // Barriers of either are obsolete now.
    out.clear();
    q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
    q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
    assert!(out.is_empty() && q.slots().is_empty());
    // A cancellation of a checkpoint complete here is ignored.
    let mut r = unaligned(&t, 2, 0);
    let s2 = SnapshotId(2);
    r.receive(&t, c(&t, 0, 2), Message::Marker(s2), &mut out).unwrap();
    r.receive(&t, c(&t, 1, 2), Message::Marker(s2), &mut out).unwrap();
    assert!(r.is_complete(s2));
    out.clear();
    r.receive(&t, c(&t, 1, 2), Message::Cancel(s2), &mut out).unwrap();
    assert!(out.is_empty() && r.is_complete(s2));
}

#[test]
fn a_newer_barrier_subsumes_the_checkpoint_in_progress_and_older_barriers_are_obsolete() {
    let t = Topology::complete(3).unwrap();
    for algorithm in [Algorithm::Aligned, Algorithm::Unaligned] {
        let mut q = Process::new(p(2), Bank::new(0)).with_algorithm(&t, algorithm, &[p(0)]);
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
        out.clear();
        q.receive(&t, c(&t, 1, 2), Message::Marker(S1), &mut out).unwrap();
        assert_eq!(aborted(&out), [S0], "{algorithm}");
        assert!(q.slot(S0).is_none() && q.slot(S1).is_some(), "{algorithm}");
        // The checkpoint given up is cancelled downstream, ahead of anything of the newer one.
        let first_sends: Vec<_> = out.iter().filter(|e| matches!(e, Effect::Send { .. })).take(2).cloned().collect();
        let cancel = |to| Effect::Send { channel: c(&t, 2, to), message: Message::Cancel(S0) };
        assert_eq!(first_sends, [cancel(0), cancel(1)], "{algorithm}");
        out.clear();
        if algorithm.aligns() {
            // S1's barrier blocks its input: nothing more is taken from it until S1 aligns.
            let blocked = Err(CoreError::Blocked { process: p(2), channel: c(&t, 1, 2) });
            assert_eq!(q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out), blocked);
        } else {
            // The old barrier on the other channel is ignored: S1's record of it stays open.
            q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
        }
        q.receive(&t, c(&t, 0, 2), Message::App(Jars(3)), &mut out).unwrap();
        assert!(aborted(&out).is_empty() && !q.slot(S1).is_some_and(|s| s.marker(0)), "{algorithm}");
        q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
        assert!(q.is_complete(S1), "{algorithm}");
        // Aligned, now unblocked: the obsolete barrier is ignored.
        q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
        assert!(aborted(&out).is_empty(), "{algorithm}");
    }
}

#[test]
fn mixed_barriers_after_decline_takes_an_obsolete_barrier_for_the_current_one() {
    let t = Topology::complete(3).unwrap();
    let mut q = Process::with_variant(p(2), Bank::new(0), Variant::MixedBarriersAfterDecline).with_algorithm(
        &t,
        Algorithm::Unaligned,
        &[p(0)],
    );
    let mut out = Out::new();
    q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
    q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
    // S0's late barrier on 1->2 closes S1's record there: the message behind it is lost to S1.
    q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
    assert!(q.is_complete(S1));
    q.receive(&t, c(&t, 1, 2), Message::App(Jars(1)), &mut out).unwrap();
    assert_eq!(q.slot(S1).map(|s| s.recorded().count()), Some(0));
}

#[test]
fn a_decline_gives_up_the_part_and_sends_cancellations() {
    let t = Topology::ring(3).unwrap();
    let mut q = unaligned(&t, 1, 0);
    let mut out = Out::new();
    assert_eq!(q.decline(&t, S0, &mut out), Err(CoreError::UnknownSnapshot { process: p(1), snapshot: S0 }));
    q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    assert!(q.is_complete(S0));
    out.clear();
    q.decline(&t, S0, &mut out).unwrap();
    assert_eq!(
        out,
        vec![Effect::Aborted { snapshot: S0 }, Effect::Send { channel: c(&t, 1, 2), message: Message::Cancel(S0) }]
    );
    assert!(q.slots().is_empty() && !q.is_complete(S0));
    // Chandy–Lamport has no cancellation: refused, state unchanged.
    let mut r = Process::new(p(1), Bank::new(0));
    r.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
    let before = r.clone();
    let none = CoreError::NoCancellation { process: p(1), algorithm: Algorithm::ChandyLamport };
    assert_eq!(r.decline(&t, S0, &mut out), Err(none.clone()));
    assert_eq!(r.receive(&t, c(&t, 0, 1), Message::Cancel(S0), &mut out), Err(none));
    assert_eq!(r, before);
    // Nor does a cancellation overtake.
    assert!(matches!(
        q.receive_overtaking(&t, c(&t, 0, 1), Message::Cancel(S1), &[Jars(1)], &mut out),
        Err(CoreError::Overtaking { .. })
    ));
}

#[test]
fn a_trigger_older_than_the_newest_checkpoint_seen_is_declined() {
    let t = Topology::ring(3).unwrap();
    let mut q = aligned(&t, 0, 0);
    let mut out = Out::new();
    q.initiate(&t, S1, &mut out).unwrap();
    assert!(q.has_recorded(S1));
    out.clear();
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(out, vec![Effect::Aborted { snapshot: S0 }]);
    // A second trigger of the one started changes nothing.
    out.clear();
    q.initiate(&t, S1, &mut out).unwrap();
    assert!(out.is_empty());
    // A newer trigger subsumes the one in progress.
    q.initiate(&t, SnapshotId(2), &mut out).unwrap();
    assert_eq!(aborted(&out), [S1]);
    assert!(q.has_recorded(SnapshotId(2)));
}

#[test]
fn a_process_holding_restored_input_declines_new_checkpoints_as_not_ready() {
    // Complete graph of 3: process 2 has inputs 0->2 and 1->2; one restored message waits on 1->2.
    let t = Topology::complete(3).unwrap();
    let (c02, c12) = (c(&t, 0, 2), c(&t, 1, 2));
    for variant in [Variant::None, Variant::CheckpointDuringRecovery] {
        let mut q =
            Process::with_variant(p(2), Bank::new(0), variant).with_algorithm(&t, Algorithm::Unaligned, &[p(0)]);
        let mut out = Out::new();
        q.restore_input(&t, c12, 1).unwrap();
        assert!(q.is_recovering() && q.restored(&t, c12) == 1 && q.restored(&t, c02) == 0);
        // Nothing new on 1->2 comes ahead of the restored message.
        let ahead = q.receive(&t, c12, Message::Marker(S0), &mut out);
        assert_eq!(ahead, Err(CoreError::AheadOfRestored { process: p(2), channel: c12, restored: 1 }));
        q.receive(&t, c02, Message::Marker(S0), &mut out).unwrap();
        q.receive(&t, c12, Message::App(Jars(1)), &mut out).unwrap();
        assert!(!q.is_recovering(), "{variant}: the restored cart is taken in");
        if variant == Variant::None {
            // Declined as not ready: no part, cancellations downstream, later barriers obsolete.
            assert_eq!(aborted(&out), [S0]);
            assert!(out.contains(&Effect::Send { channel: c(&t, 2, 0), message: Message::Cancel(S0) }));
            assert!(q.slots().is_empty());
            out.clear();
            q.receive(&t, c12, Message::Marker(S0), &mut out).unwrap();
            assert!(out.is_empty() && q.slots().is_empty());
            // Recovered: the next checkpoint is taken.
            q.receive(&t, c02, Message::Marker(S1), &mut out).unwrap();
            assert!(q.has_recorded(S1));
        } else {
            // FLINK-20654: the checkpoint is taken, and the restored message is not recorded; a new
            // message behind it is.
            assert!(aborted(&out).is_empty() && q.has_recorded(S0));
            q.receive(&t, c12, Message::App(Jars(2)), &mut out).unwrap();
            q.receive(&t, c12, Message::Marker(S0), &mut out).unwrap();
            assert!(q.is_complete(S0));
            let recorded: Vec<_> = q.slot(S0).map(|s| s.recorded().map(|(_, m)| *m).collect()).unwrap_or_default();
            assert_eq!(recorded, [Jars(2)], "the restored cart is missing, the new one is there");
        }
    }
    // A trigger at a process holding restored input is declined too; restoring 0 clears it.
    let mut q = Process::new(p(0), Bank::new(0)).with_algorithm(&t, Algorithm::Aligned, &[p(0)]);
    let mut out = Out::new();
    q.restore_input(&t, c(&t, 1, 0), 2).unwrap();
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(aborted(&out), [S0]);
    assert!(!q.has_recorded(S0));
    q.restore_input(&t, c(&t, 1, 0), 0).unwrap();
    assert!(!q.is_recovering());
    assert!(matches!(q.restore_input(&t, c(&t, 0, 1), 1), Err(CoreError::NotIncoming { .. })));
}

#[test]
fn the_correct_algorithm_carries_no_fault_state_and_a_stateful_variant_does() {
    let t = Topology::complete(3).unwrap();
    for algorithm in [Algorithm::ChandyLamport, Algorithm::Aligned, Algorithm::Unaligned] {
        let mut q = Process::new(p(1), Bank::new(3)).with_algorithm(&t, algorithm, &[p(0)]);
        assert_eq!(q.variant(), Variant::None);
        let mut out = Out::new();
        q.receive(&t, c(&t, 2, 1), Message::App(Jars(1)), &mut out).unwrap();
        q.initiate(&t, S0, &mut out).unwrap();
        q.send(&t, c(&t, 1, 0), Jars(1), &mut out).unwrap();
        q.release_faults(&t, &mut out);
        assert!(q.faults.is_none() && q.clone().faults.is_none() && q.relabeled(p(1), &[0, 1]).faults.is_none());
        assert!(!q.faults_pending());
    }
    for variant in Variant::ALL {
        let q = Process::with_variant(p(0), Bank::new(3), variant);
        assert_eq!(q.faults.is_some(), Faults::<Bank>::kept_by(variant), "{variant}");
    }
    let stateful =
        [Variant::SendBeforeMarker, Variant::StaleState, Variant::LateRecord, Variant::DeferredUnalignedCheckpoint];
    for variant in stateful {
        assert!(Process::with_variant(p(0), Bank::new(3), variant).faults.is_some(), "{variant}");
    }
    // The stale state lives in the fault state, and is what stale-state records.
    let mut q = Process::with_variant(p(1), Bank::new(3), Variant::StaleState);
    let mut out = Out::new();
    q.receive(&t, c(&t, 2, 1), Message::App(Jars(2)), &mut out).unwrap();
    assert_eq!(q.faults.as_ref().and_then(|f| f.stale()), Some(&Bank::new(3)));
    q.initiate(&t, S0, &mut out).unwrap();
    assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(3)));
}

#[test]
#[cfg(target_pointer_width = "64")]
fn the_fault_state_costs_a_correct_process_one_pointer() {
    // 152 bytes while `held` and `stale` were two fields of their own.
    assert!(std::mem::size_of::<Process<Bank>>() <= 144, "{}", std::mem::size_of::<Process<Bank>>());
    assert_eq!(std::mem::size_of::<Option<Box<Faults<Bank>>>>(), std::mem::size_of::<usize>());
}

#[test]
fn a_process_hashes_its_fault_state_as_the_fields_it_was() {
    use std::hash::{DefaultHasher, Hash, Hasher};
    fn old<T: Hash>(held: &[SnapshotId], stale: Option<T>) -> u64 {
        let mut rare = Rare::default();
        held.iter().for_each(|&s| rare.vec_mut().push(s));
        let mut h = DefaultHasher::new();
        rare.hash(&mut h);
        stale.map(Box::new).hash(&mut h);
        h.finish()
    }
    fn new(faults: Option<&Faults<Bank>>) -> u64 {
        let mut h = DefaultHasher::new();
        Faults::hash_as_fields(faults, &mut h);
        h.finish()
    }
    assert_eq!(new(None), old::<Bank>(&[], None));
    let mut f = Faults::<Bank>::default();
    assert_eq!(new(Some(&f)), old::<Bank>(&[], None));
    f.hold(S0);
    f.hold(S1);
    f.remember(&Bank::new(4));
    assert_eq!(new(Some(&f)), old(&[S0, S1], Some(Bank::new(4))));
    let _ = f.release();
    assert_eq!(new(Some(&f)), old(&[], Some(Bank::new(4))));
}
