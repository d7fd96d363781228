//! A check split into shards (`model check --shard I/N`): the key naming what shards must share,
//! and their results merged into one verdict (`model merge`).

use crate::model::config::Resolved;

use super::options::{CheckOptions, Strategy};
use super::report::{conclude, CheckResult, MergeInfo, MergedShard, PropertyResult, ShardInfo, Verdict};

/// The model crate's version, as shards record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A string naming everything that shapes a check's state space and its properties: the
/// application, the resolved configuration (houses, links, jars, sends, initiators, snapshots,
/// internal steps, theft, variant, property mode, and whatever else the configuration holds,
/// through a hash of all of it) and the checker's symmetry, depth bound and stop-on-failure.
/// Shards merge only when theirs are equal.
pub fn config_key(app: &str, cfg: &Resolved, symmetry: bool, depth: Option<usize>, stop: bool) -> String {
    let mut whole = cfg.clone();
    whole.warnings.clear();
    let t = &cfg.topology;
    let list = |v: Vec<String>| v.join(",");
    let initiators: Vec<String> =
        cfg.initiators.iter().enumerate().filter(|(_, &on)| on).map(|(i, _)| i.to_string()).collect();
    format!(
        "app={app} houses={} links={} tokens={} sends={} initiators={} snapshots={} internal={} theft={} \
         variant={} properties={} symmetry={symmetry} depth={} stop-on-failure={stop} config-hash={:016x}",
        t.len(),
        t.channels().len(),
        list(cfg.tokens.iter().map(u32::to_string).collect()),
        cfg.sends,
        list(initiators),
        cfg.snapshots,
        cfg.internal,
        cfg.theft,
        cfg.variant,
        cfg.mode,
        depth.map_or("none".to_string(), |d| d.to_string()),
        fnv1a(format!("{whole:?}").as_bytes()),
    )
}

/// FNV-1a: a hash that stays the same across builds and machines.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Merges shards' results, each with the name of its file, into one verdict: an always-property
/// fails if any shard has a counterexample (the shortest is kept, with its link); a
/// sometimes-property has an example if any shard has one; "holds" and "no example" only when
/// every shard searched its part to the end. The unique-state count is the sum over the shards
/// (which may overlap); the wall time is the slowest shard's. Fails, naming the file, on a
/// result that is not a shard's, shards of different configurations, versions or counts, an
/// index given twice; and on a missing shard.
pub fn merge(inputs: Vec<(String, CheckResult)>) -> Result<CheckResult, String> {
    let mut parts: Vec<(String, CheckResult, ShardInfo)> = Vec::new();
    for (file, result) in inputs {
        let Some(info) = result.shard.clone() else {
            return Err(format!(
                "{file}: not a shard's result (no \"shard\" object): write each with `model check --shard I/N --json`"
            ));
        };
        if let Some((first, _, f)) = parts.first() {
            if info.part.count != f.part.count {
                return Err(format!(
                    "{file}: shard {}/{}, but {first} is shard {}/{}: shards of one check share one count N",
                    info.part.index, info.part.count, f.part.index, f.part.count
                ));
            }
            if info.version != f.version {
                return Err(format!(
                    "{file}: written by model {}, but {first} by model {}: run every shard with the same build",
                    info.version, f.version
                ));
            }
            if info.config != f.config {
                return Err(format!(
                    "{file}: shard of a different configuration than {first}:\n  {file}: {}\n  {first}: {}",
                    info.config, f.config
                ));
            }
        }
        if info.part.index >= info.part.count {
            return Err(format!(
                "{file}: shard {}/{}: the index must be below the count",
                info.part.index, info.part.count
            ));
        }
        if let Some((other, _, _)) = parts.iter().find(|(_, _, f)| f.part.index == info.part.index) {
            return Err(format!("{file}: shard {}/{} again (also in {other})", info.part.index, info.part.count));
        }
        let names = |r: &CheckResult| r.properties.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        if let Some((first, r, _)) = parts.first() {
            if names(&result) != names(r) {
                return Err(format!("{file}: its properties differ from {first}'s"));
            }
        }
        parts.push((file, result, info));
    }
    let Some((_, _, first)) = parts.first() else {
        return Err("no shard results to merge".to_string());
    };
    let (count, split_depth, config, version, depth) =
        (first.part.count, first.part.split_depth, first.config.clone(), first.version.clone(), first.depth);
    let missing: Vec<String> = (0..count)
        .filter(|i| parts.iter().all(|(_, _, f)| f.part.index != *i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    match missing.len() {
        0 => {}
        1 => return Err(format!("missing shard {}: every shard's result is needed for a verdict", missing[0])),
        _ => {
            return Err(format!("missing shards {}: every shard's result is needed for a verdict", missing.join(", ")))
        }
    }
    parts.sort_by_key(|(_, _, f)| f.part.index);

    let exhaustive_all = parts.iter().all(|(_, r, _)| r.exhaustive);
    let mut properties = Vec::new();
    for (k, p) in parts[0].1.properties.iter().enumerate() {
        let best = parts
            .iter()
            .map(|(_, r, _)| &r.properties[k])
            .filter(|q| matches!(q.verdict, Verdict::Counterexample | Verdict::ExampleFound))
            .min_by_key(|q| q.path.as_ref().map_or(0, Vec::len));
        let sometimes = p.expectation == "sometimes";
        let verdict = match (sometimes, best.is_some(), exhaustive_all) {
            (true, true, _) => Verdict::ExampleFound,
            (true, false, true) => Verdict::NoExample,
            (true, false, false) => Verdict::NoExampleYet,
            (false, true, _) => Verdict::Counterexample,
            (false, false, true) => Verdict::Holds,
            (false, false, false) => Verdict::NoCounterexampleYet,
        };
        properties.push(PropertyResult {
            name: p.name.clone(),
            expectation: p.expectation.clone(),
            verdict,
            path: best.and_then(|q| q.path.clone()),
            link: best.and_then(|q| q.link.clone()),
        });
    }
    let decided = properties.iter().all(|p| !p.verdict.undecided() && p.path.is_some());
    let bounds: Vec<(usize, &str)> =
        parts.iter().filter_map(|(_, r, f)| r.bound.as_deref().map(|b| (f.part.index, b))).collect();
    let bound = if bounds.is_empty() {
        None
    } else if bounds.iter().all(|(_, b)| *b == bounds[0].1) {
        Some(bounds[0].1.to_string())
    } else if decided {
        Some("stopped once every property was decided".to_string())
    } else {
        Some(bounds.iter().map(|(i, b)| format!("shard {i}/{count}: {b}")).collect::<Vec<_>>().join("; "))
    };
    let shards = parts
        .iter()
        .map(|(file, r, f)| MergedShard {
            index: f.part.index,
            file: file.clone(),
            unique_states: r.unique_states,
            states: r.states,
            seconds: r.seconds,
            exhaustive: r.exhaustive,
            roots: f.part.roots,
        })
        .collect();
    let mut result = CheckResult {
        ok: false,
        exhaustive: bound.is_none(),
        bound,
        stopped: parts.iter().find_map(|(_, r, _)| r.stopped),
        unique_states: parts.iter().map(|(_, r, _)| r.unique_states).sum(),
        states: parts.iter().map(|(_, r, _)| r.states).sum(),
        max_depth: parts.iter().map(|(_, r, _)| r.max_depth).max().unwrap_or(0),
        seconds: parts.iter().map(|(_, r, _)| r.seconds).fold(0.0, f64::max),
        properties,
        summary: String::new(),
        exit_code: 0,
        shard: None,
        merged: Some(MergeInfo { count, split_depth, config, version, shards }),
    };
    let opts = CheckOptions { strategy: Strategy::Dfs, depth, ..CheckOptions::default() };
    conclude(&mut result, &opts);
    Ok(result)
}
