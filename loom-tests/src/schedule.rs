//! Running a scenario under shuttle: a fixed number of schedules drawn from a fixed seed, by
//! the random scheduler or by PCT, with a failing run reported as its [`Failure`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler};
use shuttle::{Config, FailurePersistence, Runner};

use crate::judge::{Failure, Passed, Tally};
use crate::panics::{install_hook, message};

/// Which shuttle scheduler draws the schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    /// Uniformly random choice at every step.
    Random,
    /// Probabilistic concurrency testing with this bug depth.
    Pct {
        /// How many ordering constraints a bug may need.
        depth: usize,
    },
}

/// The schedules to run: the scheduler, its seed and how many schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedules {
    /// The scheduler.
    pub draw: Draw,
    /// Its seed (fixed, so a run is reproducible).
    pub seed: u64,
    /// Schedules to run.
    pub iterations: usize,
}

impl Schedules {
    fn scheduler(self) -> Box<dyn Scheduler + Send> {
        match self.draw {
            Draw::Random => Box::new(RandomScheduler::new_from_seed(self.seed, self.iterations)),
            Draw::Pct { depth } => Box::new(PctScheduler::new_from_seed(self.seed, depth, self.iterations)),
        }
    }

    fn runner(self, persist_failures: bool) -> Runner<Box<dyn Scheduler + Send>> {
        let mut config = Config::new();
        // The runtime's threads record traces and catch panics: more stack than shuttle's default.
        config.stack_size = 1 << 20;
        if !persist_failures {
            config.failure_persistence = FailurePersistence::None;
        }
        Runner::new(self.scheduler(), config)
    }
}

/// What a run of schedules in which every run passed saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    /// Schedules run.
    pub schedules: usize,
    /// Of those, how many recorded a jar in transit in some snapshot.
    pub with_jars_in_transit: usize,
    /// Of those, how many left a snapshot open at shutdown.
    pub with_open: usize,
}

fn model<F, T>(counters: &Arc<Tally>, run: F) -> impl Fn() + Send + Sync + 'static
where
    F: Fn() -> Result<T, Failure> + Send + Sync + 'static,
    T: Passed,
{
    let counters = Arc::clone(counters);
    move || {
        // Inside the run, so that it wraps the hook shuttle installs when its first run starts.
        install_hook();
        counters.run(&run)
    }
}

/// Runs `run` under `schedules`; a failing run, a deadlock or a task left blocked fails the
/// calling test. Prints and returns what it saw.
pub fn check<F, T>(name: &str, schedules: Schedules, run: F) -> Checked
where
    F: Fn() -> Result<T, Failure> + Send + Sync + 'static,
    T: Passed,
{
    let counters = Arc::new(Tally::default());
    let ran = schedules.runner(true).run(model(&counters, run));
    let checked = Checked {
        schedules: ran,
        with_jars_in_transit: counters.with_jars_in_transit.load(Ordering::Relaxed),
        with_open: counters.with_open.load(Ordering::Relaxed),
    };
    println!(
        "{name}: {ran} schedules ({schedules:?}) passed, {} recorded jars in transit, {} left a snapshot open at shutdown",
        checked.with_jars_in_transit, checked.with_open
    );
    checked
}

/// Runs `run` under `schedules` expecting a failing run; returns its [`Failure`]. Panics if no
/// schedule fails, or one fails with anything else (a deadlock, say).
pub fn find_failure<F, T>(name: &str, schedules: Schedules, run: F) -> Failure
where
    F: Fn() -> Result<T, Failure> + Send + Sync + 'static,
    T: Passed,
{
    let runner = schedules.runner(false);
    let counters = Arc::new(Tally::default());
    let model = model(&counters, run);
    let payload = match catch_unwind(AssertUnwindSafe(|| runner.run(model))) {
        Ok(ran) => panic!("{name}: {ran} schedules ({schedules:?}) and no failure"),
        Err(payload) => payload,
    };
    let runs = counters.runs.load(Ordering::Relaxed);
    match payload.downcast::<Failure>() {
        Ok(failure) => {
            println!("{name}: shuttle found {failure:?} in schedule {runs} ({schedules:?})");
            *failure
        }
        Err(other) => {
            let message = message(other.as_ref());
            panic!("{name}: shuttle failed with something other than a judged failure: {message}")
        }
    }
}
