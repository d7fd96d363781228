//! Every execution loom explores, judged (built under `--cfg loom`): [`check`] runs a scenario
//! in `loom::model` and judges the [`Recorder`] each execution returns.
//!
//! Loom explores the interleavings of the scenario's threads at its own operations (locks,
//! channels, atomics from `loom::sync`, threads from `loom::thread`). Without a preemption
//! bound it explores all of them (up to its equivalences): a pass then covers every schedule.
//! With a bound `N` it explores only the schedules in which threads are preempted at most `N`
//! times: a pass is bounded, not exhaustive, and [`check`] says so. Loom allows 5 threads,
//! the scenario's own (main) included; it does not model a channel's disconnection, and
//! `try_recv` is no scheduling point.
//!
//! A failing execution panics with the judge's findings, the execution's logs and its number.
//! Loom explores in the same order every time, so rerunning the test reaches it again
//! (`LOOM_LOG=trace` logs each step of every execution, `LOOM_LOCATION=1` where each happened).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::recorder::Recorder;
use super::verdict::Expect;
use crate::formats::jsonl::LogApp;

/// What an exploration in which every execution passed covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explored {
    /// Executions explored (and judged).
    pub executions: usize,
    /// The preemption bound: `None`, every interleaving; `Some(n)`, only those with at most `n`
    /// preemptions.
    pub preemption_bound: Option<usize>,
}

impl std::fmt::Display for Explored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.preemption_bound {
            None => {
                write!(f, "{} executions explored by loom, every interleaving (no preemption bound)", self.executions)
            }
            Some(n) => write!(
                f,
                "{} executions explored by loom, bounded by preemption bound {n}, not exhaustive",
                self.executions
            ),
        }
    }
}

/// Runs `scenario` in `loom::model` with at most `preemption_bound` preemptions per execution
/// (`None`: no bound), judging the recorder each execution returns: every snapshot must hold
/// ([`Recorder::assert_holds`]). The scenario builds its recorder, runs the implementation under
/// test on loom's threads, joins them all and returns the recorder. Prints and returns what was
/// explored; panics on the first failing execution (or when loom fails it: a deadlock, a
/// message left in a channel). Loom's own limits from the environment
/// (`LOOM_MAX_PERMUTATIONS`, `LOOM_MAX_DURATION`) are ignored: the exploration is the stated one.
pub fn check<A, F>(preemption_bound: Option<usize>, scenario: F) -> Explored
where
    A: LogApp,
    F: Fn() -> Recorder<A> + Send + Sync + 'static,
{
    let mut builder = ::loom::model::Builder::new();
    builder.preemption_bound = preemption_bound;
    builder.max_permutations = None;
    builder.max_duration = None;
    let executions = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&executions);
    builder.check(move || {
        let n = counted.fetch_add(1, Ordering::Relaxed) + 1;
        let recorder = scenario();
        if let Err(failure) = recorder.check(Expect::Snapshots) {
            let bound = match preemption_bound {
                None => "no preemption bound".to_string(),
                Some(b) => format!("preemption bound {b}"),
            };
            panic!(
                "{failure}found by loom in execution {n} ({bound}); loom explores in the same order every time: \
                 rerun the test to reach it again (LOOM_LOG=trace logs its steps)"
            );
        }
    });
    let explored = Explored { executions: executions.load(Ordering::Relaxed), preemption_bound };
    println!("{explored}");
    explored
}
