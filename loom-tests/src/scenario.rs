//! The driver of a scenario: a script of requests the main thread makes to a [`Cluster`] of any
//! application ([`Service`] and [`Spec`]), run to shutdown and judged by [`judge`]. The scripts
//! themselves are the application's: the bank's are in [`crate::houses`], for any number of
//! houses, so loom runs them with 2–3 houses and shuttle with 5–8.

use std::fmt::Debug;

use chandy_lamport::runtime::{Cluster, Options, Outcome, Service};
use chandy_lamport::{Initiators, ProcessId, SnapshotId, Spec, Topology, Variant};

use crate::judge::{judge, Failure, Judged, Requests};

/// One request of the main thread; `C` is the application's command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<C> {
    /// Process `at` handles `command`, which must send `sends` application messages (the judge
    /// checks that every one was sent and received).
    Command {
        /// The process.
        at: u16,
        /// The command.
        command: C,
        /// The application messages it sends.
        sends: usize,
    },
    /// Process `at` initiates `snapshot`.
    Initiate {
        /// The snapshot.
        snapshot: u32,
        /// The initiator.
        at: u16,
    },
    /// Block until `snapshot` is assembled.
    Wait {
        /// The snapshot.
        snapshot: u32,
    },
}

/// A topology, the initial states, who may initiate, and the main thread's script; the cluster
/// is shut down after the last step.
#[derive(Clone, Debug)]
pub struct Scenario<A: Service>
where
    A::Command: Clone + Debug,
{
    /// The processes and their channels.
    pub topology: Topology,
    /// Each process's initial state, by index.
    pub initial: Vec<A>,
    /// Who may initiate.
    pub initiators: Initiators,
    /// The script.
    pub steps: Vec<Step<A::Command>>,
}

impl<A: Service + Spec> Scenario<A>
where
    A::Command: Clone + Debug,
{
    /// The same script without its waits: the cluster is shut down while its snapshots may
    /// still be in flight (see [`crate::judge`] on snapshots open at shutdown).
    pub fn unwaited(mut self) -> Self {
        self.steps.retain(|step| !matches!(step, Step::Wait { .. }));
        self
    }

    /// Runs the script on a traced cluster of the initial states, running `variant` of the
    /// marker rules; shuts down and judges the outcome.
    pub fn run(&self, variant: Variant) -> Result<Judged, Failure> {
        let (requests, outcome) = self.execute(variant)?;
        judge(&self.topology, &requests, &outcome)
    }

    /// Runs the script as [`Scenario::run`] does and returns what was asked and the outcome,
    /// unjudged.
    pub fn execute(&self, variant: Variant) -> Result<(Requests<A>, Outcome<A>), Failure> {
        let options = Options { trace: true, variant, initiators: self.initiators.clone(), ..Options::default() };
        let cluster = Cluster::start(self.topology.clone(), self.initial.clone(), options).map_err(Failure::Runtime)?;
        let mut requests = Requests::default();
        for step in &self.steps {
            match step {
                Step::Command { at, command, sends } => {
                    requests.sends += sends;
                    cluster.command(ProcessId(*at), command.clone())
                }
                Step::Initiate { snapshot, at } => {
                    requests.initiated.push((SnapshotId(*snapshot), ProcessId(*at)));
                    cluster.initiate(SnapshotId(*snapshot), ProcessId(*at))
                }
                Step::Wait { snapshot } => cluster.wait(SnapshotId(*snapshot)).map(|s| requests.waited.push(s)),
            }
            .map_err(Failure::Runtime)?;
        }
        let outcome = cluster.shutdown().map_err(Failure::Runtime)?;
        Ok((requests, outcome))
    }
}
