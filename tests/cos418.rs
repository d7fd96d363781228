//! The course scenario suite, replayed exactly: all seven scenarios with the suite's
//! `delays.txt` reproduce every expected snapshot (21 `.snap` files, one snapshot each). Also: a tampered expectation fails with a
//! readable diff, and bad scenario files give errors naming the file and the line.
//!
//! The suite is read from `$COS418_DATA`, by default `../shared/cos418` next to the workspace.
//! A missing suite FAILS these tests: a check that did not run must not look like a pass.

use std::fs;
use std::path::{Path, PathBuf};

use chandy_lamport::check::{VerifyError, Violation};
use chandy_lamport::formats::snap::{Difference, SnapFile};
use chandy_lamport::formats::Problem;
use chandy_lamport::sim::{replay, DelayChoice, Replay, ReplayError, SimError, SnapshotFailure};
use chandy_lamport::Variant;

/// `(test, topology, events, expected files)`, as in the suite's README.
const SCENARIOS: [(&str, &str, usize); 7] = [
    ("2nodes-simple", "2nodes", 1),
    ("2nodes-message", "2nodes", 1),
    ("3nodes-simple", "3nodes", 1),
    ("3nodes-bidirectional-messages", "3nodes", 1),
    ("8nodes-sequential-snapshots", "8nodes", 2),
    ("8nodes-concurrent-snapshots", "8nodes", 5),
    ("10nodes", "10nodes", 10),
];

fn suite() -> PathBuf {
    let dir = match std::env::var_os("COS418_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/cos418"),
    };
    assert!(
        dir.join("delays.txt").is_file() && dir.join("10nodes.events").is_file(),
        "\n\n*** THE COURSE SCENARIO SUITE IS MISSING at {} ***\n*** set COS418_DATA to its folder; \
         these tests fail rather than pass without it ***\n",
        dir.display()
    );
    dir
}

fn request(dir: &Path, name: &str, top: &str) -> Replay {
    Replay::new(
        dir.join(format!("{top}.top")),
        dir.join(format!("{name}.events")),
        DelayChoice::File(dir.join("delays.txt")),
    )
    .expect(dir.join(name))
}

/// The expected text: the scenario's expected files, concatenated in id order.
fn expected_text(dir: &Path, name: &str, files: usize) -> String {
    let paths: Vec<PathBuf> = if files == 1 {
        vec![dir.join(format!("{name}.snap"))]
    } else {
        (0..files).map(|i| dir.join(format!("{name}{i}.snap"))).collect()
    };
    paths.iter().map(|p| fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).collect()
}

#[test]
fn all_seven_scenarios_reproduce_every_expected_snapshot() {
    let dir = suite();
    let mut reproduced = 0;
    for (name, top, files) in SCENARIOS {
        let outcome = replay(&request(&dir, name, top)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let comparison = outcome.comparison.as_ref().expect("a prefix was given");
        assert!(comparison.matches(), "{name}: {comparison}\n--- produced:\n{}", outcome.snap_text());
        assert_eq!(comparison.files.len(), files, "{name}: {comparison}");
        assert_eq!(outcome.blocks.len(), files, "{name}");
        assert!(outcome.run.incomplete.is_empty(), "{name}");
        // Stronger than the suite's rules: byte for byte the expected files.
        assert_eq!(outcome.snap_text(), expected_text(&dir, name, files), "{name}");
        reproduced += outcome.blocks.len();
    }
    // Every expected file of the suite was compared: none left out.
    let on_disk = fs::read_dir(&dir)
        .expect("read the suite folder")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "snap")))
        .count();
    assert_eq!(on_disk, 21, "the suite ships 21 .snap files");
    assert_eq!(reproduced, on_disk);
}

#[test]
fn every_scenario_verifies_with_seeded_delays_and_the_delays_matter() {
    let dir = suite();
    let mut differ = 0;
    for (name, top, files) in SCENARIOS {
        for seed in 0..5 {
            let mut r = request(&dir, name, top);
            r.delays = DelayChoice::Seed(seed);
            let outcome = replay(&r).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
            assert_eq!(outcome.blocks.len(), files);
            assert_eq!(outcome.run.final_total(), outcome.run.total(), "{name} seed {seed}");
            differ += usize::from(!outcome.matches());
        }
    }
    // Other delays give other (still verified) snapshots: the exact replay is not a given.
    assert!(differ >= 10, "only {differ} of 35 seeded runs differ from the expected files");
}

#[test]
fn a_broken_variant_replayed_is_reported_as_a_checker_violation() {
    let dir = suite();
    let mut r = request(&dir, "3nodes-simple", "3nodes");
    r.variant = Variant::NoChannelRecording;
    let e = replay(&r).expect_err("the trace checker rejects the snapshot");
    assert!(
        matches!(
            &e,
            ReplayError::Snapshot {
                failure: SnapshotFailure::Verify {
                    error: VerifyError::Violation(Violation::MissingMessage { .. }),
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("3nodes-simple.events: snapshot 0 fails the trace checker"), "{e}");
}

/// A scratch folder `cos418-TEST-<random>` with copies of some suite files, removed (with its
/// contents) on drop; derefs to its path.
struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl Scratch {
    fn new(test: &str, dir: &Path, files: &[&str]) -> Self {
        let tmp = tempfile::Builder::new().prefix(&format!("cos418-{test}-")).tempdir().expect("create scratch dir");
        for f in files {
            fs::copy(dir.join(f), tmp.path().join(f)).unwrap_or_else(|e| panic!("copy {f}: {e}"));
        }
        Scratch(tmp)
    }
    fn write(&self, file: &str, text: &str) -> PathBuf {
        let p = self.join(file);
        fs::write(&p, text).expect("write scratch file");
        p
    }
}

#[test]
fn a_tampered_expectation_fails_with_a_readable_diff() {
    let dir = suite();
    let mut files = vec!["8nodes.top", "8nodes-concurrent-snapshots.events", "delays.txt"];
    let snaps: Vec<String> = (0..5).map(|i| format!("8nodes-concurrent-snapshots{i}.snap")).collect();
    files.extend(snaps.iter().map(String::as_str));
    let s = Scratch::new("tamper", &dir, &files);
    // Snapshot 3 says N5 recorded 1 token: make it 7, and drop the recorded message into N6.
    let path = s.join("8nodes-concurrent-snapshots3.snap");
    let text = fs::read_to_string(&path).expect("read copy");
    assert!(text.contains("N5 1\n") && text.contains("N5 N6 token(2)\n"), "{text}");
    fs::write(&path, text.replace("N5 1\n", "N5 7\n").replace("N5 N6 token(2)\n", "")).expect("tamper");
    let outcome = replay(&request(&s, "8nodes-concurrent-snapshots", "8nodes")).expect("replay runs");
    assert!(!outcome.matches());
    let comparison = outcome.comparison.as_ref().expect("compared");
    let shown = comparison.to_string();
    let file = path.display().to_string();
    assert_eq!(comparison.mismatches.len(), 2, "{shown}");
    assert!(shown.contains(&format!("{file}: snapshot 3: node N5: expected 7 tokens, got 1 tokens")), "{shown}");
    assert!(
        shown.contains(&format!("{file}: snapshot 3: messages into N6: expected [], got [N5 token(2)]")),
        "{shown}"
    );
    let kinds: Vec<&Difference> = comparison.mismatches.iter().map(|m| &m.difference).collect();
    assert!(matches!(kinds[0], Difference::Balance { node, expected: Some(7), got: Some(1) } if node == "N5"));
    // The other four files still agree: every mismatch is in snapshot 3.
    assert!(comparison.mismatches.iter().all(|m| m.snapshot == Some(3)));
}

#[test]
fn a_missing_or_extra_expected_file_is_reported() {
    let dir = suite();
    let s = Scratch::new(
        "missing",
        &dir,
        &["2nodes.top", "2nodes-message.events", "delays.txt", "8nodes.top", "8nodes-sequential-snapshots.events"],
    );
    let e = replay(&request(&s, "2nodes-message", "2nodes")).unwrap_err();
    let path = s.join("2nodes-message.snap").display().to_string();
    assert!(matches!(&e, ReplayError::MissingExpected { path: p, snapshots: 1 } if *p == path), "{e}");
    assert!(e.to_string().starts_with(&format!("missing expected file {path}")), "{e}");
    // Two snapshots, only the first file: the second is missing.
    fs::copy(dir.join("8nodes-sequential-snapshots0.snap"), s.join("8nodes-sequential-snapshots0.snap")).expect("copy");
    let e = replay(&request(&s, "8nodes-sequential-snapshots", "8nodes")).unwrap_err();
    assert!(e.to_string().contains("8nodes-sequential-snapshots1.snap"), "{e}");
    // A third file: one snapshot more than the run takes.
    fs::copy(dir.join("8nodes-sequential-snapshots1.snap"), s.join("8nodes-sequential-snapshots1.snap")).expect("copy");
    s.write("8nodes-sequential-snapshots2.snap", "2\nN1 50\n");
    let outcome = replay(&request(&s, "8nodes-sequential-snapshots", "8nodes")).expect("replay runs");
    let shown = outcome.comparison.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(!outcome.matches());
    assert!(shown.contains("expected 3 snapshots, got 2"), "{shown}");
    assert!(shown.contains("snapshot 2: expected, but the run produced no snapshot with this id"), "{shown}");
}

/// Runs `events` on the suite's 3-node topology and returns the error.
fn events_error(test: &str, events: &str) -> ReplayError {
    let dir = suite();
    let s = Scratch::new(test, &dir, &["3nodes.top", "delays.txt"]);
    let events = s.write("bad.events", events);
    let r = Replay::new(s.join("3nodes.top"), &events, DelayChoice::File(s.join("delays.txt")));
    replay(&r).expect_err("the script is bad")
}

fn format_problem(e: ReplayError) -> (String, usize, Problem) {
    match e {
        ReplayError::Format(f) => {
            let shown = f.to_string();
            assert!(shown.starts_with(&format!("{}:{}: ", f.file, f.line)), "{shown}");
            (f.file, f.line, f.problem)
        }
        other => panic!("expected a format error, got {other}"),
    }
}

#[test]
fn bad_scripts_name_file_and_line() {
    let (file, line, problem) = format_problem(events_error("unknown", "send N1 N2 1\ntick\nsnapshot N9\n"));
    assert!(file.ends_with("bad.events"));
    assert_eq!((line, problem), (3, Problem::UnknownNode { name: "N9".into() }));

    let (_, line, problem) = format_problem(events_error("balance", "send N1 N2 4\n\nsend N1 N3 7\n"));
    assert_eq!((line, problem), (3, Problem::NotEnoughTokens { node: "N1".into(), have: 6, want: 7 }));

    let (_, line, problem) = format_problem(events_error("malformed", "tick\nsend N1 N2\n"));
    assert_eq!(line, 2);
    assert!(matches!(problem, Problem::Malformed { .. }));

    let (_, line, problem) = format_problem(events_error("number", "# comment\nsend N1 N2 three\n"));
    assert_eq!((line, problem), (2, Problem::BadNumber { field: "tokens", text: "three".into() }));

    let (_, line, problem) = format_problem(events_error("zero", "send N1 N2 0\n"));
    assert_eq!((line, problem), (1, Problem::EmptyTransfer));
}

#[test]
fn a_transfer_without_a_link_names_file_and_line() {
    let dir = suite();
    let s = Scratch::new("nolink", &dir, &["10nodes.top", "delays.txt"]);
    let events = s.write("bad.events", "send N1 N2 1\nsend N1 N3 1\n");
    let r = Replay::new(s.join("10nodes.top"), events, DelayChoice::File(s.join("delays.txt")));
    let (_, line, problem) = format_problem(replay(&r).unwrap_err());
    assert_eq!((line, problem), (2, Problem::NoLink { from: "N1".into(), to: "N3".into() }));
}

#[test]
fn running_out_of_delays_is_an_error_naming_the_delay_file_and_the_command() {
    let dir = suite();
    let s = Scratch::new("delays", &dir, &["3nodes.top", "3nodes-simple.events"]);
    // 3nodes-simple needs more than three draws: the first two sends, then N2's two markers.
    let delays = s.write("short.txt", "1\n0\n2\n");
    let r = Replay::new(s.join("3nodes.top"), s.join("3nodes-simple.events"), DelayChoice::File(delays.clone()));
    let e = replay(&r).unwrap_err();
    let shown = e.to_string();
    assert!(
        matches!(&e, ReplayError::Command { line: 3, error: SimError::DelaysExhausted { available: 3, .. }, .. }),
        "{shown}"
    );
    assert!(shown.contains("3nodes-simple.events:3:") && shown.contains(&delays.display().to_string()), "{shown}");
    // A bad delay line.
    let bad = s.write("bad.txt", "1\n\n-2\n");
    let r = Replay::new(s.join("3nodes.top"), s.join("3nodes-simple.events"), DelayChoice::File(bad));
    let (file, line, problem) = format_problem(replay(&r).unwrap_err());
    assert!(file.ends_with("bad.txt"));
    assert_eq!((line, problem), (3, Problem::BadNumber { field: "delay", text: "-2".into() }));
}

#[test]
fn bad_topology_and_snap_files_name_file_and_line() {
    let dir = suite();
    let s = Scratch::new("badfiles", &dir, &["2nodes-message.events", "delays.txt", "2nodes.top"]);
    let top = s.write("bad.top", "2\nN1 1\nN2 x\n");
    let r = Replay::new(top, s.join("2nodes-message.events"), DelayChoice::File(s.join("delays.txt")));
    let (_, line, problem) = format_problem(replay(&r).unwrap_err());
    assert_eq!((line, problem), (3, Problem::BadNumber { field: "tokens", text: "x".into() }));

    s.write("2nodes-message.snap", "0\nN1 0\nN2 0\nN1 N2 tok(1)\n");
    let (file, line, problem) = format_problem(replay(&request(&s, "2nodes-message", "2nodes")).unwrap_err());
    assert!(file.ends_with("2nodes-message.snap"));
    assert_eq!(line, 4);
    assert!(matches!(problem, Problem::Malformed { .. }));
}

#[test]
fn the_suite_files_parse_and_their_totals_conserve() {
    let dir = suite();
    for (name, top, files) in SCENARIOS {
        let total: u64 = chandy_lamport::formats::top::TopFile::read(&dir.join(format!("{top}.top")))
            .expect("top parses")
            .counts()
            .expect("every node has tokens")
            .iter()
            .map(|&t| u64::from(t))
            .sum();
        for i in 0..files {
            let file = if files == 1 { format!("{name}.snap") } else { format!("{name}{i}.snap") };
            let snap = SnapFile::read(&dir.join(&file)).expect("snap parses");
            assert_eq!(snap.blocks.len(), 1, "{file}");
            assert_eq!(snap.blocks[0].id as usize, i, "{file}");
            assert_eq!(snap.blocks[0].total(), total, "{file}");
        }
    }
}
