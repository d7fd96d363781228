//! Running a check and reporting it: progress lines while it runs, a stop on a timeout or an
//! interrupt (with the same report as a finished run), the verdict table, the closing verdict
//! line, the JSON object and the exit code.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use stateright::{Checker, Expectation, HasDiscoveries, Model, UniformChooser};

use crate::config::Resolved;
use crate::model::ChandyLamport;
use crate::shard::{MergeInfo, ShardInfo, ShardSpec};
use crate::state::State;
use chandy_lamport::apps::spec::Spec;

/// Exit code: exhaustive, and every property holds.
pub const EXIT_OK: u8 = 0;
/// Exit code: a property fails (a counterexample, or no example after an exhaustive search).
pub const EXIT_FAIL: u8 = 1;
/// Exit code: bad input.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code: the run was not exhaustive and found no failure; some verdicts are undecided.
pub const EXIT_UNDECIDED: u8 = 3;

/// How the state space is explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Breadth first: shortest paths (with one thread).
    Bfs,
    /// Depth first: least memory.
    Dfs,
    /// Random walks (not exhaustive).
    Simulation,
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bfs" => Ok(Strategy::Bfs),
            "dfs" => Ok(Strategy::Dfs),
            "simulation" => Ok(Strategy::Simulation),
            other => Err(format!("unknown strategy {other:?}: expected bfs, dfs or simulation")),
        }
    }
}

/// Checker settings.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Exploration order.
    pub strategy: Strategy,
    /// Worker threads.
    pub threads: usize,
    /// Symmetry reduction (DFS and simulation only).
    pub symmetry: bool,
    /// Explore paths of at most this many steps.
    pub depth: Option<usize>,
    /// Stop at the first counterexample.
    pub stop_on_failure: bool,
    /// Simulation: seed, and states to generate.
    pub seed: u64,
    /// Simulation: how many states to generate before stopping.
    pub max_states: usize,
    /// Address used in Explorer links.
    pub addr: String,
    /// Stop after this long and report what was explored. The workers of a stopped check are
    /// not joined: with two or more threads they stop within a moment, with one they run on
    /// until the process exits (as the `model` command does at once).
    pub timeout: Option<Duration>,
    /// Stop when this flag is raised (the command raises it on Ctrl-C); as for `timeout`.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Time between progress lines.
    pub progress_every: Duration,
    /// Search only this shard of the state space (depth-first only; see [`crate::shard`]).
    pub shard: Option<ShardSpec>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            strategy: Strategy::Dfs,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            symmetry: false,
            depth: None,
            stop_on_failure: false,
            seed: 0,
            max_states: 1_000_000,
            addr: "127.0.0.1:3000".to_string(),
            timeout: None,
            interrupt: None,
            progress_every: Duration::from_secs(3),
            shard: None,
        }
    }
}

/// A property's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// An always-property with no counterexample in an exhaustive run.
    Holds,
    /// An always-property that fails.
    Counterexample,
    /// A sometimes-property with an example.
    ExampleFound,
    /// A sometimes-property without one, after an exhaustive run: none exists.
    NoExample,
    /// An always-property with no counterexample in a run that was not exhaustive.
    NoCounterexampleYet,
    /// A sometimes-property with no example in a run that was not exhaustive.
    NoExampleYet,
}

impl Verdict {
    /// As printed in the table.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Counterexample => "counterexample",
            Verdict::ExampleFound => "example found",
            Verdict::NoExample => "no example",
            Verdict::NoCounterexampleYet => "no counterexample yet",
            Verdict::NoExampleYet => "no example yet",
        }
    }

    /// Whether this verdict fails the check.
    pub fn fails(self) -> bool {
        matches!(self, Verdict::Counterexample | Verdict::NoExample)
    }

    /// Whether the run could not decide this property.
    pub fn undecided(self) -> bool {
        matches!(self, Verdict::NoCounterexampleYet | Verdict::NoExampleYet)
    }
}

/// One property's outcome.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyResult {
    /// Its name.
    pub name: String,
    /// "always" or "sometimes".
    pub expectation: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The discovery's actions, when there is one.
    pub path: Option<Vec<String>>,
    /// The discovery in the Explorer.
    pub link: Option<String>,
}

/// Why a run ended before exploring everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// `timeout` elapsed.
    Timeout,
    /// The interrupt flag was raised (Ctrl-C).
    Interrupted,
}

/// A whole check's outcome.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckResult {
    /// Exit 0: the run was exhaustive and every property holds.
    pub ok: bool,
    /// Whether every reachable state was explored (not a simulation, no depth bound reached,
    /// not stopped early).
    pub exhaustive: bool,
    /// Why the exploration was bounded, in words (`None` when exhaustive).
    pub bound: Option<String>,
    /// A timeout or an interrupt that ended the run.
    pub stopped: Option<Stop>,
    /// Distinct states (simulation: states generated).
    pub unique_states: usize,
    /// States generated, with repeats.
    pub states: usize,
    /// Longest path explored, in steps.
    pub max_depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Every property, in order.
    pub properties: Vec<PropertyResult>,
    /// The overall verdict in one line (the table's last line).
    pub summary: String,
    /// The command's exit code for this outcome.
    pub exit_code: u8,
    /// A shard's part of a split check (`--shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// A merge of shards' results (`model merge`): the shards and their counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeInfo>,
}

/// Checks `model` and collects every verdict. Progress lines (states, unique states, states per
/// second, depth, resident memory, elapsed time; at most one each `progress_every`) and
/// warnings about a configuration likely too large go to `progress` if given. Fails only when
/// the options do not fit the model (symmetry in literal mode) or a worker panicked.
pub fn check<A: Spec>(
    mut model: ChandyLamport<A>,
    opts: &CheckOptions,
    mut progress: Option<&mut (dyn Write + Send)>,
) -> Result<CheckResult, String> {
    if opts.shard.is_some() && opts.strategy != Strategy::Dfs {
        return Err(format!(
            "--shard splits an exhaustive depth-first search: use it with --strategy dfs (the default), not \
             --strategy {}",
            match opts.strategy {
                Strategy::Bfs => "bfs",
                _ => "simulation",
            }
        ));
    }
    if opts.symmetry {
        let size = model.enable_symmetry()?;
        if let Some(w) = progress.as_deref_mut() {
            if size == 1 {
                let _ = writeln!(w, "warning: --symmetry: this configuration has no symmetry to exploit");
            } else if size > 5040 {
                let _ = writeln!(
                    w,
                    "warning: --symmetry: {} permutations map this configuration onto itself; each state's \
                     representative tries them all, which may cost more than it saves",
                    group(size)
                );
            }
        }
    }
    let estimate = (opts.strategy != Strategy::Simulation).then(|| estimate_states(&model.cfg));
    if let (Some(w), Some(est)) = (progress.as_deref_mut(), estimate) {
        if est >= LARGE {
            let _ = writeln!(w, "warning: {}", too_large(est, None, model.cfg.por));
        }
    }
    let start = Instant::now();
    if opts.strategy == Strategy::Dfs {
        let limits = crate::engine::Limits {
            // As stateright counts (see below).
            target_max_depth: opts.depth.map(|d| d + 2),
            stop_on_failure: opts.stop_on_failure,
        };
        let symmetry = opts.symmetry.then_some(crate::symmetry::representative::<A> as fn(&State<A>) -> State<A>);
        if let Some(shard) = opts.shard {
            let config = crate::shard::config_key(A::NAME, &model.cfg, opts.symmetry, opts.depth, opts.stop_on_failure);
            let sharded = crate::shard::Sharded::spawn(model, shard, opts.threads.max(1), limits, symmetry)?;
            let info = ShardInfo { config, depth: opts.depth, ..sharded.info.clone() };
            if let Some(w) = progress.as_deref_mut() {
                let _ = writeln!(
                    w,
                    "shard {shard}: split depth {}, {} states above it, {} at it, {} of them searched here",
                    info.split_depth,
                    group(info.prefix_states),
                    group(info.frontier),
                    group(info.roots)
                );
            }
            let mut result = drive(sharded, opts, progress, start, estimate)?;
            result.shard = Some(info);
            conclude(&mut result, opts);
            return Ok(result);
        }
        let engine = crate::engine::Engine::spawn(model, opts.threads.max(1), limits, symmetry)?;
        return drive(engine, opts, progress, start, estimate);
    }
    let mut builder = model.checker().threads(opts.threads.max(1));
    if let Some(depth) = opts.depth {
        // stateright checks states above its target depth (counted from 1 at the initial
        // state); a simulation's count starts at 0.
        let extra = if opts.strategy == Strategy::Simulation { 1 } else { 2 };
        builder = builder.target_max_depth(depth + extra);
    }
    if opts.stop_on_failure {
        builder = builder.finish_when(HasDiscoveries::AnyFailures);
    }
    if opts.symmetry {
        builder = builder.symmetry_fn(crate::symmetry::representative::<A>);
    }
    match opts.strategy {
        Strategy::Bfs => drive(builder.spawn_bfs(), opts, progress, start, estimate),
        Strategy::Dfs | Strategy::Simulation => {
            let checker = builder.target_state_count(opts.max_states).spawn_simulation(opts.seed, UniformChooser);
            drive(checker, opts, progress, start, estimate)
        }
    }
}

/// Estimated states above which a configuration gets a warning before the run.
const LARGE: f64 = 3e8;

/// A rough estimate of the states of an exhaustive check of `cfg`, from a product of local
/// counts: for each house, the ways its transfers can be split over its roads and received
/// (`sent` and `received` per road), one recorded value per action and snapshot, and each
/// snapshot's markers (a subset of the channels delivered), with a factor fitted to measured
/// counts of small configurations (within a factor of ten of them, mostly above). It decides
/// only whether to warn.
pub fn estimate_states(cfg: &Resolved) -> f64 {
    let t = &cfg.topology;
    let sends = usize::from(cfg.sends);
    let snapshots = f64::from(cfg.snapshots);
    let mut log = (0.6f64 * 0.65).log10();
    for p in t.processes() {
        let roads = t.outgoing(p).len() + usize::from(cfg.internal);
        log += splits(sends, roads).log10() + snapshots * ((sends + 1) as f64).log10();
    }
    log += snapshots * t.channels().len() as f64 * 2f64.log10();
    if cfg.theft {
        log += (t.len() * sends) as f64 * 1.5f64.log10();
    }
    10f64.powf(log.min(300.0))
}

/// `Σ Π (a_c + 1)` over the ways `a_1 + … + a_roads ≤ sends`: the (sent, received) counts of a
/// house's outgoing roads.
fn splits(sends: usize, roads: usize) -> f64 {
    let mut ways = vec![0f64; sends + 1];
    ways[0] = 1.0;
    for _ in 0..roads {
        ways = (0..=sends).map(|j| (0..=j).map(|a| ways[j - a] * (a + 1) as f64).sum()).collect();
    }
    ways.iter().sum()
}

/// The warning for a configuration estimated at `estimate` states, with the time it would take
/// at `rate` new states per second. The estimate is of the unreduced state space: with `--por`
/// (`por`) the warning says so and gives no time.
fn too_large(estimate: f64, rate: Option<f64>, por: bool) -> String {
    let order = estimate.log10().floor() as i32;
    let time = match rate {
        Some(r) if r > 0.0 && !por => {
            format!(", about {} at {} new states/s", duration_words(estimate / r), group(r as usize))
        }
        _ => String::new(),
    };
    let reduced =
        if por { " without --por (it explored 3 to 55 times fewer states on the measured configurations)" } else { "" };
    format!(
        "this configuration likely has more than 10^{order} states{reduced}{time} (a rough estimate from its houses, \
         roads, sends and snapshots); to finish sooner try --symmetry, --strategy simulation, --depth D, --timeout \
         SECONDS, or fewer --procs, --sends or --snapshots"
    )
}

fn duration_words(seconds: f64) -> String {
    match seconds {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} minutes", s / 60.0),
        s if s < 172_800.0 => format!("{:.0} hours", s / 3600.0),
        s => format!("{:.0} days", s / 86_400.0),
    }
}

/// Resident memory of this process in bytes (Linux), if known.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `1234567` as `1,234,567`.
pub fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Polls the checker until it finishes, the timeout elapses or the interrupt flag is raised;
/// prints progress lines on the way; then collects the result.
fn drive<A: Spec, C>(
    mut checker: C,
    opts: &CheckOptions,
    mut progress: Option<&mut (dyn Write + Send)>,
    start: Instant,
    estimate: Option<f64>,
) -> Result<CheckResult, String>
where
    C: Checker<ChandyLamport<A>>,
{
    let handles: Vec<JoinHandle<()>> = checker.handles();
    let simulation = opts.strategy == Strategy::Simulation;
    let mut next_line = start + opts.progress_every;
    let mut last = (start, 0usize, 0usize);
    let mut warned = estimate.is_some_and(|e| e >= LARGE);
    let stopped = loop {
        if handles.iter().all(JoinHandle::is_finished) {
            break None;
        }
        if opts.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            break Some(Stop::Interrupted);
        }
        if opts.timeout.is_some_and(|t| start.elapsed() >= t) {
            break Some(Stop::Timeout);
        }
        let now = Instant::now();
        if now >= next_line {
            next_line = now + opts.progress_every;
            let (states, unique) = (checker.state_count(), checker.unique_state_count());
            let span = now.duration_since(last.0).as_secs_f64().max(1e-3);
            let rate = states.saturating_sub(last.1) as f64 / span;
            let unique_rate = unique.saturating_sub(last.2) as f64 / span;
            last = (now, states, unique);
            if let Some(w) = progress.as_deref_mut() {
                let unique = if simulation { String::new() } else { format!(", {} unique", group(unique)) };
                let memory = resident_bytes().map_or(String::new(), |b| format!(", {} MB resident", b >> 20));
                let _ = writeln!(
                    w,
                    "checking: {} states{unique}, {} states/s, depth {}{memory}, {:.0} s",
                    group(states),
                    group(rate as usize),
                    steps(&checker, opts),
                    start.elapsed().as_secs_f64()
                );
                if let Some(est) = estimate.filter(|_| !warned) {
                    // Too large by the time it would take at the rate seen so far.
                    if est / unique_rate.max(1.0) > 600.0 {
                        warned = true;
                        let _ = writeln!(w, "warning: {}", too_large(est, Some(unique_rate), checker.model().cfg.por));
                    }
                }
                let _ = w.flush();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if stopped.is_none() {
        for h in handles {
            h.join().map_err(|_| "a checker thread panicked".to_string())?;
        }
    }
    // On a stop the workers are left to end on their own (see `CheckOptions::timeout`); the
    // counts and discoveries read here are those found so far.
    Ok(collect(&checker, opts, start, stopped))
}

/// The longest path explored, in steps (stateright counts the initial state as depth 1 in an
/// exhaustive search, and 0 in a simulation).
fn steps<A: Spec, C: Checker<ChandyLamport<A>>>(checker: &C, opts: &CheckOptions) -> usize {
    let raw = checker.max_depth();
    if opts.strategy == Strategy::Simulation {
        raw
    } else {
        raw.saturating_sub(1)
    }
}

fn collect<A: Spec, C: Checker<ChandyLamport<A>>>(
    checker: &C,
    opts: &CheckOptions,
    start: Instant,
    stopped: Option<Stop>,
) -> CheckResult {
    let seconds = start.elapsed().as_secs_f64();
    let model = checker.model();
    let states = checker.state_count();
    let unique_states = checker.unique_state_count();
    let deepest = steps(checker, opts);
    let depth_cut = opts.depth.is_some_and(|d| deepest > d);
    let discoveries = checker.discoveries();
    let failed_early = opts.stop_on_failure
        && model.properties().iter().any(|p| p.expectation == Expectation::Always && discoveries.contains_key(p.name));
    let bound = match (stopped, opts.strategy) {
        (Some(Stop::Timeout), _) => {
            Some(format!("stopped by the {} s timeout", opts.timeout.map_or(0.0, |t| t.as_secs_f64())))
        }
        (Some(Stop::Interrupted), _) => Some("interrupted".to_string()),
        (None, Strategy::Simulation) => Some("random walks".to_string()),
        _ if depth_cut => Some(format!("paths cut at depth {}", opts.depth.unwrap_or(0))),
        _ if failed_early => Some("stopped at the first failure".to_string()),
        _ if discoveries.len() == model.properties().len() => Some("stopped once every property was decided".into()),
        _ => None,
    };
    let exhaustive = bound.is_none();
    let mut properties = Vec::new();
    for p in model.properties() {
        let discovery = discoveries.get(p.name).cloned();
        let verdict = match (&p.expectation, discovery.is_some(), exhaustive) {
            (Expectation::Sometimes, true, _) => Verdict::ExampleFound,
            (Expectation::Sometimes, false, true) => Verdict::NoExample,
            (Expectation::Sometimes, false, false) => Verdict::NoExampleYet,
            (_, true, _) => Verdict::Counterexample,
            (_, false, true) => Verdict::Holds,
            (_, false, false) => Verdict::NoCounterexampleYet,
        };
        let (path, link) = match discovery {
            Some(path) => {
                let link = format!("http://{}/#/steps/{}", opts.addr, path.encode(model));
                let actions = path
                    .into_vec()
                    .iter()
                    .filter_map(|(state, action)| action.as_ref().map(|a| model.describe(state, a)))
                    .collect();
                (Some(actions), Some(link))
            }
            None => (None, None),
        };
        let expectation = match p.expectation {
            Expectation::Sometimes => "sometimes",
            _ => "always",
        };
        properties.push(PropertyResult {
            name: p.name.to_string(),
            expectation: expectation.to_string(),
            verdict,
            path,
            link,
        });
    }
    let max_depth = opts.depth.map_or(deepest, |d| deepest.min(d));
    let mut result = CheckResult {
        ok: false,
        exhaustive,
        bound,
        stopped,
        unique_states,
        states,
        max_depth,
        seconds,
        properties,
        summary: String::new(),
        exit_code: EXIT_OK,
        shard: None,
        merged: None,
    };
    conclude(&mut result, opts);
    result
}

/// Sets the exit code, `ok` and the verdict line from the verdicts (and `shard`, `merged`).
pub(crate) fn conclude(result: &mut CheckResult, opts: &CheckOptions) {
    result.exit_code = exit_code(result);
    result.ok = result.exit_code == EXIT_OK;
    result.summary = summary(result, opts);
}

/// 1 when a property fails (a counterexample wins over everything), else 3 when some verdict
/// is undecided, else 1 when a sometimes-property has no example, else 0. A shard's missing
/// example is no failure: another shard may have one.
fn exit_code(r: &CheckResult) -> u8 {
    let properties = &r.properties;
    if properties.iter().any(|p| p.verdict == Verdict::Counterexample) {
        EXIT_FAIL
    } else if properties.iter().any(|p| p.verdict.undecided()) {
        EXIT_UNDECIDED
    } else if r.shard.is_none() && properties.iter().any(|p| p.verdict.fails()) {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", group(n), if n == 1 { one } else { many })
}

/// The overall verdict in one line; a shard's starts with `shard I/N: `.
fn summary(r: &CheckResult, opts: &CheckOptions) -> String {
    match &r.shard {
        Some(info) => format!("shard {}/{}: {}", info.index, info.count, verdict_line(r, opts)),
        None => verdict_line(r, opts),
    }
}

fn verdict_line(r: &CheckResult, opts: &CheckOptions) -> String {
    let states = match &r.merged {
        Some(m) => format!("{} explored across {} shards", plural(r.unique_states, "state", "states"), m.count),
        None => plural(r.unique_states, "state", "states"),
    };
    let scope = match &r.bound {
        None => format!("exhaustive, {states}"),
        Some(bound) => format!("not exhaustive: {bound}; {states}"),
    };
    let names = |verdict: Verdict| -> Vec<String> {
        r.properties.iter().filter(|p| p.verdict == verdict).map(|p| p.name.clone()).collect()
    };
    let failing: Vec<String> = r
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Counterexample)
        .map(|p| {
            format!("{} (counterexample, {})", p.name, plural(p.path.as_ref().map_or(0, Vec::len), "step", "steps"))
        })
        .collect();
    if !failing.is_empty() {
        let fail = if failing.len() == 1 { "fails" } else { "fail" };
        return format!("{} {fail}: {}; {scope}", plural(failing.len(), "property", "properties"), failing.join("; "));
    }
    if r.exit_code == EXIT_UNDECIDED {
        let bound = r.bound.as_deref().unwrap_or("bounded");
        let within = match (r.stopped, opts.strategy, opts.depth) {
            (None, Strategy::Simulation, _) => {
                format!("in {} simulated states (not exhaustive: {bound})", group(r.states))
            }
            (None, _, Some(d)) => format!("to depth {d} ({scope})"),
            _ => format!("in {states} (not exhaustive: {bound})"),
        };
        let undecided = r.properties.iter().filter(|p| p.verdict.undecided()).count();
        let mut line = format!("no counterexample {within}; {} undecided", plural(undecided, "property", "properties"));
        let yet = names(Verdict::NoExampleYet);
        if !yet.is_empty() {
            line.push_str(&format!(", no example yet for: {}", yet.join(", ")));
        }
        return line;
    }
    let none = names(Verdict::NoExample);
    if !none.is_empty() && r.shard.is_some() {
        return format!(
            "no counterexample ({scope}); no example in this part for: {} (another shard may have one: merge every \
             shard's result with `model merge`)",
            none.join(", ")
        );
    }
    if !none.is_empty() {
        let holding = r.properties.len() - none.len();
        return format!(
            "no example found for: {} ({scope}: this configuration never shows it); the other {} hold",
            none.join(", "),
            plural(holding, "property", "properties")
        );
    }
    format!("all {} hold ({scope})", plural(r.properties.len(), "property", "properties"))
}

/// Prints the verdict table, the discoveries, the counts and the verdict line.
pub fn print_table(result: &CheckResult, out: &mut dyn Write) -> std::io::Result<()> {
    let width = result.properties.iter().map(|p| p.name.len()).max().unwrap_or(8).max(8);
    writeln!(out)?;
    writeln!(out, "{:<width$}  {:<9}  verdict", "property", "kind")?;
    writeln!(out, "{:-<width$}  {:-<9}  {:-<21}", "", "", "")?;
    for p in &result.properties {
        writeln!(out, "{:<width$}  {:<9}  {}", p.name, p.expectation, p.verdict.label())?;
    }
    for p in result.properties.iter().filter(|p| p.path.is_some()) {
        let path = p.path.as_deref().unwrap_or_default();
        writeln!(out)?;
        writeln!(out, "{} ({}, {} steps):", p.name, p.verdict.label(), path.len())?;
        for (i, a) in path.iter().enumerate() {
            writeln!(out, "  {:>3}. {a}", i + 1)?;
        }
        if let Some(link) = &p.link {
            writeln!(out, "  explore: {link}")?;
        }
    }
    writeln!(out)?;
    if let Some(info) = &result.shard {
        writeln!(
            out,
            "shard {}/{}: split depth {}, {} states above it (judged by shard 0), {} at it, {} searched from here",
            info.index,
            info.count,
            info.split_depth,
            group(info.prefix_states),
            group(info.frontier),
            group(info.roots)
        )?;
    }
    match &result.merged {
        Some(m) => {
            let each: Vec<String> =
                m.shards.iter().map(|s| format!("shard {}: {}", s.index, group(s.unique_states))).collect();
            writeln!(
                out,
                "states explored across shards {} ({}; shards may overlap), states {}, max depth {}, seconds {:.2} \
                 (the slowest shard)",
                group(result.unique_states),
                each.join(", "),
                group(result.states),
                result.max_depth,
                result.seconds
            )?;
        }
        None => writeln!(
            out,
            "unique states {}, states {}, max depth {}, seconds {:.2}",
            group(result.unique_states),
            group(result.states),
            result.max_depth,
            result.seconds
        )?,
    }
    writeln!(out, "{}", result.summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, InitiatorSpec, TopologySpec};

    fn estimate(procs: usize, topology: TopologySpec, sends: u8, snapshots: u8) -> f64 {
        let config = Config {
            procs: Some(procs),
            topology,
            sends,
            snapshots,
            initiators: InitiatorSpec::Only(vec![0]),
            ..Config::default()
        };
        estimate_states(&config.resolve().unwrap())
    }

    #[test]
    fn the_estimate_is_within_a_factor_of_ten_of_measured_counts() {
        use TopologySpec::*;
        // Full mode, one initiator: unique states measured on December 1, 2026 (`model check
        // --procs P --topology T --sends K --snapshots S --initiators 0`, tokens 2).
        for (procs, topology, sends, snapshots, measured) in [
            (2, Complete, 1, 1, 70.0),
            (2, Complete, 4, 1, 2_821.0),
            (3, Complete, 0, 1, 38.0),
            (3, Complete, 1, 1, 21_752.0),
            (3, Complete, 2, 1, 3_270_737.0),
            (3, Complete, 3, 1, 122_766_674.0),
            (4, Complete, 0, 1, 2_536.0),
            (5, Complete, 0, 1, 755_402.0),
            (3, Ring, 2, 1, 4_844.0),
            (4, Star, 1, 1, 27_842.0),
            (3, Complete, 1, 2, 1_301_562.0),
            (2, Complete, 2, 3, 91_179.0),
        ] {
            let e = estimate(procs, topology.clone(), sends, snapshots);
            let ratio = e / measured;
            assert!((0.1..=10.0).contains(&ratio), "{procs} {topology} K={sends} S={snapshots}: {e:.0} vs {measured}");
        }
        // The default job is below the warning; four houses with three sends each is far above.
        assert!(estimate(3, Complete, 2, 1) < LARGE);
        assert!(estimate(4, Complete, 3, 1) > LARGE);
    }

    #[test]
    fn the_warning_says_the_estimate_is_unreduced_under_por() {
        let plain = too_large(4e9, Some(1e6), false);
        assert!(plain.contains("more than 10^9 states, about") && plain.contains("1,000,000 new states/s"), "{plain}");
        let por = too_large(4e9, Some(1e6), true);
        assert!(por.contains("more than 10^9 states without --por"), "{por}");
        assert!(!por.contains("new states/s"), "no time from an unreduced estimate: {por}");
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(2_594_488), "2,594,488");
    }
}
