//! What judging a run's logs concludes, as data: a verdict per snapshot with its findings, the
//! damage, the run's own consistency, the overall verdict and its exit code.

use serde::Serialize;

use super::findings::Finding;

/// Exit code: every snapshot was judged and holds, and the run is consistent.
pub const EXIT_OK: u8 = 0;
/// Exit code: a finding (a snapshot violates the theorem, or the run is inconsistent).
pub const EXIT_FAIL: u8 = 1;
/// Exit code: nothing failed, but not everything was judged (no snapshot, damaged logs, a
/// logging error).
pub const EXIT_UNDECIDED: u8 = 3;

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

/// Everything judging a run's logs concludes (what `model verify` reports).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// Every snapshot was judged and holds, and the run is consistent.
    pub ok: bool,
    /// The log files read.
    pub files: Vec<String>,
    /// What the states are: the application's name, set by the caller (empty when unset).
    pub app: String,
    /// Events read from the logs, those set aside included (a `marker-send` line naming no
    /// channel is one event per outgoing channel).
    pub events: usize,
    /// Of [`Judgement::events`], those set aside, not in the run judged: receipts and losses
    /// of messages or markers no log sends (damage, reported in [`Judgement::damage`]).
    pub set_aside: usize,
    /// Damage to the logs: what was not read, and why; and logging errors, the snapshots whose
    /// order the logs do not tell (clause `logging`; the first [`MAX_FINDINGS`]).
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
    /// What breaks the algorithm's rules but leaves the theorem holding, so no verdict: a
    /// message sent after its sender recorded and before its marker on that channel, which the
    /// receiver's record leaves out (clause `marker-rule`; the first [`MAX_FINDINGS`]).
    pub warnings: Vec<Finding>,
    /// Warnings past the first [`MAX_FINDINGS`], counted and not listed.
    pub more_warnings: usize,
    /// The overall verdict in words.
    pub summary: String,
    /// The exit code.
    pub exit_code: u8,
}

/// A list capped at [`MAX_FINDINGS`], counting the rest.
#[derive(Default)]
pub(super) struct Capped {
    pub(super) listed: Vec<Finding>,
    pub(super) more: usize,
}

impl Capped {
    pub(super) fn push(&mut self, f: Finding) {
        if self.listed.len() == MAX_FINDINGS {
            self.more += 1;
        } else {
            self.listed.push(f);
        }
    }
}

/// The overall verdict and exit code; `warnings` change neither.
pub(super) fn conclude(
    files: Vec<String>,
    (events, set_aside): (usize, usize),
    damage: Capped,
    snapshots: Vec<SnapshotVerdict>,
    run: Capped,
    warnings: Capped,
) -> Judgement {
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
    // Logging errors are no damage: the logs are whole, but do not tell an order.
    let damaged = damage.iter().any(|f| f.clause != "logging") || more_damage > 0;
    let mislogged = damage.iter().any(|f| f.clause == "logging");
    if !unjudged.is_empty() {
        let s = if unjudged.len() == 1 { "" } else { "s" };
        let why = match (damaged, mislogged) {
            (false, true) => "a logging error (see above)",
            (true, true) => "the logs are damaged, and a logging error (see above)",
            _ => "the logs are damaged",
        };
        summary.push_str(&format!("; snapshot{s} {} not judged: {why}", list(&unjudged)));
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
    let warned = warnings.listed.len() + warnings.more;
    if warned > 0 {
        let s = if warned == 1 { "" } else { "s" };
        summary.push_str(&format!("; {warned} warning{s} (see above)"));
    }
    Judgement {
        ok,
        files,
        app: String::new(),
        events,
        set_aside,
        damage,
        more_damage,
        snapshots,
        run: run.listed,
        more_run: run.more,
        warnings: warnings.listed,
        more_warnings: warnings.more,
        summary,
        exit_code,
    }
}
