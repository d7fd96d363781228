//! The theorem's judge pinned through `model verify` (issue 54): each way a snapshot can be
//! wrong — a channel record reversed or reordered, a `recorded` list out of order, and each
//! clause broken alone — written as the JSON-lines logs of two bank processes, fails `model verify
//! --json` with exit 1 and the finding's clause, with both readers: the one-pass judge (`--reader
//! stream`, the default, which on any doubt reads the logs whole) and the whole reader (`--reader
//! whole`); and the one-pass judge itself must stop on them, for the reason pinned. Where a test
//! tampers with a correct run, that run's logs are checked to hold first, so the failure is the
//! tampering's. `tests/verify.rs` (module `judge_pins`) pins the same cases on the library's judge.
//!
//! Where a clause cannot break alone in logs (its failure makes another fail too, or shows in
//! the run as well), the test says why and pins what else is reported.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::formats::jsonl::{NotClean, Source, States};
use chandy_lamport::logs::judge_in_one_pass;
use chandy_lamport::Topology;
use common::{model, stderr, Scratch};
use serde_json::{json, Value};

/// Why the one pass stops on a record that claims other ids than those received, in another
/// order included.
const CLAIMS_OTHER: &str = "a channel record that claims other messages";
/// Why it stops on a receipt of a message not at its channel's head.
const NO_ORDER: &str = "no causal order found: a receipt waits for what is never at its channel's head";
/// Why it stops on a snapshot some process never recorded or some channel's record never closed.
const UNFINISHED: &str = "a snapshot that never completed";

const TOPOLOGY: &str = "2\nA 10\nB 10\nA B\nB A\n";
const NAMES: [&str; 2] = ["A", "B"];
const A: usize = 0;
const B: usize = 1;

/// The logs of a two-process bank run (processes A and B, 10 jars each), written line by line, each
/// line with the state the bank's transitions give.
#[derive(Clone)]
struct Logs {
    lines: Vec<Vec<Value>>,
    jars: Vec<u64>,
    amounts: HashMap<String, u64>,
}

fn channel(from: usize, to: usize) -> String {
    format!("{}->{}", NAMES[from], NAMES[to])
}

impl Logs {
    fn new() -> Self {
        Logs { lines: vec![Vec::new(), Vec::new()], jars: vec![10, 10], amounts: HashMap::new() }
    }

    fn line(&mut self, p: usize, mut line: Value) {
        line["process"] = Value::from(NAMES[p]);
        line["seq"] = Value::from(self.lines[p].len());
        line["state"] = json!({ "jars": self.jars[p], "sold": 0 });
        self.lines[p].push(line);
    }

    fn send(&mut self, p: usize, msg: &str, amount: u64) {
        self.jars[p] -= amount;
        self.amounts.insert(msg.to_string(), amount);
        self.line(p, json!({ "kind": "send", "channel": channel(p, 1 - p), "msg": msg, "payload": amount }));
    }

    fn recv(&mut self, p: usize, msg: &str) {
        self.jars[p] += self.amounts[msg];
        self.line(p, json!({ "kind": "receive", "channel": channel(1 - p, p), "msg": msg }));
    }

    fn record(&mut self, p: usize, initiated: bool) {
        self.line(p, json!({ "kind": "record", "snapshot": 0, "initiated": initiated }));
    }

    fn marker_send(&mut self, p: usize) {
        self.line(p, json!({ "kind": "marker-send", "snapshot": 0, "channel": channel(p, 1 - p) }));
    }

    fn marker_recv(&mut self, p: usize, recorded: &[&str]) {
        let line =
            json!({ "kind": "marker-receive", "snapshot": 0, "channel": channel(1 - p, p), "recorded": recorded });
        self.line(p, line);
    }

    /// The line of `p` of kind `kind` (the first).
    fn find(&mut self, p: usize, kind: &str) -> &mut Value {
        self.lines[p].iter_mut().find(|l| l["kind"] == kind).unwrap_or_else(|| panic!("{} logs a {kind}", NAMES[p]))
    }

    /// The logs as `(file name, text)` pairs.
    fn texts(&self) -> Vec<(String, String)> {
        let text = |lines: &Vec<Value>| lines.iter().map(|l| l.to_string() + "\n").collect();
        NAMES.iter().zip(&self.lines).map(|(name, lines)| (format!("{name}.jsonl"), text(lines))).collect()
    }

    /// Writes the topology and the logs into `dir`; the `verify` arguments for them.
    fn write(&self, dir: &Path) -> Vec<String> {
        let p = |f: &str| dir.join(f).display().to_string();
        std::fs::write(dir.join("two.top"), TOPOLOGY).unwrap();
        let mut args = vec!["verify".to_string(), "--topology".into(), p("two.top"), "--trace".into()];
        for (file, text) in self.texts() {
            std::fs::write(dir.join(&file), text).unwrap();
            args.push(p(&file));
        }
        args.push("--json".into());
        args
    }
}

fn temp_dir(name: &str) -> Scratch {
    common::temp_dir("verify-pins", name)
}

/// The one-pass judge's verdict on `logs` (what `--reader stream` runs first): the events
/// judged, or why it stopped.
fn one_pass(logs: &Logs) -> Result<usize, NotClean> {
    let topology = Topology::from_names(&NAMES, &[("A", "B"), ("B", "A")]).unwrap();
    let texts = logs.texts();
    let initial = vec![Bank::new(10); 2];
    judge_in_one_pass(&topology, &initial, Source::Texts(&texts), &States::Interpreted, None, &mut |_| {})
        .map(|clean| clean.events)
}

/// `model verify --json` with `reader` on the logs written in `dir`: the exit code and the
/// JSON report.
fn verify(dir: &Path, logs: &Logs, reader: &str) -> (Option<i32>, Value) {
    let mut args = logs.write(dir);
    args.extend(["--reader".to_string(), reader.to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o: Output = model(&args);
    let json = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("--reader {reader}: no JSON ({e}): {}", stderr(&o)));
    (o.status.code(), json)
}

/// The one-pass judge and both readers hold `logs`: exit 0, the one snapshot holding.
fn holds(logs: &Logs, name: &str) {
    assert!(one_pass(logs).is_ok(), "the one pass judges the untampered logs clean: {:?}", one_pass(logs));
    let dir = temp_dir(name);
    for reader in ["stream", "whole"] {
        let (code, json) = verify(&dir, logs, reader);
        assert_eq!(code, Some(0), "the untampered logs hold, --reader {reader}: {json:#}");
        assert_eq!(json["snapshots"][0]["holds"], true, "--reader {reader}: {json:#}");
    }
}

/// The one-pass judge stops on `logs` for the reason `why` (and so reads them whole), and both
/// readers fail them: exit 1, snapshot 0 judged and violated, and the same report. Returns the
/// report.
fn fails(logs: &Logs, name: &str, why: &'static str) -> Value {
    assert_eq!(one_pass(logs), Err(NotClean(why)), "the one pass stops, and why");
    let dir = temp_dir(name);
    let (code, stream) = verify(&dir, logs, "stream");
    assert_eq!(code, Some(1), "--reader stream: {stream:#}");
    let (code, whole) = verify(&dir, logs, "whole");
    assert_eq!(code, Some(1), "--reader whole: {whole:#}");
    assert_eq!(stream, whole, "both readers give one report");
    assert_eq!((stream["ok"].clone(), stream["exit_code"].clone()), (Value::from(false), Value::from(1)));
    assert_eq!(stream["snapshots"][0]["holds"], false, "{stream:#}");
    assert_eq!(stream["snapshots"][0]["judged"], true, "{stream:#}");
    stream
}

/// The clauses of snapshot 0's findings, in order.
fn clauses(report: &Value) -> Vec<&str> {
    report["snapshots"][0]["findings"].as_array().unwrap().iter().map(|f| f["clause"].as_str().unwrap()).collect()
}

/// The clauses of the consequences of snapshot 0's first finding.
fn consequences(report: &Value) -> Vec<&str> {
    report["snapshots"][0]["findings"][0]["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["clause"].as_str().unwrap())
        .collect()
}

/// The clauses of the run's findings.
fn run_clauses(report: &Value) -> Vec<&str> {
    report["run"].as_array().unwrap().iter().map(|f| f["clause"].as_str().unwrap()).collect()
}

/// A finding's lines, each `ROLE at FILE:LINE` with the file's directory left out.
fn at_lines(finding: &Value) -> Vec<String> {
    let at = finding["at"].as_array().unwrap_or_else(|| panic!("no lines: {finding:#}"));
    at.iter()
        .map(|l| {
            let l = l.as_str().unwrap();
            match l.rsplit_once(" at ") {
                Some((role, path)) => format!("{role} at {}", Path::new(path).file_name().unwrap().to_string_lossy()),
                None => l.to_string(),
            }
        })
        .collect()
}

/// Snapshot 0's first finding's message.
fn message(report: &Value) -> &str {
    report["snapshots"][0]["findings"][0]["message"].as_str().unwrap()
}

/// A initiates; B then sends one message of each of `amounts` to A (ids `b0`, `b1`, …) and records
/// on A's marker, so that B->A's record holds them all; A receives them, then B's marker,
/// whose `recorded` lists `claimed` (indices into the messages).
fn in_flight(amounts: &[u64], claimed: &[usize]) -> Logs {
    let mut l = Logs::new();
    l.record(A, true);
    l.marker_send(A);
    let ids: Vec<String> = (0..amounts.len()).map(|i| format!("b{i}")).collect();
    for (id, &amount) in ids.iter().zip(amounts) {
        l.send(B, id, amount);
    }
    l.marker_recv(B, &[]);
    l.record(B, false);
    l.marker_send(B);
    for id in &ids {
        l.recv(A, id);
    }
    let claimed: Vec<&str> = claimed.iter().map(|&i| ids[i].as_str()).collect();
    l.marker_recv(A, &claimed);
    l
}

#[test]
fn verify_cmd_fails_a_reversed_channel_record() {
    holds(&in_flight(&[1, 2], &[0, 1]), "reversed-ok");
    let report = fails(&in_flight(&[1, 2], &[1, 0]), "reversed", CLAIMS_OTHER);
    // (b) is the cause; the reversed record is no state the run reaches (c), and the messages
    // cannot be received in their order from it (d).
    assert_eq!(clauses(&report), ["b"], "{report:#}");
    assert_eq!(consequences(&report), ["c", "d"], "{report:#}");
    assert_eq!(
        message(&report),
        "the record of B->A holds the in-flight messages out of order: sent as [\"b0\", \"b1\"], recorded as [\"b1\", \"b0\"]"
    );
    assert_eq!(run_clauses(&report), Vec::<&str>::new(), "the run itself is consistent");
}

#[test]
fn verify_cmd_fails_a_reordered_channel_record() {
    holds(&in_flight(&[1, 2, 3], &[0, 1, 2]), "reordered-ok");
    // A rotation: neither the order of receipt nor its reversal.
    let report = fails(&in_flight(&[1, 2, 3], &[1, 2, 0]), "reordered", CLAIMS_OTHER);
    assert_eq!(clauses(&report), ["b"], "{report:#}");
    assert_eq!(consequences(&report), ["c", "d"], "{report:#}");
    assert_eq!(
        message(&report),
        "the record of B->A holds the in-flight messages out of order: sent as [\"b0\", \"b1\", \"b2\"], recorded as [\"b1\", \"b2\", \"b0\"]"
    );
}

#[test]
fn verify_cmd_fails_a_claim_out_of_order() {
    // Three messages of 2 jars: the contents replayed by (c) and (d) cannot tell them apart, only
    // the ids the marker-receive line claims can; it lists them in an order that is not the
    // order of receipt (nor its reversal). Only (b) breaks.
    holds(&in_flight(&[2, 2, 2], &[0, 1, 2]), "claim-ok");
    let report = fails(&in_flight(&[2, 2, 2], &[0, 2, 1]), "claim", CLAIMS_OTHER);
    assert_eq!(clauses(&report), ["b"], "{report:#}");
    assert_eq!(consequences(&report), Vec::<&str>::new(), "{report:#}");
    assert_eq!(
        message(&report),
        "the record of B->A holds the in-flight messages out of order: sent as [\"b0\", \"b1\", \"b2\"], recorded as [\"b0\", \"b2\", \"b1\"]"
    );
    // Two ids swapped: the same.
    let report = fails(&in_flight(&[2, 2, 2], &[1, 0, 2]), "claim-swapped", CLAIMS_OTHER);
    assert_eq!(clauses(&report), ["b"], "{report:#}");
}

/// A initiates and records; it sends a message of 3 to B before (`before`) or after its marker;
/// B receives the message and the marker (in the order they were sent), records and sends its
/// marker; A receives it. Correct when the marker goes first.
fn overtaking(before: bool) -> Logs {
    let mut l = Logs::new();
    l.record(A, true);
    if before {
        l.send(A, "a0", 3);
        l.marker_send(A);
        l.recv(B, "a0");
        l.marker_recv(B, &[]);
        l.record(B, false);
        l.marker_send(B);
    } else {
        l.marker_send(A);
        l.send(A, "a0", 3);
        l.marker_recv(B, &[]);
        l.record(B, false);
        l.marker_send(B);
        l.recv(B, "a0");
    }
    l.marker_recv(A, &[]);
    l
}

#[test]
fn verify_cmd_fails_clause_a_inward_crossing() {
    holds(&overtaking(false), "a-ok");
    // A's message overtakes its marker, and B receives it before recording. (a) cannot break
    // alone: B's recorded state counts a message A's does not, which no run reaches (c), and from
    // which the message is received a second time after the cut (d).
    let report = fails(&overtaking(true), "a", "a message crosses a cut inward");
    assert_eq!(clauses(&report), ["a"], "{report:#}");
    assert_eq!(consequences(&report), ["c", "d"], "{report:#}");
    assert!(message(&report).starts_with("message \"a0\" on A->B crosses the cut inward"), "{report:#}");
}

#[test]
fn verify_cmd_fails_clause_b_missing_message() {
    // B->A holds two messages at the cut; A's record claims only the second. (b) cannot break
    // alone: a record short of a message is a state no run reaches (c), and the message's
    // receipt after the cut finds another at the channel's head (d).
    holds(&in_flight(&[1, 2], &[0, 1]), "missing-ok");
    let report = fails(&in_flight(&[1, 2], &[1]), "missing", CLAIMS_OTHER);
    assert_eq!(clauses(&report), ["b"], "{report:#}");
    assert_eq!(consequences(&report), ["c", "d"], "{report:#}");
    assert_eq!(message(&report), "message \"b0\", in flight on B->A at the cut, is missing from its record [\"b1\"]");
}

/// B initiates; A records on B's marker and sends a message of 3 to B, before (`before`) or after
/// its marker; B receives the message and the marker in the order they were sent, and B's record
/// of A->B claims what B received in between.
fn sent_after_the_cut(before: bool) -> Logs {
    let mut l = Logs::new();
    l.record(B, true);
    l.marker_send(B);
    l.marker_recv(A, &[]);
    l.record(A, false);
    if before {
        l.send(A, "a0", 3);
        l.marker_send(A);
        l.recv(B, "a0");
        l.marker_recv(B, &["a0"]);
    } else {
        l.marker_send(A);
        l.send(A, "a0", 3);
        l.marker_recv(B, &[]);
        l.recv(B, "a0");
    }
    l
}

#[test]
fn verify_cmd_fails_clause_b_extra_message() {
    holds(&sent_after_the_cut(false), "extra-ok");
    // A sends the message after it recorded but ahead of its marker, and B's record claims it:
    // B did receive it between its record and the marker (no claim of the logs is false), but
    // it was not in flight at the cut. (b) cannot break alone: the extra message is part of the
    // recorded state, which no run reaches (c), and it is still in the channel at the end (d).
    let report =
        fails(&sent_after_the_cut(true), "extra", "a channel record that is not what was in flight at the cut");
    assert_eq!(clauses(&report), ["b"], "{report:#}");
    assert_eq!(consequences(&report), ["c", "d"], "{report:#}");
    assert_eq!(
        message(&report),
        "the record of A->B [\"a0\"] holds message \"a0\", which was not in flight at the cut: A sent it after it recorded"
    );
}

#[test]
fn verify_cmd_names_the_send_and_the_senders_record_of_a_message_recorded_after_the_cut() {
    // The (b) finding of `verify_cmd_fails_clause_b_extra_message` names the lines that make the
    // message post-cut, as an (a) finding does: A's send (A.jsonl:3) after A's record
    // (A.jsonl:2); then where B closed the record and received the message.
    let report =
        fails(&sent_after_the_cut(true), "extra-lines", "a channel record that is not what was in flight at the cut");
    assert_eq!(
        at_lines(&report["snapshots"][0]["findings"][0]),
        [
            "send at A.jsonl:3",
            "A's record at A.jsonl:2",
            "the record of A->B closed at B.jsonl:4",
            "its receipt after the cut at B.jsonl:3"
        ],
        "{report:#}"
    );
}

#[test]
fn verify_cmd_fails_clause_c_by_a_wrong_recorded_state() {
    // A's record line claims a jar less than A holds. (c) cannot break alone in logs: the
    // recorded state is the state logged on the record line, so it is also a logged state the
    // transitions do not produce (the run is inconsistent), and the rest of the run, replayed
    // from it, does not end where the run did (d).
    let mut logs = in_flight(&[1, 2], &[0, 1]);
    holds(&logs, "c-state-ok");
    logs.find(A, "record")["state"]["jars"] = Value::from(9);
    let report = fails(&logs, "c-state", "a logged state the transitions do not produce");
    assert_eq!(clauses(&report), ["c"], "{report:#}");
    assert_eq!(consequences(&report), ["d"], "{report:#}");
    assert!(message(&report).starts_with("the recorded state is not reachable from the state at initiation: A recorded {\"jars\":9,\"sold\":0} but its state at the cut is {\"jars\":10,\"sold\":0}"), "{report:#}");
    assert_eq!(run_clauses(&report), ["logged-states"], "{report:#}");
}

/// A sends messages of 1 and 2 to B; `pre` places them before the cut (A initiates after sending
/// them, B receives them before recording), otherwise after it (before the last record
/// closes); B receives them in the order `order`.
fn delivered(pre: bool, order: [&str; 2]) -> Logs {
    let mut l = Logs::new();
    if pre {
        l.send(A, "a0", 1);
        l.send(A, "a1", 2);
        l.record(A, true);
        l.marker_send(A);
        l.recv(B, order[0]);
        l.recv(B, order[1]);
        l.marker_recv(B, &[]);
        l.record(B, false);
    } else {
        l.record(A, true);
        l.marker_send(A);
        l.send(A, "a0", 1);
        l.send(A, "a1", 2);
        l.marker_recv(B, &[]);
        l.record(B, false);
        l.recv(B, order[0]);
        l.recv(B, order[1]);
    }
    // B's marker only now: the receipts come before the snapshot's end.
    l.marker_send(B);
    l.marker_recv(A, &[]);
    l
}

#[test]
fn verify_cmd_fails_clause_c_alone() {
    holds(&delivered(true, ["a0", "a1"]), "c-ok");
    // B receives A's two messages in the wrong order, both before it records: the recorded state
    // is the state at the cut, but no FIFO run reaches it. (c) is the snapshot's only finding;
    // the run's broken FIFO precondition is reported as the run's.
    let report = fails(&delivered(true, ["a1", "a0"]), "c", NO_ORDER);
    assert_eq!(clauses(&report), ["c"], "{report:#}");
    assert_eq!(consequences(&report), Vec::<&str>::new(), "{report:#}");
    assert!(message(&report).contains("receipt of \"a1\" on A->B finds \"a0\" at the head"), "{report:#}");
    assert_eq!(run_clauses(&report), ["fifo"], "{report:#}");
}

#[test]
fn verify_cmd_fails_clause_d_alone() {
    holds(&delivered(false, ["a0", "a1"]), "d-ok");
    // The same, after the cut and before the last record closes: (d) is the snapshot's only
    // finding, and the broken FIFO precondition the run's.
    let report = fails(&delivered(false, ["a1", "a0"]), "d", NO_ORDER);
    assert_eq!(clauses(&report), ["d"], "{report:#}");
    assert_eq!(consequences(&report), Vec::<&str>::new(), "{report:#}");
    assert!(message(&report).starts_with("the end state is not reachable from the recorded state"), "{report:#}");
    assert_eq!(run_clauses(&report), ["fifo"], "{report:#}");
}

#[test]
fn verify_cmd_fails_clause_e_not_recorded() {
    // A initiates; its marker never reaches B, which never records and sends no marker: both
    // records stay open. Without B's record there is no cut, so only (e) is judged.
    let mut l = Logs::new();
    l.send(B, "b0", 2);
    l.record(A, true);
    l.marker_send(A);
    l.recv(A, "b0");
    let report = fails(&l, "e-record", UNFINISHED);
    assert_eq!(clauses(&report), ["e", "e", "e"], "{report:#}");
    assert_eq!(message(&report), "B never recorded its state");
    let closes: Vec<&str> = report["snapshots"][0]["findings"].as_array().unwrap()[1..]
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        closes,
        [
            "the record of A->B was never closed: B received no marker of snapshot 0 on it",
            "the record of B->A was never closed: A received no marker of snapshot 0 on it"
        ]
    );
}

#[test]
fn verify_cmd_fails_clause_e_not_closed() {
    // A never receives B's marker: B->A's record never closes. Everything else is right; an
    // incomplete snapshot is judged on (e) alone (the logs assemble no snapshot to replay).
    let mut logs = in_flight(&[1, 2], &[0, 1]);
    holds(&logs, "e-close-ok");
    let last = logs.lines[A].pop().unwrap();
    assert_eq!(last["kind"], "marker-receive");
    let report = fails(&logs, "e-close", UNFINISHED);
    assert_eq!(clauses(&report), ["e"], "{report:#}");
    assert_eq!(consequences(&report), Vec::<&str>::new(), "{report:#}");
    assert_eq!(message(&report), "the record of B->A was never closed: A received no marker of snapshot 0 on it");
}

#[test]
fn verify_cmd_names_messages_by_id_in_the_replays_under_a_finding() {
    // The (c) and (d) consequences of `verify_cmd_fails_clause_b_missing_message` name the
    // messages by the ids the logs give them ("b0", "b1"), as every other line does, not by their
    // payloads (1 and 2 jars).
    let report = fails(&in_flight(&[1, 2], &[1]), "missing-ids", CLAIMS_OTHER);
    let messages: Vec<&str> = report["snapshots"][0]["findings"][0]["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "the recorded state is not reachable from the state at initiation: channel B->A recorded [\"b1\"] but holds [\"b0\", \"b1\"] at the cut",
            "the end state is not reachable from the recorded state: receipt of \"b0\" on B->A finds \"b1\" at the head of the channel",
        ],
        "{report:#}"
    );
}

#[test]
fn verify_cmd_reports_a_duplicated_marker_send_once_naming_its_line() {
    // A logs its marker-send on A->B twice; B receives both, and the second closes its record
    // of A->B again. One finding, naming A's second marker-send; the second close under it.
    let mut l = Logs::new();
    l.record(A, true);
    l.marker_send(A);
    l.marker_send(A);
    l.marker_recv(B, &[]);
    l.record(B, false);
    l.marker_send(B);
    l.marker_recv(B, &[]);
    l.marker_recv(A, &[]);
    let report = fails(&l, "double-marker", "a channel's record closed twice");
    assert_eq!(clauses(&report), ["claims"], "{report:#}");
    assert_eq!(
        message(&report),
        "A sends a marker of snapshot 0 a second time on A->B, where it already sent one: a channel carries one marker of a snapshot, and the second closes its record a second time"
    );
    let finding = &report["snapshots"][0]["findings"][0];
    assert_eq!(at_lines(finding), ["marker sent again at A.jsonl:3", "first marker sent at A.jsonl:2"]);
    assert_eq!(consequences(&report), ["claims"], "{report:#}");
    assert_eq!(finding["consequences"][0]["message"], "the record of A->B for snapshot 0 is closed a second time");
    assert_eq!(at_lines(&finding["consequences"][0]), ["marker receipt at B.jsonl:4"]);
}

#[test]
fn verify_cmd_warns_of_a_send_between_a_record_and_its_marker_that_the_cut_survives() {
    // `sent_after_the_cut(true)`, but B's record of A->B leaves "a0" out: A broke the marker
    // rule, and the cut is consistent all the same. Exit 0, a warning naming the send, A's
    // record and its marker; the same from both readers, in the text and in `--json`.
    let mut logs = sent_after_the_cut(true);
    let close = logs.lines[B].last_mut().unwrap();
    assert_eq!(close["kind"], "marker-receive");
    close["recorded"] = json!([]);
    assert!(one_pass(&logs).is_err(), "the one pass leaves the wording to the whole reader");
    let dir = temp_dir("warning");
    let (code, stream) = verify(&dir, &logs, "stream");
    let (whole_code, whole) = verify(&dir, &logs, "whole");
    assert_eq!((code, whole_code), (Some(0), Some(0)), "{stream:#}");
    assert_eq!(stream, whole, "both readers give one report");
    assert_eq!(stream["ok"], true);
    assert_eq!(stream["summary"], "the snapshot holds; 1 warning (see above)");
    let warnings = stream["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{stream:#}");
    assert_eq!(warnings[0]["clause"], "marker-rule");
    assert_eq!(
        at_lines(&warnings[0]),
        [
            "send at A.jsonl:3",
            "A's record at A.jsonl:2",
            "its marker on A->B sent at A.jsonl:4",
            "receipt at B.jsonl:3"
        ]
    );
    // The text: a `warning:` line, the lines under it.
    let args = logs.write(&dir);
    let args: Vec<&str> = args.iter().map(String::as_str).filter(|a| *a != "--json").collect();
    let o = model(&args);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    assert!(
        text.contains("warning: the marker rule (the theorem still holds): snapshot 0: A sends message \"a0\" on A->B after it recorded and before its marker there (the marker rule sends the marker first); the cut is still consistent: B's record of A->B leaves the message out\n"),
        "{text}"
    );
    assert!(text.ends_with("verdict: the snapshot holds; 1 warning (see above)\n"), "{text}");
}
