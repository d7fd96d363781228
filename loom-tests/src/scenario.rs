//! The scenarios: a script of requests the main thread makes to a bank [`Cluster`], for any
//! number of houses, so loom runs them with 2–3 houses and shuttle with 5–8. Each run shuts the
//! cluster down and is judged by [`judge`].

use chandy_lamport::bank::{Bank, BankCommand};
use chandy_lamport::runtime::{Cluster, Options, Outcome};
use chandy_lamport::{Initiators, ProcessId, SnapshotId, Topology, Variant};

use crate::judge::{judge, Failure, Judged, Requests};

/// Jars each house starts with: more than any scenario moves out of one house.
pub const JARS: u32 = 20;

/// One request of the main thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// House `from` sends a cart of `amount` jars to house `to`.
    Transfer {
        /// Sender.
        from: u16,
        /// Receiver.
        to: u16,
        /// Jars.
        amount: u32,
    },
    /// House `at` initiates `snapshot`.
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

/// A topology, who may initiate, and the main thread's script; the cluster is shut down after
/// the last step.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The houses and their channels.
    pub topology: Topology,
    /// Who may initiate.
    pub initiators: Initiators,
    /// The script.
    pub steps: Vec<Step>,
}

/// Transfers of one jar around the ring `P0 -> P1 -> ... -> P0`, starting at `first`.
fn ring(n: usize, first: usize) -> impl Iterator<Item = Step> {
    (0..n).map(move |k| {
        let from = (first + k) % n;
        Step::Transfer { from: from as u16, to: ((from + 1) % n) as u16, amount: 1 }
    })
}

fn complete(n: usize, steps: impl IntoIterator<Item = Step>) -> Scenario {
    let topology = Topology::complete(n).expect("n >= 2");
    Scenario { topology, initiators: Initiators::Any, steps: steps.into_iter().collect() }
}

impl Scenario {
    /// Complete graph of `n` houses: a cart from `P(n-1)` into `P0`, `P0` initiates snapshot 0,
    /// then carts around the ring from `P0` to `P(n-1)`; wait for the snapshot. With 2 houses: a
    /// cart each way around the initiation.
    pub fn exchange(n: usize) -> Self {
        let into_initiator = Step::Transfer { from: (n - 1) as u16, to: 0, amount: 2 };
        let steps = [into_initiator, Step::Initiate { snapshot: 0, at: 0 }]
            .into_iter()
            .chain(ring(n, 0).take(n - 1))
            .chain([Step::Wait { snapshot: 0 }]);
        complete(n, steps)
    }

    /// Complete graph of `n` houses: snapshot 0 initiated at `P0` and at `P(n-1)`, with a cart
    /// between them on each side of the initiations, then carts around the ring from `P1` to
    /// `P(n-1)`; wait for the snapshot.
    pub fn concurrent_initiators(n: usize) -> Self {
        let last = (n - 1) as u16;
        let steps = [
            Step::Transfer { from: 0, to: last, amount: 1 },
            Step::Initiate { snapshot: 0, at: 0 },
            Step::Initiate { snapshot: 0, at: last },
            Step::Transfer { from: last, to: 0, amount: 2 },
        ]
        .into_iter()
        .chain(ring(n, 1).take(n.saturating_sub(2)))
        .chain([Step::Wait { snapshot: 0 }]);
        complete(n, steps)
    }

    /// Complete graph of `n` houses: snapshot 0 at `P0`, a cart to `P(n-1)`, snapshot 1 at
    /// `P(n-1)` while 0 is in flight, a cart back, carts around the ring from `P1` to `P(n-1)`;
    /// wait for both.
    pub fn overlapping_snapshots(n: usize) -> Self {
        let last = (n - 1) as u16;
        let steps = [Step::Initiate { snapshot: 0, at: 0 }, Step::Transfer { from: 0, to: last, amount: 1 }]
            .into_iter()
            .chain([Step::Initiate { snapshot: 1, at: last }, Step::Transfer { from: last, to: 0, amount: 2 }])
            .chain(ring(n, 1).take(n.saturating_sub(2)))
            .chain([Step::Wait { snapshot: 0 }, Step::Wait { snapshot: 1 }]);
        complete(n, steps)
    }

    /// [`Scenario::exchange`] without the wait: the cluster is shut down while the snapshot may
    /// still be in flight. Shutdown must deliver every cart; the snapshot may end assembled (and
    /// must then verify) or open, reported incomplete, with only the shutdown to explain it (see
    /// [`crate::judge`]).
    pub fn in_flight_at_shutdown(n: usize) -> Self {
        Self::exchange(n).unwaited()
    }

    /// The same script without its waits: the cluster is shut down while its snapshots may
    /// still be in flight (see [`Scenario::in_flight_at_shutdown`]).
    pub fn unwaited(mut self) -> Self {
        self.steps.retain(|step| !matches!(step, Step::Wait { .. }));
        self
    }

    /// Complete graph of `n` houses: `P(n-1)` sends `P0` a cart of 1 jar, then one of 2, `P0`
    /// initiates snapshot 0, then carts around the ring from `P0` to `P(n-1)`; wait for the
    /// snapshot. `P(n-1)` handles both transfers before any marker reaches it, so when both
    /// carts reach `P0` after it recorded, the record of `P(n-1) -> P0` holds two different
    /// carts, in the order they were sent.
    pub fn two_carts_in_flight(n: usize) -> Self {
        let last = (n - 1) as u16;
        let steps = [
            Step::Transfer { from: last, to: 0, amount: 1 },
            Step::Transfer { from: last, to: 0, amount: 2 },
            Step::Initiate { snapshot: 0, at: 0 },
        ]
        .into_iter()
        .chain(ring(n, 0).take(n - 1))
        .chain([Step::Wait { snapshot: 0 }]);
        complete(n, steps)
    }

    /// Complete graph of `n` houses: `P0` initiates snapshots 0 and 1 (its inbox holds both
    /// initiations before anything else, so it records both before any marker reaches it), then
    /// `P(n-1)` initiates 0, sends `P0` a cart and initiates 1, then carts around the ring from
    /// `P1` to `P(n-1)`; wait for both. When `P(n-1)` records 1 only after sending the cart, the
    /// cart is in flight on `P(n-1) -> P0` for snapshot 1 and not for 0: it travels between
    /// the channel's two markers, both arriving while `P0` records both snapshots.
    pub fn two_snapshots_around_a_cart(n: usize) -> Self {
        let last = (n - 1) as u16;
        let steps = [
            Step::Initiate { snapshot: 0, at: 0 },
            Step::Initiate { snapshot: 1, at: 0 },
            Step::Initiate { snapshot: 0, at: last },
            Step::Transfer { from: last, to: 0, amount: 1 },
            Step::Initiate { snapshot: 1, at: last },
        ]
        .into_iter()
        .chain(ring(n, 1).take(n.saturating_sub(2)))
        .chain([Step::Wait { snapshot: 0 }, Step::Wait { snapshot: 1 }]);
        complete(n, steps)
    }

    /// `P0` with a one-way channel to each of `n - 1` houses and no way back; only `P0` may
    /// initiate. `P0` initiates snapshot 0, then sends a cart to every house; wait for it.
    pub fn fan_out(n: usize) -> Self {
        let names: Vec<String> = (0..n).map(|i| format!("P{i}")).collect();
        let channels = (1..n).map(|i| (ProcessId(0), ProcessId(i as u16)));
        let topology = Topology::new(names, channels).expect("n >= 2");
        let carts = (1..n).map(|i| Step::Transfer { from: 0, to: i as u16, amount: 1 });
        let steps =
            [Step::Initiate { snapshot: 0, at: 0 }].into_iter().chain(carts).chain([Step::Wait { snapshot: 0 }]);
        Scenario { topology, initiators: Initiators::Only(vec![ProcessId(0)]), steps: steps.collect() }
    }

    /// Runs the script on a traced cluster of houses with [`JARS`] jars each, running `variant`
    /// of the marker rules; shuts down and judges the outcome.
    pub fn run(&self, variant: Variant) -> Result<Judged, Failure> {
        let (requests, outcome) = self.execute(variant)?;
        judge(&self.topology, &requests, &outcome)
    }

    /// Runs the script as [`Scenario::run`] does and returns what was asked and the outcome,
    /// unjudged.
    pub fn execute(&self, variant: Variant) -> Result<(Requests, Outcome<Bank>), Failure> {
        let houses = vec![Bank::new(JARS); self.topology.len()];
        let options = Options { trace: true, variant, initiators: self.initiators.clone() };
        let cluster = Cluster::start(self.topology.clone(), houses, options).map_err(Failure::Runtime)?;
        let mut requests = Requests::default();
        for step in &self.steps {
            match *step {
                Step::Transfer { from, to, amount } => {
                    requests.transfers += 1;
                    let transfer = BankCommand::Transfer { to: ProcessId(to), amount };
                    cluster.command(ProcessId(from), transfer)
                }
                Step::Initiate { snapshot, at } => {
                    requests.initiated.push((SnapshotId(snapshot), ProcessId(at)));
                    cluster.initiate(SnapshotId(snapshot), ProcessId(at))
                }
                Step::Wait { snapshot } => cluster.wait(SnapshotId(snapshot)).map(|s| requests.waited.push(s)),
            }
            .map_err(Failure::Runtime)?;
        }
        let outcome = cluster.shutdown().map_err(Failure::Runtime)?;
        Ok((requests, outcome))
    }
}
