//! `model verify`: the command over the library's log judge ([`chandy_lamport::logs`]): its
//! arguments, progress lines, the verdicts printed (or one JSON object) and the exit code.
//! Checking logs against the theorem, snapshot by snapshot, is the library's; with an
//! application's states (`--app bank`, `orders`, `stream`, `balance`) it recomputes every state
//! by the application's transitions: the states in the logs are only cross-checked, never
//! trusted. With `--app none` states and payloads are opaque, and only what needs no
//! application is judged.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::json::{Balance, Opaque};
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::formats::jsonl::{LogApp, LogProblem, NotClean, Source};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::formats::Problem;
use chandy_lamport::logs::text::print_outcome;
use chandy_lamport::logs::{
    judge_logs, InitialError, InitialProblem, Judgement, LogsError, Progress, Semantics, Watch,
};
use chandy_lamport::Topology;
use clap::ValueEnum;
use serde::de::DeserializeOwned;

use super::output::{note, to_stdout};
use crate::check::report::group;
use crate::check::run::resident_bytes;

/// The exit codes, for `model verify --help`.
pub const VERIFY_EXIT_CODES: &str = "\
Exit codes:
  0  every snapshot in the logs holds, the channels are FIFO, and (with an application's states)
     the logged states are those the transitions produce
  1  some snapshot violates the theorem (or never completed), a record claims a message its
     process had not received between its recording and the marker, a channel is not FIFO, or
     the run is inconsistent (a logged state the transitions do not produce, a step they refuse)
  2  bad input: an unreadable or malformed topology, --initial or log file (the message names the
     file and line), an unknown process or channel, a gap in a process's seq, a tie in its
     time, logs that admit no causal order, logs with no event at all
  3  nothing failed, but not everything was judged: the logs hold no snapshot, or they are
     damaged (a file ending mid-line, a process with no events, a receipt of something its
     sender's log never sends) and the snapshots the damage touches are not judged
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

/// The application: what the houses run (`check`, `explore`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum App {
    /// Trading houses passing carts of jars: states `{"jars", "sold"}`, payloads and steps
    /// numbers of jars; initial jars from the topology file's tokens.
    Bank,
    /// Houses ordering jars from each other (`chandy_lamport::orders`); initial jars from the
    /// topology file's tokens.
    Orders,
    /// A dataflow job (`chandy_lamport::stream`): houses with tokens are sources emitting that
    /// many items; every house counts the items it takes in and passes them on.
    Stream,
}

/// What the logs' states and payloads are (`verify --app`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogKind {
    /// The bank's houses: states `{"jars": N, "sold": N}`, payloads and steps numbers of jars.
    Bank,
    /// The orders application's houses.
    Orders,
    /// The stream application's houses.
    Stream,
    /// Any system moving integer amounts: a state is a JSON integer, a payload a non-negative
    /// integer (0 allowed); a send debits, a receipt credits, a loss removes; each snapshot's
    /// recorded total must be the initial total less what was lost before the cut.
    Balance,
    /// Any system: states, payloads and steps are opaque JSON, never interpreted; a record may
    /// log no state.
    None,
}

/// How `model verify` reads the logs (`--reader`, hidden: bench/verify.sh compares the two).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Reader {
    /// One pass over the events, every snapshot judged on the way, memory bounded by what is in
    /// flight; logs with findings (or errors) are then read whole to word them.
    #[default]
    Stream,
    /// Every event in memory first, then each snapshot judged over all of them (the reader
    /// before issue 24).
    Whole,
}

impl Reader {
    fn library(self) -> chandy_lamport::logs::Reader {
        match self {
            Reader::Stream => chandy_lamport::logs::Reader::OnePass,
            Reader::Whole => chandy_lamport::logs::Reader::Whole,
        }
    }
}

/// `model verify`: reads the topology and the logs, checks every snapshot, prints the verdicts
/// (or one JSON object) and returns the exit code. Bad input is an error (exit 2 in `main`).
pub fn run(
    topology: &Path,
    traces: &[PathBuf],
    app: LogKind,
    initial_file: Option<&Path>,
    json: bool,
    reader: Reader,
) -> anyhow::Result<ExitCode> {
    let top = TopFile::read(topology)?;
    for w in &top.warnings {
        note(format!("warning: {w}"));
    }
    fn initial<A: Spec + LogApp>(
        top: &TopFile,
        path: &Path,
        file: Option<&Path>,
        app: LogKind,
    ) -> anyhow::Result<Vec<A>> {
        if let Some(file) = file {
            return read_initial(file, &top.topology);
        }
        let tokens = counts(top, app)?;
        match chandy_lamport::apps::spec::too_many_tokens::<A>(&tokens) {
            Some((Some(p), t)) => {
                let line = top.node_lines.get(p.index()).map_or(String::new(), |l| format!(":{l}"));
                let (file, name, max) = (path.display(), A::NAME, A::MAX_TOKENS);
                anyhow::bail!("{file}{line}: {t} tokens, but the {name} application takes at most {max}");
            }
            Some((None, t)) => {
                let (file, name, max) = (path.display(), A::NAME, A::MAX_TOTAL_TOKENS);
                anyhow::bail!("{file}: {t} tokens in all, but the {name} application takes at most {max} in all");
            }
            None => {}
        }
        Ok(top.topology.processes().map(|p| A::initial(p, tokens[p.index()])).collect())
    }
    let t = &top.topology;
    let mut ticker = Ticker::new(Duration::from_secs(3));
    let source = Source::Files(traces);
    let reader = reader.library();
    let outcome = match app {
        LogKind::Bank => {
            let initial = initial::<Bank>(&top, topology, initial_file, app)?;
            judge_logs(t, initial, source, &Semantics::interpreted(), reader, &mut ticker)
        }
        LogKind::Orders => {
            let initial = initial::<Orders>(&top, topology, initial_file, app)?;
            judge_logs(t, initial, source, &Semantics::interpreted(), reader, &mut ticker)
        }
        LogKind::Stream => {
            let initial = initial::<Stream>(&top, topology, initial_file, app)?;
            judge_logs(t, initial, source, &Semantics::interpreted(), reader, &mut ticker)
        }
        LogKind::Balance => {
            let initial = match initial_file {
                Some(file) => read_initial(file, t)?,
                None => counts(&top, app)?.into_iter().map(|b| Balance(i64::from(b))).collect(),
            };
            judge_logs(t, initial, source, &Semantics::balance(), reader, &mut ticker)
        }
        LogKind::None => {
            let initial = match initial_file {
                Some(file) => read_initial(file, t)?,
                None => vec![Opaque::default(); t.len()],
            };
            judge_logs(t, initial, source, &Semantics::opaque(), reader, &mut ticker)
        }
    }
    .map_err(|e| cannot_judge(e, app))?;
    let outcome =
        Judgement { app: app.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default(), ..outcome };
    to_stdout(|out| {
        if json {
            serde_json::to_writer(&mut *out, &outcome)?;
            writeln!(out)
        } else {
            print_outcome(&outcome, out)
        }
    })?;
    Ok(ExitCode::from(outcome.exit_code))
}

/// The library's error, as the command says it: a value of the application's data that the
/// chosen `--app` does not take also names the applications that take it.
fn cannot_judge(e: LogsError, app: LogKind) -> anyhow::Error {
    if let LogsError::Read(read) = &e {
        if let LogProblem::AppValue { field, value, .. } = &*read.problem {
            let fitting: Vec<String> = LogKind::value_variants()
                .iter()
                .filter(|kind| kind.takes(field, value))
                .map(|kind| format!("--app {}", kind.name()))
                .collect();
            let (app, fitting) = (app.name(), fitting.join(", "));
            return anyhow::anyhow!("{e} (read as --app {app}; this `{field}` fits {fitting})");
        }
    }
    anyhow::Error::new(e)
}

impl LogKind {
    /// The name `--app` takes.
    fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }

    /// Whether this application reads `value` as its `field` (`state`, `payload` or `step`).
    fn takes(self, field: &str, value: &serde_json::Value) -> bool {
        fn reads<A: LogApp>(field: &str, value: &serde_json::Value) -> bool {
            let value = value.clone();
            match field {
                "state" => serde_json::from_value::<A>(value).is_ok(),
                "payload" => serde_json::from_value::<A::Msg>(value).is_ok(),
                _ => serde_json::from_value::<A::Step>(value).is_ok(),
            }
        }
        match self {
            LogKind::Bank => reads::<Bank>(field, value),
            LogKind::Orders => reads::<Orders>(field, value),
            LogKind::Stream => reads::<Stream>(field, value),
            LogKind::Balance => reads::<Balance>(field, value),
            LogKind::None => reads::<Opaque>(field, value),
        }
    }
}

/// Each process's token count from the topology file, which `app` makes the initial states from
/// (without `--initial`): a node line giving the id alone is an error naming its line, the
/// application that needs the count, and the two ways to give the initial states.
fn counts(top: &TopFile, app: LogKind) -> anyhow::Result<Vec<u32>> {
    top.counts().map_err(|e| match &e.problem {
        Problem::NoTokens { node } => anyhow::anyhow!(
            "{}:{}: node {node} has no token count, but --app {} makes its initial state from one: give `{node} TOKENS` \
             here, or every initial state with --initial FILE",
            e.file,
            e.line,
            app.name()
        ),
        _ => anyhow::Error::new(e),
    })
}

/// `--initial FILE` read by the library, its refusals naming the flag.
fn read_initial<A: DeserializeOwned>(path: &Path, topology: &Topology) -> anyhow::Result<Vec<A>> {
    chandy_lamport::logs::read_initial(path, topology).map_err(|InitialError { at, problem }| match problem {
        InitialProblem::Read(e) => anyhow::Error::new(e).context(format!("{at}: cannot read")),
        problem => anyhow::anyhow!("{at}: --initial: {problem}"),
    })
}

/// Progress lines on standard error while the logs are judged, every `every` (the first after
/// `every`, so a short check prints none): events read, snapshots judged, the rate.
pub struct Ticker {
    out: Option<Box<dyn Write>>,
    every: Duration,
    start: Instant,
    next: Instant,
    last: (Instant, usize),
    printed: bool,
}

impl Ticker {
    /// A line every `every` on standard error.
    pub fn new(every: Duration) -> Self {
        Ticker::to(every, Box::new(std::io::stderr()))
    }

    /// A line every `every` to `out`.
    pub fn to(every: Duration, out: Box<dyn Write>) -> Self {
        let start = Instant::now();
        Ticker { out: Some(out), every, start, next: start + every, last: (start, 0), printed: false }
    }

    /// No lines.
    pub fn silent() -> Self {
        Ticker { out: None, ..Ticker::new(Duration::ZERO) }
    }

    fn tick(&mut self, p: Progress) {
        let Some(out) = self.out.as_mut() else { return };
        let now = Instant::now();
        if now < self.next {
            return;
        }
        self.next = now + self.every;
        let span = now.duration_since(self.last.0).as_secs_f64().max(1e-3);
        let rate = p.events.saturating_sub(self.last.1) as f64 / span;
        self.last = (now, p.events);
        let memory = resident_bytes().map_or(String::new(), |b| format!(", {} MB resident", b >> 20));
        // Progress is no output: a failure to write it is ignored.
        let _ = writeln!(
            out,
            "verifying: {} events read, {} snapshot{} judged, {} events/s{memory}, {:.0} s",
            group(p.events),
            group(p.judged),
            if p.judged == 1 { "" } else { "s" },
            group(rate as usize),
            self.start.elapsed().as_secs_f64()
        );
        let _ = out.flush();
        self.printed = true;
    }

    /// A line said only where progress lines were printed before it.
    fn note(&mut self, line: &str) {
        if let (Some(out), true) = (self.out.as_mut(), self.printed) {
            let _ = writeln!(out, "{line}");
        }
    }
}

impl Watch for Ticker {
    fn progress(&mut self, progress: Progress) {
        self.tick(progress);
    }

    fn read_whole(&mut self, why: &NotClean) {
        self.note(&format!("verifying: {why}: reading the logs whole to word the findings"));
    }
}
