//! A check split into shards (`model check --shard I/N`): the key naming what shards must share,
//! and their results merged into one verdict (`model merge`).

use crate::system::config::Resolved;

use super::options::{CheckOptions, Strategy};
use super::report::{conclude, CheckResult, MergeInfo, MergedShard, PropertyResult, ShardInfo, Verdict};

/// The model crate's version, as shards record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A string naming everything that shapes a check's state space and its properties: the
/// application, the resolved configuration (processes, links, jars, sends, initiators, snapshots,
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

/// The digest a shard's result carries in `shard.digest`: the SHA-256, in lowercase hex, of its
/// canonical JSON with `shard.digest` left out — the object `model check --json` prints, its keys
/// sorted at every level, no whitespace, numbers as serde_json writes them (floats in their
/// shortest round-trip form). `model merge` recomputes it from the file and refuses a mismatch:
/// a file edited after the shard wrote it. It is a check against edits and damage, not a
/// signature: whoever edits a file can recompute it (with this function, or [`seal`]).
pub fn digest(result: &CheckResult) -> String {
    use sha2::{Digest, Sha256};
    let mut unsealed = result.clone();
    if let Some(info) = unsealed.shard.as_mut() {
        info.digest = None;
    }
    let value = serde_json::to_value(&unsealed).expect("a check result serializes");
    let mut text = String::new();
    canonical(&value, &mut text);
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Sets a shard's `shard.digest` to its [`digest`] (does nothing to a result that is not a
/// shard's).
pub fn seal(result: &mut CheckResult) {
    let d = digest(result);
    if let Some(info) = result.shard.as_mut() {
        info.digest = Some(d);
    }
}

/// `value` as JSON with every object's keys sorted and no whitespace.
fn canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// How many frontier states shard `index` of `count` searches from, by the split rule of
/// [`split`](crate::engine::shard::split): the states `j < frontier` with `j·count/frontier ==
/// index`, that is `⌈(index+1)·frontier/count⌉ − ⌈index·frontier/count⌉`.
pub fn roots_of(index: usize, count: usize, frontier: usize) -> usize {
    let (f, n) = (frontier as u128, count.max(1) as u128);
    let ceil = |i: u128| (i * f).div_ceil(n);
    (ceil(index as u128 + 1) - ceil(index as u128)) as usize
}

/// Checks one shard's result against itself, naming `file` and the field at fault: a result
/// written by `model check --shard I/N --json` and left as it was. Its digest matches its
/// content ([`digest`]); its part is possible (index below the count, as many roots as the split
/// rule gives its index of the frontier, a prefix of at least one state a level); each property
/// is `always` or `sometimes` with a verdict of that kind (always: `holds`, `counterexample`,
/// `no_counterexample_yet`; sometimes: `example_found`, `no_example`, `no_example_yet`); a
/// counterexample or example has a path of at least one step and no other verdict has one;
/// `holds` and `no_example` only when the part was searched to the end (`exhaustive`, with no
/// `bound` and no `stopped`), the undecided verdicts only when it was not; `ok` and `exit_code`
/// are what the verdicts give; it searched at least its roots (and shard 0 its prefix) unless
/// the prefix alone decided the check. Returns its `shard` object.
pub fn check_shard(file: &str, result: &CheckResult) -> Result<ShardInfo, String> {
    let info = shard_info(file, result)?;
    check_digest(file, result)?;
    check_content(file, result, &info)?;
    Ok(info)
}

/// A result's `shard` object, or the error naming `file` that it has none.
fn shard_info(file: &str, result: &CheckResult) -> Result<ShardInfo, String> {
    result.shard.clone().ok_or_else(|| {
        format!("{file}: not a shard's result (no \"shard\" object): write each with `model check --shard I/N --json`")
    })
}

/// Whether a shard's result carries its own [`digest`] (`shard.digest`), naming `file` if not.
pub fn check_digest(file: &str, result: &CheckResult) -> Result<(), String> {
    let info = shard_info(file, result)?;
    match &info.digest {
        None => Err(format!(
            "{file}: shard.digest: missing: write each shard with `model check --shard I/N --json` of this build"
        )),
        Some(d) if *d != digest(result) => Err(format!(
            "{file}: shard.digest: the content does not match its digest: the file was edited or damaged after the \
             shard wrote it; run the shard again"
        )),
        Some(_) => Ok(()),
    }
}

/// [`check_shard`] but the digest: whether a shard's result (`info` its `shard` object) is
/// consistent in itself.
pub fn check_content(file: &str, result: &CheckResult, info: &ShardInfo) -> Result<(), String> {
    let part = &info.part;
    let bad = |field: &str, why: String| Err(format!("{file}: {field}: {why}"));
    if result.merged.is_some() {
        return bad("merged", "a merge's result, not a shard's: merge the shards' own files".into());
    }
    if part.count == 0 {
        return bad("shard.count", "0: a check splits into at least one shard".into());
    }
    if part.index >= part.count {
        return bad("shard.index", format!("shard {}/{}: the index must be below the count", part.index, part.count));
    }
    let want = roots_of(part.index, part.count, part.frontier);
    if part.roots != want {
        return bad(
            "shard.roots",
            format!(
                "{}, but shard {}/{} of a frontier of {} states searches from {want} of them (frontier states j with \
                 j·N/F = I)",
                part.roots, part.index, part.count, part.frontier
            ),
        );
    }
    if part.prefix_states < part.split_depth {
        return bad(
            "shard.prefix_states",
            format!(
                "{} states above split depth {}: every level above it holds at least one",
                part.prefix_states, part.split_depth
            ),
        );
    }
    if part.split_depth == 0 && part.prefix_states != 0 {
        return bad("shard.prefix_states", format!("{} states above split depth 0", part.prefix_states));
    }
    if result.exhaustive != result.bound.is_none() {
        return bad(
            "exhaustive",
            format!(
                "{} with bound {:?}: a part is exhaustive exactly when it has no bound",
                result.exhaustive, result.bound
            ),
        );
    }
    if result.exhaustive && result.stopped.is_some() {
        return bad("exhaustive", "true, but the run was stopped".into());
    }
    for p in &result.properties {
        let what = format!("property {:?}", p.name);
        let (discovery, undecided, decided) = match p.expectation.as_str() {
            "always" => (Verdict::Counterexample, Verdict::NoCounterexampleYet, Verdict::Holds),
            "sometimes" => (Verdict::ExampleFound, Verdict::NoExampleYet, Verdict::NoExample),
            other => return bad("expectation", format!("{what}: {other:?}: expected \"always\" or \"sometimes\"")),
        };
        let v = p.verdict;
        if v != discovery && v != undecided && v != decided {
            return bad(
                "verdict",
                format!(
                    "{what}: {} {}-property cannot be \"{}\" (its verdicts: {}, {}, {})",
                    if p.expectation == "always" { "an" } else { "a" },
                    p.expectation,
                    v.label(),
                    discovery.label(),
                    decided.label(),
                    undecided.label()
                ),
            );
        }
        if v == discovery {
            if p.path.as_ref().is_none_or(Vec::is_empty) {
                return bad("path", format!("{what}: {} with no steps", v.label()));
            }
        } else {
            if p.path.is_some() || p.link.is_some() {
                return bad("path", format!("{what}: \"{}\" with a path: only a discovery has one", v.label()));
            }
            if v == undecided && result.exhaustive {
                return bad("verdict", format!("{what}: \"{}\" in an exhaustive part", v.label()));
            }
            if v == decided && !result.exhaustive {
                return bad("verdict", format!("{what}: \"{}\" in a part not searched to the end", v.label()));
            }
        }
    }
    let mut expected = result.clone();
    conclude(&mut expected, &CheckOptions { strategy: Strategy::Dfs, depth: info.depth, ..CheckOptions::default() });
    if result.exit_code != expected.exit_code {
        return bad("exit_code", format!("{}, but its verdicts give {}", result.exit_code, expected.exit_code));
    }
    if result.ok != expected.ok {
        return bad("ok", format!("{}, but its verdicts give {}", result.ok, expected.ok));
    }
    // Shard 0 skips its roots when the prefix alone decided every property (or failed one under
    // --stop-on-failure); its part then is not exhaustive.
    let skipped = part.index == 0
        && !result.exhaustive
        && (result.properties.iter().all(|p| p.path.is_some())
            || result.properties.iter().any(|p| p.verdict == Verdict::Counterexample));
    let owned = if part.index == 0 { part.prefix_states } else { 0 } + if skipped { 0 } else { part.roots };
    if result.unique_states < owned {
        return bad(
            "unique_states",
            format!(
                "{}, fewer than the {owned} states the shard searches from ({} roots{})",
                result.unique_states,
                part.roots,
                if part.index == 0 { format!(" and {} prefix states", part.prefix_states) } else { String::new() }
            ),
        );
    }
    Ok(())
}

/// Merges shards' results, each with the name of its file, into one verdict: an always-property
/// fails if any shard has a counterexample (the shortest is kept, with its link); a
/// sometimes-property has an example if any shard has one; "holds" and "no example" only when
/// every shard searched its part to the end. The unique-state count is the sum over the shards
/// (which may overlap); the wall time is the slowest shard's. Fails, naming the file and the
/// field, on a result that is not a shard's or not consistent in itself ([`check_shard`]: its
/// digest, its part, its verdicts, its exit code, its counts), on shards of different
/// configurations, versions, counts, depth bounds, splits (split depth, prefix, frontier) or
/// properties, an index given twice, and roots that do not add up to the frontier; and on a
/// missing shard.
pub fn merge(inputs: Vec<(String, CheckResult)>) -> Result<CheckResult, String> {
    let mut parts: Vec<(String, CheckResult, ShardInfo)> = Vec::new();
    for (file, result) in inputs {
        let info = shard_info(&file, &result)?;
        check_digest(&file, &result)?;
        if let Some((first, r, f)) = parts.first() {
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
            let show = |d: Option<usize>| d.map_or("none".to_string(), |d| d.to_string());
            let shared = [
                ("depth", show(info.depth), show(f.depth)),
                ("split_depth", info.part.split_depth.to_string(), f.part.split_depth.to_string()),
                ("prefix_states", info.part.prefix_states.to_string(), f.part.prefix_states.to_string()),
                ("frontier", info.part.frontier.to_string(), f.part.frontier.to_string()),
            ];
            for (field, mine, theirs) in shared {
                if mine != theirs {
                    return Err(format!(
                        "{file}: shard.{field}: {mine}, but {theirs} in {first}: the shards of one check agree \
                         on it (the same split, from the same prefix)"
                    ));
                }
            }
            let names = |r: &CheckResult| {
                r.properties.iter().map(|p| (p.name.clone(), p.expectation.clone())).collect::<Vec<_>>()
            };
            if names(&result) != names(r) {
                return Err(format!("{file}: properties: its properties differ from {first}'s"));
            }
        }
        check_content(&file, &result, &info)?;
        if let Some((other, _, _)) = parts.iter().find(|(_, _, f)| f.part.index == info.part.index) {
            return Err(format!("{file}: shard {}/{} again (also in {other})", info.part.index, info.part.count));
        }
        parts.push((file, result, info));
    }
    let Some((_, _, first)) = parts.first() else {
        return Err("no shard results to merge".to_string());
    };
    let (prefix_states, frontier) = (first.part.prefix_states, first.part.frontier);
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
    // Each shard's roots are its block of the frontier (checked above), so together they are
    // the frontier; checked again as a whole.
    let roots: usize = parts.iter().map(|(_, _, f)| f.part.roots).sum();
    if roots != frontier {
        let each: Vec<String> = parts.iter().map(|(file, _, f)| format!("{file}: {}", f.part.roots)).collect();
        return Err(format!(
            "shard.roots: the shards searched from {roots} frontier states together ({}), but the frontier holds \
             {frontier}",
            each.join(", ")
        ));
    }

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
            digest: f.digest.clone(),
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
        tallies: None,
        shard: None,
        merged: Some(MergeInfo { count, split_depth, prefix_states, frontier, config, version, shards }),
        distributed: None,
    };
    let opts = CheckOptions { strategy: Strategy::Dfs, depth, ..CheckOptions::default() };
    conclude(&mut result, &opts);
    Ok(result)
}
