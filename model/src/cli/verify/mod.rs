//! `model verify`: checks the logs of any implementation of the marker algorithm — JSON lines,
//! one event a line (see `chandy_lamport::formats::jsonl`) — against the theorem, snapshot by
//! snapshot, with the library's trace checker. With an application's states (`--app bank`,
//! `orders`, `stream`, `balance`) the checker recomputes every state by the application's
//! transitions: the states in the logs are only cross-checked, never trusted. With `--app none`
//! states and payloads are opaque, and only what needs no application is judged.

mod findings;
mod initial;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::json::{Amount, Balance, Json, Opaque};
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::check::{check_ids, fifo_breaks, unterminated, Clause, Violation};
use chandy_lamport::check::{EventKind, MsgId, Trace};
use chandy_lamport::formats::jsonl::{judge_in_one_pass, parse_logs, read_logs, LogApp, LogId, Logs, States};
use chandy_lamport::formats::jsonl::{Clean, Progress, Source};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::protocol::{GlobalSnapshot, GlobalState};
use chandy_lamport::{Application, SnapshotId, Topology};
use clap::ValueEnum;
use serde::Serialize;

use super::output::{note, to_stdout};
use super::report::{group, EXIT_FAIL, EXIT_OK, EXIT_UNDECIDED};
use super::run::resident_bytes;
use findings::{clause_name, clause_title, AsJson, Names};
pub use findings::{Conserved, Finding};
pub use initial::read_initial;

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

/// The most findings listed for one snapshot, and for the run: past that they are counted, so
/// that logs checked against the wrong topology (a thousand processes that never logged) give a
/// page, not millions of lines.
pub const MAX_FINDINGS: usize = 25;

/// The verdict on one snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SnapshotVerdict {
    /// The snapshot id.
    pub id: u32,
    /// Whether it holds.
    pub holds: bool,
    /// Whether it was judged: `false` when damage to the logs may hold what is missing of it.
    pub judged: bool,
    /// Why it was not judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
    /// Why not: the first [`MAX_FINDINGS`].
    pub findings: Vec<Finding>,
    /// Findings past the first [`MAX_FINDINGS`], counted and not listed.
    pub more_findings: usize,
}

/// Everything `model verify` reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Every snapshot was judged and holds, and the run is consistent.
    pub ok: bool,
    /// The log files read.
    pub files: Vec<String>,
    /// What the states are (`--app`).
    pub app: String,
    /// Events read (in the run judged: without those damage cut off).
    pub events: usize,
    /// Damage to the logs: what was not read, and why (the first [`MAX_FINDINGS`]).
    pub damage: Vec<Finding>,
    /// Damage past the first [`MAX_FINDINGS`], counted and not listed.
    pub more_damage: usize,
    /// One verdict per snapshot id found in the logs.
    pub snapshots: Vec<SnapshotVerdict>,
    /// Problems of the run as a whole: FIFO breaks, logged states the transitions do not
    /// produce (the first [`MAX_FINDINGS`]).
    pub run: Vec<Finding>,
    /// Problems of the run past the first [`MAX_FINDINGS`], counted and not listed.
    pub more_run: usize,
    /// The overall verdict in words.
    pub summary: String,
    /// The exit code.
    pub exit_code: u8,
}

/// How the logs of one application are judged.
pub struct Mode<A: Application> {
    /// Interpreted or opaque states.
    pub states: States<A>,
    /// The conserved amount, for an application with one.
    pub amount: Option<Conserved<A>>,
}

impl<A: Application> Mode<A> {
    /// The application's own states, nothing conserved checked.
    pub fn interpreted() -> Self {
        Mode { states: States::Interpreted, amount: None }
    }

    fn opaque(&self) -> bool {
        matches!(self.states, States::Opaque { .. })
    }
}

impl Mode<Balance> {
    /// `--app balance`: integer states, the amount conserved.
    pub fn balance() -> Self {
        let amount: Conserved<Balance> = Conserved { state: |b| i128::from(b.0), msg: |m: &Amount| i128::from(m.0) };
        Mode { states: States::Interpreted, amount: Some(amount) }
    }
}

impl Mode<Opaque> {
    /// `--app none`: opaque states, a record may log none.
    pub fn none() -> Self {
        Mode { states: States::Opaque { blank: Opaque(Json(serde_json::Value::Null)) }, amount: None }
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
    fn initial<A: Spec + LogApp>(top: &TopFile, path: &Path, file: Option<&Path>) -> anyhow::Result<Vec<A>> {
        if let Some(file) = file {
            return read_initial(file, &top.topology);
        }
        match chandy_lamport::apps::spec::too_many_tokens::<A>(&top.tokens) {
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
        Ok(top.topology.processes().map(|p| A::initial(p, top.tokens.get(p.index()).copied().unwrap_or(0))).collect())
    }
    let t = &top.topology;
    let mut ticker = Ticker::new(Duration::from_secs(3));
    let source = Source::Files(traces);
    let mut by = |i, mode| verify_by(t, i, source, mode, reader, &mut ticker);
    let outcome = match app {
        LogKind::Bank => by(initial::<Bank>(&top, topology, initial_file)?, &Mode::interpreted())?,
        LogKind::Orders => verify_by(
            t,
            initial::<Orders>(&top, topology, initial_file)?,
            source,
            &Mode::interpreted(),
            reader,
            &mut ticker,
        )?,
        LogKind::Stream => verify_by(
            t,
            initial::<Stream>(&top, topology, initial_file)?,
            source,
            &Mode::interpreted(),
            reader,
            &mut ticker,
        )?,
        LogKind::Balance => {
            let initial = match initial_file {
                Some(file) => read_initial(file, t)?,
                None => top.tokens.iter().map(|&b| Balance(i64::from(b))).collect(),
            };
            verify_by(t, initial, source, &Mode::balance(), reader, &mut ticker)?
        }
        LogKind::None => {
            let initial = match initial_file {
                Some(file) => read_initial(file, t)?,
                None => vec![Opaque::default(); t.len()],
            };
            verify_by(t, initial, source, &Mode::none(), reader, &mut ticker)?
        }
    };
    let outcome =
        Outcome { app: app.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default(), ..outcome };
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

/// A list capped at [`MAX_FINDINGS`], counting the rest.
#[derive(Default)]
struct Capped {
    listed: Vec<Finding>,
    more: usize,
}

impl Capped {
    fn push(&mut self, f: Finding) {
        if self.listed.len() == MAX_FINDINGS {
            self.more += 1;
        } else {
            self.listed.push(f);
        }
    }
}

/// Reads the logs of a run of `A` (initial states `initial`) and checks every snapshot they
/// mention; bad logs are an error naming the file and line.
pub fn verify_logs<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    files: &[PathBuf],
    mode: &Mode<A>,
) -> anyhow::Result<Outcome> {
    verify_by(topology, initial, Source::Files(files), mode, Reader::Stream, &mut Ticker::silent())
}

/// [`verify_logs`] on texts already read: `(file name, text)` pairs.
pub fn verify_texts<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    texts: &[(String, String)],
    mode: &Mode<A>,
) -> anyhow::Result<Outcome> {
    verify_by(topology, initial, Source::Texts(texts), mode, Reader::Stream, &mut Ticker::silent())
}

/// [`verify_logs`] or [`verify_texts`] with either reader: the verdict, the findings and the
/// errors are the same with both. Progress lines go to `ticker`.
pub fn verify_by<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    source: Source<'_>,
    mode: &Mode<A>,
    reader: Reader,
    ticker: &mut Ticker,
) -> anyhow::Result<Outcome> {
    let files: Vec<String> = match source {
        Source::Files(files) => files.iter().map(|f| f.display().to_string()).collect(),
        Source::Texts(texts) => texts.iter().map(|(file, _)| file.clone()).collect(),
    };
    if reader == Reader::Stream {
        let mut tick = |p: Progress| ticker.tick(p);
        match judge_in_one_pass(topology, &initial, source, &mode.states, mode.amount, &mut tick) {
            Ok(clean) => return Ok(clean_outcome(files, &clean)),
            Err(why) => ticker.note(&format!("verifying: {why}: reading the logs whole to word the findings")),
        }
    }
    let logs: Logs<A> = match source {
        Source::Files(paths) => read_logs(topology, initial, paths, &mode.states)?,
        Source::Texts(texts) => parse_logs(topology, initial, texts, &mode.states)?,
    };
    judge(topology, &logs, files, mode)
}

/// The outcome of clean logs: every snapshot holds, the run is consistent, nothing is damaged.
fn clean_outcome(files: Vec<String>, clean: &Clean) -> Outcome {
    let snapshots = clean
        .snapshots
        .iter()
        .map(|s| SnapshotVerdict {
            id: s.0,
            holds: true,
            judged: true,
            not_judged: None,
            findings: Vec::new(),
            more_findings: 0,
        })
        .collect();
    conclude(files, clean.events, Capped::default(), snapshots, Capped::default())
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

/// Checks every snapshot the logs mention, and the run itself.
fn judge<A: LogApp>(
    topology: &Topology,
    logs: &Logs<A>,
    files: Vec<String>,
    mode: &Mode<A>,
) -> anyhow::Result<Outcome> {
    if logs.kept.iter().all(|&(read, _)| read == 0) {
        anyhow::bail!("{}: no event in the logs: there is no run to verify", files.join(", "));
    }
    let names = Names::new(topology, logs);
    // Without an application, the replays (clauses c and d, logged states) have nothing to
    // recompute: the checker's transitions leave opaque states as they are.
    let judged = |v: &Violation| {
        !(mode.opaque()
            && matches!(v.clause(), Clause::RecordedReachable | Clause::EndReachable | Clause::LoggedStates))
    };
    let mut run = Capped::default();
    for b in fifo_breaks(topology, &logs.trace) {
        run.push(names.fifo(&b));
    }
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut logged = |v: &Violation, run: &mut Capped| {
        if let Violation::LoggedState { event, reason, .. } = v {
            if judged(v) && seen.insert((event.position, reason.clone())) {
                run.push(Finding {
                    clause: clause_name(v.clause()),
                    message: names.rename(reason),
                    at: names.logs.location(event.position).map(|l| format!("event at {l}")).into_iter().collect(),
                    consequences: Vec::new(),
                });
            }
        }
    };
    let by_name: HashMap<&LogId, MsgId> = logs.names.iter().map(|(id, name)| (name, *id)).collect();
    let mut snapshots = Vec::with_capacity(logs.claims.len());
    for claim in &logs.claims {
        let violations = match &claim.snapshot {
            Some(snapshot) => {
                let ids: Vec<Vec<MsgId>> = claim
                    .recorded
                    .iter()
                    .map(|ids| ids.iter().filter_map(|id| by_name.get(id).copied()).collect())
                    .collect();
                check_ids(topology, &logs.trace, snapshot, &ids, &AsJson)
                    .with_context(|| format!("snapshot {} cannot be checked", claim.id))?
                    .violations
            }
            None if claim.unjudged.is_some() => Vec::new(),
            None => unterminated(topology, &logs.trace, claim.id)
                .with_context(|| format!("snapshot {} cannot be checked", claim.id))?,
        };
        // Root causes first: the logs' claims and clauses a, b, e; then the replays (c, d),
        // which fail as a consequence of those when there are any.
        let mut causes: Vec<Finding> = claim.anomalies.iter().map(|a| names.anomaly(a)).collect();
        let mut replays: Vec<Finding> = Vec::new();
        for v in &violations {
            if v.clause() == Clause::LoggedStates {
                logged(v, &mut run);
            } else if !judged(v) {
                continue;
            } else if matches!(v.clause(), Clause::RecordedReachable | Clause::EndReachable) {
                replays.push(with_records(&names, claim, v));
            } else {
                causes.push(names.violation(claim, v));
            }
        }
        // A wrong total follows from any other finding; alone, it is the finding.
        if let Some(total) = mode.amount.and_then(|amount| findings::total(&names, claim, amount)) {
            match causes.is_empty() {
                true => causes.push(total),
                false => replays.insert(0, total),
            }
        }
        if causes.is_empty() && !replays.is_empty() {
            // No finding of its own explains a failed replay: the first is the cause.
            causes.push(replays.remove(0));
        }
        if let Some(first) = causes.first_mut() {
            first.consequences = replays;
        }
        let mut findings = Capped::default();
        causes.into_iter().for_each(|f| findings.push(f));
        let judged = claim.unjudged.is_none();
        snapshots.push(SnapshotVerdict {
            id: claim.id.0,
            holds: judged && findings.listed.is_empty(),
            judged,
            not_judged: claim.unjudged.clone(),
            findings: findings.listed,
            more_findings: findings.more,
        });
    }
    if !mode.opaque() && logs.claims.iter().all(|c| c.snapshot.is_none()) {
        // No complete snapshot, so no check above cross-checked the logged states: they are
        // cross-checked through a snapshot id the logs do not use (its own verdict, never
        // recorded, is not reported).
        let probe = GlobalSnapshot {
            id: SnapshotId(u32::MAX),
            state: GlobalState {
                processes: logs.trace.initial.clone(),
                channels: vec![Vec::new(); topology.channels().len()],
            },
        };
        let none = vec![Vec::new(); topology.channels().len()];
        let report = check_ids(topology, &logs.trace, &probe, &none, &AsJson).context("the logs cannot be checked")?;
        for v in report.violations.iter().filter(|v| v.clause() == Clause::LoggedStates) {
            logged(v, &mut run);
        }
    }
    let mut damage = Capped::default();
    logs.damage.iter().for_each(|d| damage.push(names.damage(d)));
    Ok(conclude(files, logs.trace.events.len(), damage, snapshots, run))
}

/// The overall verdict and exit code.
fn conclude(
    files: Vec<String>,
    events: usize,
    damage: Capped,
    snapshots: Vec<SnapshotVerdict>,
    run: Capped,
) -> Outcome {
    let (more_damage, damage) = (damage.more, damage.listed);
    let failed: Vec<u32> = snapshots.iter().filter(|s| s.judged && !s.holds).map(|s| s.id).collect();
    let unjudged: Vec<u32> = snapshots.iter().filter(|s| !s.judged).map(|s| s.id).collect();
    let judged = snapshots.len() - unjudged.len();
    let consistent = run.listed.is_empty();
    // Logs with no snapshot judge nothing: never a pass (a failed collection of logs, an
    // implementation that never snapshots), though the run was checked. Damaged logs are no
    // pass either, though the snapshots they do not touch get their verdicts.
    let ok = failed.is_empty() && consistent && judged > 0 && unjudged.is_empty() && damage.is_empty();
    let exit_code = match (ok, failed.is_empty() && consistent) {
        (true, _) => EXIT_OK,
        (false, true) => EXIT_UNDECIDED,
        (false, false) => EXIT_FAIL,
    };
    let list = |ids: &[u32]| ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    // "judged" only where some snapshot or event was not.
    let judged_word = if unjudged.is_empty() && damage.is_empty() { "" } else { " judged" };
    let mut summary = match (judged, failed.len()) {
        (0, _) if unjudged.is_empty() => "no snapshot in the logs: nothing was judged".to_string(),
        (0, _) => "no snapshot could be judged".to_string(),
        (1, 0) => format!("the snapshot{judged_word} holds"),
        (n, 0) => format!("all {n} snapshots{judged_word} hold"),
        (1, _) => format!("the snapshot{judged_word} violates the theorem (snapshot {})", failed[0]),
        (n, k) => {
            let verb = if k == 1 { "violates" } else { "violate" };
            format!("{k} of {n} snapshots{judged_word} {verb} the theorem (snapshot {})", list(&failed))
        }
    };
    if !unjudged.is_empty() {
        let s = if unjudged.len() == 1 { "" } else { "s" };
        summary.push_str(&format!("; snapshot{s} {} not judged: the logs are damaged", list(&unjudged)));
    } else if !damage.is_empty() {
        summary.push_str("; the logs are damaged (see above)");
    }
    if !consistent {
        let fifo = run.listed.iter().any(|f| f.clause == "fifo");
        let states = run.listed.iter().any(|f| f.clause != "fifo");
        summary.push_str(match (fifo, states) {
            (true, false) => "; a channel is not FIFO: the theorem's precondition does not hold for this run",
            (false, _) => "; the run is inconsistent: a logged state is not what the transitions produce",
            (true, true) => "; a channel is not FIFO, and a logged state is not what the transitions produce",
        });
    }
    Outcome {
        ok,
        files,
        app: String::new(),
        events,
        damage,
        more_damage,
        snapshots,
        run: run.listed,
        more_run: run.more,
        summary,
        exit_code,
    }
}

/// A replay's finding (clause c or d); when the recorded states are not what the transitions
/// give and no single event is to blame, the records whose state differs.
fn with_records<A: LogApp>(
    names: &Names<'_, A>,
    claim: &chandy_lamport::formats::jsonl::Claim<A>,
    v: &Violation,
) -> Finding {
    let mut finding = names.violation(claim, v);
    if let (Violation::RecordedUnreachable { event: None, .. }, Some(snapshot)) = (v, &claim.snapshot) {
        let replayed = states_at_records(names.topology, &names.logs.trace, &claim.records);
        for (p, (state, recorded)) in replayed.iter().zip(&snapshot.state.processes).enumerate() {
            let (Some(state), Some(position)) = (state, claim.records[p]) else { continue };
            if state != recorded {
                let name = names.topology.name(chandy_lamport::ProcessId(p as u16));
                let json = |a: &A| serde_json::to_string(a).unwrap_or_else(|_| format!("{a:?}"));
                if let Some(l) = names.logs.location(position) {
                    finding.at.push(format!(
                        "{name}'s record at {l}: recorded {}, its transitions give {}",
                        json(recorded),
                        json(state)
                    ));
                }
            }
        }
    }
    finding
}

/// Each process's state at its record event (by position in `records`), recomputed from its
/// initial state by the application's transitions over its own events; `None` where it never
/// recorded or a transition refused a step before.
fn states_at_records<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    records: &[Option<usize>],
) -> Vec<Option<A>> {
    let mut states = trace.initial.clone();
    let mut stuck = vec![false; states.len()];
    let mut out = vec![None; states.len()];
    let mut sends: HashMap<MsgId, &A::Msg> = HashMap::new();
    for (position, e) in trace.events.iter().enumerate() {
        let p = e.process.index();
        if let EventKind::Send { id, msg, .. } = &e.kind {
            sends.insert(*id, msg);
        }
        if p >= states.len() || stuck[p] {
            continue;
        }
        let ok = match &e.kind {
            EventKind::Send { channel, msg, .. } => states[p].on_send(topology.channel(*channel).to, msg).is_ok(),
            EventKind::Receive { channel, id } => match sends.get(id) {
                Some(msg) => {
                    states[p].on_message(topology.channel(*channel).from, msg);
                    true
                }
                None => false,
            },
            EventKind::Internal { step } => states[p].on_internal(step).is_ok(),
            _ => true,
        };
        stuck[p] = !ok;
        if ok && records.get(p).copied().flatten() == Some(position) {
            out[p] = Some(states[p].clone());
        }
    }
    out
}

/// The verdicts as text: a line per snapshot, the findings under it, the run's consistency and
/// the overall verdict.
pub fn print_outcome(outcome: &Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    let files = outcome.files.len();
    writeln!(
        out,
        "read {} event{} from {files} file{}; {} snapshot{} found",
        outcome.events,
        if outcome.events == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
        outcome.snapshots.len(),
        if outcome.snapshots.len() == 1 { "" } else { "s" },
    )?;
    fn print(out: &mut dyn Write, f: &Finding, indent: &str) -> std::io::Result<()> {
        writeln!(out, "{indent}- {}: {}", clause_title(f.clause), f.message)?;
        for at in &f.at {
            writeln!(out, "{indent}    {at}")?;
        }
        if !f.consequences.is_empty() {
            writeln!(out, "{indent}    which also breaks:")?;
            for c in &f.consequences {
                print(out, c, &format!("{indent}      "))?;
            }
        }
        Ok(())
    }
    if !outcome.damage.is_empty() {
        writeln!(out, "logs: DAMAGED")?;
        for f in &outcome.damage {
            print(out, f, "  ")?;
        }
        if outcome.more_damage > 0 {
            writeln!(out, "  ... and {} more (the first {MAX_FINDINGS} are listed)", outcome.more_damage)?;
        }
    }
    for s in &outcome.snapshots {
        match (&s.not_judged, s.holds) {
            (Some(why), _) => writeln!(out, "snapshot {}: not judged: {why}", s.id)?,
            (None, true) => writeln!(out, "snapshot {}: holds", s.id)?,
            (None, false) => {
                writeln!(out, "snapshot {}: VIOLATED", s.id)?;
                for f in &s.findings {
                    print(out, f, "  ")?;
                }
                if s.more_findings > 0 {
                    writeln!(out, "  ... and {} more findings (the first {MAX_FINDINGS} are listed)", s.more_findings)?;
                }
            }
        }
    }
    if outcome.run.is_empty() {
        if outcome.app == "none" {
            writeln!(out, "run: consistent (every channel FIFO)")?;
        } else {
            writeln!(out, "run: consistent (every channel FIFO; every logged state is what the transitions produce)")?;
        }
    } else {
        writeln!(out, "run: INCONSISTENT")?;
        for f in &outcome.run {
            print(out, f, "  ")?;
        }
        if outcome.more_run > 0 {
            writeln!(out, "  ... and {} more findings (the first {MAX_FINDINGS} are listed)", outcome.more_run)?;
        }
    }
    writeln!(out, "verdict: {}", outcome.summary)
}
