//! Running a scenario under loom: every interleaving of the runtime's threads (up to a
//! preemption bound), counted, with a failing run reported as its [`Failure`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::judge::{Failure, Passed, Tally};
use crate::panics::{install_hook, message};

/// What an exploration in which every run passed saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explored {
    /// Interleavings explored (executions of the model closure).
    pub interleavings: usize,
    /// Of those, how many recorded a jar in transit in some snapshot.
    pub with_jars_in_transit: usize,
    /// Of those, how many left a snapshot open at shutdown.
    pub with_open: usize,
}

fn builder(preemption_bound: Option<usize>) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = preemption_bound;
    builder
}

fn model<F, T>(counters: &Arc<Tally>, run: F) -> impl Fn() + Send + Sync + 'static
where
    F: Fn() -> Result<T, Failure> + Send + Sync + 'static,
    T: Passed,
{
    install_hook();
    let counters = Arc::clone(counters);
    move || counters.run(&run)
}

/// Explores `run` under loom and returns what it saw; a failing run (a [`Failure`]), a
/// deadlock or a leaked message fails the calling test. Prints the number of interleavings.
pub fn explore<F, T>(name: &str, preemption_bound: Option<usize>, run: F) -> Explored
where
    F: Fn() -> Result<T, Failure> + Send + Sync + 'static,
    T: Passed,
{
    let counters = Arc::new(Tally::default());
    builder(preemption_bound).check(model(&counters, run));
    let explored = Explored {
        interleavings: counters.runs.load(Ordering::Relaxed),
        with_jars_in_transit: counters.with_jars_in_transit.load(Ordering::Relaxed),
        with_open: counters.with_open.load(Ordering::Relaxed),
    };
    println!(
        "{name}: {} interleavings explored (preemption bound {preemption_bound:?}), {} recorded jars in transit, {} left a snapshot open at shutdown",
        explored.interleavings, explored.with_jars_in_transit, explored.with_open
    );
    explored
}

/// Explores `run` under loom expecting it to fail with a [`Failure`]; returns that failure.
/// Panics if loom explores every interleaving without one, or fails with anything else (a
/// deadlock, a leaked message). Prints how many interleavings it took.
pub fn find_failure<F, T>(name: &str, preemption_bound: Option<usize>, run: F) -> Failure
where
    F: Fn() -> Result<T, Failure> + Send + Sync + 'static,
    T: Passed,
{
    let counters = Arc::new(Tally::default());
    let model = model(&counters, run);
    let result = catch_unwind(AssertUnwindSafe(|| builder(preemption_bound).check(model)));
    let interleavings = counters.runs.load(Ordering::Relaxed);
    let payload = match result {
        Ok(()) => panic!("{name}: loom explored {interleavings} interleavings and found no failure"),
        Err(payload) => payload,
    };
    match payload.downcast::<Failure>() {
        Ok(failure) => {
            println!(
                "{name}: loom found {failure:?} in interleaving {interleavings} (preemption bound {preemption_bound:?})"
            );
            *failure
        }
        Err(other) => {
            let message = message(other.as_ref());
            panic!("{name}: loom failed with something other than a judged failure: {message}")
        }
    }
}
