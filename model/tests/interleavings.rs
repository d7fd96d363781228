//! The verdict never depends on how the logs are laid out (issue 21): random runs of the
//! simulator (every fault variant) and of the threaded runtime, written as logs, then rewritten
//! — every line of every process shuffled together and dealt into any number of files, each
//! non-initiator's `record` moved before the marker receipt that caused it (with its own
//! marker-sends and receipts on other channels logged between, as another thread would), some processes
//! ordered by `time` instead of `seq` — give the same verdicts and findings, line for line (each
//! `FILE:LINE` read as the event logged there). 320 runs are drawn so that at least 256 are
//! compared: a variant that stops the simulator's run gives no logs.

#[path = "../../tests/common/mod.rs"]
#[allow(dead_code)]
mod sim;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::logs::{judge_files, Semantics};
use chandy_lamport::runtime::workload::{run, Workload};
use chandy_lamport::{Algorithm, Topology, Variant};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// A fresh, empty directory `model-interleavings-NAME-<random>`, removed (with its contents)
/// on drop.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("model-interleavings-{name}-")).tempdir().unwrap()
}

/// A run's logs (one file per process) in `dir`, or `None` when the variant stops the run.
fn logs(dir: &Path, topology: &Topology, variant: Variant, seed: u64, runtime: bool) -> Option<Vec<PathBuf>> {
    if runtime {
        let mut w = Workload::new(topology.clone(), 120, 2);
        (w.seed, w.variant, w.trace_out) = (seed, variant, Some(dir.to_path_buf()));
        // A variant's broken snapshot is the point; its logs are written all the same.
        let _ = run(&w);
        let files: Vec<PathBuf> = topology.names().iter().map(|n| dir.join(format!("{n}.jsonl"))).collect();
        return files.iter().all(|f| f.exists()).then_some(files);
    }
    let finished = sim::workload(topology, variant, seed).ok()?;
    Some(finished.write_logs(dir, topology).unwrap())
}

/// An event as logged, whatever its place: the line without `seq` and `time`.
fn key(line: &str) -> String {
    let mut v: Value = serde_json::from_str(line).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("seq");
    o.remove("time");
    v.to_string()
}

/// Every `FILE:LINE` in `text` replaced by the event logged there.
fn unlocate(text: &str, events: &HashMap<String, String>) -> String {
    let mut out = String::new();
    for word in text.split(' ') {
        let trimmed = word.trim_end_matches(|c: char| matches!(c, ',' | ':' | ')' | '"') || c.is_whitespace());
        let rest = &word[trimmed.len()..];
        match events.get(trimmed) {
            Some(event) => out.push_str(&format!("{event}{rest}")),
            None => out.push_str(word),
        }
        out.push(' ');
    }
    out
}

/// The verdicts and findings of `files` (`FILE:LINE`s read as events), or the error.
fn verdicts(dir: &Path, files: &[PathBuf]) -> String {
    let top = TopFile::read(&dir.join("topology.top")).unwrap();
    let topology = &top.topology;
    let mut events = HashMap::new();
    for f in files {
        for (i, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            events.insert(format!("{}:{}", f.display(), i + 1), key(line));
        }
    }
    let initial = top.counts().unwrap().iter().map(|&t| Bank::new(t)).collect();
    let text = match judge_files::<Bank>(topology, initial, files, &Semantics::interpreted()) {
        Ok(outcome) => {
            let mut v = serde_json::to_value(&outcome).unwrap();
            v.as_object_mut().unwrap().remove("files");
            serde_json::to_string_pretty(&v).unwrap()
        }
        Err(e) => format!("error: {e:#}"),
    };
    unlocate(&text, &events)
}

/// The logs rewritten: records moved before their marker receipts, some processes ordered by
/// time, all lines shuffled and dealt into `parts` files.
fn rewrite(dir: &Path, files: &[PathBuf], parts: usize, rng: &mut StdRng) -> Vec<PathBuf> {
    let mut all: Vec<String> = Vec::new();
    for f in files {
        let mut lines: Vec<Value> =
            std::fs::read_to_string(f).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let mut marked = std::collections::HashSet::new();
        for i in 0..lines.len() {
            let first_marker = lines[i]["kind"] == "marker-receive" && marked.insert(lines[i]["snapshot"].clone());
            let caused = i + 1 < lines.len()
                && lines[i + 1]["kind"] == "record"
                && lines[i + 1]["initiated"] == false
                && lines[i + 1]["snapshot"] == lines[i]["snapshot"];
            if first_marker && caused && rng.random_bool(0.5) {
                lines.swap(i, i + 1);
                // Another thread's lines logged between the record and its marker receipt:
                // its own marker-sends, and receipts on other channels (issue 53).
                let (snapshot, channel) = (lines[i + 1]["snapshot"].clone(), lines[i + 1]["channel"].clone());
                let mut k = i + 1;
                while k + 1 < lines.len() && rng.random_bool(0.5) {
                    let next = &lines[k + 1];
                    let own_marker = next["kind"] == "marker-send" && next["snapshot"] == snapshot;
                    let other_receipt = next["kind"] == "receive" && next["channel"] != channel;
                    if !(own_marker || other_receipt) {
                        break;
                    }
                    lines.swap(k, k + 1);
                    k += 1;
                }
            }
        }
        let timed = rng.random_bool(0.25);
        for (seq, line) in lines.iter_mut().enumerate() {
            let o = line.as_object_mut().unwrap();
            if timed {
                o.remove("seq");
                o.insert("time".into(), Value::from(1000.0 + 1.5 * seq as f64));
            } else {
                o.insert("seq".into(), Value::from(seq));
            }
            all.push(line.to_string());
        }
    }
    all.shuffle(rng);
    let mut texts = vec![String::new(); parts];
    for line in all {
        let t = &mut texts[rng.random_range(0..parts)];
        t.push_str(&line);
        t.push('\n');
    }
    let out: Vec<PathBuf> = (0..parts).map(|i| dir.join(format!("part{i}.jsonl"))).collect();
    for (path, text) in out.iter().zip(&texts) {
        std::fs::write(path, text).unwrap();
    }
    out
}

/// What the cases covered.
#[derive(Debug, Default)]
struct Covered {
    compared: usize,
    runtime: usize,
    violated: usize,
    skipped: usize,
}

#[test]
fn verdicts_do_not_depend_on_how_the_logs_are_laid_out() {
    let config = ProptestConfig { cases: 320, failure_persistence: None, ..ProptestConfig::default() };
    let covered = std::cell::RefCell::new(Covered::default());
    let strategy = (any::<u64>(), 0usize..64, any::<bool>(), 0u8..8, 1usize..=5, any::<u64>());
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&strategy, |(seed, variant, ring, runtime, parts, layout)| {
        let variants: Vec<Variant> = Variant::of(Algorithm::ChandyLamport).collect();
        let variant = variants[variant % variants.len()];
        let topology = if ring { Topology::ring(4).unwrap() } else { Topology::complete(3).unwrap() };
        let runtime = runtime == 0;
        let scratch = temp_dir(&format!("{seed}-{layout}"));
        let dir = scratch.path();
        let Some(files) = logs(dir, &topology, variant, seed, runtime) else {
            covered.borrow_mut().skipped += 1;
            return Ok(());
        };
        let before = verdicts(dir, &files);
        let mut rng = StdRng::seed_from_u64(layout);
        let rewritten = rewrite(dir, &files, parts, &mut rng);
        let after = verdicts(dir, &rewritten);
        let how = if runtime { "runtime" } else { "simulator" };
        prop_assert_eq!(&before, &after, "{} seed {} ({}), {} parts", variant, seed, how, parts);
        let mut c = covered.borrow_mut();
        c.compared += 1;
        c.runtime += usize::from(runtime);
        c.violated += usize::from(before.contains("\"exit_code\": 1"));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let c = covered.into_inner();
    eprintln!("{c:?}");
    // The cases compared real runs, of both drivers, correct and broken.
    assert!(c.compared >= 256 && c.runtime >= 15 && c.violated >= 30 && c.compared - c.violated >= 30, "{c:?}");
}
