//! Running a check and reporting it: the verdict table, the JSON object, the exit code.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::io::Write;
use std::time::Instant;

use serde::Serialize;
use stateright::report::{ReportData, ReportDiscovery, Reporter, WriteReporter};
use stateright::{Checker, Expectation, HasDiscoveries, Model, UniformChooser};

use crate::model::ChandyLamport;

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
    /// Stop exploring below this depth.
    pub depth: Option<usize>,
    /// Stop at the first counterexample.
    pub stop_on_failure: bool,
    /// Simulation: seed, and states to generate.
    pub seed: u64,
    /// Simulation: how many states to generate before stopping.
    pub max_states: usize,
    /// Address used in Explorer links.
    pub addr: String,
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
        }
    }
}

/// A property's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// An always-property with no counterexample.
    Holds,
    /// An always-property that fails.
    Counterexample,
    /// A sometimes-property with an example.
    ExampleFound,
    /// A sometimes-property without one.
    NoExample,
}

impl Verdict {
    /// As printed in the table.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Counterexample => "counterexample",
            Verdict::ExampleFound => "example found",
            Verdict::NoExample => "no example",
        }
    }

    /// Whether this verdict fails the check.
    pub fn fails(self) -> bool {
        matches!(self, Verdict::Counterexample | Verdict::NoExample)
    }
}

/// One property's outcome.
#[derive(Clone, Debug, Serialize)]
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

/// A whole check's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// Every always-property holds and every sometimes-property found its example.
    pub ok: bool,
    /// Whether the exploration was exhaustive (not a simulation, no depth bound, not stopped
    /// early).
    pub exhaustive: bool,
    /// Distinct states.
    pub unique_states: usize,
    /// States generated, with repeats.
    pub states: usize,
    /// Deepest path.
    pub max_depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Every property, in order.
    pub properties: Vec<PropertyResult>,
}

/// Forwards stateright's progress lines to a writer, about once a second (it polls more
/// often, so a short check is not held back by the reporter's sleep); the table is printed
/// separately.
pub struct Progress<'a, W: Write> {
    inner: WriteReporter<'a, W>,
    last: Option<Instant>,
}

impl<'a, W: Write> Progress<'a, W> {
    /// Progress lines to `writer`.
    pub fn new(writer: &'a mut W) -> Self {
        Progress { inner: WriteReporter::new(writer), last: None }
    }
}

impl<W: Write> Reporter<ChandyLamport> for Progress<'_, W> {
    fn report_checking(&mut self, data: ReportData) {
        let due = self.last.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(1));
        if data.done || due {
            self.last = Some(Instant::now());
            <WriteReporter<'_, W> as Reporter<ChandyLamport>>::report_checking(&mut self.inner, data)
        }
    }

    fn delay(&self) -> std::time::Duration {
        std::time::Duration::from_millis(20)
    }

    fn report_discoveries(
        &mut self,
        _model: &ChandyLamport,
        _discoveries: BTreeMap<&'static str, ReportDiscovery<ChandyLamport>>,
    ) where
        <ChandyLamport as Model>::Action: Debug + PartialEq,
        <ChandyLamport as Model>::State: Debug + Hash + PartialEq,
    {
    }
}

/// Checks `model` and collects every verdict; progress lines go to `progress` if given.
/// Fails only when the options do not fit the model (symmetry in literal mode).
pub fn check(
    mut model: ChandyLamport,
    opts: &CheckOptions,
    progress: Option<&mut (dyn Write + Send)>,
) -> Result<CheckResult, &'static str> {
    if opts.symmetry {
        model.enable_symmetry()?;
    }
    let mut builder = model.checker().threads(opts.threads.max(1));
    if let Some(depth) = opts.depth {
        builder = builder.target_max_depth(depth);
    }
    if opts.stop_on_failure {
        builder = builder.finish_when(HasDiscoveries::AnyFailures);
    }
    if opts.symmetry {
        builder = builder.symmetry_fn(crate::symmetry::representative);
    }
    let start = Instant::now();
    Ok(match opts.strategy {
        Strategy::Bfs => finish(builder.spawn_bfs(), opts, progress, start),
        Strategy::Dfs => finish(builder.spawn_dfs(), opts, progress, start),
        Strategy::Simulation => {
            let checker = builder.target_state_count(opts.max_states).spawn_simulation(opts.seed, UniformChooser);
            finish(checker, opts, progress, start)
        }
    })
}

fn finish<C>(checker: C, opts: &CheckOptions, progress: Option<&mut (dyn Write + Send)>, start: Instant) -> CheckResult
where
    C: Checker<ChandyLamport> + Send + Sync,
{
    let checker = match progress {
        Some(w) => {
            let mut w = w;
            checker.join_and_report(&mut Progress::new(&mut w))
        }
        None => checker.join(),
    };
    let seconds = start.elapsed().as_secs_f64();
    let model = checker.model();
    let mut properties = Vec::new();
    let mut early = false;
    for p in model.properties() {
        let discovery = checker.discovery(p.name);
        let verdict = match (&p.expectation, discovery.is_some()) {
            (Expectation::Sometimes, true) => Verdict::ExampleFound,
            (Expectation::Sometimes, false) => Verdict::NoExample,
            (_, true) => Verdict::Counterexample,
            (_, false) => Verdict::Holds,
        };
        early |= verdict == Verdict::Counterexample && opts.stop_on_failure;
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
    let ok = properties.iter().all(|p| !p.verdict.fails());
    let exhaustive = opts.strategy != Strategy::Simulation && opts.depth.is_none() && !early;
    CheckResult {
        ok,
        exhaustive,
        unique_states: checker.unique_state_count(),
        states: checker.state_count(),
        max_depth: checker.max_depth(),
        seconds,
        properties,
    }
}

/// Prints the verdict table and the closing line.
pub fn print_table(result: &CheckResult, out: &mut dyn Write) -> std::io::Result<()> {
    let width = result.properties.iter().map(|p| p.name.len()).max().unwrap_or(8).max(8);
    writeln!(out)?;
    writeln!(out, "{:<width$}  {:<9}  verdict", "property", "kind")?;
    writeln!(out, "{:-<width$}  {:-<9}  {:-<14}", "", "", "")?;
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
    let note = if result.exhaustive { "" } else { " (not exhaustive)" };
    writeln!(
        out,
        "unique states {}, states {}, max depth {}, seconds {:.2}{note}",
        result.unique_states, result.states, result.max_depth, result.seconds
    )
}
