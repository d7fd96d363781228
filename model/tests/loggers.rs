//! The loggers of `loggers/`, one per language, each judged through its demo: a tiny
//! Chandy–Lamport implementation in that language (3 processes as threads, in-memory FIFO
//! queues, P0 initiating snapshots 0 and 1) that logs with it. Its logs must read as 150 events
//! of 3 files holding 2 snapshots, and verify (`--app balance` and `--app none`, exit 0, every
//! snapshot holding); its `--bug` run (P0 sends between its record and its markers) must fail
//! with an inward crossing; and its `--stress` run (4 threads logging through one logger at
//! once) must give whole lines, numbered in order, each record right after its marker's
//! receipt. The toolchains come from Debian (`scripts/packages`); a missing one fails its test,
//! naming the package. And the Python reference, `examples/python/`, logs with the Python
//! logger in at most 8 lines, which the guide shows.

mod common;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::model;

/// What every correct demo run reads as: 3 processes × (20 sends, 20 receipts, 2 records,
/// 4 marker sends, 4 marker receipts).
const EVENTS: &str = "read 150 events from 3 files; 2 snapshots found";

/// No build or run of a demo may take longer (a hung demo fails, killed, instead of hanging).
const TIMEOUT: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Fails, naming the Debian package, unless `tool --version`-like `args` runs.
fn require(tool: &str, args: &[&str], package: &str) {
    let ok = Command::new(tool).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status();
    assert!(
        ok.is_ok_and(|s| s.success()),
        "`{tool}` is missing or does not run: this test needs it (Debian package {package}, \
         which scripts/packages installs)"
    );
}

/// Runs `command` (from the repository's root unless it says where) to its end (killed and waited for after
/// [`TIMEOUT`]) and asserts it exits 0; `what` names it in the failure.
fn run(command: &mut Command, scratch: &Path, what: &str) {
    let (out, err) = (scratch.join("stdout"), scratch.join("stderr"));
    if command.get_current_dir().is_none() {
        command.current_dir(root());
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(File::create(&out).expect("a stdout file"))
        .stderr(File::create(&err).expect("a stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        sleep(Duration::from_millis(10));
    };
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    assert!(
        status.is_some_and(|s| s.success()),
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        status.map_or(format!("killed after {TIMEOUT:?}"), |s| s.to_string()),
        read(&out),
        read(&err)
    );
}

/// The JSON lines of `file`, every one an object.
fn lines(file: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", file.display()))).collect()
}

/// Each process's log as the logger wrote it: 50 lines, `seq` 0, 1, 2, … and every record a
/// marker caused right after that marker's receipt, which closes its channel empty.
fn check_shape(dir: &Path, lang: &str) {
    for p in 0..3 {
        let file = dir.join(format!("P{p}.jsonl"));
        let events = lines(&file);
        assert_eq!(events.len(), 50, "{lang}: {}", file.display());
        let mut caused = 0;
        for (i, e) in events.iter().enumerate() {
            assert_eq!((e["process"].as_str(), e["seq"].as_u64()), (Some(&*format!("P{p}")), Some(i as u64)), "{e}");
            if e["kind"] == "record" && e["initiated"] == false {
                let before = &events[i - 1];
                assert_eq!(
                    (before["kind"].as_str(), &before["snapshot"], before["recorded"].as_array().map(Vec::len)),
                    (Some("marker-receive"), &e["snapshot"], Some(0)),
                    "{lang}: {}: the record at seq {i} does not follow its marker's receipt",
                    file.display()
                );
                caused += 1;
            }
        }
        assert_eq!(caused, if p == 0 { 0 } else { 2 }, "{lang}: {}: records caused by markers", file.display());
    }
}

/// The demo's `--stress` log: 4 threads that each logged a send and a record on a marker 250
/// times through one logger. Every line whole, `seq` 0, 1, 2, … in file order, every record
/// right after its own marker's receipt, no message id or snapshot given twice.
fn check_stress(file: &Path, lang: &str) {
    let events = lines(file);
    assert_eq!(events.len(), 3000, "{lang}: {}", file.display());
    let (mut ids, mut snapshots) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for (i, e) in events.iter().enumerate() {
        assert_eq!((e["process"].as_str(), e["seq"].as_u64()), (Some("P0"), Some(i as u64)), "{lang}: {e}");
        match e["kind"].as_str() {
            Some("send") => assert!(ids.insert(e["msg"].to_string()), "{lang}: a message id given twice: {e}"),
            Some("marker-receive") => {}
            Some("record") => {
                let before = &events[i - 1];
                assert_eq!(
                    (before["kind"].as_str(), &before["snapshot"], before["channel"].as_str()),
                    (Some("marker-receive"), &e["snapshot"], Some("P1->P0")),
                    "{lang}: {}: the record at seq {i} does not follow its marker's receipt",
                    file.display()
                );
                assert!(snapshots.insert(e["snapshot"].to_string()), "{lang}: a snapshot recorded twice: {e}");
            }
            _ => panic!("{lang}: an unexpected line in {}: {e}", file.display()),
        }
    }
    assert_eq!((ids.len(), snapshots.len()), (1000, 1000), "{lang}: {}", file.display());
}

/// `model verify` of a demo's logs in `dir` (the topology `loggers/demo.top`) with `--app app`.
fn verify(dir: &Path, app: &str) -> (Option<i32>, String) {
    let files: Vec<String> = (0..3).map(|p| dir.join(format!("P{p}.jsonl")).display().to_string()).collect();
    let top = root().join("loggers/demo.top").display().to_string();
    let mut args = vec!["verify", "--topology", &top, "--app", app, "--trace"];
    args.extend(files.iter().map(String::as_str));
    let o = model(&args);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code(), text)
}

/// Runs the demo (`demo(out, flag)` the command) correctly and with its bug, and judges both;
/// then its `--stress` run.
fn judge(lang: &str, scratch: &Path, demo: impl Fn(&Path, Option<&str>) -> Command) {
    let stress = scratch.join("stress");
    run(&mut demo(&stress, Some("--stress")), scratch, &format!("the {lang} demo --stress"));
    check_stress(&stress.join("stress.jsonl"), lang);
    for bug in [false, true] {
        let out = scratch.join(if bug { "bug" } else { "correct" });
        run(&mut demo(&out, bug.then_some("--bug")), scratch, &format!("the {lang} demo (bug: {bug})"));
        check_shape(&out, lang);
        for app in ["balance", "none"] {
            let (code, text) = verify(&out, app);
            assert!(text.contains(EVENTS), "{lang}, bug {bug}, --app {app}: expected {EVENTS:?} in\n{text}");
            if bug {
                assert_eq!(code, Some(1), "{lang}, --bug, --app {app}:\n{text}");
                assert!(
                    text.contains("(a) nothing crosses the cut inward: message \"P0-"),
                    "{lang}, --app {app}:\n{text}"
                );
                assert!(text.contains("verdict: 2 of 2 snapshots violate the theorem (snapshot 0, 1)"), "{text}");
            } else {
                assert_eq!(code, Some(0), "{lang}, --app {app}:\n{text}");
                assert!(text.ends_with("verdict: all 2 snapshots hold\n"), "{lang}, --app {app}:\n{text}");
            }
        }
    }
}

#[test]
fn python_logger_verifies_and_its_broken_run_fails() {
    require("python3", &["--version"], "python3");
    let scratch = common::temp_dir("loggers", "python");
    judge("Python", &scratch, |out, flag| {
        let mut c = Command::new("python3");
        c.arg("loggers/python/demo.py").arg(out);
        c.args(flag);
        c
    });
}

#[test]
fn go_logger_verifies_and_its_broken_run_fails() {
    require("go", &["version"], "golang-go");
    let scratch = common::temp_dir("loggers", "go");
    let binary = scratch.join("demo");
    let mut build = Command::new("go");
    build.args(["build", "-buildvcs=false", "-o"]).arg(&binary).arg("./demo");
    run(build.current_dir(root().join("loggers/go")), &scratch, "go build");
    judge("Go", &scratch, |out, flag| {
        let mut c = Command::new(&binary);
        c.arg(out).args(flag);
        c
    });
}

#[test]
fn java_logger_verifies_and_its_broken_run_fails() {
    require("javac", &["-version"], "default-jdk-headless");
    require("java", &["-version"], "default-jdk-headless");
    let scratch = common::temp_dir("loggers", "java");
    let classes = scratch.join("classes");
    let mut build = Command::new("javac");
    build.args(["-Xlint:all", "-Werror", "-d"]).arg(&classes);
    build.args(["loggers/java/SnapshotLog.java", "loggers/java/Demo.java"]);
    run(&mut build, &scratch, "javac");
    judge("Java", &scratch, |out, flag| {
        let mut c = Command::new("java");
        c.arg("-cp").arg(&classes).arg("Demo").arg(out).args(flag);
        c
    });
}

#[test]
fn rust_logger_verifies_and_its_broken_run_fails() {
    require("rustc", &["--version"], "rustc (or rustup's toolchain)");
    let scratch = common::temp_dir("loggers", "rust");
    let binary = scratch.join("demo");
    let mut build = Command::new("rustc");
    build.args(["--edition", "2021", "-D", "warnings", "-O", "loggers/rust/demo.rs", "-o"]).arg(&binary);
    run(&mut build, &scratch, "rustc");
    judge("Rust", &scratch, |out, flag| {
        let mut c = Command::new(&binary);
        c.arg(out).args(flag);
        c
    });
}

#[test]
fn c_logger_verifies_and_its_broken_run_fails() {
    require("gcc", &["--version"], "gcc");
    let scratch = common::temp_dir("loggers", "c");
    let binary = scratch.join("demo");
    let mut build = Command::new("gcc");
    build.args(["-std=c11", "-D_DEFAULT_SOURCE", "-Wall", "-Wextra", "-Werror", "-O2", "-pthread"]);
    build.args(["loggers/c/demo.c", "-o"]).arg(&binary);
    run(&mut build, &scratch, "gcc");
    judge("C", &scratch, |out, flag| {
        let mut c = Command::new(&binary);
        c.arg(out).args(flag);
        c
    });
}

/// The lines of `examples/python/snapshot.py` ending in `# log` are all its logging: at most 8,
/// each shown in the guide; no other line logs; without them the program runs and writes no
/// log; with them its logs verify.
#[test]
fn python_reference_logs_with_the_logger_in_at_most_8_lines() {
    require("python3", &["--version"], "python3");
    let source = fs::read_to_string(root().join("examples/python/snapshot.py")).expect("the Python reference");
    let marked: Vec<&str> = source.lines().filter_map(|l| l.trim_end().strip_suffix("# log")).map(str::trim).collect();
    assert!((1..=8).contains(&marked.len()), "{} lines marked `# log`: {marked:#?}", marked.len());
    for line in source.lines().filter(|l| !l.trim_end().ends_with("# log")) {
        assert!(!line.contains("self.log") && !line.contains("SnapshotLog"), "an unmarked logging line: {line}");
    }
    let guide = fs::read_to_string(root().join("docs/src/loggers.md")).expect("the guide's loggers chapter");
    for line in &marked {
        assert!(guide.contains(line), "docs/src/loggers.md does not show the logging line {line:?}");
    }

    let scratch = common::temp_dir("loggers", "reference");
    let stripped = scratch.join("without_logging.py");
    let unmarked: Vec<&str> = source.lines().filter(|l| !l.trim_end().ends_with("# log")).collect();
    fs::write(&stripped, unmarked.join("\n")).expect("the stripped reference");
    let args = ["--procs", "3", "--sends", "20", "--snapshots", "2", "--seed", "5", "--out"];
    let without = scratch.join("without");
    run(Command::new("python3").arg(&stripped).args(args).arg(&without), &scratch, "the reference without logging");
    let written: Vec<String> = fs::read_dir(&without)
        .expect("the output directory")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, vec!["topology.top".to_string()], "without its `# log` lines the reference writes no log");

    let with = scratch.join("with");
    run(Command::new("python3").arg("examples/python/snapshot.py").args(args).arg(&with), &scratch, "the reference");
    let top = with.join("topology.top").display().to_string();
    let files: Vec<String> = (0..3).map(|p| with.join(format!("P{p}.jsonl")).display().to_string()).collect();
    let mut verify = vec!["verify", "--topology", &top, "--app", "balance", "--trace"];
    verify.extend(files.iter().map(String::as_str));
    let o = model(&verify);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("from 3 files; 2 snapshots found") && out.ends_with("verdict: all 2 snapshots hold\n"),
        "{out}"
    );
}
