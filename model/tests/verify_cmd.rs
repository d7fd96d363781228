//! `model verify`: the bank's logs (written by the threaded runtime, as `examples/bank.rs
//! --trace-out` writes them) hold; doctored logs are violations naming the lines involved;
//! bad logs exit 2 naming the file and line; `model replay --trace-out` writes logs that hold.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use chandy_lamport::runtime::workload::{run, Workload};
use chandy_lamport::Topology;
use common::{model, replay_logs, stderr, Scratch};
use serde_json::Value;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn temp_dir(name: &str) -> Scratch {
    common::temp_dir("verify", name)
}

/// The acceptance run: 4 processes, 2,000 transfers, 5 snapshots, written with `trace_out` (what
/// `cargo run --release --example bank -- --procs 4 --transfers 2000 --snapshots 5 --trace-out
/// DIR` does), in a directory removed on drop.
fn bank_logs(name: &str) -> Scratch {
    let dir = temp_dir(name);
    let mut w = Workload::new(Topology::complete(4).unwrap(), 2_000, 5);
    w.trace_out = Some(dir.to_path_buf());
    run(&w).unwrap_or_else(|e| panic!("the bank run fails: {e}"));
    dir
}

fn log(dir: &Path, p: usize) -> PathBuf {
    dir.join(format!("P{p}.jsonl"))
}

fn verify(dir: &Path, extra: &[&str]) -> Output {
    let top = dir.join("topology.top");
    let files: Vec<String> = (0..4).map(|p| log(dir, p).display().to_string()).collect();
    let mut args = vec!["verify", "--topology", top.to_str().unwrap(), "--trace"];
    args.extend(files.iter().map(String::as_str));
    args.extend(extra);
    model(&args)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Writes the events back, renumbering `seq` 0, 1, 2, ... (as an implementation that never
/// logged the removed events would have).
fn write_renumbered(path: &Path, mut events: Vec<Value>) {
    let mut text = String::new();
    for (seq, e) in events.iter_mut().enumerate() {
        e["seq"] = Value::from(seq);
        text.push_str(&e.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

fn is(e: &Value, kind: &str) -> bool {
    e["kind"] == kind
}

/// The 1-based line of `P{p}.jsonl` holding the send of `msg`.
fn send_line(dir: &Path, msg: &Value) -> (usize, usize) {
    (0..4)
        .find_map(|p| lines(&log(dir, p)).iter().position(|e| is(e, "send") && e["msg"] == *msg).map(|i| (p, i + 1)))
        .expect("the message is sent")
}

fn exit(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn the_bank_runs_logs_hold_and_exit_0() {
    let dir = bank_logs("holds");
    let o = verify(&dir, &[]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(0), "{out}{}", stderr(&o));
    for k in 0..5 {
        assert!(out.contains(&format!("snapshot {k}: holds\n")), "{out}");
    }
    assert!(out.contains("run: consistent"), "{out}");
    assert!(out.ends_with("verdict: all 5 snapshots hold\n"), "{out}");
    // The same as one JSON object, with --app given explicitly.
    let o = verify(&dir, &["--app", "bank", "--json"]);
    assert_eq!(exit(&o), Some(0), "{}", stderr(&o));
    let json: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((json["ok"].clone(), json["exit_code"].clone()), (Value::from(true), Value::from(0)));
    assert_eq!(json["snapshots"].as_array().unwrap().len(), 5);
    assert!(json["snapshots"].as_array().unwrap().iter().all(|s| s["holds"] == true));
    assert_eq!(json["files"].as_array().unwrap().len(), 4);
}

#[test]
fn a_deleted_pre_cut_receipt_is_a_violation_naming_its_send() {
    let dir = bank_logs("receipt");
    // The last receipt at some process before it records for snapshot 0: pre-cut for every
    // snapshot, of a message sent before the cut.
    let (p, at) = (0..4)
        .find_map(|p| {
            let events = lines(&log(&dir, p));
            let record = events.iter().position(|e| is(e, "record") && e["snapshot"] == 0)?;
            events[..record].iter().rposition(|e| is(e, "receive")).map(|i| (p, i))
        })
        .expect("some house receives a cart before it records");
    let mut events = lines(&log(&dir, p));
    let receipt = events.remove(at);
    write_renumbered(&log(&dir, p), events);
    let (sender, line) = send_line(&dir, &receipt["msg"]);
    let o = verify(&dir, &[]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("snapshot 0: VIOLATED"), "{out}");
    let msg = receipt["msg"].as_str().unwrap();
    assert!(out.contains(&format!("message \"{msg}\", in flight on P")), "{out}");
    assert!(out.contains("at the cut, is missing from its record ["), "{out}");
    // The receipt's absence is also a FIFO break: a later message on the channel overtook it.
    assert!(out.contains(&format!("overtook message \"{msg}\"")), "{out}");
    let send_at = format!("send at {}:{line}", log(&dir, sender).display());
    assert!(out.contains(&send_at), "expected {send_at:?} in {out}");
    // The process's next logged state still counts the message: the run is inconsistent there.
    assert!(out.contains("run: INCONSISTENT"), "{out}");
    let next = format!("event at {}:{}", log(&dir, p).display(), at + 1);
    assert!(out.contains(&next), "expected {next:?} in {out}");
    assert!(out.contains("verdict: 5 of 5 snapshots violate the theorem"), "{out}");
}

#[test]
fn an_edited_recorded_state_is_a_violation_naming_the_record() {
    let dir = bank_logs("state");
    let path = log(&dir, 2);
    let mut events = lines(&path);
    let at = events.iter().position(|e| is(e, "record") && e["snapshot"] == 2).expect("P2 records snapshot 2");
    let jars = events[at]["state"]["jars"].as_u64().unwrap();
    events[at]["state"]["jars"] = Value::from(jars + 1);
    write_renumbered(&path, events);
    let o = verify(&dir, &[]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("snapshot 2: VIOLATED"), "{out}");
    for k in [0, 1, 3, 4] {
        assert!(out.contains(&format!("snapshot {k}: holds")), "{out}");
    }
    let record = format!(
        "P2's record at {}:{}: recorded {{\"jars\":{},\"sold\":0}}, its transitions give {{\"jars\":{jars},\"sold\":0}}",
        path.display(),
        at + 1,
        jars + 1
    );
    assert!(out.contains(&record), "expected {record:?} in {out}");
    assert!(out.contains("(c) recorded state reachable from start"), "{out}");
    assert!(out.contains("verdict: 1 of 5 snapshots violates the theorem (snapshot 2)"), "{out}");
}

#[test]
fn a_channel_record_never_closed_is_a_violation() {
    let dir = bank_logs("unclosed");
    let path = log(&dir, 0);
    let events: Vec<Value> =
        lines(&path).into_iter().filter(|e| !(is(e, "marker-receive") && e["snapshot"] == 1)).collect();
    write_renumbered(&path, events);
    let o = verify(&dir, &[]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("snapshot 1: VIOLATED\n"), "{out}");
    for from in ["P1", "P2", "P3"] {
        let unclosed = format!("- (e) snapshot terminates: the record of {from}->P0 was never closed: P0 received no marker of snapshot 1 on it\n");
        assert!(out.contains(&unclosed), "{out}");
    }
    // P0 still records for snapshot 1 (as a non-initiator: a claim no marker explains).
    let initiated = lines(&path).iter().any(|e| is(e, "record") && e["snapshot"] == 1 && e["initiated"] == true);
    assert!(initiated || out.contains("P0 records for snapshot 1 as caused by a marker (\"initiated\": false), but no marker of snapshot 1 reached it before"), "{out}");
    assert!(out.contains("snapshot 0: holds"), "{out}");
}

/// Replaces line `line` (1-based) of `P{p}.jsonl` with `text` and expects exit 2 with
/// `P{p}.jsonl:LINE: message` on stderr.
fn bad_line(dir: &Path, p: usize, line: usize, text: &str, message: &str) {
    let path = log(dir, p);
    let original = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = original.lines().collect();
    lines[line - 1] = text;
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let o = verify(dir, &[]);
    let expected = format!("{}:{line}: {message}", path.display());
    assert_eq!(exit(&o), Some(2), "{text}: {}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains(&expected), "expected {expected:?} in {}", stderr(&o));
    assert_eq!(stdout(&o), "", "no verdict on bad input");
    std::fs::write(&path, original).unwrap();
}

#[test]
fn bad_logs_exit_2_naming_file_and_line() {
    let dir = bank_logs("bad");
    let events = lines(&log(&dir, 1));
    let receipt = (1..events.len()).find(|&i| is(&events[i], "receive")).unwrap();
    let mut e = events[receipt].clone();
    bad_line(&dir, 1, 5, r#"{"process":"P1","seq":4,"#, "malformed JSON: EOF while parsing a value (column 24)");
    e["process"] = Value::from("P9");
    bad_line(&dir, 1, receipt + 1, &e.to_string(), "unknown process \"P9\" (not in the topology)");
    e["process"] = Value::from("P1");
    e["channel"] = Value::from("P7->P1");
    bad_line(&dir, 1, receipt + 1, &e.to_string(), "unknown channel \"P7->P1\"");
    e["channel"] = events[receipt]["channel"].clone();
    e["msg"] = events[receipt]["msg"].clone();
    e["kind"] = Value::from("recieve");
    bad_line(&dir, 1, receipt + 1, &e.to_string(), "not an event: `kind`: unknown variant `recieve`");
    e["kind"] = Value::from("receive");
    e["seq"] = Value::from(receipt - 1);
    let twice = format!("P1 has seq {} twice (also at {}:{receipt})", receipt - 1, log(&dir, 1).display());
    bad_line(&dir, 1, receipt + 1, &e.to_string(), &twice);
    // A line deleted without renumbering: the next one names the gap.
    let path = log(&dir, 1);
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text.lines().enumerate().filter(|(i, _)| *i != receipt).map(|(_, l)| l).collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    let o = verify(&dir, &[]);
    assert_eq!(exit(&o), Some(2), "{}", stderr(&o));
    let gap =
        format!("{}:{}: P1's seq jumps to {}: seq {receipt} is missing", path.display(), receipt + 1, receipt + 1);
    assert!(stderr(&o).contains(&gap), "expected {gap:?} in {}", stderr(&o));
}

#[test]
fn logs_with_no_causal_order_exit_2_naming_file_and_line() {
    let dir = temp_dir("cycle");
    std::fs::write(dir.join("two.top"), "2\nA 5\nB 5\nA B\nB A\n").unwrap();
    // Each process receives the other's message before sending its own.
    let a = r#"{"process":"A","seq":0,"kind":"receive","channel":"B->A","msg":"b1"}
{"process":"A","seq":1,"kind":"send","channel":"A->B","msg":"a1","payload":1}
"#;
    let b = r#"{"process":"B","seq":0,"kind":"receive","channel":"A->B","msg":"a1"}
{"process":"B","seq":1,"kind":"send","channel":"B->A","msg":"b1","payload":1}
"#;
    std::fs::write(dir.join("A.jsonl"), a).unwrap();
    std::fs::write(dir.join("B.jsonl"), b).unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), &p("B.jsonl")]);
    assert_eq!(exit(&o), Some(2), "{}{}", stdout(&o), stderr(&o));
    let expected = format!("{}:1: no causal order exists (a cycle): this event waits for message \"b1\"", p("A.jsonl"));
    assert!(stderr(&o).contains(&expected), "expected {expected:?} in {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("(at {}:2)", p("B.jsonl"))), "{}", stderr(&o));
    // Without a cycle the same two processes verify, but judge nothing (no snapshot): never a pass.
    let b = b.replace(r#""seq":0,"kind":"receive""#, r#""seq":9,"kind":"receive""#).replace(r#""seq":1"#, r#""seq":0"#);
    std::fs::write(dir.join("B.jsonl"), b.replace(r#""seq":9"#, r#""seq":1"#)).unwrap();
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), &p("B.jsonl")]);
    assert_eq!(exit(&o), Some(3), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("verdict: no snapshot in the logs: nothing was judged"), "{}", stdout(&o));
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), &p("B.jsonl"), "--json"]);
    assert_eq!(exit(&o), Some(3), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains(r#""ok":false"#), "{}", stdout(&o));
    // Empty logs (a failed collection of logs) are no run at all: bad input, never a pass.
    std::fs::write(dir.join("A.jsonl"), "").unwrap();
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), "/dev/null"]);
    assert_eq!(exit(&o), Some(2), "{}{}", stdout(&o), stderr(&o));
    let expected = format!("{}, /dev/null: no event in the logs: there is no run to verify", p("A.jsonl"));
    assert!(stderr(&o).contains(&expected), "{}", stderr(&o));
}

#[test]
fn an_unfinished_snapshot_and_a_wrong_logged_state_exit_1() {
    let dir = temp_dir("unfinished");
    std::fs::write(dir.join("two.top"), "2\nA 5\nB 5\nA B\nB A\n").unwrap();
    // A records and sends its marker, which B never receives; A's send logs a wrong state.
    let a = r#"{"process":"A","seq":0,"kind":"send","channel":"A->B","msg":1,"payload":2,"state":{"jars":4,"sold":0}}
{"process":"A","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":3,"sold":0}}
{"process":"A","seq":2,"kind":"marker-send","snapshot":0,"channel":"A->B"}
"#;
    let b = r#"{"process":"B","seq":0,"kind":"receive","channel":"A->B","msg":1,"state":{"jars":7,"sold":0}}
"#;
    std::fs::write(dir.join("A.jsonl"), a).unwrap();
    std::fs::write(dir.join("B.jsonl"), b).unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("B.jsonl"), &p("A.jsonl")]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("snapshot 0: VIOLATED\n  - (e) snapshot terminates: B never recorded its state\n"), "{out}");
    assert!(
        out.contains(&format!("B never recorded its state\n      B's last event at {}:1\n", p("B.jsonl"))),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "the record of A->B was never closed: B received no marker of snapshot 0 on it\n      its marker sent at {}:3\n",
            p("A.jsonl")
        )),
        "{out}"
    );
    assert!(out.contains("the record of B->A was never closed: A received no marker of snapshot 0 on it\n      B sent no marker of snapshot 0 on it\n"), "{out}");
    assert!(out.contains("run: INCONSISTENT\n  - logged states: A logged state {\"jars\":4,\"sold\":0}, but its transitions from the initial state give {\"jars\":3,\"sold\":0}"), "{out}");
    assert!(out.contains(&format!("event at {}:1", p("A.jsonl"))), "{out}");
    assert!(out.ends_with("verdict: the snapshot violates the theorem (snapshot 0); the run is inconsistent: a logged state is not what the transitions produce\n"), "{out}");
}

#[test]
fn bad_arguments_exit_2() {
    let o = model(&["verify", "--topology", "/nonexistent/x.top", "--trace", "/nonexistent/x.jsonl"]);
    assert_eq!(exit(&o), Some(2));
    assert!(stderr(&o).contains("/nonexistent/x.top: cannot read"), "{}", stderr(&o));
    let o = model(&["verify", "--topology", "/nonexistent/x.top"]);
    assert_eq!(exit(&o), Some(2));
    assert!(stderr(&o).contains("--trace"), "{}", stderr(&o));
    let o = model(&["verify", "--topology", "x.top", "--trace", "x.jsonl", "--app", "kv"]);
    assert_eq!(exit(&o), Some(2));
    assert!(stderr(&o).contains("[possible values: bank, orders, stream, balance, none]"), "{}", stderr(&o));
    let o = model(&["verify", "--help"]);
    assert!(stdout(&o).contains("Exit codes:"), "{}", stdout(&o));
}

#[test]
fn replay_writes_logs_that_verify() {
    let dir = temp_dir("replay");
    let events = "send N1 N2 3\nsend N2 N3 4\nsnapshot N1\nsend N3 N1 2\ntick\nsend N2 N1 1\nsnapshot N3\ntick 3\n";
    let out = replay_logs(&dir, events, &["--seed", "3"]);
    let p = |f: &Path| f.display().to_string();
    let logs: Vec<String> = ["N1", "N2", "N3"].iter().map(|n| p(&out.join(format!("{n}.jsonl")))).collect();
    let top = p(&out.join("topology.top"));
    assert_eq!(std::fs::read_to_string(&top).unwrap(), "3\nN1 10\nN2 10\nN3 10\nN1 N2\nN2 N3\nN3 N1\nN2 N1\n");
    let mut args = vec!["verify", "--topology", top.as_str(), "--trace"];
    args.extend(logs.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).ends_with("verdict: all 2 snapshots hold\n"), "{}", stdout(&o));
    // An unwritable directory is bad input.
    let o = model(&[
        "replay",
        "--topology",
        &p(&dir.join("t.top")),
        "--events",
        &p(&dir.join("t.events")),
        "--trace-out",
        "/proc/no-such-dir",
    ]);
    assert_eq!(exit(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--trace-out: cannot write /proc/no-such-dir"), "{}", stderr(&o));
}

/// Issue 22's blow-up: three processes' logs checked against a 300-process topology give a page
/// (the first 25 processes with no log, then a count of the rest), not a million lines; the
/// snapshot, whose missing records would be in those logs, is not judged (exit 3).
#[test]
fn damage_is_capped_with_a_count_of_the_rest() {
    let dir = temp_dir("cap");
    replay_logs(&dir, "send N1 N2 3\nsnapshot N1\nsend N3 N1 2\ntick 3\n", &[]);
    let p = |f: &Path| f.display().to_string();
    let names: Vec<String> = (1..=300).map(|i| format!("N{i}")).collect();
    let mut top = format!("300\n{}\n", names.iter().map(|n| format!("{n} 10")).collect::<Vec<_>>().join("\n"));
    for a in &names {
        for b in names.iter().filter(|b| *b != a) {
            top += &format!("{a} {b}\n");
        }
    }
    std::fs::write(dir.join("big.top"), top).unwrap();
    let logs: Vec<String> =
        ["N1", "N2", "N3"].iter().map(|n| p(&dir.join("logs").join(format!("{n}.jsonl")))).collect();
    let big = p(&dir.join("big.top"));
    let mut args = vec!["verify", "--topology", big.as_str(), "--trace"];
    args.extend(logs.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(exit(&o), Some(3), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().count() < 40, "{} lines: {}", out.lines().count(), &out[..2000.min(out.len())]);
    assert!(
        out.contains("logs: DAMAGED\n  - damaged logs: N4 has no events in the logs: its log is missing or empty\n"),
        "{out}"
    );
    assert!(out.contains("  ... and 272 more (the first 25 are listed)\n"), "{out}");
    assert!(out.contains("snapshot 0: not judged: incomplete in what was read, and the missing part may be in what the damaged logs of N4, N5,"), "{out}");
    assert!(
        out.ends_with("verdict: no snapshot could be judged; snapshot 0 not judged: the logs are damaged\n"),
        "{out}"
    );
    args.push("--json");
    let json: Value = serde_json::from_slice(&model(&args).stdout).unwrap();
    assert_eq!((json["damage"].as_array().unwrap().len(), json["more_damage"].as_u64()), (25, Some(272)));
    assert_eq!((json["snapshots"][0]["judged"].as_bool(), json["exit_code"].as_u64()), (Some(false), Some(3)));
}

/// Issue 22's misleading messages: each now names the file, the line and what is wrong.
#[test]
fn hostile_logs_are_refused_with_messages_that_name_the_field_and_line() {
    let dir = temp_dir("hostile");
    std::fs::write(dir.join("two.top"), "2\nA 5\nB 5\nA B\nB A\n").unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    let good = r#"{"process":"A","seq":0,"kind":"send","channel":"A->B","msg":1,"payload":2}"#;
    let refused = |bytes: &[u8], app: &str, expected: &str| {
        std::fs::write(dir.join("A.jsonl"), bytes).unwrap();
        let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), "--app", app]);
        assert_eq!(exit(&o), Some(2), "{}{}", stdout(&o), stderr(&o));
        let expected = format!("{}:{expected}", p("A.jsonl"));
        assert!(stderr(&o).contains(&expected), "expected {expected:?} in {}", stderr(&o));
    };
    refused(
        br#"{"process":"A","seq":1180591620717411303424,"kind":"internal","step":1}"#,
        "bank",
        "1: not an event: `seq`: invalid type: floating point",
    );
    refused(b"[1, 2]\n", "bank", "1: not an event: a line is one JSON object (an event), not an array");
    let mut bytes = format!("{good}\n{good}").into_bytes();
    bytes.extend(b"\xff\n");
    refused(&bytes, "bank", "2: not UTF-8 text");
    refused(
        br#"{"process":"A","seq":0,"kind":"send","channel":"A->B","msg":1,"payload":{"Cart":{"to":"x"}}}"#,
        "orders",
        "1: not an event: `payload.Cart.to`: invalid type: string \"x\", expected u8",
    );
    // A byte-order mark is read past; the same file twice is refused.
    std::fs::write(dir.join("A.jsonl"), format!("\u{feff}{good}\n")).unwrap();
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl")]);
    assert_eq!(exit(&o), Some(3), "{}{}", stdout(&o), stderr(&o));
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), &p("A.jsonl")]);
    assert_eq!(exit(&o), Some(2), "{}{}", stdout(&o), stderr(&o));
    let twice = format!("{a}: the same file is given twice (also as {a})", a = p("A.jsonl"));
    assert!(stderr(&o).contains(&twice), "{}", stderr(&o));
}

/// Logs read as the wrong application: the refusal names the line and the field, and the
/// applications that take the value (an integer state is a balance, or opaque).
#[test]
fn a_value_the_chosen_app_does_not_take_names_the_apps_that_do() {
    let dir = temp_dir("app-value");
    std::fs::write(dir.join("two.top"), "2\nA 5\nB 5\nA B\nB A\n").unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    std::fs::write(
        dir.join("A.jsonl"),
        "{\"process\":\"A\",\"seq\":0,\"kind\":\"record\",\"snapshot\":0,\"state\":7}\n",
    )
    .unwrap();
    let o = model(&["verify", "--topology", &p("two.top"), "--trace", &p("A.jsonl"), "--app", "bank"]);
    assert_eq!(exit(&o), Some(2), "{}{}", stdout(&o), stderr(&o));
    let expected = format!(
        "{}:1: not an event: `state`: invalid type: integer `7`, expected struct Bank (column 61) (read as \
         --app bank; this `state` fits --app balance, --app none)",
        p("A.jsonl")
    );
    assert!(stderr(&o).contains(&expected), "expected {expected:?} in {}", stderr(&o));
}

/// Replays a short script on the three-node topology in `dir` and writes, beside its logs,
/// `ids.top`: the same topology with its node lines giving the ids alone. The logs' paths and
/// the new file's.
fn logs_and_ids_top(dir: &Path) -> (Vec<String>, String) {
    let events = "send N1 N2 3\nsnapshot N1\nsend N3 N1 2\ntick 3\n";
    let out = replay_logs(dir, events, &["--seed", "1"]);
    let ids = dir.join("ids.top");
    std::fs::write(&ids, "3\nN1\nN2\nN3\nN1 N2\nN2 N3\nN3 N1\nN2 N1\n").unwrap();
    let logs = ["N1", "N2", "N3"].iter().map(|n| out.join(format!("{n}.jsonl")).display().to_string()).collect();
    (logs, ids.display().to_string())
}

#[test]
fn app_none_takes_a_top_whose_node_lines_give_ids_alone() {
    let dir = temp_dir("ids-none");
    let (logs, top) = logs_and_ids_top(&dir);
    let mut args = vec!["verify", "--topology", top.as_str(), "--app", "none", "--trace"];
    args.extend(logs.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).ends_with("verdict: the snapshot holds\n"), "{}", stdout(&o));
}

#[test]
fn an_app_needing_token_counts_refuses_ids_alone_naming_the_line_unless_initial_gives_the_states() {
    let dir = temp_dir("ids-apps");
    let (logs, top) = logs_and_ids_top(&dir);
    for app in ["bank", "orders", "stream", "balance"] {
        let mut args = vec!["verify", "--topology", top.as_str(), "--app", app, "--trace"];
        args.extend(logs.iter().map(String::as_str));
        let o = model(&args);
        assert_eq!(exit(&o), Some(2), "{app}: {}{}", stdout(&o), stderr(&o));
        let expected = format!(
            "error: {top}:2: node N1 has no token count, but --app {app} makes its initial state from one: give \
             `N1 TOKENS` here, or every initial state with --initial FILE\n"
        );
        assert_eq!(stderr(&o), expected, "{app}");
        assert!(stdout(&o).is_empty(), "{app}: nothing judged: {}", stdout(&o));
    }
    // With --initial, the counts are not read: the bank's logs hold.
    let initial = dir.join("initial.json");
    let bank = r#"{"jars":10,"sold":0}"#;
    std::fs::write(&initial, format!(r#"{{"N1":{bank},"N2":{bank},"N3":{bank}}}"#)).unwrap();
    let initial = initial.display().to_string();
    let mut args =
        vec!["verify", "--topology", top.as_str(), "--app", "bank", "--initial", initial.as_str(), "--trace"];
    args.extend(logs.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn one_log_of_three_counts_every_event_read_and_says_how_many_were_set_aside() {
    // Issue 53: with the other logs missing, the first line counted only the events of the run
    // judged (5 of N1's 11), as if the receipts set aside had not been read.
    let dir = temp_dir("one-log");
    let events = "send N1 N2 3\nsend N2 N3 4\nsnapshot N1\nsend N3 N1 2\ntick\nsend N2 N1 1\nsnapshot N3\ntick 3\n";
    let out = replay_logs(&dir, events, &["--seed", "3"]);
    let (top, n1) = (out.join("topology.top").display().to_string(), out.join("N1.jsonl"));
    let read = lines(&n1);
    // Every receipt in N1's log is of what N2's or N3's log, not given, sends.
    let receipts = read.iter().filter(|e| is(e, "receive") || is(e, "marker-receive")).count();
    assert_eq!((read.len(), receipts), (11, 6));
    let n1 = n1.display().to_string();
    let o = model(&["verify", "--topology", &top, "--trace", &n1]);
    assert_eq!(exit(&o), Some(3), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o).lines().next(),
        Some("read 11 events from 1 file (6 of them set aside: receipts or losses of what no log sends); 2 snapshots found")
    );
    let o = model(&["verify", "--topology", &top, "--trace", &n1, "--json"]);
    let json: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let counts = (json["events"].as_u64(), json["set_aside"].as_u64(), json["files"].as_array().map(Vec::len));
    assert_eq!(counts, (Some(11), Some(6), Some(1)));
}
