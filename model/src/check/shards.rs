//! A check split into shards (`model check --shard I/N`): the key naming what shards must share,
//! and their results merged into one verdict (`model merge`).

use std::fmt;

use thiserror::Error;

use crate::system::config::Resolved;
use crate::system::setting::{Names, Setting, Wording};

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
pub fn check_shard(file: &str, result: &CheckResult) -> Result<ShardInfo, ShardError> {
    let info = shard_info(file, result)?;
    check_digest(file, result)?;
    check_content(file, result, &info)?;
    Ok(info)
}

/// A result's `shard` object, or the error naming `file` that it has none.
fn shard_info(file: &str, result: &CheckResult) -> Result<ShardInfo, ShardError> {
    result.shard.clone().ok_or_else(|| ShardError::NotAShard { file: file.to_string() })
}

/// Whether a shard's result carries its own [`digest`] (`shard.digest`), naming `file` if not.
pub fn check_digest(file: &str, result: &CheckResult) -> Result<(), ShardError> {
    let info = shard_info(file, result)?;
    match &info.digest {
        None => Err(ShardError::NoDigest { file: file.to_string() }),
        Some(d) if *d != digest(result) => Err(ShardError::DigestMismatch { file: file.to_string() }),
        Some(_) => Ok(()),
    }
}

/// [`check_shard`] but the digest: whether a shard's result (`info` its `shard` object) is
/// consistent in itself.
pub fn check_content(file: &str, result: &CheckResult, info: &ShardInfo) -> Result<(), ShardError> {
    content(result, info).map_err(|problem| ShardError::Content { file: file.to_string(), problem })
}

/// [`check_content`]'s problem, if any.
fn content(result: &CheckResult, info: &ShardInfo) -> Result<(), ContentProblem> {
    let part = &info.part;
    if result.merged.is_some() {
        return Err(ContentProblem::Merged);
    }
    if part.count == 0 {
        return Err(ContentProblem::NoShards);
    }
    if part.index >= part.count {
        return Err(ContentProblem::Index { index: part.index, count: part.count });
    }
    let want = roots_of(part.index, part.count, part.frontier);
    if part.roots != want {
        return Err(ContentProblem::Roots {
            roots: part.roots,
            index: part.index,
            count: part.count,
            frontier: part.frontier,
            want,
        });
    }
    if part.prefix_states < part.split_depth {
        return Err(ContentProblem::Prefix { prefix_states: part.prefix_states, split_depth: part.split_depth });
    }
    if part.split_depth == 0 && part.prefix_states != 0 {
        return Err(ContentProblem::PrefixAtZero(part.prefix_states));
    }
    if result.exhaustive != result.bound.is_none() {
        return Err(ContentProblem::Exhaustive { exhaustive: result.exhaustive, bound: result.bound.clone() });
    }
    if result.exhaustive && result.stopped.is_some() {
        return Err(ContentProblem::Stopped);
    }
    for p in &result.properties {
        let property = || p.name.clone();
        let Some((discovery, undecided, decided)) = verdicts_of(&p.expectation) else {
            return Err(ContentProblem::Expectation { property: property(), expectation: p.expectation.clone() });
        };
        let verdict = p.verdict;
        if verdict != discovery && verdict != undecided && verdict != decided {
            return Err(ContentProblem::Verdict { property: property(), expectation: p.expectation.clone(), verdict });
        }
        if verdict == discovery {
            if p.path.as_ref().is_none_or(Vec::is_empty) {
                return Err(ContentProblem::NoSteps { property: property(), verdict });
            }
        } else {
            if p.path.is_some() || p.link.is_some() {
                return Err(ContentProblem::Path { property: property(), verdict });
            }
            if verdict == undecided && result.exhaustive {
                return Err(ContentProblem::Undecided { property: property(), verdict });
            }
            if verdict == decided && !result.exhaustive {
                return Err(ContentProblem::Decided { property: property(), verdict });
            }
        }
    }
    let mut expected = result.clone();
    conclude(&mut expected, &CheckOptions { strategy: Strategy::Dfs, depth: info.depth, ..CheckOptions::default() });
    if result.exit_code != expected.exit_code {
        return Err(ContentProblem::ExitCode { given: result.exit_code, expected: expected.exit_code });
    }
    if result.ok != expected.ok {
        return Err(ContentProblem::Ok { given: result.ok, expected: expected.ok });
    }
    // Shard 0 skips its roots when the prefix alone decided every property (or failed one under
    // --stop-on-failure); its part then is not exhaustive.
    let skipped = part.index == 0
        && !result.exhaustive
        && (result.properties.iter().all(|p| p.path.is_some())
            || result.properties.iter().any(|p| p.verdict == Verdict::Counterexample));
    let owned = if part.index == 0 { part.prefix_states } else { 0 } + if skipped { 0 } else { part.roots };
    if result.unique_states < owned {
        return Err(ContentProblem::UniqueStates {
            unique_states: result.unique_states,
            owned,
            roots: part.roots,
            index: part.index,
            prefix_states: part.prefix_states,
        });
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
pub fn merge(inputs: Vec<(String, CheckResult)>) -> Result<CheckResult, ShardError> {
    let mut parts: Vec<(String, CheckResult, ShardInfo)> = Vec::new();
    for (file, result) in inputs {
        let info = shard_info(&file, &result)?;
        check_digest(&file, &result)?;
        if let Some((first, r, f)) = parts.first() {
            if info.part.count != f.part.count {
                return Err(ShardError::Count {
                    file,
                    shard: (info.part.index, info.part.count),
                    first: first.clone(),
                    first_shard: (f.part.index, f.part.count),
                });
            }
            if info.version != f.version {
                return Err(ShardError::Version {
                    file,
                    version: info.version,
                    first: first.clone(),
                    first_version: f.version.clone(),
                });
            }
            if info.config != f.config {
                return Err(ShardError::Config {
                    file,
                    config: info.config,
                    first: first.clone(),
                    first_config: f.config.clone(),
                });
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
                    return Err(ShardError::Split { file, field, mine, theirs, first: first.clone() });
                }
            }
            let names = |r: &CheckResult| {
                r.properties.iter().map(|p| (p.name.clone(), p.expectation.clone())).collect::<Vec<_>>()
            };
            if names(&result) != names(r) {
                return Err(ShardError::Properties { file, first: first.clone() });
            }
        }
        check_content(&file, &result, &info)?;
        if let Some((other, _, _)) = parts.iter().find(|(_, _, f)| f.part.index == info.part.index) {
            return Err(ShardError::Again { file, shard: (info.part.index, info.part.count), other: other.clone() });
        }
        parts.push((file, result, info));
    }
    let Some((_, _, first)) = parts.first() else {
        return Err(ShardError::Nothing);
    };
    let (prefix_states, frontier) = (first.part.prefix_states, first.part.frontier);
    let (count, split_depth, config, version, depth) =
        (first.part.count, first.part.split_depth, first.config.clone(), first.version.clone(), first.depth);
    let missing: Vec<String> = (0..count)
        .filter(|i| parts.iter().all(|(_, _, f)| f.part.index != *i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing(missing));
    }
    parts.sort_by_key(|(_, _, f)| f.part.index);
    // Each shard's roots are its block of the frontier (checked above), so together they are
    // the frontier; checked again as a whole.
    let roots: usize = parts.iter().map(|(_, _, f)| f.part.roots).sum();
    if roots != frontier {
        let each = parts.iter().map(|(file, _, f)| (file.clone(), f.part.roots)).collect();
        return Err(ShardError::Roots { roots, each, frontier });
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

/// Why a file is not a shard's result that merges, or why shards' results do not merge. Every
/// error about one file names it (`file`).
#[derive(Debug, Error)]
pub enum ShardError {
    /// No `shard` object: not a shard's result.
    NotAShard {
        /// The file.
        file: String,
    },
    /// No `shard.digest`.
    NoDigest {
        /// The file.
        file: String,
    },
    /// `shard.digest` does not match the content.
    DigestMismatch {
        /// The file.
        file: String,
    },
    /// A result not consistent in itself.
    Content {
        /// The file.
        file: String,
        /// What is wrong, naming the field.
        problem: ContentProblem,
    },
    /// Shards of different counts `N`.
    Count {
        /// The file.
        file: String,
        /// Its `I/N`.
        shard: (usize, usize),
        /// The first file.
        first: String,
        /// The first file's `I/N`.
        first_shard: (usize, usize),
    },
    /// Shards written by different builds.
    Version {
        /// The file.
        file: String,
        /// Its version.
        version: String,
        /// The first file.
        first: String,
        /// The first file's version.
        first_version: String,
    },
    /// Shards of different configurations.
    Config {
        /// The file.
        file: String,
        /// Its configuration key.
        config: String,
        /// The first file.
        first: String,
        /// The first file's configuration key.
        first_config: String,
    },
    /// Shards of different splits or depth bounds.
    Split {
        /// The file.
        file: String,
        /// The field of `shard` that differs (`depth`, `split_depth`, `prefix_states`, `frontier`).
        field: &'static str,
        /// Its value there.
        mine: String,
        /// Its value in the first file.
        theirs: String,
        /// The first file.
        first: String,
    },
    /// Shards with different properties.
    Properties {
        /// The file.
        file: String,
        /// The first file.
        first: String,
    },
    /// A shard given twice.
    Again {
        /// The file.
        file: String,
        /// Its `I/N`.
        shard: (usize, usize),
        /// The other file with that shard.
        other: String,
    },
    /// Nothing to merge.
    Nothing,
    /// Shards missing (`I/N` each).
    Missing(Vec<String>),
    /// Roots that do not add up to the frontier.
    Roots {
        /// The roots of all shards together.
        roots: usize,
        /// Each file's roots.
        each: Vec<(String, usize)>,
        /// The frontier.
        frontier: usize,
    },
}

/// How to write a shard's result: the command, or the option.
fn write_shards(names: Names) -> String {
    match names {
        Names::Flags => format!("`model check {} I/N --json`", Setting::Shard.flag()),
        Names::Fields => format!("the JSON of a check with `{}` set", Setting::Shard.field()),
    }
}

impl Wording for ShardError {
    fn write(&self, f: &mut fmt::Formatter<'_>, names: Names) -> fmt::Result {
        match self {
            ShardError::NotAShard { file } => {
                write!(f, "{file}: not a shard's result (no \"shard\" object): write each with {}", write_shards(names))
            }
            ShardError::NoDigest { file } => {
                write!(f, "{file}: shard.digest: missing: write each shard with {} of this build", write_shards(names))
            }
            ShardError::DigestMismatch { file } => write!(
                f,
                "{file}: shard.digest: the content does not match its digest: the file was edited or damaged after \
                 the shard wrote it; run the shard again"
            ),
            ShardError::Content { file, problem } => write!(f, "{file}: {problem}"),
            ShardError::Count { file, shard: (i, n), first, first_shard: (fi, fn_) } => write!(
                f,
                "{file}: shard {i}/{n}, but {first} is shard {fi}/{fn_}: shards of one check share one count N"
            ),
            ShardError::Version { file, version, first, first_version } => write!(
                f,
                "{file}: written by model {version}, but {first} by model {first_version}: run every shard with the \
                 same build"
            ),
            ShardError::Config { file, config, first, first_config } => write!(
                f,
                "{file}: shard of a different configuration than {first}:\n  {file}: {config}\n  {first}: \
                 {first_config}"
            ),
            ShardError::Split { file, field, mine, theirs, first } => write!(
                f,
                "{file}: shard.{field}: {mine}, but {theirs} in {first}: the shards of one check agree on it (the \
                 same split, from the same prefix)"
            ),
            ShardError::Properties { file, first } => {
                write!(f, "{file}: properties: its properties differ from {first}'s")
            }
            ShardError::Again { file, shard: (i, n), other } => {
                write!(f, "{file}: shard {i}/{n} again (also in {other})")
            }
            ShardError::Nothing => write!(f, "no shard results to merge"),
            ShardError::Missing(missing) => write!(
                f,
                "missing shard{} {}: every shard's result is needed for a verdict",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            ),
            ShardError::Roots { roots, each, frontier } => write!(
                f,
                "shard.roots: the shards searched from {roots} frontier states together ({}), but the frontier \
                 holds {frontier}",
                each.iter().map(|(file, r)| format!("{file}: {r}")).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, Names::Fields)
    }
}

/// What is inconsistent in a shard's result, naming the field.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum ContentProblem {
    /// A merge's result.
    #[error("merged: a merge's result, not a shard's: merge the shards' own files")]
    Merged,
    /// `N` is 0.
    #[error("shard.count: 0: a check splits into at least one shard")]
    NoShards,
    /// `I` not below `N`.
    #[error("shard.index: shard {index}/{count}: the index must be below the count")]
    Index {
        /// `I`.
        index: usize,
        /// `N`.
        count: usize,
    },
    /// Roots that are not the shard's block of the frontier.
    #[error(
        "shard.roots: {roots}, but shard {index}/{count} of a frontier of {frontier} states searches from {want} of \
         them (frontier states j with j·N/F = I)"
    )]
    Roots {
        /// Given.
        roots: usize,
        /// `I`.
        index: usize,
        /// `N`.
        count: usize,
        /// The frontier.
        frontier: usize,
        /// The block's size.
        want: usize,
    },
    /// Fewer prefix states than levels above the split.
    #[error(
        "shard.prefix_states: {prefix_states} states above split depth {split_depth}: every level above it holds at \
         least one"
    )]
    Prefix {
        /// Given.
        prefix_states: usize,
        /// The split depth.
        split_depth: usize,
    },
    /// Prefix states above split depth 0.
    #[error("shard.prefix_states: {0} states above split depth 0")]
    PrefixAtZero(usize),
    /// `exhaustive` disagrees with `bound`.
    #[error("exhaustive: {exhaustive} with bound {bound:?}: a part is exhaustive exactly when it has no bound")]
    Exhaustive {
        /// Given.
        exhaustive: bool,
        /// Given.
        bound: Option<String>,
    },
    /// Exhaustive but stopped.
    #[error("exhaustive: true, but the run was stopped")]
    Stopped,
    /// An expectation other than always or sometimes.
    #[error("expectation: property {property:?}: {expectation:?}: expected \"always\" or \"sometimes\"")]
    Expectation {
        /// The property.
        property: String,
        /// Its expectation.
        expectation: String,
    },
    /// A verdict the property's expectation does not have.
    #[error("verdict: property {property:?}: {}", verdict_words(expectation, *verdict))]
    Verdict {
        /// The property.
        property: String,
        /// Its expectation (always or sometimes).
        expectation: String,
        /// Its verdict.
        verdict: Verdict,
    },
    /// A discovery with no steps.
    #[error("path: property {property:?}: {} with no steps", verdict.label())]
    NoSteps {
        /// The property.
        property: String,
        /// Its verdict.
        verdict: Verdict,
    },
    /// A path on a verdict other than a discovery.
    #[error("path: property {property:?}: \"{}\" with a path: only a discovery has one", verdict.label())]
    Path {
        /// The property.
        property: String,
        /// Its verdict.
        verdict: Verdict,
    },
    /// An undecided verdict in an exhaustive part.
    #[error("verdict: property {property:?}: \"{}\" in an exhaustive part", verdict.label())]
    Undecided {
        /// The property.
        property: String,
        /// Its verdict.
        verdict: Verdict,
    },
    /// A decided verdict in a part not searched to the end.
    #[error("verdict: property {property:?}: \"{}\" in a part not searched to the end", verdict.label())]
    Decided {
        /// The property.
        property: String,
        /// Its verdict.
        verdict: Verdict,
    },
    /// An exit code its verdicts do not give.
    #[error("exit_code: {given}, but its verdicts give {expected}")]
    ExitCode {
        /// Given.
        given: u8,
        /// What the verdicts give.
        expected: u8,
    },
    /// An `ok` its verdicts do not give.
    #[error("ok: {given}, but its verdicts give {expected}")]
    Ok {
        /// Given.
        given: bool,
        /// What the verdicts give.
        expected: bool,
    },
    /// Fewer unique states than the shard searches from.
    #[error(
        "unique_states: {unique_states}, fewer than the {owned} states the shard searches from ({roots} roots{})",
        if *index == 0 { format!(" and {prefix_states} prefix states") } else { String::new() }
    )]
    UniqueStates {
        /// Given.
        unique_states: usize,
        /// The states it searches from.
        owned: usize,
        /// Its roots.
        roots: usize,
        /// `I`.
        index: usize,
        /// The prefix states.
        prefix_states: usize,
    },
}

/// The verdicts of an expectation, for a verdict it does not have.
fn verdict_words(expectation: &str, verdict: Verdict) -> String {
    let (discovery, undecided, decided) = verdicts_of(expectation).unwrap_or(VERDICTS_ALWAYS);
    format!(
        "{} {expectation}-property cannot be \"{}\" (its verdicts: {}, {}, {})",
        if expectation == "always" { "an" } else { "a" },
        verdict.label(),
        discovery.label(),
        decided.label(),
        undecided.label()
    )
}

const VERDICTS_ALWAYS: (Verdict, Verdict, Verdict) =
    (Verdict::Counterexample, Verdict::NoCounterexampleYet, Verdict::Holds);

/// An expectation's verdicts: (discovery, undecided, decided).
fn verdicts_of(expectation: &str) -> Option<(Verdict, Verdict, Verdict)> {
    match expectation {
        "always" => Some(VERDICTS_ALWAYS),
        "sometimes" => Some((Verdict::ExampleFound, Verdict::NoExampleYet, Verdict::NoExample)),
        _ => None,
    }
}
