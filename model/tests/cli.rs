//! The `model` command: exit codes, messages for bad input, the JSON object, `variants`,
//! `replay`.

mod common;

use std::process::{Command, Output};

use common::{bad_input, model, stderr, suite, Scratch};

fn temp_file(name: &str, text: &str) -> Scratch {
    common::temp_file("cli", name, text)
}

/// Issue 22's rows: a flag is never accepted and ignored, and every numeric flag's message
/// names the flag and its real range (negative numbers reach the flag, not "unexpected
/// argument").
#[test]
fn flags_name_their_real_range_and_are_never_silently_ignored() {
    bad_input(&["check", "--seed", "5"], "--seed is honoured only by --strategy simulation");
    bad_input(&["check", "--max-states", "5"], "--max-states is honoured only by --strategy simulation");
    bad_input(&["check", "--sends=-1"], "invalid value '-1' for '--sends <SENDS>': -1 is not in 0..=20");
    bad_input(&["check", "--sends", "21"], "invalid value '21' for '--sends <SENDS>': 21 is not in 0..=20");
    bad_input(&["check", "--initiators", "-1"], "invalid value '-1' for '--initiators <INITIATORS>'");
    bad_input(&["check", "--timeout", "1e9"], "greater than 0 and less than 1e9");
    bad_input(&["check", "--threads", "-3"], "invalid value '-3' for '--threads <THREADS>': must be a whole number");
    bad_input(&["check", "--max-concurrent", "9"], "'--max-concurrent <M>': 9 is not in 1..=8");
    bad_input(&["check", "--crashes", "5"], "'--crashes <C>': 5 is not in 0..=4");
    bad_input(
        &["replay", "--topology", "t.top", "--events", "e.events", "--variant", "process-after-barrier"],
        "--variant process-after-barrier is a fault of --algorithm aligned, but replay runs Chandy-Lamport",
    );
    // Simulation takes them.
    let o = model(&["check", "--strategy", "simulation", "--seed", "5", "--max-states", "50", "--sends", "1"]);
    assert!(matches!(o.status.code(), Some(0 | 1 | 3)), "{}", stderr(&o));
    // More threads than cores: capped, with a warning naming the flag.
    let o = model(&["check", "--threads", "100000", "--sends", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning: --threads 100000: this machine has "), "{}", stderr(&o));
    // As many as the cores, or fewer: no warning.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).to_string();
    for threads in ["1", cores.as_str()] {
        let o = model(&["check", "--threads", threads, "--sends", "1"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stderr(&o).contains("warning: --threads"), "--threads {threads}: {}", stderr(&o));
    }
    // Simulation honours --max-states: it generates about that many states, not the default
    // million.
    let o = model(&["check", "--strategy", "simulation", "--max-states", "50", "--threads", "1", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON result");
    let states = json["states"].as_u64().expect("states");
    assert!((50..1_000).contains(&states), "{states} states generated for --max-states 50");
}

#[test]
fn bad_flags_exit_2_naming_the_problem() {
    bad_input(&["check", "--procs", "17"], "--procs must be between 2 and 16, got 17");
    bad_input(&["check", "--procs", "1"], "--procs must be between 2 and 16, got 1");
    bad_input(&["check", "--snapshots", "0"], "'--snapshots <SNAPSHOTS>': 0 is not in 1..=8");
    bad_input(&["check", "--initiators", "5"], "--initiators: initiator 5 is not a process");
    bad_input(&["check", "--initiators", "0,0"], "--initiators lists house 0 twice");
    bad_input(&["check", "--threads", "0"], "invalid value '0' for '--threads <THREADS>': must be at least 1");
    bad_input(&["check", "--depth", "0"], "invalid value '0' for '--depth <D>': must be at least 1");
    bad_input(&["check", "--timeout", "0"], "'--timeout <SECONDS>': must be a number of seconds greater than 0");
    bad_input(&["check", "--theft", "--procs", "16", "--sends", "20"], "--theft: 16 houses x --sends 20 = 320 carts");
    bad_input(
        &["check", "--symmetry", "--procs", "11", "--topology", "ring"],
        "--symmetry enumerates every permutation of the houses: at most 10 houses, this configuration has 11",
    );
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
    bad_input(
        &["check", "--por", "--properties", "literal", "--procs", "2"],
        "--por cannot be used with --properties literal",
    );
    bad_input(
        &["explore", "--por", "--properties", "literal", "--procs", "2"],
        "--por cannot be used with --properties literal",
    );
    bad_input(&["check", "--por", "--symmetry", "--procs", "2"], "--por cannot be combined with --symmetry");
    // Nothing is clamped: an application that holds fewer tokens refuses more.
    bad_input(
        &["check", "--app", "orders", "--tokens", "256"],
        "--tokens: 256 tokens, but the orders application takes at most 255",
    );
}

#[test]
fn tokens_beyond_the_application_in_a_topology_file_name_the_file() {
    let top = temp_file("tokens.top", "2\n0 1\n1 300\n0 1\n1 0\n");
    let path = top.to_str().unwrap();
    let out = model(&["check", "--app", "orders", "--topology", path]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("{path} (house 1): 300 tokens")), "{}", stderr(&out));
    let out = model(&["verify", "--app", "orders", "--topology", path, "--trace", path]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("{path}:3: 300 tokens")), "{}", stderr(&out));
}

#[test]
fn por_checks_fewer_states_with_the_same_verdicts() {
    let counts = |extra: &[&str]| {
        let mut args = vec!["check", "--procs", "3", "--sends", "1", "--json"];
        args.extend_from_slice(extra);
        let o = model(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let verdicts: Vec<String> =
            v["properties"].as_array().unwrap().iter().map(|p| p["verdict"].to_string()).collect();
        (v["unique_states"].as_u64().unwrap(), verdicts)
    };
    let (full, verdicts) = counts(&[]);
    let (reduced, verdicts_por) = counts(&["--por"]);
    assert_eq!((full, reduced), (21_752, 6_419));
    assert_eq!(verdicts, verdicts_por);
}

#[test]
fn bad_topology_files_exit_2_naming_file_and_line() {
    bad_input(&["check", "--topology", "/nonexistent/none.top"], "error: /nonexistent/none.top: cannot read");
    let unknown = temp_file("unknown.top", "2\nA 1\nB 1\nA C\n");
    bad_input(&["check", "--topology", unknown.to_str().unwrap()], "unknown.top:4: unknown process C");
    // A count announcing more nodes than are listed before the links.
    let short = temp_file("short.top", "3\nN1 1\nN2 1\nN1 N2\nN2 N1\n");
    bad_input(
        &["check", "--topology", short.to_str().unwrap()],
        "short.top:4: the first line announces 3 nodes but only 2 are listed",
    );
    // More nodes than a model state holds: the file and the line of the count, no flag.
    let big: String = "# many\n17\n".to_string()
        + &(1..=17).map(|i| format!("N{i} 1\n")).collect::<String>()
        + &(1..=17).map(|i| format!("N{i} N{}\n", i % 17 + 1)).collect::<String>();
    let big = temp_file("big.top", &big);
    let o = model(&["check", "--topology", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("big.top:2: 17 nodes, but the model holds at most 16 houses"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("--procs"), "no flag was given: {}", stderr(&o));
    let number = temp_file("number.top", "two\n");
    bad_input(&["check", "--topology", number.to_str().unwrap()], "number.top:1: bad number \"two\"");
    // A one-way line: nothing reaches A from B.
    let line = temp_file("line.top", "2\nA 1\nB 1\nA B\n");
    bad_input(
        &["check", "--topology", line.to_str().unwrap(), "--initiators", "1"],
        "--initiators: no marker from B (house 1) can reach A along the links of",
    );
    // Each initiator alone must reach every process: 0 reaches everyone, 1 does not.
    bad_input(
        &["check", "--topology", line.to_str().unwrap(), "--initiators", "0,1"],
        "no marker from B (house 1) can reach A",
    );
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
    let lines: Vec<&str> = out.lines().collect();
    let counts = lines[lines.len() - 2];
    assert!(counts.starts_with("unique states 70,") && counts.contains("max depth") && counts.contains("seconds"));
    assert_eq!(lines[lines.len() - 1], "all 9 properties hold (exhaustive, 70 states)");
}

#[test]
fn help_lists_the_exit_codes_and_the_process_limit() {
    let o = model(&["check", "--help"]);
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "Exit codes:",
        "  0  the search was exhaustive",
        "  1  a property fails",
        "  2  bad input",
        "  3  not exhaustive",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    assert!(out.contains("Houses, 2–16"), "{out}");
    let o = model(&["replay", "--help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("too few delays"));
}

/// The last line of stdout.
fn verdict_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string()
}

#[test]
fn a_sometimes_property_without_example_says_so_and_exits_1() {
    // No transfer at all: every always-property holds, but no record can hold a message.
    let o = model(&["check", "--procs", "2", "--sends", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        verdict_line(&o),
        "no example found for: a channel record holds a message (exhaustive, 4 states: this configuration never \
         shows it); the other 8 properties hold"
    );
    // No jars: the same.
    let o = model(&["check", "--procs", "2", "--tokens", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(verdict_line(&o).starts_with("no example found for: a channel record holds a message"));
}

#[test]
fn bounded_runs_say_so_and_exit_3() {
    let o = model(&["check", "--depth", "3", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["exhaustive"].as_bool(), v["exit_code"].as_u64()), (Some(false), Some(3)));
    assert!(v["summary"].as_str().unwrap().starts_with("no counterexample to depth 3 (not exhaustive"), "{v}");
    assert_eq!(v["properties"][0]["verdict"], "no_counterexample_yet");
    // A depth that cuts nothing leaves the search exhaustive.
    let o = model(&["check", "--procs", "2", "--sends", "1", "--depth", "50"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    // A simulation is never exhaustive.
    let o = model(&["check", "--procs", "2", "--sends", "1", "--strategy", "simulation", "--max-states", "500"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(verdict_line(&o).starts_with("no counterexample in "), "{}", verdict_line(&o));
    assert!(verdict_line(&o).contains("simulated states (not exhaustive"), "{}", verdict_line(&o));
    // Refused at once rather than running forever.
    bad_input(
        &["check", "--strategy", "simulation", "--max-states", "0"],
        "invalid value '0' for '--max-states <MAX_STATES>': must be at least 1",
    );
}

#[test]
fn a_counterexample_in_a_bounded_run_still_exits_1() {
    let o = model(&[
        "check",
        "--procs",
        "2",
        "--sends",
        "1",
        "--variant",
        "late-record",
        "--strategy",
        "simulation",
        "--max-states",
        "20000",
        "--stop-on-failure",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    let last = verdict_line(&o);
    assert!(last.contains("fail") && last.contains("(counterexample, ") && last.contains("not exhaustive"), "{last}");
}

#[test]
fn a_timeout_reports_what_was_explored_and_exits_3() {
    let o = model(&["check", "--procs", "4", "--sends", "3", "--timeout", "4"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("warning: this configuration likely has more than 10^"), "{err}");
    assert!(err.contains("--strategy simulation"), "{err}");
    let progress = err.lines().find(|l| l.starts_with("checking: ")).expect("a progress line");
    for part in [" states, ", " unique, ", " states/s, depth ", " MB resident, ", " s"] {
        assert!(progress.contains(part), "{part:?} missing from {progress}");
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("nothing crosses the cut inward") && out.contains("no counterexample yet"), "{out}");
    let last = verdict_line(&o);
    assert!(last.starts_with("no counterexample in ") && last.contains("stopped by the 4 s timeout"), "{last}");
}

#[test]
fn an_interrupt_reports_what_was_explored_and_exits_3() {
    let child = Command::new(env!("CARGO_BIN_EXE_model"))
        .args(["check", "--procs", "4", "--sends", "3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    // Twice at once, as `timeout -s INT` does (the command, then its process group): still one
    // interrupt, with its report.
    for _ in 0..2 {
        let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
        assert!(kill.success());
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted: reporting what was explored"), "{}", stderr(&o));
    let last = verdict_line(&o);
    assert!(last.starts_with("no counterexample in ") && last.contains("(not exhaustive: interrupted)"), "{last}");
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
    // A prefix with no expected file at all is bad input.
    let o = run(args("/nonexistent/prefix"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing expected file /nonexistent/prefix.snap"), "{}", stderr(&o));
}

fn replay_suite(top: &str, events: &str, extra: &[&str]) -> Output {
    let s = suite();
    let p = |f: &str| s.join(f).to_str().unwrap().to_string();
    let mut args = vec!["replay".to_string(), "--topology".into(), p(top), "--events".into(), p(events)];
    args.extend(extra.iter().map(|a| a.to_string()));
    Command::new(env!("CARGO_BIN_EXE_model")).args(args).output().unwrap()
}

#[test]
fn replay_says_what_matched() {
    let s = suite();
    let delays = s.join("delays.txt");
    let prefix = s.join("8nodes-concurrent-snapshots");
    let o = replay_suite(
        "8nodes.top",
        "8nodes-concurrent-snapshots.events",
        &["--delays", delays.to_str().unwrap(), "--expect", prefix.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("match: all 5 snapshots equal ") && err.contains("8nodes-concurrent-snapshots4.snap"),
        "{err}"
    );
}

#[test]
fn replay_with_too_few_delays_is_bad_input() {
    let few = temp_file("few.txt", "1\n2\n");
    let o = replay_suite("3nodes.top", "3nodes-bidirectional-messages.events", &["--delays", few.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ran out of delays: ") && stderr(&o).contains("few.txt holds 2 delays"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn every_course_topology_is_accepted_by_check_and_replay() {
    let s = suite();
    for top in ["2nodes.top", "3nodes.top", "8nodes.top", "10nodes.top"] {
        let path = s.join(top);
        let o = model(&[
            "check",
            "--topology",
            path.to_str().unwrap(),
            "--strategy",
            "simulation",
            "--max-states",
            "20000",
        ]);
        assert_eq!(o.status.code(), Some(3), "{top}: {}", stderr(&o));
        assert!(verdict_line(&o).starts_with("no counterexample in "), "{top}: {}", verdict_line(&o));
    }
    // The small ones exhaustively.
    let o = model(&["check", "--topology", s.join("2nodes.top").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    // The big ones warn that an exhaustive check is hopeless.
    let o = model(&["check", "--topology", s.join("10nodes.top").to_str().unwrap(), "--timeout", "1"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("warning: this configuration likely has more than 10^"), "{}", stderr(&o));
    let delays = s.join("delays.txt");
    let prefix = s.join("10nodes");
    let o = replay_suite(
        "10nodes.top",
        "10nodes.events",
        &["--delays", delays.to_str().unwrap(), "--expect", prefix.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn large_token_counts_and_self_links_in_a_top_file_are_accepted() {
    // The course format ignores self-links: a warning names the file and the line.
    let file = temp_file("selflinks.top", "2\nA 100\nB 1000\nA B\nB B\nB A\n");
    let o = model(&["check", "--topology", file.to_str().unwrap(), "--sends", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: ") && stderr(&o).contains("selflinks.top:5: self-link B B ignored"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("--tokens"), "{}", stderr(&o));
    // The same in replay.
    let events = temp_file("selflinks.events", "send A B 1\nsnapshot A\ntick 10\n");
    let o = model(&["replay", "--topology", file.to_str().unwrap(), "--events", events.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("selflinks.top:5: self-link B B ignored"), "{}", stderr(&o));
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

/// `explore --addr 127.0.0.1:0` prints the port the system chose, and serves there.
#[test]
fn explore_on_port_0_prints_the_port_it_serves_on() {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_model"))
        .args(["explore", "--sends", "0", "--addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run model explore");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let served = line.trim().strip_prefix("Explorer: http://").and_then(|a| a.strip_suffix('/')).map(str::to_string);
    let result = (|| {
        let addr: std::net::SocketAddr = served.as_deref().ok_or(format!("no address in {line:?}"))?.parse().unwrap();
        if addr.port() == 0 {
            return Err(format!("printed port 0: {line:?}"));
        }
        // The server starts a moment after the line is printed.
        for _ in 0..100 {
            if let Ok(mut s) = std::net::TcpStream::connect(addr) {
                s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
                let mut reply = String::new();
                let _ = s.read_to_string(&mut reply);
                return if reply.starts_with("HTTP/1.") { Ok(()) } else { Err(format!("reply {reply:?}")) };
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err(format!("nothing serves on {addr}"))
    })();
    let _ = child.kill();
    let _ = child.wait();
    result.unwrap();
}

#[test]
fn the_distributed_memory_flags_need_distributed_and_a_size() {
    common::bad_input(&["check", "--rank-memory", "100"], "--rank-memory is honoured only by --distributed");
    common::bad_input(&["check", "--spill-dir", "/tmp"], "--spill-dir is honoured only by --distributed");
    for bad in ["-1", "1.5", "lots", "99999999999999999"] {
        common::bad_input(&["check", "--distributed", "--rank-memory", bad], "must be a whole number of MiB");
    }
}

#[cfg(not(feature = "mpi"))]
#[test]
fn distributed_without_mpi_is_refused_saying_how_to_build_it() {
    common::bad_input(&["check", "--distributed"], "--distributed needs MPI, and this build of model has none");
}
