//! `model check --distributed` under `mpirun` (feature `mpi`; Open MPI from Debian's packages):
//! every state searched once whatever the number of ranks, the single run's verdicts and exit
//! codes, and no verdict when a rank dies.

#![cfg(feature = "mpi")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use chandy_lamport::Variant;
use common::{model, mpirun, mpirun_command, stderr};
use serde_json::Value;

fn json(o: &std::process::Output) -> Value {
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: stdout {out:?}, stderr {}", stderr(o)))
}

/// What must agree between a single run and a distributed one: the counts, the depth, every
/// verdict with its path's length, the tallies and the exit code.
fn outcome(v: &Value) -> Value {
    let properties: Vec<Value> = v["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .map(|p| serde_json::json!([p["name"], p["verdict"], p["path"].as_array().map(Vec::len)]))
        .collect();
    serde_json::json!({
        "unique_states": v["unique_states"], "states": v["states"], "max_depth": v["max_depth"],
        "properties": properties, "tallies": v["tallies"], "exit_code": v["exit_code"], "ok": v["ok"],
    })
}

/// `model check ARGS --json` on one thread, breadth first, and on `np` ranks: the same outcome.
fn same_as_single(np: usize, args: &[&str]) -> Value {
    let single = model(&[&["check", "--json", "--threads", "1", "--strategy", "bfs"], args].concat());
    let spread = mpirun(np, &[&["check", "--json", "--distributed"], args].concat());
    let (s, d) = (json(&single), json(&spread));
    assert_eq!(outcome(&d), outcome(&s), "{args:?}: {}", stderr(&spread));
    assert_eq!(spread.status.code(), single.status.code(), "{args:?}: {}", stderr(&spread));
    assert_eq!(d["distributed"]["ranks"], np, "{args:?}");
    d
}

#[test]
fn the_default_job_on_four_ranks_searches_every_state_once() {
    let d = same_as_single(4, &["--sends", "2"]);
    assert_eq!(d["unique_states"], 3_270_737);
    assert_eq!(d["exhaustive"], true);
    let t = &d["distributed"];
    assert!(t["largest_share"].as_u64().unwrap() < 3_270_737 / 3, "{t}");
    assert!(t["states_sent"].as_u64().unwrap() > 0 && t["bytes_sent"].as_u64().unwrap() > 0, "{t}");
}

/// This machine's available memory (`/proc/meminfo`), in bytes.
fn available() -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = info.lines().find(|l| l.starts_with("MemAvailable:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn the_table_says_what_the_json_says_of_the_ranks() {
    let args = ["check", "--distributed", "--sends", "1"];
    let before = available();
    let (text, d) = (mpirun(3, &args), json(&mpirun(3, &[&args[..], &["--json"]].concat())));
    let text = String::from_utf8_lossy(&text.stdout);
    let t = &d["distributed"];
    let n = |key: &str| t[key].as_u64().unwrap() as f64 / d["unique_states"].as_u64().unwrap() as f64;
    let group = |key: &str| {
        let digits = t[key].as_u64().unwrap().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    // Who owns a state is fixed by its fingerprint; who expands it, and so what is sent, depends
    // on which rank asks first: the two runs' figures agree on the first, and the table is read
    // for the rest.
    let owners = format!(
        "3 ranks: the largest owns {} states ({:.2}× the mean), the busiest expanded ",
        group("largest_share"),
        n("largest_share") * 3.0,
    );
    let at = text.find(&owners).unwrap_or_else(|| panic!("{owners}\nnot in\n{text}"));
    let line = text[at + owners.len()..].lines().next().unwrap();
    let numbers: Vec<f64> = line
        .split(|c: char| !c.is_ascii_digit() && c != '.' && c != ',')
        .map(|w| w.trim_matches(|c| c == '.' || c == ','))
        .filter(|w| !w.is_empty())
        .map(|w| w.replace(',', "").parse().unwrap_or_else(|_| panic!("{w} in {line}")))
        .collect();
    let mut shape = String::new();
    for c in line.chars() {
        let digit = c.is_ascii_digit() || ((c == '.' || c == ',') && shape.ends_with('#'));
        if !digit {
            shape.push(c);
        } else if !shape.ends_with('#') {
            shape.push('#');
        }
    }
    assert_eq!(
        shape,
        "# (#× the mean); sent between ranks per unique state: # fingerprints (# more not sent: asked before), # \
         states moved to even out levels, # bytes; peak memory # MB on the largest rank, # MB in all",
        "{line}"
    );
    let [expanded, mean, sent, cached, moved, bytes, ..] = numbers[..] else { panic!("{line}") };
    let unique = d["unique_states"].as_u64().unwrap() as f64;
    assert!((expanded * 3.0 / unique - mean).abs() < 0.006 && mean >= 1.0, "{line}");
    assert!(sent > 0.1 && cached > 0.1 && moved > 0.0, "{line}");
    // Each fingerprint sent is 16 bytes and its answer 1; a state moved, its encoding and 12.
    assert!(bytes + 0.5 >= 17.0 * (sent - 0.005) + 12.0 * moved, "{line}");
    assert!(t["largest_expanded"].as_u64().unwrap() * 3 >= d["unique_states"].as_u64().unwrap(), "{t}");
    // By default the 3 ranks on this machine share half its available memory: a sixth each
    // (what is available moves while other tests run, so within a quarter).
    let budget = t["rank_memory"].as_u64().unwrap() as f64;
    let sixth = (before + available()) as f64 / 2.0 / 6.0;
    assert!((0.75..1.25).contains(&(budget / sixth)), "{budget} bytes a rank, not about {sixth}");
    let o = mpirun(3, &[&args[..], &["--json", "--rank-memory", "5"]].concat());
    assert_eq!(json(&o)["distributed"]["rank_memory"], 5 << 20, "{}", stderr(&o));
}

#[test]
fn every_variant_with_one_send_matches_the_single_run() {
    for variant in Variant::ALL {
        let algorithm = variant.algorithm();
        same_as_single(4, &["--sends", "1", "--variant", variant.name(), "--algorithm", algorithm.name()]);
    }
}

#[test]
fn reductions_and_modes_match_the_single_run() {
    for args in [
        &["--sends", "1", "--properties", "basic", "--por"][..],
        &["--procs", "2", "--sends", "2", "--properties", "literal"],
        &["--sends", "1", "--algorithm", "unaligned", "--app", "stream", "--crashes", "1"],
    ] {
        same_as_single(3, args);
    }
    // Every level on disk: the same search.
    let args = ["--sends", "1", "--variant", "late-record"];
    let single = json(&model(&[&["check", "--json", "--threads", "1", "--strategy", "bfs"], &args[..]].concat()));
    let o = mpirun(3, &[&["check", "--json", "--distributed", "--rank-memory", "0"], &args[..]].concat());
    let spread = json(&o);
    assert_eq!(outcome(&spread), outcome(&single), "{}", stderr(&o));
    let on_disk = spread["distributed"]["spilled_states"].as_u64().unwrap();
    assert_eq!(on_disk, spread["unique_states"].as_u64().unwrap() - 1);
    // Symmetry: stateright's breadth-first search has none; the depth-first engine's count.
    let args = ["check", "--json", "--sends", "1", "--procs", "3", "--symmetry"];
    let single = json(&model(&[&args[..], &["--threads", "1"]].concat()));
    let spread = json(&mpirun(2, &[&args[..], &["--distributed"]].concat()));
    assert_eq!(spread["unique_states"], single["unique_states"]);
    assert_eq!(
        outcome(&spread)["properties"].as_array().unwrap().len(),
        single["properties"].as_array().unwrap().len()
    );
}

#[test]
fn bad_flags_are_refused_once_with_exit_2() {
    for (args, message) in [
        (&["check", "--distributed", "--threads", "4"][..], "each rank searches with one thread"),
        (&["check", "--distributed", "--shard", "0/2"], "not with --shard 0/2"),
        (&["check", "--distributed", "--strategy", "simulation"], "not with --strategy simulation"),
        (&["check", "--distributed", "--procs", "1"], "error: "),
        (
            &["check", "--distributed", "--spill-dir", "/nonexistent/levels"],
            "cannot make a file in /nonexistent/levels",
        ),
    ] {
        let o = mpirun(3, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).matches(message).count(), 1, "{args:?}: said once: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn a_timeout_stops_every_rank_and_says_so() {
    let o = mpirun(2, &["check", "--distributed", "--json", "--sends", "3", "--timeout", "2"]);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(v["exhaustive"], false);
    assert_eq!(v["bound"], "stopped by the 2 s timeout");
}

#[test]
fn a_killed_rank_fails_the_run_without_a_verdict() {
    let mut child = mpirun_command(4, &["check", "--distributed", "--sends", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    // Wait for the first progress line (rank 0's), then kill rank 2.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("checking:") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "mpirun ended before any progress");
    }
    let victim = rank_pid(child.id(), 2).expect("rank 2's process");
    assert_eq!(unsafe { libc::kill(victim, libc::SIGKILL) }, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "mpirun did not end after a rank died");
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(!status.success(), "{rest}");
    assert!(out.is_empty(), "no verdict: {out}");
    assert!(rest.contains("signal 9"), "the launcher names the dead rank: {rest}");
}

/// The process id of rank `rank` among `mpirun`'s (`parent`) children.
fn rank_pid(parent: u32, rank: usize) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let ppid: u32 = stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()?;
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        (ppid == parent && env.split(|&b| b == 0).any(|v| v == want.as_bytes())).then_some(pid)
    })
}
