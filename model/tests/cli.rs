//! The `model` command: exit codes, messages for bad input, the JSON object, `variants`,
//! `replay`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn model(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_model")).args(args).output().expect("run model")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("model-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn bad_input(args: &[&str], message: &str) {
    let o = model(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(message), "{args:?}: expected {message:?} in {}", stderr(&o));
}

#[test]
fn bad_flags_exit_2_naming_the_problem() {
    bad_input(&["check", "--procs", "9"], "--procs must be between 2 and 8, got 9");
    bad_input(&["check", "--procs", "1"], "--procs must be between 2 and 8, got 1");
    bad_input(&["check", "--snapshots", "0"], "--snapshots must be between 1 and 8");
    bad_input(&["check", "--initiators", "5"], "initiator 5 is not a process");
    bad_input(&["check", "--initiators", "x"], "bad initiator \"x\"");
    bad_input(&["check", "--variant", "bogus"], "unknown variant \"bogus\"");
    bad_input(&["check", "--topology", "hexagon"], "unknown topology \"hexagon\"");
    bad_input(&["check", "--properties", "some"], "unknown property mode");
    bad_input(&["check", "--strategy", "bfs", "--symmetry"], "--symmetry is honoured only by");
    bad_input(&["check", "--properties", "literal", "--procs", "5"], "--properties literal keeps the whole history");
    bad_input(&["check", "--frobnicate"], "--frobnicate");
    bad_input(
        &["check", "--symmetry", "--properties", "literal", "--procs", "2"],
        "--symmetry cannot be used with --properties literal",
    );
}

#[test]
fn bad_topology_files_exit_2_naming_file_and_line() {
    bad_input(&["check", "--topology", "/nonexistent/none.top"], "/nonexistent/none.top:0: cannot read");
    let unknown = temp_file("unknown.top", "2\nA 1\nB 1\nA C\n");
    bad_input(&["check", "--topology", unknown.to_str().unwrap()], "unknown.top:4: unknown process C");
    let selfloop = temp_file("selfloop.top", "2\nA 1\nB 1\nA B\nB B\n");
    bad_input(
        &["check", "--topology", selfloop.to_str().unwrap()],
        "selfloop.top:5: process B has a channel to itself",
    );
    let number = temp_file("number.top", "two\n");
    bad_input(&["check", "--topology", number.to_str().unwrap()], "number.top:1: bad number \"two\"");
    // A one-way line: nothing reaches A from B.
    let line = temp_file("line.top", "2\nA 1\nB 1\nA B\n");
    bad_input(&["check", "--topology", line.to_str().unwrap(), "--initiators", "1"], "no marker from B can reach A");
    bad_input(&["check", "--topology", line.to_str().unwrap(), "--procs", "3"], "--procs 3 disagrees with");
}

#[test]
fn a_passing_check_exits_0_and_prints_every_property() {
    let o = model(&["check", "--procs", "2", "--sends", "1", "--threads", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for name in [
        "nothing crosses the cut inward",
        "channel records hold exactly the in-flight messages",
        "recorded total equals the ledger",
        "snapshot terminates",
        "recorded state reachable from start",
        "end state reachable from recorded state",
        "stable detection is sound",
        "a channel record holds a message",
    ] {
        assert!(out.contains(name), "{name} missing from:\n{out}");
    }
    assert!(out.contains("Done. states="), "stateright's progress lines: {out}");
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("unique states ") && last.contains("max depth") && last.contains("seconds"), "{last}");
}

#[test]
fn a_failing_check_exits_1_and_the_json_says_why() {
    let o = model(&[
        "check",
        "--procs",
        "2",
        "--sends",
        "1",
        "--variant",
        "late-record",
        "--json",
        "--strategy",
        "bfs",
        "--threads",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object on stdout");
    assert_eq!(v["ok"], false);
    for key in ["unique_states", "states", "max_depth", "seconds"] {
        assert!(v[key].is_number(), "{key}: {v}");
    }
    let crossing =
        v["properties"].as_array().unwrap().iter().find(|p| p["name"] == "nothing crosses the cut inward").unwrap();
    assert_eq!(crossing["expectation"], "always");
    assert_eq!(crossing["verdict"], "counterexample");
    assert!(crossing["path"].as_array().is_some_and(|p| !p.is_empty()));
    assert!(crossing["link"].as_str().unwrap().starts_with("http://127.0.0.1:3000/#/steps/0/"));
}

#[test]
fn variants_lists_every_variant_with_a_description() {
    let o = model(&["variants"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for v in chandy_lamport::Variant::ALL {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(v.name()))
            .unwrap_or_else(|| panic!("{v} missing"));
        assert!(line.len() > v.name().len() + 10, "{line}");
    }
    assert_eq!(out.lines().count(), chandy_lamport::Variant::ALL.len());
}

fn suite() -> PathBuf {
    let dir = std::env::var_os("COS418_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/cos418"));
    assert!(dir.join("delays.txt").is_file(), "the cos418 suite is not at {} (set COS418_DATA)", dir.display());
    dir
}

#[test]
fn replay_matches_the_suite_and_reports_a_tampered_expectation() {
    let s = suite();
    let p = |f: &str| s.join(f).to_str().unwrap().to_string();
    let args = |expect: &str| {
        vec![
            "replay".to_string(),
            "--topology".into(),
            p("3nodes.top"),
            "--events".into(),
            p("3nodes-bidirectional-messages.events"),
            "--delays".into(),
            p("delays.txt"),
            "--expect".into(),
            expect.to_string(),
        ]
    };
    let run = |a: Vec<String>| Command::new(env!("CARGO_BIN_EXE_model")).args(a).output().unwrap();
    let o = run(args(&p("3nodes-bidirectional-messages")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let expected = std::fs::read_to_string(s.join("3nodes-bidirectional-messages.snap")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), expected.trim());
    // A tampered copy of the expectation: a changed balance.
    let tampered = temp_file("tampered.snap", &expected.replacen("N1 4", "N1 5", 1));
    let prefix = tampered.with_extension("");
    let o = run(args(prefix.to_str().unwrap()));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("N1") && stderr(&o).contains("MISMATCH"), "{}", stderr(&o));
    // A missing expectation.
    let o = run(args("/nonexistent/prefix"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing expected file /nonexistent/prefix.snap"), "{}", stderr(&o));
}

#[test]
fn replay_of_a_bad_script_exits_2_naming_file_and_line() {
    let s = suite();
    let events = temp_file("bad.events", "send N1 N2 1\nsend N1 N9 1\n");
    let o = model(&[
        "replay",
        "--topology",
        s.join("2nodes.top").to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--seed",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.events:2:"), "{}", stderr(&o));
}
