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

    fn amount(&self, id: MsgId) -> u32 {
        self.amounts.iter().find(|(m, _)| *m == id).unwrap().1
    }

    /// The snapshot recording `p0` and `p1` jars and, on each channel, the messages `ids` (by
    /// content).
    fn snapshot_of(&self, p0: u32, p1: u32, c01: &[MsgId], c10: &[MsgId]) -> GlobalSnapshot<Bank> {
        let jars = |ids: &[MsgId]| ids.iter().map(|&m| Jars(self.amount(m))).collect::<Vec<_>>();
        let mut channels = vec![Vec::new(); 2];
        channels[self.ch(P0, P1).index()] = jars(c01);
        channels[self.ch(P1, P0).index()] = jars(c10);
        GlobalSnapshot { id: S, state: GlobalState { processes: vec![Bank::new(p0), Bank::new(p1)], channels } }
    }

    /// The ids a record claims, per channel, as logs carry them.
    fn ids(&self, c01: &[MsgId], c10: &[MsgId]) -> Vec<Vec<MsgId>> {
        let mut ids = vec![Vec::new(); 2];
        ids[self.ch(P0, P1).index()] = c01.to_vec();
        ids[self.ch(P1, P0).index()] = c10.to_vec();
        ids
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

mod judge_pins {
    //! The theorem's judge pinned on the library path (issue 54): each way a snapshot can be wrong
    //! — a channel record reversed or reordered, a record's claimed ids out of order, and each
    //! clause broken alone — fails [`verify`], [`check`] and [`check_ids`] with its exact violation
    //! and clause, on hand-built two-house runs. `model/tests/verify_pins.rs` pins the same cases
    //! through `model verify`, `tests/judge_pins_runs.rs` through the simulator's and the runtime's
    //! own verification.
    //!
    //! Where a clause cannot break alone (its failure makes another fail too), the test says why and
    //! pins the whole set of clauses broken, so that a judge that stops seeing one of them fails.

    use super::{Run, P0, P1, S};
    use chandy_lamport::apps::bank::Bank;
    use chandy_lamport::check::{check, check_ids, verify, Clause, Debugged, Report, VerifyError, Violation};
    use chandy_lamport::check::{EventKind, MsgId};
    use chandy_lamport::protocol::GlobalSnapshot;

    use Clause::{
        EndReachable as D, ExactRecords as B, NoInwardCrossing as A, RecordedReachable as C, Terminated as E,
    };

    /// The first violation [`verify`] reports.
    fn first(r: &Run, s: &GlobalSnapshot<Bank>) -> Violation {
        match verify(&r.topology, &r.trace, s) {
            Err(VerifyError::Violation(v)) => v,
            other => panic!("expected a violation, got {other:?}"),
        }
    }

    /// [`check`]'s report.
    fn report(r: &Run, s: &GlobalSnapshot<Bank>) -> Report<Bank> {
        check(&r.topology, &r.trace, s).expect("judgeable")
    }

    /// [`check_ids`]'s report, the records claiming `ids`.
    fn report_by_ids(r: &Run, s: &GlobalSnapshot<Bank>, ids: &[Vec<MsgId>]) -> Report<Bank> {
        check_ids(&r.topology, &r.trace, s, ids, &Debugged).expect("judgeable")
    }

    /// The clauses a report finds broken, each once, in the order reported.
    fn broken(report: &Report<Bank>) -> Vec<Clause> {
        let mut clauses: Vec<Clause> = Vec::new();
        for v in &report.violations {
            if !clauses.contains(&v.clause()) {
                clauses.push(v.clause());
            }
        }
        clauses
    }

    /// Every entry of the judge holds the correct snapshot `s` (claiming `ids`): the runs below are
    /// correct but for what each test breaks.
    fn holds(r: &Run, s: &GlobalSnapshot<Bank>, ids: &[Vec<MsgId>]) {
        verify(&r.topology, &r.trace, s).unwrap_or_else(|e| panic!("the untampered snapshot holds: {e}"));
        assert_eq!(report(r, s).violations, vec![]);
        assert_eq!(report_by_ids(r, s, ids).violations, vec![]);
    }

    /// P0 initiates; P1 then sends one cart of each of `amounts` to P0 and records on P0's marker,
    /// so that P1->P0's record holds all of them, in sending order; P0 receives them and then P1's
    /// marker. Returns the run and the carts' ids.
    fn in_flight(amounts: &[u32]) -> (Run, Vec<MsgId>) {
        let mut r = Run::new();
        r.record(P0, true);
        let ids: Vec<MsgId> = amounts.iter().map(|&a| r.send(P1, a)).collect();
        r.marker(P1);
        r.record(P1, false);
        for &id in &ids {
            r.recv(P0, id);
        }
        r.marker(P0);
        (r, ids)
    }

    /// P1's recorded jars in [`in_flight`].
    fn p1_after(amounts: &[u32]) -> u32 {
        10 - amounts.iter().sum::<u32>()
    }

    #[test]
    fn library_judge_fails_a_reversed_channel_record() {
        let amounts = [1, 2];
        let (r, m) = in_flight(&amounts);
        let c10 = r.ch(P1, P0);
        holds(&r, &r.snapshot_of(10, p1_after(&amounts), &[], &m), &r.ids(&[], &m));
        let reversed = [m[1], m[0]];
        let s = r.snapshot_of(10, p1_after(&amounts), &[], &reversed);
        let out_of_order = |v: &Violation| match v {
            Violation::OutOfOrder { snapshot, channel, expected, .. } => {
                assert_eq!((*snapshot, *channel), (S, c10));
                assert_eq!(*expected, m, "the in-flight messages in sending order");
            }
            other => panic!("expected the record out of order, got {other}"),
        };
        out_of_order(&first(&r, &s));
        // The reversed record is no state the run reaches (c), and the carts cannot be received in
        // their order from it (d): (b) is the root, and it is reported first.
        let by_content = report(&r, &s);
        assert_eq!(broken(&by_content), vec![B, C, D], "{:?}", by_content.violations);
        out_of_order(&by_content.violations[0]);
        let by_id = report_by_ids(&r, &s, &r.ids(&[], &reversed));
        assert_eq!(broken(&by_id), vec![B, C, D], "{:?}", by_id.violations);
        out_of_order(&by_id.violations[0]);
    }

    #[test]
    fn library_judge_fails_a_reordered_channel_record() {
        let amounts = [1, 2, 3];
        let (r, m) = in_flight(&amounts);
        let c10 = r.ch(P1, P0);
        holds(&r, &r.snapshot_of(10, p1_after(&amounts), &[], &m), &r.ids(&[], &m));
        // A rotation: neither the sending order nor its reversal.
        let reordered = [m[1], m[2], m[0]];
        let s = r.snapshot_of(10, p1_after(&amounts), &[], &reordered);
        let out_of_order = |v: &Violation| match v {
            Violation::OutOfOrder { snapshot, channel, expected, recorded } => {
                assert_eq!((*snapshot, *channel), (S, c10));
                assert_eq!(*expected, m, "the in-flight messages in sending order");
                assert!(!recorded.is_empty());
            }
            other => panic!("expected the record out of order, got {other}"),
        };
        out_of_order(&first(&r, &s));
        let by_content = report(&r, &s);
        assert_eq!(broken(&by_content), vec![B, C, D], "{:?}", by_content.violations);
        out_of_order(&by_content.violations[0]);
        let by_id = report_by_ids(&r, &s, &r.ids(&[], &reordered));
        assert_eq!(broken(&by_id), vec![B, C, D], "{:?}", by_id.violations);
        out_of_order(&by_id.violations[0]);
        assert_eq!(
            by_id.violations[0],
            Violation::OutOfOrder {
                snapshot: S,
                channel: c10,
                expected: m.clone(),
                recorded: format!("{reordered:?}")
            }
        );
    }

    #[test]
    fn library_judge_fails_a_claim_out_of_order() {
        // Three carts of 2 jars: the records' contents cannot tell them apart, only the ids they
        // claim can. The claim lists them in an order that is not the order of receipt (nor its
        // reversal).
        let amounts = [2, 2, 2];
        let (r, m) = in_flight(&amounts);
        let c10 = r.ch(P1, P0);
        let s = r.snapshot_of(10, p1_after(&amounts), &[], &m);
        holds(&r, &s, &r.ids(&[], &m));
        let claimed = [m[0], m[2], m[1]];
        // By content the record is right: (b), (c) and (d) hold.
        assert_eq!(report(&r, &s).violations, vec![]);
        // By the ids claimed it is not, and only (b) says so: the contents, which (c) and (d)
        // replay, are right.
        let by_id = report_by_ids(&r, &s, &r.ids(&[], &claimed));
        assert_eq!(
            by_id.violations,
            vec![Violation::OutOfOrder {
                snapshot: S,
                channel: c10,
                expected: m.clone(),
                recorded: format!("{claimed:?}")
            }]
        );
        assert_eq!(broken(&by_id), vec![B]);
        // Two claimed ids swapped: the same.
        let swapped = [m[1], m[0], m[2]];
        let by_id = report_by_ids(&r, &s, &r.ids(&[], &swapped));
        assert!(
            matches!(&by_id.violations[..], [Violation::OutOfOrder { expected, .. }] if *expected == m),
            "{by_id:?}"
        );
    }

    #[test]
    fn library_judge_fails_clause_a_inward_crossing() {
        // P0 records, then sends a cart before its marker: the cart overtakes the marker, and P1
        // receives it before recording. (a) cannot break alone: the receiver's recorded state
        // counts a cart the sender's does not, which no run reaches (c), and from which the cart
        // is received a second time after the cut (d). (b) and (e) hold.
        let mut r = Run::new();
        r.push(P0, EventKind::Record { snapshot: S, initiated: true });
        let m = r.send(P0, 3);
        let c01 = r.ch(P0, P1);
        r.push(P0, EventKind::MarkerSend { snapshot: S, channel: c01 });
        r.recv(P1, m);
        r.marker(P1);
        r.record(P1, false);
        r.marker(P0);
        let s = r.snapshot_of(10, 13, &[], &[]);
        let crossing = |v: &Violation| match v {
            Violation::InwardCrossing { snapshot, msg, channel, send, receive } => {
                assert_eq!((*snapshot, *msg, *channel), (S, m, c01));
                assert_eq!((send.process, send.position), (P0, 1));
                assert_eq!((receive.process, receive.position), (P1, 3));
            }
            other => panic!("expected an inward crossing, got {other}"),
        };
        let v = first(&r, &s);
        crossing(&v);
        assert_eq!(v.clause(), A);
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &[]))] {
            assert_eq!(broken(&report), vec![A, C, D], "{:?}", report.violations);
            crossing(&report.violations[0]);
        }
    }

    #[test]
    fn library_judge_fails_clause_b_missing_message() {
        // P1->P0 holds two carts at the cut; the record holds only the second. (b) cannot break
        // alone: a channel record is part of the recorded state, so a record short of a message
        // is a state no run reaches (c), and the message's receipt after the cut finds another at
        // the channel's head (d).
        let amounts = [1, 2];
        let (r, m) = in_flight(&amounts);
        let c10 = r.ch(P1, P0);
        let s = r.snapshot_of(10, p1_after(&amounts), &[], &m[1..]);
        let missing = |v: &Violation| match v {
            Violation::MissingMessage { snapshot, channel, msg, send } => {
                assert_eq!((*snapshot, *channel, *msg), (S, c10, m[0]));
                assert_eq!((send.process, send.position), (P1, 2));
            }
            other => panic!("expected a missing message, got {other}"),
        };
        let v = first(&r, &s);
        missing(&v);
        assert_eq!(v.clause(), B);
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &m[1..]))] {
            assert_eq!(broken(&report), vec![B, C, D], "{:?}", report.violations);
            missing(&report.violations[0]);
        }
    }

    #[test]
    fn library_judge_fails_clause_b_extra_message() {
        // P1 sends a cart of 4 that P0 receives before it records, then the two carts of
        // [`in_flight`]; the record holds those two and, at the end, the cart of 4 once more.
        // (b) cannot break alone: the extra message is part of the recorded state, which no run
        // reaches (c), and it is still in the channel when the run ends (d).
        let mut r = Run::new();
        let early = r.send(P1, 4);
        r.recv(P0, early);
        r.record(P0, true);
        let a = r.send(P1, 1);
        let b = r.send(P1, 2);
        r.marker(P1);
        r.record(P1, false);
        r.recv(P0, a);
        r.recv(P0, b);
        r.marker(P0);
        let c10 = r.ch(P1, P0);
        holds(&r, &r.snapshot_of(14, 3, &[], &[a, b]), &r.ids(&[], &[a, b]));
        let s = r.snapshot_of(14, 3, &[], &[a, b, early]);
        let extra = |v: &Violation, message: &str| match v {
            Violation::ExtraMessage { snapshot, channel, message: m, index, received } => {
                assert_eq!((*snapshot, *channel, m.as_str(), *index), (S, c10, message, 2));
                assert_eq!(*received, None, "received before the cut, not after");
            }
            other => panic!("expected an extra message, got {other}"),
        };
        let v = first(&r, &s);
        extra(&v, "Jars(4)");
        assert_eq!(v.clause(), B);
        let by_content = report(&r, &s);
        assert_eq!(broken(&by_content), vec![B, C, D], "{:?}", by_content.violations);
        extra(&by_content.violations[0], "Jars(4)");
        let by_id = report_by_ids(&r, &s, &r.ids(&[], &[a, b, early]));
        assert_eq!(broken(&by_id), vec![B, C, D], "{:?}", by_id.violations);
        extra(&by_id.violations[0], &early.to_string());
    }

    #[test]
    fn library_judge_fails_clause_c_alone() {
        // P0 sends 1 then 2 and initiates; P1 receives the 2 before the 1 (a non-FIFO channel),
        // both before it records. The recorded state is the state at the cut, but no FIFO run
        // reaches it (c); every other clause holds, (d) included: from the recorded state the rest
        // of the run replays.
        let mut r = Run::new();
        let a = r.send(P0, 1);
        let b = r.send(P0, 2);
        r.record(P0, true);
        r.recv(P1, b);
        r.recv(P1, a);
        r.marker(P1);
        r.record(P1, false);
        r.marker(P0);
        let s = r.snapshot_of(7, 13, &[], &[]);
        let unreachable = |v: &Violation| match v {
            Violation::RecordedUnreachable { snapshot, event: Some(e), reason } => {
                assert_eq!(*snapshot, S);
                assert_eq!((e.process, e.position), (P1, 4), "the receipt of the 2 ahead of the 1");
                assert!(reason.contains("at the head"), "{reason}");
            }
            other => panic!("expected the recorded state unreachable at an event, got {other}"),
        };
        let v = first(&r, &s);
        unreachable(&v);
        assert_eq!(v.clause(), C);
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &[]))] {
            assert_eq!(broken(&report), vec![C], "{:?}", report.violations);
            unreachable(&report.violations[0]);
        }
    }

    #[test]
    fn library_judge_fails_clause_c_by_a_wrong_recorded_state() {
        // A FIFO run whose recorded state is wrong (P0 recorded a jar too few): (c) breaks, and so
        // does (d), since the wrong state is what the rest of the run is replayed from.
        let amounts = [1, 2];
        let (r, m) = in_flight(&amounts);
        let s = r.snapshot_of(9, p1_after(&amounts), &[], &m);
        let unreachable = |v: &Violation| match v {
            Violation::RecordedUnreachable { snapshot, event: None, reason } => {
                assert_eq!(*snapshot, S);
                assert!(reason.contains("P0 recorded"), "{reason}");
            }
            other => panic!("expected the recorded state unreachable, got {other}"),
        };
        unreachable(&first(&r, &s));
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &m))] {
            assert_eq!(broken(&report), vec![C, D], "{:?}", report.violations);
            unreachable(&report.violations[0]);
        }
    }

    #[test]
    fn library_judge_fails_clause_d_alone() {
        // After the cut P0 sends 1 then 2, and P1 receives the 2 first (a non-FIFO channel), all
        // before the last record closes: only (d) breaks.
        let mut r = Run::new();
        r.record(P0, true);
        let a = r.send(P0, 1);
        let b = r.send(P0, 2);
        r.marker(P1);
        r.record(P1, false);
        r.recv(P1, b);
        r.recv(P1, a);
        r.marker(P0);
        let s = r.snapshot_of(10, 10, &[], &[]);
        let unreachable = |v: &Violation| match v {
            Violation::EndUnreachable { snapshot, event: Some(e), .. } => {
                assert_eq!(*snapshot, S);
                assert_eq!((e.process, e.position), (P1, 7), "the receipt of the 2 ahead of the 1");
            }
            other => panic!("expected the end state unreachable at an event, got {other}"),
        };
        let v = first(&r, &s);
        unreachable(&v);
        assert_eq!(v.clause(), D);
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &[]))] {
            assert_eq!(broken(&report), vec![D], "{:?}", report.violations);
            unreachable(&report.violations[0]);
        }
    }

    #[test]
    fn library_judge_fails_clause_e_not_recorded() {
        // P0 initiates; its marker never reaches P1, which never records. Without P1's record
        // there is no cut, so (a)–(d) are not judged; P1 sends no marker either, so the records of
        // both channels stay open: every violation is of (e), the first P1's missing record.
        let mut r = Run::new();
        let m = r.send(P1, 2);
        r.record(P0, true);
        r.recv(P0, m);
        let s = r.snapshot_of(10, 8, &[], &[]);
        assert_eq!(first(&r, &s), Violation::NotRecorded { snapshot: S, process: P1 });
        let all = vec![
            Violation::NotRecorded { snapshot: S, process: P1 },
            Violation::NotClosed { snapshot: S, channel: r.ch(P0, P1) },
            Violation::NotClosed { snapshot: S, channel: r.ch(P1, P0) },
        ];
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &[]))] {
            assert_eq!(report.violations, all);
            assert_eq!(broken(&report), vec![E]);
            assert_eq!(report.cut, None);
        }
    }

    #[test]
    fn library_judge_fails_clause_e_not_closed() {
        // The run of [`in_flight`], correct but that P0 never receives P1's marker: P1->P0's
        // record never closes. Everyone recorded, so (a)–(c) are judged, and hold; (d) is not
        // judged, as the snapshot has no end.
        let amounts = [1, 2];
        let (mut r, m) = in_flight(&amounts);
        let last = r.trace.events.pop().expect("P0's receipt of P1's marker");
        assert!(matches!(last.kind, EventKind::MarkerReceive { .. }));
        let s = r.snapshot_of(10, p1_after(&amounts), &[], &m);
        let not_closed = Violation::NotClosed { snapshot: S, channel: r.ch(P1, P0) };
        assert_eq!(first(&r, &s), not_closed);
        for report in [report(&r, &s), report_by_ids(&r, &s, &r.ids(&[], &m))] {
            assert_eq!(report.violations, vec![not_closed.clone()]);
            assert_eq!(broken(&report), vec![E]);
            assert_eq!(report.end, None);
        }
    }
}
