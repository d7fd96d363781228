//! JSON-lines logs: runs of the threaded runtime and of the simulator, written as logs and read
//! back, give the same run, the same snapshots and the same verdicts; logs split among files in
//! any way read the same.

use std::path::PathBuf;

use chandy_lamport::apps::bank::{Bank, Jars, Sale};
use chandy_lamport::check::{check, unterminated, verify, Clause};
use chandy_lamport::check::{Event, EventKind};
use chandy_lamport::formats::jsonl::{read_logs, Logs, States};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::logs::judge_claims;
use chandy_lamport::runtime::workload::{run, Workload};
use chandy_lamport::runtime::BankCommand;
use chandy_lamport::runtime::{Cluster, Options};
use chandy_lamport::{ProcessId, SnapshotId, Topology, Variant};
mod common;

use common::workload;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A fresh, empty directory `jsonl-NAME-<random>`, removed (with its contents) on drop.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("jsonl-{name}-")).tempdir().unwrap()
}

fn read_dir(dir: &std::path::Path, files: &[PathBuf]) -> Logs<Bank> {
    let top = TopFile::read(&dir.join("topology.top")).unwrap();
    let initial = top.counts().unwrap().iter().map(|&t| Bank::new(t)).collect();
    read_logs(&top.topology, initial, files, &States::Interpreted).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn runtime_logs_read_back_to_the_same_trace_snapshots_and_verdicts() {
    let t = Topology::complete(3).unwrap();
    let cluster =
        Cluster::start(t.clone(), vec![Bank::new(20); 3], Options { trace: true, ..Options::default() }).unwrap();
    let mut rng = StdRng::seed_from_u64(5);
    for i in 0..600 {
        if i % 150 == 75 {
            let id = SnapshotId(i / 150);
            cluster.initiate(id, ProcessId(rng.random_range(0..3))).unwrap();
        }
        let from = ProcessId(rng.random_range(0..3));
        let command = match rng.random_range(0..10) {
            0 => BankCommand::Sell { amount: 1 },
            _ => BankCommand::Transfer { to: ProcessId((from.0 + rng.random_range(1..3)) % 3), amount: 2 },
        };
        cluster.command(from, command).unwrap();
    }
    for id in 0..4 {
        cluster.wait(SnapshotId(id)).unwrap();
    }
    let outcome = cluster.shutdown().unwrap();
    let dir = temp_dir("runtime");
    let files = outcome.write_logs(dir.path(), &t, &[20, 20, 20]).unwrap();
    let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["P0.jsonl", "P1.jsonl", "P2.jsonl"]);
    let top = TopFile::read(&dir.path().join("topology.top")).unwrap();
    assert_eq!((&top.topology, top.counts()), (&t, Ok(vec![20, 20, 20])));

    let logs = read_dir(dir.path(), &files);
    let trace = outcome.trace.as_ref().unwrap();
    assert_eq!(&logs.trace, trace, "the same run, event for event, in the same order");
    assert!(trace.events.iter().any(|e| matches!(e.kind, EventKind::Internal { .. })));
    let claimed: Vec<_> = logs.claims.iter().map(|c| c.snapshot.clone().expect("complete")).collect();
    assert_eq!(claimed, outcome.snapshots, "the snapshots the logs claim are the ones the runtime assembled");
    assert!(judge_claims(&t, &logs, false).iter().all(Vec::is_empty), "no claim a correct run does not make");
    let channels_recorded: usize =
        claimed.iter().map(|s| s.state.channels.iter().filter(|c| !c.is_empty()).count()).sum();
    assert!(channels_recorded > 0, "some channel record holds a cart, so `recorded` lists are exercised");
    for s in &outcome.snapshots {
        let before = check(&t, trace, s).unwrap();
        let after = check(&t, &logs.trace, s).unwrap();
        assert_eq!(before, after);
        assert_eq!(after.violations, vec![], "snapshot {}", s.id);
    }
    // Every line names its event: the locations follow each file's lines.
    for (position, e) in logs.trace.events.iter().enumerate() {
        let at = logs.location(position).unwrap();
        assert_eq!(at.file, files[e.process.index()].display().to_string());
    }
}

#[test]
fn logs_split_among_files_in_any_way_read_the_same() {
    let mut w = Workload::new(Topology::ring(4).unwrap(), 400, 3);
    let dir = temp_dir("split");
    w.trace_out = Some(dir.path().to_path_buf());
    run(&w).unwrap();
    let files: Vec<PathBuf> = (0..4).map(|p| dir.path().join(format!("P{p}.jsonl"))).collect();
    let whole = read_dir(dir.path(), &files);
    // Deal every line of every file, in reverse, round-robin into three files.
    let mut dealt = vec![String::new(); 3];
    let lines: Vec<String> = files
        .iter()
        .flat_map(|f| std::fs::read_to_string(f).unwrap().lines().map(String::from).collect::<Vec<_>>())
        .collect();
    for (i, line) in lines.iter().rev().enumerate() {
        dealt[i % 3].push_str(line);
        dealt[i % 3].push('\n');
    }
    let split: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("part{i}.jsonl"))).collect();
    for (path, text) in split.iter().zip(&dealt) {
        std::fs::write(path, text).unwrap();
    }
    let parts = read_dir(dir.path(), &split);
    assert_eq!(parts.trace, whole.trace);
    assert_eq!(parts.claims, whole.claims);
    assert_eq!(whole.claims.len(), 3);
    for claim in &whole.claims {
        verify(&w.topology, &whole.trace, claim.snapshot.as_ref().unwrap()).unwrap();
    }
}

#[test]
fn a_workload_written_with_trace_out_verifies_from_its_logs_alone() {
    let mut w = Workload::new(Topology::complete(4).unwrap(), 2_000, 5);
    w.sell_percent = 10;
    let dir = temp_dir("workload");
    w.trace_out = Some(dir.path().to_path_buf());
    let report = run(&w).unwrap();
    let files: Vec<PathBuf> = (0..4).map(|p| dir.path().join(format!("P{p}.jsonl"))).collect();
    let logs = read_dir(dir.path(), &files);
    assert_eq!(logs.claims.len(), 5);
    for (claim, summary) in logs.claims.iter().zip(&report.snapshots) {
        let snapshot = claim.snapshot.as_ref().unwrap();
        verify(&w.topology, &logs.trace, snapshot).unwrap_or_else(|e| panic!("snapshot {}: {e}", claim.id));
        assert_eq!(snapshot.state.tokens_in_channels(), summary.in_transit);
        let sold: u64 = snapshot.state.processes.iter().map(|b| u64::from(b.sold)).sum();
        assert_eq!(snapshot.state.total() + sold, report.total);
    }
}

/// A process's events in order, with their logged states except on records (where the logs
/// carry the state recorded, which a broken core may not be in).
fn of_process(events: &[Event<Bank>], p: ProcessId) -> Vec<(&EventKind<Jars, Sale>, Option<&Bank>)> {
    let state = |e: &Event<Bank>| !matches!(e.kind, EventKind::Record { .. });
    events.iter().filter(|e| e.process == p).map(|e| (&e.kind, e.state.as_ref().filter(|_| state(e)))).collect()
}

#[test]
fn simulator_logs_give_the_same_events_snapshots_and_verdicts_for_every_variant() {
    let t = Topology::complete(3).unwrap();
    let mut caught = Vec::new();
    for variant in Variant::of(chandy_lamport::Algorithm::ChandyLamport) {
        for seed in 0..8 {
            // A run the core stops (double-marker) is an error of the run, not a log.
            let Ok(run) = workload(&t, variant, seed) else { continue };
            let dir = temp_dir(&format!("sim-{variant}-{seed}"));
            let files = run.write_logs(dir.path(), &t).unwrap();
            let logs = read_dir(dir.path(), &files);
            for p in t.processes() {
                assert_eq!(of_process(&logs.trace.events, p), of_process(&run.trace.events, p), "{variant} {seed} {p}");
            }
            let mut ids: Vec<SnapshotId> =
                run.snapshots.iter().map(|s| s.global.id).chain(run.incomplete.iter().copied()).collect();
            ids.sort();
            assert_eq!(logs.claims.iter().map(|c| c.id).collect::<Vec<_>>(), ids, "{variant} {seed}");
            for claim in &logs.claims {
                let assembled = run.snapshots.iter().find(|s| s.global.id == claim.id).map(|s| &s.global);
                assert_eq!(claim.snapshot.as_ref(), assembled, "{variant} {seed} snapshot {}", claim.id);
                let clauses = |trace| -> Vec<Clause> {
                    let mut v: Vec<Clause> = match assembled {
                        Some(s) => check(&t, trace, s).unwrap().violations.iter().map(|v| v.clause()).collect(),
                        None => unterminated(&t, trace, claim.id).unwrap().iter().map(|v| v.clause()).collect(),
                    };
                    // The logs' record lines carry the recorded state, which a broken core may
                    // not be in: only the logs' version can show a logged-state difference.
                    v.retain(|c| *c != Clause::LoggedStates);
                    v.dedup();
                    v
                };
                let (before, after) = (clauses(&run.trace), clauses(&logs.trace));
                assert_eq!(before, after, "{variant} {seed} snapshot {}", claim.id);
                if !after.is_empty() {
                    caught.push(variant);
                }
            }
            if variant == Variant::None {
                for claim in &logs.claims {
                    let report = check(&t, &logs.trace, claim.snapshot.as_ref().unwrap()).unwrap();
                    assert_eq!(report.violations, vec![], "seed {seed} snapshot {}", claim.id);
                }
            }
        }
    }
    caught.dedup();
    assert!(caught.len() >= 8, "the logs show most variants' violations: {caught:?}");
}
