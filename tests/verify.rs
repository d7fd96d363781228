//! The trace checker on hand-made traces: a correct run passes, and each kind of broken run is
//! rejected with its specific violation.

use chandy_lamport::apps::bank::{Bank, Jars, Sale};
use chandy_lamport::check::{check, unterminated, verify, Clause, VerifyError, Violation};
use chandy_lamport::check::{Event, EventKind, MsgId, Trace};
use chandy_lamport::protocol::{GlobalSnapshot, GlobalState};
use chandy_lamport::{ChannelId, Initiators, ProcessId, SnapshotId, Topology};

const S: SnapshotId = SnapshotId(0);
const P0: ProcessId = ProcessId(0);
const P1: ProcessId = ProcessId(1);

/// Writes a two-house trace event by event, keeping each house's balance.
struct Run {
    topology: Topology,
    trace: Trace<Bank>,
    states: Vec<Bank>,
    amounts: Vec<(MsgId, u32)>,
    next: u64,
}

impl Run {
    fn new() -> Self {
        let topology = Topology::complete(2).unwrap();
        let states = vec![Bank::new(10), Bank::new(10)];
        Run { topology, trace: Trace::new(states.clone()), states, amounts: Vec::new(), next: 0 }
    }
    fn ch(&self, from: ProcessId, to: ProcessId) -> ChannelId {
        self.topology.channel_between(from, to).unwrap()
    }
    fn push(&mut self, p: ProcessId, kind: EventKind<Jars, Sale>) {
        self.trace.events.push(Event { process: p, kind, state: Some(self.states[p.index()]) });
    }
    fn send(&mut self, p: ProcessId, amount: u32) -> MsgId {
        let id = MsgId::new(p, self.next);
        self.next += 1;
        self.states[p.index()].jars -= amount;
        self.amounts.push((id, amount));
        let channel = self.ch(p, ProcessId(1 - p.0));
        self.push(p, EventKind::Send { channel, id, msg: Jars(amount) });
        id
    }
    fn recv(&mut self, p: ProcessId, id: MsgId) {
        let amount = self.amounts.iter().find(|(m, _)| *m == id).unwrap().1;
        self.states[p.index()].jars += amount;
        let channel = self.ch(ProcessId(1 - p.0), p);
        self.push(p, EventKind::Receive { channel, id });
    }
    fn record(&mut self, p: ProcessId, initiated: bool) {
        self.push(p, EventKind::Record { snapshot: S, initiated });
        let channel = self.ch(p, ProcessId(1 - p.0));
        self.push(p, EventKind::MarkerSend { snapshot: S, channel });
    }
    fn marker(&mut self, p: ProcessId) {
        let channel = self.ch(ProcessId(1 - p.0), p);
        self.push(p, EventKind::MarkerReceive { snapshot: S, channel });
    }
    fn snapshot(&self, p0: u32, p1: u32, c01: &[u32], c10: &[u32]) -> GlobalSnapshot<Bank> {
        let jars = |v: &[u32]| v.iter().map(|&a| Jars(a)).collect::<Vec<_>>();
        GlobalSnapshot {
            id: S,
            state: GlobalState { processes: vec![Bank::new(p0), Bank::new(p1)], channels: vec![jars(c01), jars(c10)] },
        }
    }
}

/// P0 sends 1, records and sends its marker; P1 sends 2, receives the 1, then the marker
/// (records); P0 receives the 2 (recorded on P1->P0) and then P1's marker.
fn correct() -> (Run, GlobalSnapshot<Bank>) {
    let mut r = Run::new();
    let m1 = r.send(P0, 1);
    r.record(P0, true);
    let m2 = r.send(P1, 2);
    r.recv(P1, m1);
    r.marker(P1);
    r.record(P1, false);
    r.recv(P0, m2);
    r.marker(P0);
    let s = r.snapshot(9, 9, &[], &[2]);
    (r, s)
}

fn violation(r: &Run, s: &GlobalSnapshot<Bank>) -> Violation {
    match verify(&r.topology, &r.trace, s) {
        Err(VerifyError::Violation(v)) => v,
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[test]
fn a_correct_run_verifies_with_begin_star_and_end() {
    let (r, s) = correct();
    let v = verify(&r.topology, &r.trace, &s).unwrap();
    // S_begin: P0 has sent the 1 (in transit), nothing else happened.
    assert_eq!(v.begin.processes, vec![Bank::new(9), Bank::new(10)]);
    assert_eq!(v.begin.channels, vec![vec![Jars(1)], vec![]]);
    assert_eq!(v.star, s.state);
    // S_end: everything delivered.
    assert_eq!(v.end.processes, vec![Bank::new(11), Bank::new(9)]);
    assert_eq!(v.end.channels, vec![vec![], vec![]]);
}

#[test]
fn inward_crossing_is_named_with_its_send_and_receipt() {
    let mut r = Run::new();
    r.record(P0, true);
    // P0's send after recording overtakes its marker: P1 receives it before recording.
    let m = {
        let mut marker = r.trace.events.pop().unwrap();
        let m = r.send(P0, 3);
        marker.state = Some(r.states[0]);
        r.trace.events.push(marker);
        m
    };
    r.recv(P1, m);
    r.marker(P1);
    r.record(P1, false);
    r.marker(P0);
    let s = r.snapshot(10, 13, &[], &[]);
    let v = violation(&r, &s);
    match &v {
        Violation::InwardCrossing { msg, send, receive, .. } => {
            assert_eq!(*msg, m);
            assert_eq!((send.process, send.position), (P0, 1));
            assert_eq!((receive.process, receive.position), (P1, 3));
        }
        other => panic!("{other}"),
    }
    // The message names the events in words.
    let text = v.to_string();
    assert!(text.contains("sent after the sender recorded (event 1 (#0 step 1))"), "{text}");
    assert!(text.contains("received before the receiver recorded (event 3 (#1 step 0))"), "{text}");
    // The recorded state is not reachable either, and the end state not from it.
    let report = check(&r.topology, &r.trace, &s).unwrap();
    assert!(!report.holds(Clause::RecordedReachable));
    assert!(!report.holds(Clause::EndReachable));
}

#[test]
fn a_missing_in_flight_message_is_named() {
    let (r, _) = correct();
    let s = r.snapshot(9, 9, &[], &[]);
    match violation(&r, &s) {
        Violation::MissingMessage { msg, channel, send, .. } => {
            assert_eq!(msg, MsgId::new(P1, 1));
            assert_eq!(channel, r.ch(P1, P0));
            assert_eq!(send.process, P1);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn an_extra_recorded_message_is_named() {
    let (r, _) = correct();
    let s = r.snapshot(9, 9, &[], &[2, 5]);
    match violation(&r, &s) {
        Violation::ExtraMessage { index, message, .. } => {
            assert_eq!(index, 1);
            assert_eq!(message, "Jars(5)");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn messages_recorded_out_of_order_are_named() {
    let mut r = Run::new();
    r.record(P0, true);
    let a = r.send(P1, 1);
    let b = r.send(P1, 2);
    r.marker(P1);
    r.record(P1, false);
    r.recv(P0, a);
    r.recv(P0, b);
    r.marker(P0);
    let s = r.snapshot(10, 7, &[], &[2, 1]);
    match violation(&r, &s) {
        Violation::OutOfOrder { expected, .. } => assert_eq!(expected, vec![a, b]),
        other => panic!("{other}"),
    }
    let right = r.snapshot(10, 7, &[], &[1, 2]);
    verify(&r.topology, &r.trace, &right).unwrap();
}

#[test]
fn an_unterminated_snapshot_is_named() {
    let (mut r, s) = correct();
    // Drop P0's receipt of P1's marker: the record of P1->P0 never closes.
    r.trace.events.pop();
    assert_eq!(violation(&r, &s), Violation::NotClosed { snapshot: S, channel: r.ch(P1, P0) });
    // A process that never records.
    let mut r = Run::new();
    let m = r.send(P0, 1);
    r.record(P0, true);
    r.recv(P1, m);
    let s = r.snapshot(9, 11, &[], &[]);
    assert_eq!(violation(&r, &s), Violation::NotRecorded { snapshot: S, process: P1 });
}

#[test]
fn a_non_fifo_delivery_before_the_cut_makes_the_recorded_state_unreachable() {
    let mut r = Run::new();
    let a = r.send(P0, 1);
    let b = r.send(P0, 2);
    r.record(P0, true);
    // P1 receives b before a, both before recording.
    r.recv(P1, b);
    r.recv(P1, a);
    r.marker(P1);
    r.record(P1, false);
    r.marker(P0);
    let s = r.snapshot(7, 13, &[], &[]);
    let label = r.topology.channel_label(r.ch(P0, P1));
    match violation(&r, &s) {
        Violation::RecordedUnreachable { event: Some(e), reason, .. } => {
            assert_eq!((e.process, e.position), (P1, 4));
            assert!(reason.contains("at the head"), "{reason}");
            assert!(reason.contains(&format!("on {label}")), "the reason names the channel: {reason}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_non_fifo_delivery_after_the_cut_makes_the_end_state_unreachable() {
    let mut r = Run::new();
    r.record(P0, true);
    // Both sent after the cut, delivered in the wrong order after the cut, before the last
    // record closes.
    let a = r.send(P0, 1);
    let b = r.send(P0, 2);
    r.marker(P1);
    r.record(P1, false);
    r.recv(P1, b);
    r.recv(P1, a);
    r.marker(P0);
    let s = r.snapshot(10, 10, &[], &[]);
    let report = check(&r.topology, &r.trace, &s).unwrap();
    assert!(report.holds(Clause::NoInwardCrossing));
    assert!(report.holds(Clause::ExactRecords));
    assert!(report.holds(Clause::RecordedReachable));
    match violation(&r, &s) {
        Violation::EndUnreachable { event: Some(e), .. } => assert_eq!((e.process, e.position), (P1, 7)),
        other => panic!("{other}"),
    }
}

#[test]
fn records_in_arrival_order_differ_from_the_channel_order_after_a_non_fifo_delivery() {
    let mut r = Run::new();
    r.record(P0, true);
    let a = r.send(P1, 1);
    let b = r.send(P1, 2);
    r.marker(P1);
    r.record(P1, false);
    r.recv(P0, b);
    r.recv(P0, a);
    r.marker(P0);
    let s = r.snapshot(10, 7, &[], &[2, 1]);
    let report = check(&r.topology, &r.trace, &s).unwrap();
    assert!(!report.holds(Clause::ExactRecords));
    assert!(!report.holds(Clause::RecordedReachable));
    assert!(report.holds(Clause::NoInwardCrossing));
}

#[test]
fn a_wrong_recorded_state_is_not_reachable() {
    let (r, _) = correct();
    let s = r.snapshot(8, 9, &[], &[2]);
    match violation(&r, &s) {
        Violation::RecordedUnreachable { reason, .. } => assert!(reason.contains("P0 recorded"), "{reason}"),
        other => panic!("{other}"),
    }
}

#[test]
fn malformed_traces_and_snapshots_are_refused() {
    let (mut r, s) = correct();
    let wrong = GlobalSnapshot { id: S, state: GlobalState { processes: vec![Bank::new(1)], channels: vec![] } };
    assert!(matches!(verify(&r.topology, &r.trace, &wrong), Err(VerifyError::Check(_))));
    // A receipt before its send.
    r.trace.events.swap(0, 4);
    assert!(matches!(verify(&r.topology, &r.trace, &s), Err(VerifyError::Check(_))));
}

/// P1 receives P0's cart, then P0's marker; its recorded state is the one before the receipt.
fn stale() -> (Run, GlobalSnapshot<Bank>) {
    let mut r = Run::new();
    let m = r.send(P0, 3);
    r.record(P0, true);
    r.recv(P1, m);
    r.marker(P1);
    r.record(P1, false);
    r.marker(P0);
    // P1 really holds 13 at its cut; a stale recording says 10.
    let s = r.snapshot(7, 10, &[], &[]);
    (r, s)
}

#[test]
fn a_stale_recorded_state_is_caught_by_replaying_the_transitions() {
    let (r, s) = stale();
    let report = check(&r.topology, &r.trace, &s).unwrap();
    assert!(report.holds(Clause::LoggedStates));
    match violation(&r, &s) {
        Violation::RecordedUnreachable { reason, .. } => {
            assert!(reason.contains("P1 recorded Bank { jars: 10, sold: 0 }"), "{reason}");
            assert!(reason.contains("Bank { jars: 13, sold: 0 }"), "{reason}");
        }
        other => panic!("{other}"),
    }
    assert!(!report.holds(Clause::EndReachable), "replaying from the stale state cannot reach S_end");
}

#[test]
fn logged_states_are_never_the_truth_a_doctored_log_is_reported() {
    // The log claims P1 still holds 10 after the receipt, to match the stale recording.
    let (mut r, s) = stale();
    for e in r.trace.events.iter_mut().filter(|e| e.process == P1) {
        e.state = Some(Bank::new(10));
    }
    let report = check(&r.topology, &r.trace, &s).unwrap();
    assert!(!report.holds(Clause::RecordedReachable), "the replay, not the log, decides");
    match violation(&r, &s) {
        Violation::LoggedState { event, reason, .. } => {
            assert_eq!((event.process, event.position), (P1, 3));
            assert!(reason.contains("P1 logged state Bank { jars: 10, sold: 0 }"), "{reason}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_logged_step_the_application_refuses_is_reported() {
    let mut r = Run::new();
    // P0 sends 11 jars while holding 10.
    r.states[0].jars = 11;
    r.send(P0, 11);
    r.record(P0, true);
    r.marker(P1);
    r.record(P1, false);
    r.marker(P0);
    let s = r.snapshot(0, 10, &[11], &[]);
    match violation(&r, &s) {
        Violation::LoggedState { event, reason, .. } => {
            assert_eq!(event.position, 0);
            assert!(reason.contains("cannot send Jars(11)"), "{reason}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn internal_steps_are_replayed() {
    let mut r = Run::new();
    r.states[0].sell(4).unwrap();
    r.push(P0, EventKind::Internal { step: Sale(4) });
    r.record(P0, true);
    r.marker(P1);
    r.record(P1, false);
    r.marker(P0);
    let mut s = r.snapshot(6, 10, &[], &[]);
    s.state.processes[0].sold = 4;
    let v = verify(&r.topology, &r.trace, &s).unwrap();
    assert_eq!(v.begin.processes[0], Bank { jars: 6, sold: 4 });
    // The same recording without the sale is not reachable.
    s.state.processes[0] = Bank::new(10);
    assert!(matches!(violation(&r, &s), Violation::RecordedUnreachable { .. }));
}

#[test]
fn an_initiation_by_a_process_that_may_not_initiate_is_reported() {
    let (mut r, s) = correct();
    verify(&r.topology, &r.trace, &s).unwrap();
    r.trace.initiators = Initiators::Only(vec![P1]);
    match violation(&r, &s) {
        Violation::NotAnInitiator { process, event, .. } => {
            assert_eq!(process, P0);
            assert_eq!(event.position, 1);
        }
        other => panic!("{other}"),
    }
    r.trace.initiators = Initiators::Only(vec![P0]);
    verify(&r.topology, &r.trace, &s).unwrap();
}

#[test]
fn a_recording_of_another_snapshot_does_not_count_for_this_one() {
    let (mut r, _) = correct();
    // P1's recording and marker belong to snapshot 1, not to snapshot 0.
    for e in r.trace.events.iter_mut().filter(|e| e.process == P1) {
        match &mut e.kind {
            EventKind::Record { snapshot, .. } | EventKind::MarkerSend { snapshot, .. } => *snapshot = SnapshotId(1),
            _ => {}
        }
    }
    r.trace
        .events
        .retain(|e| !matches!(e.kind, EventKind::MarkerReceive { snapshot, .. } if e.process == P0 && snapshot == S));
    let open = unterminated(&r.topology, &r.trace, S).unwrap();
    assert!(open.contains(&Violation::NotRecorded { snapshot: S, process: P1 }), "{open:?}");
    assert!(open.contains(&Violation::NotClosed { snapshot: S, channel: r.ch(P1, P0) }), "{open:?}");
}

#[test]
fn a_cart_stolen_after_its_receiver_recorded_counts_where_it_was_sent() {
    // P1 initiates; P0 sends a cart before recording (pre-cut); bandits steal it after P1
    // recorded. The theft counts before the cut: the cart is not in flight, the record is empty.
    let mut r = Run::new();
    r.record(P1, true);
    let m = r.send(P0, 4);
    let channel = r.ch(P0, P1);
    r.push(P1, EventKind::Lost { channel, id: m });
    r.marker(P0);
    r.record(P0, false);
    r.marker(P1);
    let s = r.snapshot(6, 10, &[], &[]);
    verify(&r.topology, &r.trace, &s).unwrap();
    // Recording the stolen cart is an extra message.
    let wrong = r.snapshot(6, 10, &[4], &[]);
    assert!(matches!(violation(&r, &wrong), Violation::ExtraMessage { .. }));
}

#[test]
fn a_snapshot_of_the_wrong_shape_is_refused() {
    let (r, s) = correct();
    let mut fewer = s.clone();
    fewer.state.processes.pop();
    assert!(matches!(verify(&r.topology, &r.trace, &fewer), Err(VerifyError::Check(_))));
    let mut more = s;
    more.state.channels.push(Vec::new());
    assert!(matches!(verify(&r.topology, &r.trace, &more), Err(VerifyError::Check(_))));
}

#[test]
fn an_extra_message_received_after_the_cut_is_named_with_its_receipt() {
    let (mut r, _) = correct();
    let late = r.send(P1, 4);
    r.recv(P0, late);
    let receipt = r.trace.events.len() - 1;
    let s = r.snapshot(9, 9, &[], &[2, 4]);
    match violation(&r, &s) {
        Violation::ExtraMessage { index, received: Some(at), .. } => {
            assert_eq!(index, 1);
            assert_eq!((at.process, at.position), (P0, receipt));
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_theft_takes_its_own_cart_not_the_one_ahead_of_it() {
    // P0 sends 1 then 2 before the cut; bandits steal the 2; P1 receives the 1; then the
    // snapshot. A correct run: the theft must take the 2, wherever it is in the channel.
    let mut r = Run::new();
    let a = r.send(P0, 1);
    let b = r.send(P0, 2);
    let channel = r.ch(P0, P1);
    r.push(P1, EventKind::Lost { channel, id: b });
    r.recv(P1, a);
    r.record(P0, true);
    r.marker(P1);
    r.record(P1, false);
    r.marker(P0);
    let s = r.snapshot(7, 11, &[], &[]);
    let verified = verify(&r.topology, &r.trace, &s).unwrap();
    assert_eq!(verified.begin.channels, vec![Vec::<Jars>::new(), Vec::new()], "the stolen cart is gone");
    assert_eq!(verified.end.channels, vec![Vec::<Jars>::new(), Vec::new()]);
}

#[test]
fn s_end_holds_what_a_non_fifo_delivery_left_in_the_channel() {
    // After the cut P0 sends 1 then 2, and the 2 arrives first; when the last record closes the
    // 1 is still in transit: S_end's channel holds exactly it (the run as it happened).
    let mut r = Run::new();
    r.record(P0, true);
    let _a = r.send(P0, 1);
    let b = r.send(P0, 2);
    r.marker(P1);
    r.record(P1, false);
    r.recv(P1, b);
    r.marker(P0);
    let s = r.snapshot(10, 10, &[], &[]);
    let report = check(&r.topology, &r.trace, &s).unwrap();
    let end = report.end.as_ref().expect("S_end");
    assert_eq!(end.channels[r.ch(P0, P1).index()], vec![Jars(1)]);
    assert_eq!(end.processes, vec![Bank::new(7), Bank::new(12)]);
}
