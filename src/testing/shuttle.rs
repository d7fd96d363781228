//! Executions shuttle schedules, judged (built under `--cfg shuttle`): [`check_random`] and
//! [`check_pct`] run a scenario under shuttle's random and PCT schedulers and judge the
//! [`Recorder`] each execution returns; [`replay`] runs one failing schedule again.
//!
//! Shuttle samples schedules rather than exploring them all: a pass says that the executions
//! run passed, no more. The random scheduler picks a thread at every scheduling point; PCT
//! (probabilistic concurrency testing) gives threads random priorities and changes them at
//! `depth - 1` random points, which finds with good probability the bugs that need at most
//! `depth` ordering constraints. Both are reproducible: a failing execution panics with the
//! judge's findings, its logs and its schedule, which [`replay`] (or `shuttle::replay`) runs
//! again, deterministically, as long as the scenario's only nondeterminism is the schedule.

use ::shuttle::scheduler::{PctScheduler, RandomScheduler, ReplayScheduler, Scheduler};
use ::shuttle::{Config, Runner};
use ::shuttle_engine::runtime::execution::CurrentSchedule;
use ::shuttle_engine::scheduler::serialization::serialize_schedule;

use super::recorder::Recorder;
use super::verdict::Expect;
use crate::formats::jsonl::LogApp;

/// What a run of schedules in which every execution passed covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    /// Executions run (and judged).
    pub executions: usize,
}

/// The runner: the scenario's threads get a 1 MiB stack (shuttle's default is 60 KiB; the
/// judge runs on the scenario's main thread).
fn runner<S: Scheduler + 'static>(scheduler: S) -> Runner<S> {
    let mut config = Config::new();
    config.stack_size = 1 << 20;
    Runner::new(scheduler, config)
}

/// The model shuttle runs: the scenario, then the judge; a failing execution panics with the
/// findings and the schedule that led to it.
fn judged<A, F>(scenario: F) -> impl Fn() + Send + Sync + 'static
where
    A: LogApp,
    F: Fn() -> Recorder<A> + Send + Sync + 'static,
{
    move || {
        let recorder = scenario();
        if let Err(failure) = recorder.check(Expect::Snapshots) {
            // Shuttle wraps the hex at 76 columns; its reader skips whitespace. One line here.
            let schedule: String = serialize_schedule(&CurrentSchedule::get_schedule()).split_whitespace().collect();
            panic!(
                "{failure}schedule: {schedule:?}\nreplay it: chandy_lamport::testing::shuttle::replay(scenario, {schedule:?})"
            );
        }
    }
}

fn report(how: &str, executions: usize) -> Checked {
    println!("{executions} executions run by shuttle ({how}), every one judged and passing; sampled, not exhaustive");
    Checked { executions }
}

/// Runs `scenario` under shuttle's random scheduler for `iterations` executions, from `seed`
/// (`None`: a random seed, or `SHUTTLE_RANDOM_SEED`), judging the recorder each returns: every
/// snapshot must hold. The scenario builds its recorder, runs the implementation under test on
/// shuttle's threads, joins them all and returns the recorder. Prints and returns how many
/// executions ran; panics on the first failing one with its schedule.
pub fn check_random<A, F>(scenario: F, iterations: usize, seed: Option<u64>) -> Checked
where
    A: LogApp,
    F: Fn() -> Recorder<A> + Send + Sync + 'static,
{
    let scheduler = match seed {
        Some(seed) => RandomScheduler::new_from_seed(seed, iterations),
        None => RandomScheduler::new(iterations),
    };
    let executions = runner(scheduler).run(judged(scenario));
    let how = match seed {
        Some(seed) => format!("random, seed {seed}"),
        None => "random".to_string(),
    };
    report(&how, executions)
}

/// Runs `scenario` under shuttle's PCT scheduler with bug depth `depth` for `iterations`
/// executions (seeded by `SHUTTLE_RANDOM_SEED` when set), judging each as [`check_random`] does.
pub fn check_pct<A, F>(scenario: F, iterations: usize, depth: usize) -> Checked
where
    A: LogApp,
    F: Fn() -> Recorder<A> + Send + Sync + 'static,
{
    let executions = runner(PctScheduler::new(depth, iterations)).run(judged(scenario));
    report(&format!("PCT, depth {depth}"), executions)
}

/// Runs `scenario` once, on `schedule` (as a failing execution printed it), and judges it:
/// panics with the same findings if the execution fails again.
pub fn replay<A, F>(scenario: F, schedule: &str)
where
    A: LogApp,
    F: Fn() -> Recorder<A> + Send + Sync + 'static,
{
    runner(ReplayScheduler::new_from_encoded(schedule)).run(judged(scenario));
}
