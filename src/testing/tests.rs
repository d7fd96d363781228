use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use super::channel::{channel, Incoming};
use super::{Expect, Recorder};
use crate::apps::json::{Amount, Balance, Json, Opaque};
use crate::logs::Semantics;
use crate::protocol::{ProcessId, SnapshotId, Topology};

const P0: ProcessId = ProcessId(0);
const P1: ProcessId = ProcessId(1);
const S0: SnapshotId = SnapshotId(0);

fn balances(n: usize) -> Recorder<Balance> {
    Recorder::new(&Topology::ring(n).unwrap(), vec![Balance(5); n], Semantics::balance())
}

/// The text `assert_holds` panics with.
fn failure_of(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the assertion passed");
    payload.downcast_ref::<String>().cloned().expect("a String payload")
}

/// P0 initiates on a ring of two; P1 sends 2 to P0 before or after recording.
fn two_processes(send_after_record: bool) -> Recorder<Balance> {
    let recorder = balances(2);
    let (r0, r1) = (recorder.process(P0), recorder.process(P1));
    r0.record_initiated(S0, Balance(5));
    r0.marker_send(S0, P1);
    let m = r1.new_message_id();
    if send_after_record {
        r1.record_on_marker(S0, P0, Balance(5));
        r1.send(P0, &m, Amount(2), Balance(3));
    } else {
        r1.send(P0, &m, Amount(2), Balance(3));
        r1.record_on_marker(S0, P0, Balance(3));
    }
    r1.marker_send(S0, P0);
    r0.receive(P1, &m, Balance(7));
    r0.marker_receive(S0, P1, [&m]);
    recorder
}

#[test]
fn a_correct_execution_holds_and_is_judged_like_logs() {
    let recorder = two_processes(false);
    recorder.assert_holds();
    let judgement = recorder.judge().unwrap();
    assert!(judgement.ok, "{judgement:?}");
    assert_eq!(judgement.events, 8);
    assert_eq!(judgement.app, "balance");
    assert_eq!(judgement.files, ["P0.jsonl", "P1.jsonl"]);
}

#[test]
fn a_message_sent_after_the_record_and_claimed_in_transit_is_a_finding_in_the_logs_words() {
    let text = failure_of(|| two_processes(true).assert_holds());
    assert!(text.contains("snapshot 0: VIOLATED"), "{text}");
    assert!(
        text.contains(r#"(b) channel records hold exactly the in-flight messages: the record of P1->P0 ["P1-0"]"#),
        "{text}"
    );
    // The logs are quoted, numbered as the findings number them.
    assert!(text.contains(r#"P1.jsonl:1 {"process":"P1","seq":0,"kind":"marker-receive""#), "{text}");
}

#[test]
fn an_empty_execution_never_passes() {
    let text = failure_of(|| balances(2).assert_holds());
    assert!(text.contains("cannot be judged") && text.contains("no event in the logs"), "{text}");
    let text = failure_of(|| balances(2).assert_no_snapshot());
    assert!(text.contains("no event in the logs"), "{text}");
}

#[test]
fn an_execution_without_a_snapshot_fails_unless_none_was_expected() {
    let recorder = balances(2);
    let m = recorder.process(P0).new_message_id();
    recorder.process(P0).send(P1, &m, Amount(1), Balance(4));
    recorder.process(P1).receive(P0, &m, Balance(6));
    let text = failure_of(|| recorder.assert_holds());
    assert!(text.contains("no snapshot in the logs: nothing was judged"), "{text}");
    recorder.assert_no_snapshot();
    // Expecting none, a snapshot is a failure too.
    let text = recorder_check_no_snapshot(&two_processes(false));
    assert!(text.contains("expected no snapshot"), "{text}");
}

fn recorder_check_no_snapshot(recorder: &Recorder<Balance>) -> String {
    recorder.check(Expect::NoSnapshot).expect_err("a snapshot was recorded")
}

#[test]
fn a_double_record_is_a_finding() {
    let recorder = balances(2);
    let (r0, r1) = (recorder.process(P0), recorder.process(P1));
    r0.record_initiated(S0, Balance(5));
    r0.marker_send(S0, P1);
    r1.record_on_marker(S0, P0, Balance(5));
    r1.record_initiated(S0, Balance(5));
    r1.marker_send(S0, P0);
    r0.marker_receive(S0, P1, Vec::<String>::new());
    let text = failure_of(|| recorder.assert_holds());
    assert!(text.contains("- the logs' claims: P1 records its state for snapshot 0 a second time"), "{text}");
}

#[test]
fn a_channel_the_topology_lacks_cannot_be_judged() {
    let recorder = balances(3);
    let m = recorder.process(P0).new_message_id();
    // The ring of three has P0->P1, P1->P2, P2->P0: no P0->P2.
    recorder.process(P0).send(ProcessId(2), &m, Amount(1), None);
    let text = failure_of(|| recorder.assert_holds());
    assert!(text.contains("cannot be judged") && text.contains("P0->P2"), "{text}");
}

#[test]
fn opaque_states_need_none_on_records() {
    let recorder = Recorder::new(&Topology::ring(2).unwrap(), vec![Opaque::default(); 2], Semantics::opaque());
    let (r0, r1) = (recorder.process(P0), recorder.process(P1));
    r0.record_initiated(S0, None);
    r0.marker_send(S0, P1);
    r1.internal(Json(serde_json::json!({"tick": 1})), None);
    r1.record_on_marker(S0, P0, None);
    r1.marker_send(S0, P0);
    r0.marker_receive(S0, P1, Vec::<String>::new());
    let judgement = recorder.check(Expect::Snapshots).unwrap();
    assert_eq!(judgement.app, "none");
}

/// Two processes, each with a reader thread and a transfer thread sharing one lock, over the
/// recording channels: the judge accepts every run (std threads, whatever the OS schedules).
#[test]
fn recording_channels_under_std_threads_hold() {
    for _ in 0..20 {
        let recorder = Recorder::new(&Topology::bidi_ring(2).unwrap(), vec![Balance(10); 2], Semantics::balance());
        let (to_p1, from_p0) = channel(&recorder, P0, P1);
        let (to_p0, from_p1) = channel(&recorder, P1, P0);
        struct State {
            balance: i64,
            recorded: bool,
            /// The channel's recorded ids, while it is open.
            open: Option<Vec<String>>,
        }
        let p0 = Arc::new(Mutex::new((State { balance: 10, recorded: false, open: None }, Some(to_p1))));
        let p1 = Arc::new(Mutex::new((State { balance: 10, recorded: false, open: None }, Some(to_p0))));
        // P0 initiates, then transfers; P1 transfers from its own thread.
        {
            let mut guard = p0.lock().unwrap();
            let (state, out) = &mut *guard;
            recorder.process(P0).record_initiated(S0, Balance(state.balance));
            state.recorded = true;
            state.open = Some(Vec::new());
            out.as_ref().unwrap().send_marker(S0).unwrap();
        }
        let transfer = |me: Arc<Mutex<(State, Option<super::channel::Sender<Balance>>)>>| {
            move || {
                for _ in 0..3 {
                    let mut guard = me.lock().unwrap();
                    let (state, out) = &mut *guard;
                    state.balance -= 1;
                    out.as_ref().unwrap().send(Amount(1), Balance(state.balance)).unwrap();
                }
            }
        };
        let reader = |me: Arc<Mutex<(State, Option<super::channel::Sender<Balance>>)>>,
                      rx: super::channel::Receiver<Balance>,
                      r: super::ProcessRecorder<Balance>| {
            move || loop {
                match rx.recv() {
                    Incoming::Message(delivery) => {
                        let mut guard = me.lock().unwrap();
                        let (state, _) = &mut *guard;
                        let (id, Amount(a)) = delivery.accept(None);
                        state.balance += a as i64;
                        if let Some(open) = &mut state.open {
                            open.push(id);
                        }
                    }
                    Incoming::Marker(s) => {
                        let mut guard = me.lock().unwrap();
                        let (state, out) = &mut *guard;
                        if state.recorded {
                            r.marker_receive(s, rx.from(), state.open.take().unwrap());
                        } else {
                            r.record_on_marker(s, rx.from(), Balance(state.balance));
                            state.recorded = true;
                            out.as_ref().unwrap().send_marker(s).unwrap();
                        }
                    }
                    Incoming::Closed => return,
                }
            }
        };
        let threads = [
            std::thread::spawn(transfer(Arc::clone(&p0))),
            std::thread::spawn(transfer(Arc::clone(&p1))),
            std::thread::spawn(reader(Arc::clone(&p0), from_p1, recorder.process(P0))),
            std::thread::spawn(reader(Arc::clone(&p1), from_p0, recorder.process(P1))),
        ];
        let [t0, t1, readers @ ..] = threads;
        t0.join().unwrap();
        t1.join().unwrap();
        // Both transfers done and P1 has recorded (its marker may still be on the way): close.
        for p in [&p0, &p1] {
            loop {
                let mut guard = p.lock().unwrap();
                if guard.0.recorded {
                    guard.1.take().unwrap().close().unwrap();
                    break;
                }
                drop(guard);
                std::thread::yield_now();
            }
        }
        for r in readers {
            r.join().unwrap();
        }
        recorder.assert_holds();
    }
}
