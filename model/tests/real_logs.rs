//! Real implementations' logs (issue 21): any system's states (`--app balance`, `--app none`),
//! the orders readers see them in, claims and FIFO checked by id and line, damaged logs, and an
//! implementation in another language (`examples/python/snapshot.py`).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use chandy_lamport::runtime::workload::{run, Workload};
use chandy_lamport::Topology;
use common::{model, stderr, Scratch};
use serde_json::Value;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn exit(o: &Output) -> Option<i32> {
    o.status.code()
}

/// Two processes A and B (10 each): A sends m1 (3), records and sends its marker; B sends b1
/// (0, a ping), receives m1, then A's marker, records and sends its marker; A receives b1,
/// which was in flight at the cut, then B's marker. States are integer balances.
const TOP: &str = "2\nA 10\nB 10\nA B\nB A\n";
const A: &str = r#"{"process":"A","seq":0,"kind":"send","channel":"A->B","msg":"m1","payload":3,"state":7}
{"process":"A","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":7}
{"process":"A","seq":2,"kind":"marker-send","snapshot":0,"channel":"A->B"}
{"process":"A","seq":3,"kind":"receive","channel":"B->A","msg":"b1","state":7}
{"process":"A","seq":4,"kind":"marker-receive","snapshot":0,"channel":"B->A","recorded":["b1"]}
"#;
const B: &str = r#"{"process":"B","seq":0,"kind":"send","channel":"B->A","msg":"b1","payload":0,"state":10}
{"process":"B","seq":1,"kind":"receive","channel":"A->B","msg":"m1","state":13}
{"process":"B","seq":2,"kind":"marker-receive","snapshot":0,"channel":"A->B","recorded":[]}
{"process":"B","seq":3,"kind":"record","snapshot":0,"initiated":false,"state":13}
{"process":"B","seq":4,"kind":"marker-send","snapshot":0,"channel":"B->A"}
"#;

/// Writes `two.top`, `A.jsonl` and `B.jsonl` to a fresh directory and runs `model verify` on
/// them with `extra` arguments: the run, and the directory (removed on drop).
fn verify_two(name: &str, a: &str, b: &str, extra: &[&str]) -> (Output, Scratch) {
    let dir = common::temp_dir("real", name);
    std::fs::write(dir.join("two.top"), TOP).unwrap();
    std::fs::write(dir.join("A.jsonl"), a).unwrap();
    std::fs::write(dir.join("B.jsonl"), b).unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    let (top, fa, fb) = (p("two.top"), p("A.jsonl"), p("B.jsonl"));
    let mut args = vec!["verify", "--topology", &top, "--trace", &fa, &fb];
    args.extend(extra);
    (model(&args), dir)
}

#[test]
fn balance_takes_integer_states_and_a_zero_payload() {
    let (o, dir) = verify_two("balance", A, B, &["--app", "balance"]);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).ends_with("verdict: the snapshot holds\n"), "{}", stdout(&o));
    // The bank refuses them: a state must be {"jars", "sold"}.
    let (o, _) = verify_two("balance-as-bank", A, B, &[]);
    assert_eq!(exit(&o), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("A.jsonl:1: not an event: `state`: invalid type: integer `7`, expected struct Bank"),
        "{}",
        stderr(&o)
    );
    // A wrong total: B records 14 where its transitions give 13.
    let (o, _) = verify_two(
        "total",
        A,
        &B.replace(r#""initiated":false,"state":13"#, r#""initiated":false,"state":14"#),
        &["--app", "balance"],
    );
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("- the recorded total is the initial total: the snapshot records a total of 21 (states 21, channel records 0); the initial total is 20, so it should be 20"), "{out}");
    assert!(out.contains("B's record at "), "{out}");
    // Initial states from --initial: the same logs from 7 and 13 fail at once.
    let initial = dir.join("initial.json");
    std::fs::write(&initial, "{\n  \"A\": 7,\n  \"B\": 13\n}\n").unwrap();
    let (o, _) = verify_two("initial", A, B, &["--app", "balance", "--initial", initial.to_str().unwrap()]);
    assert_eq!(exit(&o), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("run: INCONSISTENT\n  - logged states: "), "{}", stdout(&o));
}

#[test]
fn initial_states_are_refused_naming_the_file_and_line() {
    let dir = common::temp_dir("real", "initial-bad");
    std::fs::write(dir.join("two.top"), TOP).unwrap();
    let bad = |text: &str, app: &str, message: &str| {
        let file = dir.join("initial.json");
        std::fs::write(&file, text).unwrap();
        let (o, _) = verify_two("initial-bad-run", A, B, &["--app", app, "--initial", file.to_str().unwrap()]);
        assert_eq!(exit(&o), Some(2), "{text}: {}{}", stdout(&o), stderr(&o));
        let expected = format!("{}{message}", file.display());
        assert!(stderr(&o).contains(&expected), "expected {expected:?} in {}", stderr(&o));
    };
    bad(
        "{\n\"A\": {\"jars\": 3, \"sold\": 0, \"colour\": \"red\"},\n\"B\": {\"jars\": 1}\n}",
        "bank",
        ":2: --initial: unknown field `colour`",
    );
    bad("{\n\"A\": 3,\n\"C\": 1\n}", "balance", ":3: --initial: unknown process \"C\" (not in the topology)");
    bad("{\n\"A\": 3,\n\"A\": 1\n}", "balance", ":3: --initial: A is given twice");
    bad("{\"A\": 3}", "balance", ": --initial: no initial state for B");
    bad(
        "[3, 4]",
        "balance",
        ":1: --initial: invalid type: sequence, expected an object from process names to initial states",
    );
    // A bank state without `sold` is fine (0): the same logs' bank form verifies.
    let file = dir.join("initial.json");
    std::fs::write(&file, r#"{"A": {"jars": 10}, "B": {"jars": 10}}"#).unwrap();
    let bank = |text: &str| {
        text.replace(r#""state":7"#, r#""state":{"jars":7}"#)
            .replace(r#""state":10"#, r#""state":{"jars":10}"#)
            .replace(r#""state":13"#, r#""state":{"jars":13}"#)
            .replace(r#""payload":0"#, r#""payload":1"#)
    };
    let b = bank(B)
        .replace(r#""state":{"jars":10}"#, r#""state":{"jars":9}"#)
        .replace(r#""state":{"jars":13}"#, r#""state":{"jars":12}"#);
    let a = bank(A).replace(r#""msg":"b1","state":{"jars":7}"#, r#""msg":"b1","state":{"jars":8}"#);
    let (o, _) = verify_two("bank-initial", &a, &b, &["--initial", file.to_str().unwrap()]);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn none_takes_object_payloads_and_records_without_states() {
    let opaque = |text: &str| {
        text.replace(r#""payload":3"#, r#""payload":{"op":"put","key":"x"}"#)
            .replace(r#""payload":0"#, r#""payload":{"op":"ping"}"#)
            .replace(r#","state":13}"#, r#"}"#)
            .replace(r#""state":7"#, r#""state":{"keys":["x"]}"#)
    };
    let (o, _) = verify_two("none", &opaque(A), &opaque(B), &["--app", "none"]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("run: consistent (every channel FIFO)\n"), "{out}");
    // A recorded state other than the one the process logged just before.
    let a = opaque(A).replace(r#""initiated":true,"state":{"keys":["x"]}"#, r#""initiated":true,"state":{"keys":[]}"#);
    let (o, dir) = verify_two("none-state", &a, &opaque(B), &["--app", "none"]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    let file = dir.join("A.jsonl").display().to_string();
    assert!(out.contains(&format!("- the logs' claims: A records the state {{\"keys\":[]}} for snapshot 0, but the state it logged last before recording is {{\"keys\":[\"x\"]}}\n      record at {file}:2\n      state logged at {file}:1\n")), "{out}");
}

#[test]
fn a_record_claiming_a_message_received_after_its_marker_exits_1_naming_both_lines() {
    // A logs the marker on B->A before b1's receipt, yet claims b1 in its record.
    let a = A
        .replace(r#""seq":3,"kind":"receive""#, r#""seq":9,"kind":"receive""#)
        .replace(r#""seq":4,"kind":"marker-receive""#, r#""seq":3,"kind":"marker-receive""#)
        .replace(r#""seq":9,"kind":"receive""#, r#""seq":4,"kind":"receive""#);
    let (o, dir) = verify_two("late-claim", &a, B, &["--app", "balance"]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    let file = |f: &str| dir.join(f).display().to_string();
    let claim = format!(
        "- the logs' claims: A's record of B->A for snapshot 0 claims message \"b1\", which A receives only after that marker: the marker overtook it, or the record holds a message not yet received\n      marker receipt at {a}:5\n      send at {b}:1\n      receipt at {a}:4\n",
        a = file("A.jsonl"),
        b = file("B.jsonl")
    );
    assert!(out.contains(&claim), "expected {claim:?} in {out}");
    // The same lines also break FIFO: the marker overtook b1.
    assert!(out.contains("- FIFO channels (the theorem's precondition): on B->A, the marker of snapshot 0 overtook message \"b1\": B sent it after, and A received it before"), "{out}");
}

#[test]
fn a_message_overtaking_a_marker_exits_1_naming_the_fifo_break_and_its_lines() {
    // B sends b2 after its marker; A receives it before the marker.
    let b = format!(
        "{B}{}\n",
        r#"{"process":"B","seq":5,"kind":"send","channel":"B->A","msg":"b2","payload":1,"state":12}"#
    );
    let a = A.replace(
        r#"{"process":"A","seq":4,"kind":"marker-receive","snapshot":0,"channel":"B->A","recorded":["b1"]}"#,
        r#"{"process":"A","seq":4,"kind":"receive","channel":"B->A","msg":"b2","state":8}
{"process":"A","seq":5,"kind":"marker-receive","snapshot":0,"channel":"B->A","recorded":["b1"]}"#,
    );
    let (o, dir) = verify_two("overtake", &a, &b, &["--app", "balance"]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    let (fa, fb) = (dir.join("A.jsonl").display().to_string(), dir.join("B.jsonl").display().to_string());
    let fifo = format!(
        "run: INCONSISTENT\n  - FIFO channels (the theorem's precondition): on B->A, message \"b2\" overtook the marker of snapshot 0: B sent it after, and A received it before\n      the marker of snapshot 0 sent at {fb}:5\n      message \"b2\" sent at {fb}:6\n      message \"b2\" received at {fa}:5\n      the marker of snapshot 0 received at {fa}:6\n"
    );
    assert!(out.contains(&fifo), "expected {fifo:?} in {out}");
    assert!(out.contains("snapshot 0: holds"), "{out}");
    assert!(out.ends_with("; a channel is not FIFO: the theorem's precondition does not hold for this run\n"), "{out}");
}

#[test]
fn time_instead_of_seq_broadcast_markers_and_markers_without_snapshot() {
    // A's lines carry RFC 3339 times and no seq; B's numeric times. A's marker-send names no
    // channel (one on every outgoing channel); B's marker-receive names no snapshot.
    let timed = |text: &str, times: &[&str]| -> String {
        text.lines()
            .zip(times)
            .map(|(line, t)| {
                let mut v: Value = serde_json::from_str(line).unwrap();
                let o = v.as_object_mut().unwrap();
                o.remove("seq");
                o.insert("time".into(), serde_json::from_str(t).unwrap());
                v.to_string() + "\n"
            })
            .collect()
    };
    let a = timed(
        &A.replace(r#","channel":"A->B"}"#, "}"),
        &[
            r#""2026-12-02T10:00:00Z""#,
            r#""2026-12-02T10:00:00.5Z""#,
            r#""2026-12-02T10:00:01Z""#,
            r#""2026-12-02T11:00:01.5+01:00""#,
            r#""2026-12-02T10:00:02Z""#,
        ],
    );
    // Written out of order: the times order them.
    let a: String = a.lines().rev().map(|l| format!("{l}\n")).collect();
    let b = timed(
        &B.replace(r#""marker-receive","snapshot":0,"#, r#""marker-receive","#),
        &["1.5", "2", "2.25", "3", "40"],
    );
    let (o, _) = verify_two("timed", &a, &b, &["--app", "balance"]);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    // A tie, and a mix of seq and time, are bad input.
    let tie = b.replace(r#""time":2.25"#, r#""time":2"#);
    let (o, dir) = verify_two("tie", &a, &tie, &["--app", "balance"]);
    assert_eq!(exit(&o), Some(2), "{}", stderr(&o));
    let fb = dir.join("B.jsonl").display().to_string();
    assert!(
        stderr(&o).contains(&format!(
            "{fb}:3: B has two events at time 2 (also at {fb}:2): with no `seq`, times must increase strictly"
        )),
        "{}",
        stderr(&o)
    );
    let mixed = format!("{b}{}\n", r#"{"process":"B","seq":5,"kind":"internal","step":"tick"}"#);
    let (o, _) = verify_two("mixed", &a, &mixed, &["--app", "balance"]);
    assert_eq!(exit(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("B's lines mix `seq` and `time`"), "{}", stderr(&o));
}

/// The bank example's logs: 4 processes, 2,000 transfers, 5 snapshots (the runtime's), in a
/// directory removed on drop.
fn bank_logs(name: &str) -> Scratch {
    let dir = common::temp_dir("real", name);
    let mut w = Workload::new(Topology::complete(4).unwrap(), 2_000, 5);
    w.trace_out = Some(dir.to_path_buf());
    run(&w).unwrap_or_else(|e| panic!("the bank run fails: {e}"));
    dir
}

fn verify_dir(dir: &Path, files: &[&str], extra: &[&str]) -> Output {
    let top = dir.join("topology.top").display().to_string();
    let files: Vec<String> = files.iter().map(|f| dir.join(f).display().to_string()).collect();
    let mut args = vec!["verify", "--topology", &top, "--trace"];
    args.extend(files.iter().map(String::as_str));
    args.extend(extra);
    model(&args)
}

const BANK: [&str; 4] = ["P0.jsonl", "P1.jsonl", "P2.jsonl", "P3.jsonl"];

#[test]
fn bank_logs_with_every_record_logged_before_its_marker_receipt_verify() {
    let dir = bank_logs("record-first");
    let mut moved = 0;
    for f in BANK {
        let path = dir.join(f);
        let mut lines: Vec<Value> =
            std::fs::read_to_string(&path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        for i in 1..lines.len() {
            if lines[i]["kind"] == "record" && lines[i]["initiated"] == false {
                assert_eq!(lines[i - 1]["kind"], "marker-receive", "the runtime logs the receipt first");
                lines.swap(i - 1, i);
                moved += 1;
            }
        }
        let text: String = lines
            .iter_mut()
            .enumerate()
            .map(|(seq, l)| {
                l["seq"] = Value::from(seq);
                l.to_string() + "\n"
            })
            .collect();
        std::fs::write(&path, text).unwrap();
    }
    assert!(moved >= 10, "the non-initiators' records of 5 snapshots moved: {moved}");
    let o = verify_dir(&dir, &BANK, &[]);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).ends_with("verdict: all 5 snapshots hold\n"), "{}", stdout(&o));
}

/// The bank's logs from the deterministic simulator: 4 houses of 100 jars, 5 snapshots one after
/// another (each completes before the next starts) amid 300 transfers, in a directory removed
/// on drop.
fn sim_bank_logs(name: &str) -> Scratch {
    use chandy_lamport::apps::bank::Bank;
    use chandy_lamport::sim::{DelaySource, SimConfig, Simulator, SETTLE_TICKS};
    use chandy_lamport::ProcessId;
    use rand::{Rng, SeedableRng};
    let dir = common::temp_dir("real", name);
    let topology = Topology::complete(4).unwrap();
    let mut sim = Simulator::<Bank>::new(topology.clone(), &[100; 4], SimConfig::new(DelaySource::Seeded(53))).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(53);
    for snapshot in 0..5u16 {
        for _ in 0..60 {
            let (from, to) = (rng.random_range(0..4u16), rng.random_range(0..4u16));
            if from != to {
                // A refused transfer (too few jars) changes nothing.
                let _ = sim.transfer(ProcessId(from), ProcessId(to), rng.random_range(1..=8));
            }
            sim.tick(rng.random_range(0..=2)).unwrap();
        }
        sim.start_snapshot(ProcessId(snapshot % 4)).unwrap();
        for _ in 0..20 {
            let (from, to) = (rng.random_range(0..4u16), rng.random_range(0..4u16));
            if from != to {
                let _ = sim.transfer(ProcessId(from), ProcessId(to), rng.random_range(1..=8));
            }
            sim.tick(1).unwrap();
        }
        assert!(sim.run_to_completion().unwrap(), "snapshot {snapshot} completes");
    }
    for _ in 0..40 {
        let (from, to) = (rng.random_range(0..4u16), rng.random_range(0..4u16));
        if from != to {
            let _ = sim.transfer(ProcessId(from), ProcessId(to), rng.random_range(1..=8));
        }
    }
    sim.tick(SETTLE_TICKS).unwrap();
    let finished = sim.finish();
    assert_eq!(finished.snapshots.len(), 5);
    finished.write_logs(&dir, &topology).unwrap();
    dir
}

#[test]
fn a_log_cut_short_mid_line_still_judges_the_snapshots_completed_before() {
    // The deterministic simulator's logs: what is asserted holds on every schedule of the
    // machine running the test (the threaded runtime's did not, issue 53).
    let dir = sim_bank_logs("truncated");
    let path = dir.join("P2.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let record3 = lines.iter().position(|l| l.contains(r#""kind":"record","snapshot":3"#)).unwrap();
    // Cut in the middle of P2's record of snapshot 3, as a killed process leaves its file.
    let cut: String = lines[..record3].iter().map(|l| format!("{l}\n")).collect::<String>() + &lines[record3][..20];
    std::fs::write(&path, cut).unwrap();
    let o = verify_dir(&dir, &BANK, &["--json"]);
    assert_eq!(exit(&o), Some(3), "{}{}", stdout(&o), stderr(&o));
    let json: Value = serde_json::from_slice(&o.stdout).unwrap();
    let damage = json["damage"][0]["message"].as_str().unwrap();
    assert_eq!(
        damage,
        format!("the file ends mid-line (a line of P2): the line is not read, and the last event read from it is at {}:{record3}", path.display())
    );
    assert_eq!(json["damage"][0]["at"][0], format!("at {}:{}", path.display(), record3 + 1));
    let snapshots = json["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), 5);
    for s in snapshots {
        let id = s["id"].as_u64().unwrap();
        if id < 3 {
            assert_eq!((s["judged"].as_bool(), s["holds"].as_bool()), (Some(true), Some(true)), "snapshot {id}: {s}");
        } else {
            assert_eq!(s["judged"], false, "snapshot {id}: {s}");
            assert!(s["not_judged"].as_str().unwrap().contains("P2"), "{s}");
        }
    }
    assert!(json["summary"].as_str().unwrap().contains("snapshots 3, 4 not judged: the logs are damaged"), "{json}");
    // A process whose log is missing: its messages' receipts dangle; nothing is bad input.
    let o = verify_dir(&dir, &BANK[..3], &[]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(3), "{out}{}", stderr(&o));
    assert!(out.contains("P3 has no events in the logs: its log is missing or empty"), "{out}");
    assert!(out.contains("that P3's log never sends: P3's log is incomplete (it has no events)"), "{out}");
}

/// `python3 examples/python/snapshot.py`: an implementation nobody here wrote in Rust.
fn python_run(dir: &Path, seed: u64, bug: bool) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/python/snapshot.py");
    let mut command = Command::new("python3");
    command.arg(&script).args(["--out", dir.to_str().unwrap(), "--procs", "4", "--sends", "40", "--snapshots", "3"]);
    command.args(["--seed", &seed.to_string()]);
    if bug {
        command.arg("--bug");
    }
    let o = command.output().expect("python3 runs");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn the_python_example_verifies_with_balance_and_none_and_its_bug_is_caught() {
    let files: Vec<String> = (0..4).map(|p| format!("P{p}.jsonl")).collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    for seed in 1..=3 {
        let dir = common::temp_dir("real", &format!("python-{seed}"));
        python_run(&dir, seed, false);
        for app in ["balance", "none"] {
            let o = verify_dir(&dir, &files, &["--app", app]);
            assert_eq!(exit(&o), Some(0), "seed {seed}, --app {app}: {}{}", stdout(&o), stderr(&o));
            assert!(stdout(&o).ends_with("verdict: all 3 snapshots hold\n"), "{}", stdout(&o));
        }
        let dir = common::temp_dir("real", &format!("python-bug-{seed}"));
        python_run(&dir, seed, true);
        for app in ["balance", "none"] {
            let o = verify_dir(&dir, &files, &["--app", app]);
            let out = stdout(&o);
            assert_eq!(exit(&o), Some(1), "seed {seed}, --app {app}: {out}{}", stderr(&o));
            assert!(out.contains("(a) nothing crosses the cut inward") || out.contains("(b) channel records"), "{out}");
            if app == "balance" {
                assert!(out.contains("the recorded total is the initial total"), "{out}");
            }
        }
    }
}

#[test]
fn balance_totals_count_what_was_lost_before_the_cut() {
    // m1 (3) is lost before the cut, m2 (2) after it: the recorded total is 20 - 3.
    let a = r#"{"process":"A","seq":0,"kind":"send","channel":"A->B","msg":"m1","payload":3,"state":7}
{"process":"A","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":7}
{"process":"A","seq":2,"kind":"marker-send","snapshot":0,"channel":"A->B"}
{"process":"A","seq":3,"kind":"send","channel":"A->B","msg":"m2","payload":2,"state":5}
{"process":"A","seq":4,"kind":"marker-receive","snapshot":0,"channel":"B->A","recorded":[]}
"#;
    let b = r#"{"process":"B","seq":0,"kind":"loss","channel":"A->B","msg":"m1"}
{"process":"B","seq":1,"kind":"marker-receive","snapshot":0,"channel":"A->B","recorded":[]}
{"process":"B","seq":2,"kind":"record","snapshot":0,"initiated":false,"state":10}
{"process":"B","seq":3,"kind":"marker-send","snapshot":0,"channel":"B->A"}
{"process":"B","seq":4,"kind":"loss","channel":"A->B","msg":"m2"}
"#;
    let (o, _) = verify_two("lost", a, b, &["--app", "balance"]);
    assert_eq!(exit(&o), Some(0), "{}{}", stdout(&o), stderr(&o));
    // Had A recorded 8, the total would be 18: one too many.
    let a8 = a.replace(r#""initiated":true,"state":7"#, r#""initiated":true,"state":8"#);
    let (o, _) = verify_two("lost-wrong", &a8, b, &["--app", "balance"]);
    let out = stdout(&o);
    assert_eq!(exit(&o), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("the snapshot records a total of 18 (states 18, channel records 0); the initial total is 20, less 3 lost before the cut, so it should be 17"), "{out}");
}
