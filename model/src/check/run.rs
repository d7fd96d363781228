//! Running a check: the model handed to the engine or to one of stateright's checkers,
//! progress lines while it runs, a stop on a timeout or an interrupt (with the same report as a
//! finished run), and the result collected from the checker.

use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chandy_lamport::apps::spec::Spec;
use stateright::{Checker, Expectation, HasDiscoveries, Model, Path, UniformChooser};

use super::options::{CheckOptions, Strategy};
use super::report::{conclude, group, CheckResult, PropertyResult, ShardInfo, Stop, Verdict, EXIT_OK};
use super::shards::{config_key, seal, VERSION};
use crate::engine::dfs::{paths, Engine, Found, Limits, SpawnError};
use crate::engine::distributed::{self, Disk, Hooks, Progress, SearchError};
use crate::engine::ranks::Ranks;
use crate::engine::shard::Sharded;
use crate::reduce::symmetry::{representative, SymmetryError};
use crate::system::action::Act;
use crate::system::config::Resolved;
use crate::system::machine::SnapshotModel;
use crate::system::setting::{Names, Setting, Wording};
use crate::system::state::State;

/// Why a check cannot run, or failed.
#[derive(Debug)]
pub enum CheckError {
    /// A shard with a strategy other than depth-first (the strategy given).
    ShardStrategy(Strategy),
    /// A distributed check with a shard or the simulation strategy.
    Distributed,
    /// Symmetry cannot be turned on.
    Symmetry(SymmetryError),
    /// The depth-first engine cannot start.
    Spawn(SpawnError),
    /// The distributed search failed.
    Search(SearchError),
    /// A depth bound past [`MAX_DEPTH`] (the bound given): no search reaches it, and the
    /// engines' count of it (from the initial state, plus one or two) would not fit.
    Depth(usize),
    /// A checker thread panicked.
    Panicked,
}

/// The largest depth bound a check takes: far past any path a search can hold in memory, and
/// small enough that the engines' counts of it never overflow.
pub const MAX_DEPTH: usize = u32::MAX as usize;

/// Refuses a depth bound past [`MAX_DEPTH`].
fn depth_fits(opts: &CheckOptions) -> Result<(), CheckError> {
    match opts.depth {
        Some(depth) if depth > MAX_DEPTH => Err(CheckError::Depth(depth)),
        _ => Ok(()),
    }
}

impl Wording for CheckError {
    fn write(&self, f: &mut fmt::Formatter<'_>, names: Names) -> fmt::Result {
        let strategy = |s: &'static str| Setting::Strategy.with(s, names);
        match self {
            CheckError::ShardStrategy(s) => write!(
                f,
                "{} splits an exhaustive depth-first search: use it with {} (the default), not {}",
                Setting::Shard.name(names),
                strategy("dfs"),
                strategy(if *s == Strategy::Bfs { "bfs" } else { "simulation" })
            ),
            CheckError::Distributed => write!(
                f,
                "{} is one exhaustive breadth-first search: not with {} or {}",
                Setting::Distributed.name(names),
                Setting::Shard.name(names),
                strategy("simulation")
            ),
            CheckError::Symmetry(e) => e.write(f, names),
            CheckError::Spawn(e) => write!(f, "{e}"),
            CheckError::Search(e) => write!(f, "{e}"),
            CheckError::Depth(depth) => write!(
                f,
                "{} is past any depth a search can reach: at most {MAX_DEPTH}",
                Setting::Depth.with(depth, names)
            ),
            CheckError::Panicked => f.write_str("a checker thread panicked"),
        }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, Names::Fields)
    }
}

/// As `#[error(transparent)]` would: a wrapped error is shown as itself, with its source.
impl std::error::Error for CheckError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckError::Symmetry(e) => e.source(),
            CheckError::Spawn(e) => e.source(),
            CheckError::Search(e) => e.source(),
            _ => None,
        }
    }
}

impl From<SymmetryError> for CheckError {
    fn from(e: SymmetryError) -> Self {
        CheckError::Symmetry(e)
    }
}

impl From<SpawnError> for CheckError {
    fn from(e: SpawnError) -> Self {
        CheckError::Spawn(e)
    }
}

impl From<SearchError> for CheckError {
    fn from(e: SearchError) -> Self {
        CheckError::Search(e)
    }
}

/// Checks `model` and collects every verdict. Progress lines (states, unique states, states per
/// second, depth, resident memory, elapsed time; at most one each `progress_every`) and
/// warnings about a configuration likely too large go to `progress` if given. Fails only when
/// the options do not fit the model (symmetry in literal mode) or a worker panicked.
pub fn check<A: Spec>(
    mut model: SnapshotModel<A>,
    opts: &CheckOptions,
    mut progress: Option<&mut (dyn Write + Send)>,
) -> Result<CheckResult, CheckError> {
    if opts.shard.is_some() && opts.strategy != Strategy::Dfs {
        return Err(CheckError::ShardStrategy(opts.strategy));
    }
    depth_fits(opts)?;
    let estimate = prepare(&mut model, opts, &mut progress)?;
    let start = Instant::now();
    if opts.strategy == Strategy::Dfs {
        let limits = Limits {
            // As stateright counts (see below).
            target_max_depth: opts.depth.map(|d| d + 2),
            stop_on_failure: opts.stop_on_failure,
        };
        let symmetry = opts.symmetry.then_some(representative::<A> as fn(&State<A>) -> State<A>);
        if let Some(shard) = opts.shard {
            let config = config_key(A::NAME, &model.cfg, opts.symmetry, opts.depth, opts.stop_on_failure);
            let sharded = Sharded::spawn(model, shard, opts.threads.max(1), limits, symmetry)?;
            let info =
                ShardInfo { part: sharded.part, config, version: VERSION.to_string(), depth: opts.depth, digest: None };
            if let Some(w) = progress.as_deref_mut() {
                let _ = writeln!(
                    w,
                    "shard {shard}: split depth {}, {} states above it, {} at it, {} of them searched here",
                    info.part.split_depth,
                    group(info.part.prefix_states),
                    group(info.part.frontier),
                    group(info.part.roots)
                );
            }
            let mut result = drive(sharded, opts, progress, start, estimate)?;
            result.shard = Some(info);
            conclude(&mut result, opts);
            seal(&mut result);
            return Ok(result);
        }
        let engine = Engine::spawn(model, opts.threads.max(1), limits, symmetry)?;
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
        builder = builder.symmetry_fn(representative::<A>);
    }
    match opts.strategy {
        Strategy::Bfs => drive(builder.spawn_bfs(), opts, progress, start, estimate),
        Strategy::Dfs | Strategy::Simulation => {
            let checker = builder.target_state_count(opts.max_states).spawn_simulation(opts.seed, UniformChooser);
            drive(checker, opts, progress, start, estimate)
        }
    }
}

/// Checks `model` with every rank of `ranks` (see [`crate::engine::distributed`]): every rank
/// calls it with the same model and options; each gets the result, and only rank 0's holds the
/// discoveries' paths and the tallies (only rank 0 reports). Progress lines and warnings go to
/// `progress`, given on rank 0.
pub fn check_distributed<A: Spec>(
    mut model: SnapshotModel<A>,
    opts: &CheckOptions,
    ranks: &dyn Ranks,
    mut progress: Option<&mut (dyn Write + Send)>,
) -> Result<CheckResult, CheckError> {
    if opts.shard.is_some() || opts.strategy == Strategy::Simulation {
        return Err(CheckError::Distributed);
    }
    depth_fits(opts)?;
    let estimate = prepare(&mut model, opts, &mut progress)?;
    let start = Instant::now();
    let limits = Limits { target_max_depth: opts.depth.map(|d| d + 2), stop_on_failure: opts.stop_on_failure };
    let symmetry = opts.symmetry.then_some(representative::<A> as fn(&State<A>) -> State<A>);
    let interrupted = || opts.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
    let stop = || interrupted() || opts.timeout.is_some_and(|t| start.elapsed() >= t);
    let mut next_line = start + opts.progress_every;
    let mut warned = estimate.is_some_and(|e| e >= LARGE);
    let n = ranks.size();
    let por = model.cfg.por;
    let mut report = |p: &Progress| {
        let now = Instant::now();
        let Some(w) = progress.as_deref_mut().filter(|_| now >= next_line) else { return };
        next_line = now + opts.progress_every;
        let elapsed = start.elapsed().as_secs_f64();
        let _ = writeln!(
            w,
            "checking: {} states, {} unique, {} unique/s, depth {}, {} MB resident on {n} ranks, {elapsed:.0} s",
            group(p.states as usize),
            group(p.unique as usize),
            group((p.unique as f64 / elapsed.max(1e-3)) as usize),
            p.depth.saturating_sub(1),
            p.resident >> 20,
        );
        if let Some(est) = estimate.filter(|_| !warned) {
            let rate = p.unique as f64 / elapsed.max(1e-3);
            if est / rate.max(1.0) > 600.0 {
                warned = true;
                let _ = writeln!(w, "warning: {}", too_large(est, Some(rate), por));
            }
        }
        let _ = w.flush();
    };
    let budget = opts
        .rank_memory
        .unwrap_or_else(|| available_bytes().map_or(u64::MAX, |bytes| bytes / 2 / ranks.local().max(1) as u64));
    let dir = opts.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
    let disk = Disk { budget, dir: &dir };
    let hooks = Hooks { stop: &stop, memory, progress: &mut report, disk };
    let outcome = distributed::search(&model, ranks, limits, symmetry, hooks)?;
    let stopped = outcome.stopped.then(|| if interrupted() { Stop::Interrupted } else { Stop::Timeout });
    let finished = Finished {
        model,
        states: outcome.states,
        unique: outcome.unique,
        max_depth: outcome.max_depth,
        found: outcome.found,
    };
    let mut result = collect(&finished, opts, start, stopped);
    result.distributed = Some(outcome.traffic);
    Ok(result)
}

/// This process's resident memory and its peak, in bytes (0 where unknown).
fn memory() -> (u64, u64) {
    (resident_bytes().unwrap_or(0), status_kb("VmHWM:").map_or(0, |kb| kb * 1024))
}

/// A finished search's counts and discoveries, as a [`Checker`] for [`collect`].
struct Finished<A: Spec> {
    model: SnapshotModel<A>,
    states: usize,
    unique: usize,
    max_depth: usize,
    found: Found<Act<A>>,
}

impl<A: Spec> Checker<SnapshotModel<A>> for Finished<A> {
    fn model(&self) -> &SnapshotModel<A> {
        &self.model
    }

    fn state_count(&self) -> usize {
        self.states
    }

    fn unique_state_count(&self) -> usize {
        self.unique
    }

    fn max_depth(&self) -> usize {
        self.max_depth
    }

    fn discoveries(&self) -> HashMap<&'static str, Path<State<A>, Act<A>>> {
        paths(&self.model, self.found.clone())
    }

    fn handles(&mut self) -> Vec<JoinHandle<()>> {
        Vec::new()
    }

    fn is_done(&self) -> bool {
        true
    }
}

/// Turns symmetry on if asked and warns (to `progress`) about a symmetry that does not pay or a
/// configuration likely too large; the estimated states of an exhaustive search.
fn prepare<A: Spec>(
    model: &mut SnapshotModel<A>,
    opts: &CheckOptions,
    progress: &mut Option<&mut (dyn Write + Send)>,
) -> Result<Option<f64>, CheckError> {
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
    Ok(estimate)
}

/// Estimated states above which a configuration gets a warning before the run.
const LARGE: f64 = 3e8;

/// A rough estimate of the states of an exhaustive check of `cfg`, from a product of local
/// counts: for each process, the ways its transfers can be split over its roads and received
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
/// process's outgoing roads.
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
    status_kb("VmRSS:").map(|kb| kb * 1024)
}

/// The memory this machine has available for new work (Linux: `MemAvailable`), if known.
fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// A line of this process's `/proc/self/status` (Linux), in kB.
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Polls the checker until it finishes, the timeout elapses or the interrupt flag is raised;
/// prints progress lines on the way; then collects the result.
fn drive<A: Spec, C>(
    mut checker: C,
    opts: &CheckOptions,
    mut progress: Option<&mut (dyn Write + Send)>,
    start: Instant,
    estimate: Option<f64>,
) -> Result<CheckResult, CheckError>
where
    C: Checker<SnapshotModel<A>>,
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
            h.join().map_err(|_| CheckError::Panicked)?;
        }
    }
    // On a stop the workers are left to end on their own (see `CheckOptions::timeout`); the
    // counts and discoveries read here are those found so far.
    Ok(collect(&checker, opts, start, stopped))
}

/// The longest path explored, in steps (stateright counts the initial state as depth 1 in an
/// exhaustive search, and 0 in a simulation).
fn steps<A: Spec, C: Checker<SnapshotModel<A>>>(checker: &C, opts: &CheckOptions) -> usize {
    let raw = checker.max_depth();
    if opts.strategy == Strategy::Simulation {
        raw
    } else {
        raw.saturating_sub(1)
    }
}

fn collect<A: Spec, C: Checker<SnapshotModel<A>>>(
    checker: &C,
    opts: &CheckOptions,
    start: Instant,
    stopped: Option<Stop>,
) -> CheckResult {
    let seconds = start.elapsed().as_secs_f64();
    let model = checker.model();
    // Read before the discoveries' paths are rebuilt, which takes steps again. A shard's steps
    // include the prefix every shard computes: not counted.
    let tallies = (model.cfg.algorithm.coordinated() && opts.shard.is_none()).then(|| model.tallies());
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
        tallies,
        shard: None,
        merged: None,
        distributed: None,
    };
    conclude(&mut result, opts);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::config::{Config, InitiatorSpec, TopologySpec};
    use chandy_lamport::apps::bank::Bank;

    #[test]
    fn check_errors_name_options_and_the_command_words_them_with_flags() {
        let model = || SnapshotModel::<Bank>::new(Config::default().resolve().expect("valid"));
        let opts = CheckOptions {
            strategy: Strategy::Bfs,
            shard: Some(crate::engine::shard::ShardSpec { index: 0, count: 2 }),
            ..CheckOptions::default()
        };
        let e = check(model(), &opts, None).expect_err("a shard is depth-first");
        assert_eq!(
            e.to_string(),
            "shard splits an exhaustive depth-first search: use it with strategy = dfs (the default), not strategy = \
             bfs"
        );
        let flags = e.worded(Names::Flags).to_string();
        assert_eq!(
            flags,
            "--shard splits an exhaustive depth-first search: use it with --strategy dfs (the default), not \
             --strategy bfs"
        );
        let opts = CheckOptions { strategy: Strategy::Simulation, ..CheckOptions::default() };
        let e = check_distributed(model(), &opts, &crate::engine::ranks::Threads::group(1)[0], None)
            .expect_err("distributed is breadth-first");
        assert_eq!(
            e.to_string(),
            "check_distributed is one exhaustive breadth-first search: not with shard or strategy = simulation"
        );
        let mut literal = Config { procs: Some(2), mode: crate::system::config::Mode::Literal, ..Config::default() };
        literal.sends = 1;
        let opts = CheckOptions { symmetry: true, ..CheckOptions::default() };
        let e = check(SnapshotModel::<Bank>::new(literal.resolve().expect("valid")), &opts, None)
            .expect_err("literal has no symmetry");
        assert_eq!(e.to_string(), "symmetry cannot be used with mode = literal (the history names the houses)");
        let flags = e.worded(Names::Flags).to_string();
        assert_eq!(flags, "--symmetry cannot be used with --properties literal (the history names the houses)");
    }

    /// Issue 50: `--depth 2^64-1` wrapped the engines' count of it to 1, and the check reported
    /// "exhaustive, 1 state" with every property holding.
    #[test]
    fn a_depth_past_the_largest_is_refused_and_the_largest_is_no_bound() {
        let cfg = Config {
            procs: Some(2),
            sends: 1,
            variant: chandy_lamport::protocol::variant::Variant::LateRecord,
            ..Config::default()
        };
        let model = || SnapshotModel::<Bank>::new(cfg.resolve().expect("valid"));
        for (strategy, depth) in
            [(Strategy::Dfs, usize::MAX), (Strategy::Bfs, usize::MAX - 1), (Strategy::Dfs, MAX_DEPTH + 1)]
        {
            let opts = CheckOptions { strategy, depth: Some(depth), threads: 1, ..CheckOptions::default() };
            let e = check(model(), &opts, None).expect_err("no search reaches that depth");
            assert_eq!(
                e.to_string(),
                format!("depth = {depth} is past any depth a search can reach: at most 4294967295")
            );
            assert!(e.worded(Names::Flags).to_string().starts_with(&format!("--depth {depth} is past")));
            let e = check_distributed(model(), &opts, &crate::engine::ranks::Threads::group(1)[0], None)
                .expect_err("no search reaches that depth");
            assert!(matches!(e, CheckError::Depth(d) if d == depth), "{e:?}");
        }
        let unbounded = check(model(), &CheckOptions { threads: 1, ..CheckOptions::default() }, None).expect("checked");
        let largest = CheckOptions { depth: Some(MAX_DEPTH), threads: 1, ..CheckOptions::default() };
        let largest = check(model(), &largest, None).expect("checked");
        assert_eq!((largest.unique_states, largest.exhaustive), (unbounded.unique_states, unbounded.exhaustive));
        assert!(largest.unique_states > 1 && largest.exhaustive);
        let verdicts = |r: &CheckResult| r.properties.iter().map(|p| (p.name.clone(), p.verdict)).collect::<Vec<_>>();
        assert_eq!(verdicts(&largest), verdicts(&unbounded));
        assert!(!largest.ok, "the late record fails a property");
    }

    #[test]
    fn shard_errors_name_the_file_and_the_option() {
        let cfg = Config { procs: Some(2), sends: 1, ..Config::default() };
        let opts = CheckOptions { threads: 1, ..CheckOptions::default() };
        let result = check(SnapshotModel::<Bank>::new(cfg.resolve().expect("valid")), &opts, None).expect("checked");
        let e = super::super::shards::check_shard("a.json", &result).expect_err("not a shard's");
        assert!(matches!(&e, super::super::shards::ShardError::NotAShard { file } if file == "a.json"), "{e:?}");
        assert_eq!(
            e.to_string(),
            "a.json: not a shard's result (no \"shard\" object): write each with the JSON of a check with `shard` set"
        );
        assert_eq!(
            e.worded(Names::Flags).to_string(),
            "a.json: not a shard's result (no \"shard\" object): write each with `model check --shard I/N --json`"
        );
    }

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
        // The default job is below the warning; four processes with three sends each is far above.
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
