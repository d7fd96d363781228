//! A check split into shards (`model check --shard I/N`) and merged (`model merge`) gives the
//! single run's verdicts, property by property: for every fault variant and for the correct
//! algorithm on a few configurations, with and without symmetry. Bad `--shard` values and bad
//! merges exit 2 naming the flag or the file; four shards run locally through GNU parallel.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::Variant;
use common::{bad_input, config, model, stderr, verdicts};
use model::check::shards::merge;
use model::engine::dfs::Limits;
use model::engine::shard::{split, ShardSpec};
use model::system::properties::ACCEPTS;
use model::{
    check, CheckOptions, CheckResult, Config, InitiatorSpec, Mode, SnapshotModel, Strategy, TopologySpec, Verdict,
};

fn options(shard: Option<ShardSpec>, symmetry: bool) -> CheckOptions {
    CheckOptions { strategy: Strategy::Dfs, threads: 2, symmetry, shard, ..CheckOptions::default() }
}

fn run<A: Spec>(c: &Config, shard: Option<ShardSpec>, symmetry: bool) -> CheckResult {
    let model = SnapshotModel::<A>::new(c.resolve().expect("valid configuration"));
    check(model, &options(shard, symmetry), None).expect("options fit the model")
}

/// Shards `0..n` of `n`, each checked on its own (a fresh model, as a separate job would), then
/// merged.
fn sharded<A: Spec>(c: &Config, n: usize, symmetry: bool) -> (Vec<CheckResult>, CheckResult) {
    let shards: Vec<CheckResult> =
        (0..n).map(|index| run::<A>(c, Some(ShardSpec { index, count: n }), symmetry)).collect();
    let inputs = shards.iter().enumerate().map(|(i, r)| (format!("shard-{i}.json"), r.clone())).collect();
    let merged = merge(inputs).expect("the shards merge");
    (shards, merged)
}

/// Splits `c` in four and checks that the merge has the single run's verdicts, and that the
/// shards together searched at least as many states as the single run.
fn same_verdicts<A: Spec>(c: &Config, symmetry: bool) -> (CheckResult, Vec<CheckResult>, CheckResult) {
    let single = run::<A>(c, None, symmetry);
    let (shards, merged) = sharded::<A>(c, 4, symmetry);
    let what = format!("{} {:?}", c.variant, c);
    assert_eq!(verdicts(&merged), verdicts(&single), "{what}");
    assert_eq!(merged.exit_code, single.exit_code, "{what}: {} vs {}", merged.summary, single.summary);
    for p in merged.properties.iter().filter(|p| p.path.is_some()) {
        assert!(p.link.as_ref().unwrap().starts_with("http://127.0.0.1:3000/#/steps/0/"), "{what}");
    }
    if single.exhaustive {
        assert!(
            merged.unique_states >= single.unique_states,
            "{what}: {} < {}",
            merged.unique_states,
            single.unique_states
        );
    }
    let info = merged.merged.as_ref().unwrap();
    assert_eq!(info.count, 4);
    assert_eq!(info.shards.iter().map(|s| s.unique_states).sum::<usize>(), merged.unique_states);
    assert_eq!(info.shards.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
    (single, shards, merged)
}

/// The configuration each variant needs (as in tests/variants.rs): 3 processes, complete graph,
/// 1 send, one snapshot by process 0; two sends or two snapshots for two of them.
fn variant_config(variant: Variant) -> Config {
    let mut c = Config { variant, ..config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0])) };
    match variant {
        Variant::RecordsReversed => c.sends = 2,
        Variant::SwapRecord => c.snapshots = 2,
        _ => {}
    }
    c
}

#[test]
fn every_variant_split_in_four_and_merged_keeps_the_single_runs_verdicts() {
    for variant in Variant::of(chandy_lamport::Algorithm::ChandyLamport) {
        let (single, _, merged) = same_verdicts::<Bank>(&variant_config(variant), false);
        if variant == Variant::None {
            assert!(merged.ok && single.ok, "{}", merged.summary);
        } else {
            assert!(!merged.ok, "{variant}: {}", merged.summary);
            assert_eq!(merged.exit_code, 1, "{variant}");
        }
    }
}

#[test]
fn the_correct_algorithm_split_in_four_keeps_its_verdicts() {
    // The default job (bank, full properties, 3 processes, 2 sends), its basic mode, and orders
    // on a ring.
    let full = config(3, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0]));
    let (single, shards, merged) = same_verdicts::<Bank>(&full, false);
    assert!(single.ok && merged.ok, "{}", merged.summary);
    assert_eq!(single.unique_states, 3_270_737);
    assert!(merged.summary.starts_with("all 9 properties hold (exhaustive, "), "{}", merged.summary);
    assert!(merged.summary.ends_with(" states explored across 4 shards)"), "{}", merged.summary);
    // Every shard searched from some frontier states; the prefix is the same in each.
    for s in &shards {
        let info = s.shard.as_ref().unwrap();
        assert!(info.part.roots > 0 && info.part.frontier >= 16, "{info:?}");
        assert_eq!(info.part.split_depth, shards[0].shard.as_ref().unwrap().part.split_depth);
    }
    let basic = Config { mode: Mode::Basic, ..full.clone() };
    let (single, _, merged) = same_verdicts::<Bank>(&basic, false);
    assert!(single.ok && merged.ok, "{}", merged.summary);
    let ring = config(3, TopologySpec::Ring, 2, 1, InitiatorSpec::Only(vec![0]));
    let (single, _, merged) = same_verdicts::<Orders>(&ring, false);
    assert!(single.ok && merged.ok, "{}", merged.summary);
}

#[test]
fn one_shard_is_the_whole_check() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    let single = run::<Bank>(&c, None, false);
    let whole = run::<Bank>(&c, Some(ShardSpec { index: 0, count: 1 }), false);
    assert_eq!(whole.unique_states, single.unique_states);
    assert_eq!(verdicts(&whole), verdicts(&single));
    assert_eq!(whole.max_depth, single.max_depth);
}

#[test]
fn symmetry_split_in_four_keeps_the_verdicts_and_a_fault() {
    let any = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Any);
    let (single, _, merged) = same_verdicts::<Bank>(&any, true);
    assert!(single.ok && merged.ok, "{}", merged.summary);
    // Reduced, as the single reduced run is (53,536 states without symmetry).
    assert!(merged.unique_states < 53_536, "{}", merged.unique_states);
    let late = Config { variant: Variant::LateRecord, ..any };
    let (_, _, merged) = same_verdicts::<Bank>(&late, true);
    assert_eq!(merged.exit_code, 1);
}

#[test]
fn every_shard_computes_the_same_prefix_and_the_frontier_is_partitioned() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    let model = SnapshotModel::<Bank>::new(c.resolve().unwrap());
    let n = 5;
    let splits: Vec<_> =
        (0..n).map(|index| split(&model, ShardSpec { index, count: n }, Limits::default(), None)).collect();
    let first = &splits[0];
    assert!(first.frontier >= 4 * n, "{}", first.frontier);
    let mut paths = Vec::new();
    for s in &splits {
        assert_eq!(
            (s.depth, s.prefix_states, s.frontier, s.seen.len()),
            (first.depth, first.prefix_states, first.frontier, first.seen.len())
        );
        for r in &s.roots {
            assert_eq!(r.path.len(), s.depth);
            paths.push(r.path.clone());
        }
    }
    // Every frontier state goes to exactly one shard.
    assert_eq!(paths.len(), first.frontier);
    paths.sort_by_key(|p| format!("{p:?}"));
    paths.dedup();
    assert_eq!(paths.len(), first.frontier);
    // Only shard 0 judges the prefix.
    assert!(splits[1..].iter().all(|s| s.found.is_empty()));
}

#[test]
fn a_counterexample_above_the_split_depth_is_shard_0s() {
    // double-marker fails acceptance in 3 steps, above the split depth of 64 shards.
    let c = variant_config(Variant::DoubleMarker);
    let (shards, merged) = sharded::<Bank>(&c, 64, false);
    assert!(shards[0].shard.as_ref().unwrap().part.split_depth > 3);
    let accepts = |r: &CheckResult| r.properties.iter().find(|p| p.name == ACCEPTS).unwrap().clone();
    assert_eq!(accepts(&shards[0]).verdict, Verdict::Counterexample);
    assert_eq!(accepts(&shards[0]).path.unwrap().len(), 3);
    assert_eq!(accepts(&merged).path.unwrap().len(), 3);
}

#[test]
fn a_bounded_split_check_is_undecided_like_the_single_run() {
    let c = config(3, TopologySpec::Complete, 1, 1, InitiatorSpec::Only(vec![0]));
    let model = SnapshotModel::<Bank>::new(c.resolve().unwrap());
    let bounded = |shard| CheckOptions { depth: Some(3), ..options(shard, false) };
    let single = check(model, &bounded(None), None).unwrap();
    let shards: Vec<(String, CheckResult)> = (0..4)
        .map(|index| {
            let model = SnapshotModel::<Bank>::new(c.resolve().unwrap());
            (format!("{index}"), check(model, &bounded(Some(ShardSpec { index, count: 4 })), None).unwrap())
        })
        .collect();
    let merged = merge(shards).unwrap();
    assert_eq!(single.exit_code, 3);
    assert_eq!(merged.exit_code, 3, "{}", merged.summary);
    assert_eq!(verdicts(&merged), verdicts(&single));
    assert!(merged.summary.contains("to depth 3"), "{}", merged.summary);
}

// The command.

fn temp_dir(name: &str) -> common::Scratch {
    common::temp_dir("shard", name)
}

const SMALL: [&str; 6] = ["--procs", "3", "--sends", "1", "--variant", "late-record"];

/// `model check SMALL --shard I/N --json` into `dir/shard-I.json`, with `extra` flags.
fn shard_file(dir: &Path, index: usize, count: usize, extra: &[&str]) -> String {
    let shard = format!("{index}/{count}");
    let mut args = vec!["check", "--json", "--threads", "1", "--shard", &shard];
    args.extend(SMALL);
    args.extend(extra);
    let o = model(&args);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("shard {shard}: split depth")), "{}", stderr(&o));
    let path = dir.join(format!("shard-{index}-of-{count}{}.json", extra.join("")));
    std::fs::write(&path, &o.stdout).unwrap();
    path.display().to_string()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn shard_json_files_merge_into_the_single_runs_verdict() {
    let dir = temp_dir("merge");
    let files: Vec<String> = (0..4).map(|i| shard_file(&dir, i, 4, &[])).collect();
    let shard = json(&model(&[
        "check",
        "--json",
        "--shard",
        "2/4",
        "--threads",
        "1",
        SMALL[0],
        SMALL[1],
        SMALL[2],
        SMALL[3],
        SMALL[4],
        SMALL[5],
    ]));
    let info = &shard["shard"];
    assert_eq!((info["index"].as_u64(), info["count"].as_u64()), (Some(2), Some(4)));
    assert!(info["split_depth"].as_u64().unwrap() > 0 && info["roots"].as_u64().unwrap() > 0, "{info}");
    let config = info["config"].as_str().unwrap();
    assert!(config.contains("variant=late-record") && config.contains("sends=1"), "{config}");
    assert_eq!(info["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));

    let mut single_args = vec!["check", "--json", "--threads", "1"];
    single_args.extend(SMALL);
    let single = json(&model(&single_args));
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().rev().map(String::as_str));
    let o = model(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let merged = json(&o);
    let verdicts = |v: &serde_json::Value| -> Vec<(String, String)> {
        v["properties"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["name"].as_str().unwrap().to_string(), p["verdict"].as_str().unwrap().to_string()))
            .collect()
    };
    assert_eq!(verdicts(&merged), verdicts(&single));
    assert_eq!(merged["exit_code"], 1);
    let each = merged["merged"]["shards"].as_array().unwrap();
    assert_eq!(each.len(), 4);
    let sum: u64 = each.iter().map(|s| s["unique_states"].as_u64().unwrap()).sum();
    assert_eq!(merged["unique_states"].as_u64(), Some(sum));
    assert!(sum >= single["unique_states"].as_u64().unwrap());

    // The table: the same as check's, with the states explored across shards.
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("nothing crosses the cut inward") && out.contains("explore: http://127.0.0.1:3000/#/steps/0/"),
        "{out}"
    );
    assert!(out.contains("states explored across shards") && out.contains("shard 3: "), "{out}");
    assert!(out.lines().last().unwrap().contains("explored across 4 shards"), "{out}");
}

#[test]
fn bad_shard_values_exit_2_naming_the_flag() {
    bad_input(&["check", "--shard", "4/4"], "--shard");
    bad_input(&["check", "--shard", "4/4"], "the shard index must be below the count");
    bad_input(&["check", "--shard", "0/0"], "the shard count N must be at least 1");
    bad_input(&["check", "--shard", "2"], "expected I/N");
    bad_input(&["check", "--shard", "a/4"], "--shard");
    bad_input(&["check", "--shard=-1/4"], "--shard");
    bad_input(&["check", "--shard", "0/2", "--strategy", "bfs"], "--shard 0/2 splits an exhaustive depth-first search");
    bad_input(&["check", "--shard", "0/2", "--strategy", "simulation"], "not --strategy simulation");
}

#[test]
fn bad_merges_exit_2_naming_the_file() {
    let dir = temp_dir("bad");
    let s: Vec<String> = (0..3).map(|i| shard_file(&dir, i, 3, &[])).collect();
    let (s0, s1, s2) = (s[0].as_str(), s[1].as_str(), s[2].as_str());
    bad_input(&["merge", s0, s2], "missing shard 1/3");
    bad_input(&["merge", s0], "missing shards 1/3, 2/3");
    bad_input(&["merge", s0, s1, s2, s1], &format!("{s1}: shard 1/3 again"));
    // Another configuration (a depth bound), another count.
    let bounded = shard_file(&dir, 1, 3, &["--depth", "30"]);
    bad_input(&["merge", s0, &bounded, s2], &format!("{bounded}: shard of a different configuration than {s0}"));
    let other = shard_file(&dir, 1, 2, &[]);
    bad_input(&["merge", s0, &other], &format!("{other}: shard 1/2, but {s0} is shard 0/3"));
    // Not a shard's result, not JSON, no file.
    let plain = dir.join("plain.json");
    let mut args = vec!["check", "--json", "--threads", "1"];
    args.extend(SMALL);
    std::fs::write(&plain, model(&args).stdout).unwrap();
    let plain = plain.display().to_string();
    bad_input(&["merge", s0, &plain], &format!("{plain}: not a shard's result"));
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{\"ok\": tru").unwrap();
    let garbage = garbage.display().to_string();
    bad_input(&["merge", &garbage, s1], &format!("{garbage}: not a result of `model check --shard I/N --json`"));
    bad_input(&["merge", s0, "/nonexistent/shard.json"], "/nonexistent/shard.json: cannot read");
    bad_input(&["merge"], "FILES");
}

/// Whether `parallel` on PATH is GNU parallel (moreutils has another program of that name).
fn gnu_parallel() -> Result<(), String> {
    match Command::new("parallel").arg("--version").output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("GNU parallel") => Ok(()),
        Ok(_) => Err("`parallel` on PATH is not GNU parallel (moreutils'?)".into()),
        Err(e) => Err(format!("GNU parallel is not on PATH ({e})")),
    }
}

#[test]
fn four_shards_run_locally_with_gnu_parallel_and_merge() {
    if let Err(why) = gnu_parallel() {
        panic!("{why}: install the Debian package `parallel` (scripts/test-all does, as root with apt-get)");
    }
    let dir = temp_dir("parallel");
    let out = dir.join("shard-{}.json").display().to_string();
    let bin = env!("CARGO_BIN_EXE_model");
    // The README's recipe: one job per shard, two at a time.
    let command = format!("{bin} check --procs 3 --sends 1 --threads 1 --shard {{}}/4 --json > {out}");
    let o = Command::new("parallel")
        .args(["--will-cite", "--jobs", "2", &command, ":::", "0", "1", "2", "3"])
        .output()
        .expect("run parallel");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files: Vec<String> = (0..4).map(|i| dir.join(format!("shard-{i}.json")).display().to_string()).collect();
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let o = model(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let merged = json(&o);
    let single = json(&model(&["check", "--procs", "3", "--sends", "1", "--json"]));
    assert_eq!(merged["properties"].as_array().unwrap().len(), single["properties"].as_array().unwrap().len());
    assert_eq!(merged["ok"], true);
    assert!(merged["summary"].as_str().unwrap().starts_with("all 9 properties hold (exhaustive, "), "{merged}");
}
