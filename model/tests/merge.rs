//! `model merge` checks each shard's file against itself and the others and refuses, exit 2
//! naming the file and the field, what no run of `model check --shard I/N --json` writes: shards
//! that disagree on the split, a shard whose roots or counts are impossible, an exit code or a
//! verdict its properties contradict, a discovery with no steps, and a file edited after the
//! shard wrote it (its digest). Each bad file is a real shard's file, edited; those meant to be
//! consistent but wrong get their digest recomputed (`model::check::shards::seal`), so that the
//! check at fault, not the digest, refuses them.

mod common;

use std::path::Path;

use common::{model, stderr};
use model::check::shards::{digest, seal};
use model::{CheckResult, Verdict};

fn temp_dir(name: &str) -> common::Scratch {
    common::temp_dir("merge", name)
}

/// The passing configuration: three processes, one send (21,752 states).
const PASSING: [&str; 2] = ["--sends", "1"];
/// A failing one: late-record's counterexamples.
const FAILING: [&str; 4] = ["--sends", "1", "--variant", "late-record"];

/// `model check CONFIG --shard I/4 --json` for I in 0..4, into `dir/shard-I.json`.
fn shards(dir: &Path, config: &[&str]) -> Vec<String> {
    (0..4)
        .map(|index| {
            let shard = format!("{index}/4");
            let mut args = vec!["check", "--json", "--threads", "1", "--shard", &shard];
            args.extend(config);
            let o = model(&args);
            assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&o));
            let path = dir.join(format!("shard-{index}.json"));
            std::fs::write(&path, &o.stdout).unwrap();
            path.display().to_string()
        })
        .collect()
}

fn read(file: &str) -> CheckResult {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// `file` read, changed by `change`, its digest recomputed (a consistent-looking file), written
/// beside it as `NAME-edited.json`.
fn edited(file: &str, change: impl FnOnce(&mut CheckResult)) -> String {
    let mut result = read(file);
    change(&mut result);
    seal(&mut result);
    let out = file.replace(".json", "-edited.json");
    std::fs::write(&out, serde_json::to_string(&result).unwrap()).unwrap();
    out
}

/// `model merge FILES` exits 2 with every one of `needles` on standard error.
fn refused(files: &[String], needles: &[&str]) {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let o = model(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}{}", String::from_utf8_lossy(&o.stdout));
    for needle in needles {
        assert!(err.contains(needle), "expected {needle:?} in {err}");
    }
}

/// Shard files with shard 1's replaced by `bad`.
fn with_shard_1(files: &[String], bad: &str) -> Vec<String> {
    let mut out = files.to_vec();
    out[1] = bad.to_string();
    out
}

#[test]
fn shards_disagreeing_on_the_split_depth_are_refused() {
    let dir = temp_dir("split-depth");
    let files = shards(&dir, &PASSING);
    let bad = edited(&files[1], |r| r.shard.as_mut().unwrap().part.split_depth += 1);
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: shard.split_depth: "), &files[0]]);
}

#[test]
fn shards_disagreeing_on_the_frontier_are_refused() {
    let dir = temp_dir("frontier");
    let files = shards(&dir, &PASSING);
    let bad = edited(&files[1], |r| r.shard.as_mut().unwrap().part.frontier += 4);
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: shard.frontier: ")]);
}

#[test]
fn a_shard_with_no_roots_and_no_states_is_refused() {
    let dir = temp_dir("roots");
    let files = shards(&dir, &PASSING);
    let bad = edited(&files[1], |r| {
        r.shard.as_mut().unwrap().part.roots = 0;
        r.unique_states = 0;
    });
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: shard.roots: 0, but shard 1/4 of a frontier of ")]);
    // Its roots right, but fewer states than them searched.
    let bad = edited(&files[1], |r| r.unique_states = 0);
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: unique_states: 0, fewer than the ")]);
}

#[test]
fn an_exit_code_its_verdicts_contradict_is_refused() {
    let dir = temp_dir("exit-code");
    let files = shards(&dir, &PASSING);
    let shard = read(&files[1]);
    assert!(shard.ok && shard.exit_code == 0, "{}", shard.summary);
    assert!(shard.properties.iter().filter(|p| p.expectation == "always").all(|p| p.verdict == Verdict::Holds));
    let bad = edited(&files[1], |r| {
        r.ok = false;
        r.exit_code = 1;
    });
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: exit_code: 1, but its verdicts give 0")]);
    let bad = edited(&files[1], |r| r.ok = false);
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: ok: false, but its verdicts give true")]);
}

#[test]
fn a_sometimes_property_that_holds_is_refused() {
    let dir = temp_dir("sometimes-holds");
    let files = shards(&dir, &PASSING);
    let mut name = String::new();
    let bad = edited(&files[1], |r| {
        let p = r.properties.iter_mut().find(|p| p.expectation == "sometimes").unwrap();
        p.verdict = Verdict::Holds;
        (p.path, p.link) = (None, None);
        name = p.name.clone();
    });
    refused(
        &with_shard_1(&files, &bad),
        &[&format!("{bad}: verdict: property {name:?}: a sometimes-property cannot be \"holds\"")],
    );
}

#[test]
fn an_always_property_with_an_example_is_refused() {
    let dir = temp_dir("always-example");
    let files = shards(&dir, &PASSING);
    let mut name = String::new();
    let bad = edited(&files[1], |r| {
        let p = r.properties.iter_mut().find(|p| p.expectation == "always").unwrap();
        p.verdict = Verdict::ExampleFound;
        p.path = Some(vec!["P0 initiates snapshot 0".to_string()]);
        name = p.name.clone();
    });
    refused(
        &with_shard_1(&files, &bad),
        &[&format!("{bad}: verdict: property {name:?}: an always-property cannot be \"example found\"")],
    );
}

#[test]
fn a_counterexample_with_no_steps_is_refused() {
    let dir = temp_dir("no-steps");
    let files = shards(&dir, &FAILING);
    let (i, name) = files
        .iter()
        .enumerate()
        .find_map(|(i, f)| {
            let r = read(f);
            r.properties.iter().find(|p| p.verdict == Verdict::Counterexample).map(|p| (i, p.name.clone()))
        })
        .expect("late-record has a counterexample in some shard");
    for path in [Some(vec![]), None] {
        let bad = edited(&files[i], |r| r.properties.iter_mut().find(|p| p.name == name).unwrap().path = path);
        let mut all = files.clone();
        all[i] = bad.clone();
        refused(&all, &[&format!("{bad}: path: property {name:?}: counterexample with no steps")]);
    }
}

#[test]
fn an_edited_file_is_refused_by_its_digest() {
    let dir = temp_dir("digest");
    let files = shards(&dir, &PASSING);
    let text = std::fs::read_to_string(&files[1]).unwrap();
    let d = read(&files[1]).shard.unwrap().digest.expect("a shard's file has a digest");
    assert_eq!(d.len(), 64, "SHA-256 in hex: {d}");
    assert_eq!(digest(&read(&files[1])), d, "the digest is recomputed from the file");
    // One count changed, the digest left as it was.
    let states = read(&files[1]).unique_states;
    let changed = text.replace(&format!("\"unique_states\":{states},"), &format!("\"unique_states\":{},", states + 1));
    assert_ne!(changed, text);
    let bad = files[1].replace(".json", "-edited.json");
    std::fs::write(&bad, changed).unwrap();
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: shard.digest: the content does not match its digest")]);
    // The digest taken out.
    let mut plain: serde_json::Value = serde_json::from_str(&text).unwrap();
    plain["shard"].as_object_mut().unwrap().remove("digest");
    let bad = files[1].replace(".json", "-no-digest.json");
    std::fs::write(&bad, plain.to_string()).unwrap();
    refused(&with_shard_1(&files, &bad), &[&format!("{bad}: shard.digest: missing")]);
}

#[test]
fn a_correct_merge_exits_0_with_the_single_runs_verdicts() {
    let dir = temp_dir("correct");
    let files = shards(&dir, &PASSING);
    // Read and written again with the digest recomputed, a file is the same to the merge.
    let resealed = with_shard_1(&files, &edited(&files[1], |_| {}));
    let mut single = vec!["check", "--json", "--threads", "1"];
    single.extend(PASSING);
    let o = model(&single);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let single: CheckResult = serde_json::from_slice(&o.stdout).unwrap();
    for files in [&files, &resealed] {
        let mut args = vec!["merge", "--json"];
        args.extend(files.iter().rev().map(String::as_str));
        let o = model(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let merged: CheckResult = serde_json::from_slice(&o.stdout).unwrap();
        let verdicts = |r: &CheckResult| r.properties.iter().map(|p| (p.name.clone(), p.verdict)).collect::<Vec<_>>();
        assert_eq!(verdicts(&merged), verdicts(&single));
        assert!(merged.ok && merged.summary.starts_with("all 9 properties hold (exhaustive, "), "{}", merged.summary);
        let info = merged.merged.unwrap();
        assert_eq!(info.shards.iter().map(|s| s.roots).sum::<usize>(), info.frontier);
        assert!(info.prefix_states > 0 && info.frontier > 0, "{info:?}");
        assert!(info.shards.iter().all(|s| s.digest.as_ref().is_some_and(|d| d.len() == 64)), "{info:?}");
    }
}

#[test]
fn a_shard_0_whose_prefix_decided_the_check_merges_without_its_roots() {
    // Under --stop-on-failure, double-marker fails in 3 steps, above the split depth of 16
    // shards: shard 0 searches no root (its states are its prefix's), and is no less a shard.
    let dir = temp_dir("prefix-decided");
    let files: Vec<String> = (0..16)
        .map(|index| {
            let shard = format!("{index}/16");
            let args = [
                "check",
                "--json",
                "--threads",
                "1",
                "--sends",
                "1",
                "--variant",
                "double-marker",
                "--stop-on-failure",
            ];
            let o = model(&[&args[..], &["--shard", &shard]].concat());
            assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
            let path = dir.join(format!("shard-{index}.json"));
            std::fs::write(&path, &o.stdout).unwrap();
            path.display().to_string()
        })
        .collect();
    let first = read(&files[0]);
    let part = first.shard.as_ref().unwrap().part;
    assert!(part.roots > 0 && first.unique_states < part.prefix_states + part.roots, "{part:?}");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(counterexample, 3 steps)"));
}
