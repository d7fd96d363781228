//! The bank's scenarios (an edge: the bank plugged into the generic [`Scenario`] driver):
//! scripts of transfers and snapshots for any number of houses, so loom runs them with 2–3
//! houses and shuttle with 5–8.

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::runtime::BankCommand;
use chandy_lamport::{Initiators, ProcessId, Topology};

use crate::scenario::{Scenario, Step};

/// Jars each house starts with: more than any scenario moves out of one house.
pub const JARS: u32 = 20;

/// House `from` sends a cart of `amount` jars to house `to`: one message.
pub fn transfer(from: u16, to: u16, amount: u32) -> Step<BankCommand> {
    Step::Command { at: from, command: BankCommand::Transfer { to: ProcessId(to), amount }, sends: 1 }
}

/// Transfers of one jar around the ring `P0 -> P1 -> ... -> P0`, starting at `first`.
fn ring(n: usize, first: usize) -> impl Iterator<Item = Step<BankCommand>> {
    (0..n).map(move |k| {
        let from = (first + k) % n;
        transfer(from as u16, ((from + 1) % n) as u16, 1)
    })
}

fn complete(n: usize, steps: impl IntoIterator<Item = Step<BankCommand>>) -> Scenario<Bank> {
    let topology = Topology::complete(n).expect("n >= 2");
    Scenario { topology, initial: houses(n), initiators: Initiators::Any, steps: steps.into_iter().collect() }
}

/// `n` houses with [`JARS`] jars each.
fn houses(n: usize) -> Vec<Bank> {
    vec![Bank::new(JARS); n]
}

impl Scenario<Bank> {
    /// Complete graph of `n` houses: a cart from `P(n-1)` into `P0`, `P0` initiates snapshot 0,
    /// then carts around the ring from `P0` to `P(n-1)`; wait for the snapshot. With 2 houses: a
    /// cart each way around the initiation.
    pub fn exchange(n: usize) -> Self {
        let into_initiator = transfer((n - 1) as u16, 0, 2);
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
            transfer(0, last, 1),
            Step::Initiate { snapshot: 0, at: 0 },
            Step::Initiate { snapshot: 0, at: last },
            transfer(last, 0, 2),
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
        let steps = [Step::Initiate { snapshot: 0, at: 0 }, transfer(0, last, 1)]
            .into_iter()
            .chain([Step::Initiate { snapshot: 1, at: last }, transfer(last, 0, 2)])
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

    /// Complete graph of `n` houses: `P(n-1)` sends `P0` a cart of 1 jar, then one of 2, `P0`
    /// initiates snapshot 0, then carts around the ring from `P0` to `P(n-1)`; wait for the
    /// snapshot. `P(n-1)` handles both transfers before any marker reaches it, so when both
    /// carts reach `P0` after it recorded, the record of `P(n-1) -> P0` holds two different
    /// carts, in the order they were sent.
    pub fn two_carts_in_flight(n: usize) -> Self {
        let last = (n - 1) as u16;
        let steps = [transfer(last, 0, 1), transfer(last, 0, 2), Step::Initiate { snapshot: 0, at: 0 }]
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
            transfer(last, 0, 1),
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
        let carts = (1..n).map(|i| transfer(0, i as u16, 1));
        let steps =
            [Step::Initiate { snapshot: 0, at: 0 }].into_iter().chain(carts).chain([Step::Wait { snapshot: 0 }]);
        Scenario {
            topology,
            initial: houses(n),
            initiators: Initiators::Only(vec![ProcessId(0)]),
            steps: steps.collect(),
        }
    }
}
