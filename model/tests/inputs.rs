//! Every input of `model replay` (and the `.top` of every command): bad input exits 2 naming the
//! file and line, a run this large finishes, and a failed comparison stays exit 1.

mod common;

use std::path::Path;

use common::{bad_input, model, stderr, suite, Scratch};

fn temp_file(name: &str, text: &str) -> Scratch {
    common::temp_file("inputs", name, text)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `model replay` of the suite's 3-node bidirectional scenario against the expectation `prefix`.
fn replay_3nodes_expecting(prefix: &Path) -> std::process::Output {
    let s = suite();
    model(&[
        "replay",
        "--topology",
        path(&s.join("3nodes.top")),
        "--events",
        path(&s.join("3nodes-bidirectional-messages.events")),
        "--delays",
        path(&s.join("delays.txt")),
        "--expect",
        path(prefix),
    ])
}

#[test]
fn replay_of_20000_concurrent_snapshots_finishes_with_every_block() {
    // 20,000 snapshots started at N1 in one time step: the replay used to take minutes (every
    // snapshot checked against the whole trace).
    let n = 20_000;
    let events = temp_file("many.events", &"snapshot N1\n".repeat(n));
    let o = model(&["replay", "--topology", path(&suite().join("3nodes.top")), "--events", path(&events)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let ids: Vec<&str> = out.lines().filter(|l| !l.contains(' ')).collect();
    assert_eq!(ids.len(), n, "one block per snapshot");
    assert_eq!(ids.last(), Some(&"19999"));
    assert_eq!(out.lines().count(), n * 4, "an id line and three balances per block, no message");
}

#[test]
fn a_top_node_id_holding_an_arrow_exits_2_naming_the_line() {
    // `X->Y` to `Z` and `X` to `Y->Z` would both be spelled `X->Y->Z`.
    let top = temp_file("arrow.top", "4\nX 1\nX->Y 1\nY->Z 1\nZ 1\nX->Y Z\nX Y->Z\n");
    let message = "arrow.top:3: node id \"X->Y\" holds \"->\"";
    bad_input(&["check", "--topology", path(&top)], message);
    let events = temp_file("arrow.events", "snapshot X\n");
    bad_input(&["replay", "--topology", path(&top), "--events", path(&events)], message);
    // Ends of `-` and `>` are fine: `A-` to `>B` is spelled `A-->>B`, one way only.
    let top = temp_file("ends.top", "2\nA- 1\n>B 1\nA- >B\n>B A-\n");
    let events = temp_file("ends.events", "send A- >B 1\nsnapshot >B\n");
    let o = model(&["replay", "--topology", path(&top), "--events", path(&events)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn an_expected_snap_naming_an_unknown_node_exits_2_naming_the_line() {
    let expected = std::fs::read_to_string(suite().join("3nodes-bidirectional-messages.snap")).unwrap();
    // A balance of a node the topology lacks (line 4).
    let snap = temp_file("unknown-node.snap", &expected.replacen("N3 2", "N9 2", 1));
    let prefix = snap.with_extension("");
    let o = replay_3nodes_expecting(&prefix);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown-node.snap:4: unknown node N9"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("MISMATCH"), "{}", stderr(&o));
    // A message from a node the topology lacks (line 6).
    let text = expected.replacen("N1 N2 token(2)", "N7 N2 token(2)", 1);
    let snap = temp_file("unknown-src.snap", &text);
    let prefix = snap.with_extension("");
    let o = replay_3nodes_expecting(&prefix);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown-src.snap:6: unknown node N7"), "{}", stderr(&o));
}

#[test]
fn an_empty_expected_snap_exits_2_naming_the_file() {
    for (name, text) in [("empty.snap", ""), ("comments.snap", "# nothing here\n\n")] {
        let file = temp_file(name, text);
        let o = replay_3nodes_expecting(&file.with_extension(""));
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let message = format!("{}: holds no snapshot", file.display());
        assert!(stderr(&o).contains(&message), "{name}: {}", stderr(&o));
    }
}

#[test]
fn an_expected_snap_that_differs_still_exits_1() {
    let expected = std::fs::read_to_string(suite().join("3nodes-bidirectional-messages.snap")).unwrap();
    let snap = temp_file("differs.snap", &expected.replacen("N1 4", "N1 5", 1));
    let prefix = snap.with_extension("");
    let o = replay_3nodes_expecting(&prefix);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("MISMATCH") && stderr(&o).contains("node N1"), "{}", stderr(&o));
}

#[test]
fn a_snapshot_started_where_markers_cannot_reach_every_node_exits_2_naming_the_line() {
    // Found by fuzzing (fuzz/fuzz_targets/replay.rs): N2 has no outgoing link, so its markers
    // never reach N1 and the snapshot could never complete. That is the script's fault, not a
    // failure of the algorithm (it was exit 1, "snapshot 0 never completed").
    let top = temp_file("oneway.top", "2\nN1 1\nN2 0\nN1 N2\nN2 N2\n");
    let events = temp_file("oneway.events", "send N1 N2 1\n# from the sink\nsnapshot N2\ntick\n");
    bad_input(
        &["replay", "--topology", path(&top), "--events", path(&events)],
        "oneway.events:3: no marker from N2 can reach N1",
    );
    // From N1, which reaches N2, the same snapshot completes.
    let events = temp_file("oneway-ok.events", "send N1 N2 1\nsnapshot N1\ntick\n");
    let o = model(&["replay", "--topology", path(&top), "--events", path(&events)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Issue 50: a depth bound of 2^64-1 (or 2^64-2) wrapped and the check reported "exhaustive,
/// 1 state" with every property holding; now it is refused naming the flag, on every engine.
#[test]
fn a_depth_no_search_reaches_exits_2_naming_the_flag() {
    let configurations: [&[&str]; 3] = [
        &["--variant", "late-record"],
        &["--variant", "late-record", "--strategy", "bfs"],
        &["--algorithm", "aligned"],
    ];
    for configuration in configurations {
        for depth in ["18446744073709551615", "18446744073709551614", "4294967296"] {
            let mut args = vec!["check", "--sends", "1", "--depth", depth];
            args.extend(configuration);
            let o = model(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            let expected = format!("--depth {depth} is past any depth a search can reach: at most 4294967295");
            assert!(err.contains(&expected), "{args:?}: {err}");
            assert!(o.stdout.is_empty(), "{args:?}: no verdict is printed");
        }
    }
}

#[test]
fn check_and_replay_refuse_a_top_without_token_counts_naming_the_line_and_check_takes_tokens_instead() {
    let top = temp_file("ids.top", "2\nA 3\nB\nA B\nB A\n");
    bad_input(
        &["check", "--topology", path(&top)],
        "ids.top:3: node B has no token count, but the model makes its initial state from one: give `B TOKENS` \
         here, or set --tokens for every house",
    );
    let events = temp_file("ids.events", "snapshot A\n");
    bad_input(
        &["replay", "--topology", path(&top), "--events", path(&events)],
        "ids.top:3: node B has no token count (its line gives the id alone), and its initial state is made from one",
    );
    // `--tokens` gives every house's jars: the file's counts are not needed.
    let o = model(&["check", "--topology", path(&top), "--tokens", "1", "--sends", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
