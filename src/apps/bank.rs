//! The running example: trading houses passing jars of oil.
//!
//! Each house's state is its stock of jars (and how many it has sold to its port town, an
//! internal step that takes jars out of the trade); a message is a cart of jars on its way to a
//! neighbour. Without theft or sales, the jars recorded in houses plus the jars recorded in
//! transit must equal the ledger's total.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::apps::spec::{accounted, Move, Setup, Spec, Stable, StepKind, View};
use crate::protocol::Tokens;
use crate::protocol::{Application, Refusal};
use crate::protocol::{ProcessId, Topology};

/// A house: jars in stock, and jars sold to its port town so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bank {
    /// Jars in stock.
    pub jars: u32,
    /// Jars sold to the port town (gone from the trade; 0 when a log leaves it out).
    #[serde(default)]
    pub sold: u32,
}

/// A cart carrying this many jars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Jars(pub u32);

/// A house asked to do something it cannot.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BankError {
    /// Not enough jars in stock.
    #[error("not enough jars: {have} in stock, {want} asked")]
    NotEnoughJars {
        /// In stock.
        have: u32,
        /// Asked for.
        want: u32,
    },
    /// A cart of zero jars.
    #[error("a transfer must carry at least one jar")]
    Empty,
    /// The destination is not a neighbour.
    #[error("{to} is not a neighbour")]
    NotANeighbour {
        /// The destination asked for.
        to: ProcessId,
    },
}

impl Bank {
    /// A house with `jars` in stock.
    pub fn new(jars: u32) -> Self {
        Bank { jars, sold: 0 }
    }

    /// Loads a cart of `amount` jars (the send's local effect).
    pub fn withdraw(&mut self, amount: u32) -> Result<Jars, BankError> {
        if amount == 0 {
            return Err(BankError::Empty);
        }
        if amount > self.jars {
            return Err(BankError::NotEnoughJars { have: self.jars, want: amount });
        }
        self.jars -= amount;
        Ok(Jars(amount))
    }

    /// Sells `amount` jars to the port town: an internal step, no message.
    pub fn sell(&mut self, amount: u32) -> Result<(), BankError> {
        self.withdraw(amount)?;
        self.sold += amount;
        Ok(())
    }
}

/// A sale of this many jars to the port town: the bank's internal step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Sale(pub u32);

impl Application for Bank {
    type Msg = Jars;
    type Step = Sale;

    fn on_send(&mut self, _to: ProcessId, cart: &Jars) -> Result<(), Refusal> {
        self.withdraw(cart.0).map(|_| ()).map_err(|e| Refusal(e.to_string()))
    }

    fn on_message(&mut self, _from: ProcessId, msg: &Jars) {
        self.jars = self.jars.saturating_add(msg.0);
    }

    fn on_internal(&mut self, sale: &Sale) -> Result<(), Refusal> {
        self.sell(sale.0).map_err(|e| Refusal(e.to_string()))
    }
}

impl Spec for Bank {
    const NAME: &'static str = "bank";
    const CONSERVES: bool = true;

    fn initial(_p: ProcessId, tokens: u32) -> Self {
        Bank::new(tokens)
    }

    /// A cart of one jar on each outgoing channel, and a sale of one jar with `--internal`;
    /// nothing without a jar in stock.
    fn moves(&self, me: ProcessId, topology: &Topology, setup: &Setup, out: &mut dyn FnMut(Move<Jars, Sale>)) {
        if self.jars == 0 {
            return;
        }
        for &channel in topology.outgoing(me) {
            out(Move::Send { channel, msg: Jars(1) });
        }
        if setup.internal {
            out(Move::Internal(Sale(1)));
        }
    }

    /// A receipt adds jars: it disables no move, commutes with a transfer or a sale (which
    /// need a jar in stock, still there after the receipt) and with other receipts, and enables
    /// moves only from a house with no jar, which had none enabled.
    const RECEIPTS_COMMUTE: bool = true;

    /// A deficit comes only from a theft; exhaustion only from a sale or a theft (a send leaves
    /// the jar in transit, a receipt puts it in stock).
    fn stable_may_turn_on(i: usize, step: StepKind, setup: &Setup) -> bool {
        match (i, step) {
            (_, StepKind::Theft) => true,
            (0, _) => false,
            (_, StepKind::Internal) => setup.internal,
            _ => false,
        }
    }

    /// Every move costs one unit of budget.
    fn may_move_again(&self, budget: u8) -> bool {
        budget > 0
    }

    /// Jars in stock and jars sold: only theft takes jars out of the ledger.
    fn held(&self) -> u64 {
        u64::from(self.jars) + u64::from(self.sold)
    }

    fn carried(cart: &Jars) -> u64 {
        u64::from(cart.0)
    }

    fn stable() -> &'static [Stable<Self>] {
        &[
            Stable { name: DEFICIT, holds: deficit, examples: None },
            Stable { name: EXHAUSTED, holds: exhausted, examples: None },
        ]
    }

    fn describe_state(&self) -> String {
        let jars = if self.jars == 1 { "1 jar".to_string() } else { format!("{} jars", self.jars) };
        if self.sold > 0 {
            format!("{jars}, {} sold", self.sold)
        } else {
            jars
        }
    }

    fn describe(cart: &Jars) -> String {
        let unit = if cart.0 == 1 { "jar" } else { "jars" };
        format!("a cart of {} {unit}", cart.0)
    }

    fn describe_move(mv: &Move<Jars, Sale>, topology: &Topology) -> String {
        match mv {
            Move::Send { channel, msg: Jars(1) } => format!("sends a jar on {}", topology.channel_label(*channel)),
            Move::Send { channel, msg } => format!("sends {} jars on {}", msg.0, topology.channel_label(*channel)),
            Move::Internal(Sale(1)) => "sells a jar to its port town".to_string(),
            Move::Internal(Sale(n)) => format!("sells {n} jars to its port town"),
        }
    }
}

/// Deficit: fewer jars accounted for (in stock, sold, in transit) than the ledger's total;
/// only theft can cause one.
pub const DEFICIT: &str = "deficit";
/// Exhaustion of supply: every jar sold (or stolen), none in stock or in transit.
pub const EXHAUSTED: &str = "supply exhausted";

fn deficit(v: &View<'_, Bank>) -> bool {
    accounted(v.states, v.channels) < v.initial
}

fn exhausted(v: &View<'_, Bank>) -> bool {
    v.states.iter().all(|b| b.jars == 0) && v.channels.iter().all(Vec::is_empty)
}

impl Tokens for Bank {
    fn tokens(&self) -> u64 {
        u64::from(self.jars)
    }
}

impl Tokens for Jars {
    fn tokens(&self) -> u64 {
        u64::from(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withdraw_and_sell() {
        let mut b = Bank::new(3);
        assert_eq!(b.withdraw(2), Ok(Jars(2)));
        assert_eq!(b.withdraw(2), Err(BankError::NotEnoughJars { have: 1, want: 2 }));
        assert_eq!(b.withdraw(0), Err(BankError::Empty));
        b.sell(1).unwrap();
        assert_eq!(b, Bank { jars: 0, sold: 1 });
        b.on_message(ProcessId(1), &Jars(4));
        assert_eq!(b.jars, 4);
        // The transitions refuse what the house cannot do, changing nothing.
        assert!(b.on_send(ProcessId(1), &Jars(5)).is_err());
        assert!(b.on_internal(&Sale(5)).is_err());
        assert_eq!(b, Bank { jars: 4, sold: 1 });
        b.on_send(ProcessId(1), &Jars(1)).unwrap();
        b.on_internal(&Sale(2)).unwrap();
        assert_eq!(b, Bank { jars: 1, sold: 3 });
    }

    #[test]
    fn the_stable_predicates_of_the_bank() {
        use crate::apps::spec::{stable_predicates, terminated, TERMINATED};
        let t = Topology::ring(2).unwrap();
        let names: Vec<&str> = stable_predicates::<Bank>().iter().map(|p| p.name).collect();
        assert_eq!(names, [TERMINATED, DEFICIT, EXHAUSTED]);
        let view = |states: &'static [Bank], budgets: &'static [u8], channels: &'static [Vec<Jars>]| View {
            topology: Box::leak(Box::new(t.clone())),
            states,
            budgets,
            channels,
            initial: 4,
            setup: Setup { internal: true },
        };
        static EMPTY: [Vec<Jars>; 2] = [Vec::new(), Vec::new()];
        // All four jars sold: supply exhausted, no deficit, nothing can move.
        let sold = view(&[Bank { jars: 0, sold: 3 }, Bank { jars: 0, sold: 1 }], &[1, 1], &EMPTY);
        assert!(exhausted(&sold) && !deficit(&sold) && terminated(&sold));
        // A jar in stock: not exhausted; the house can still move while it has budget.
        let one = view(&[Bank { jars: 1, sold: 3 }, Bank { jars: 0, sold: 0 }], &[1, 0], &EMPTY);
        assert!(!exhausted(&one) && !deficit(&one) && !terminated(&one));
        let spent = view(&[Bank { jars: 1, sold: 3 }, Bank { jars: 0, sold: 0 }], &[0, 0], &EMPTY);
        assert!(terminated(&spent), "no budget left");
        // A jar missing (stolen): a deficit.
        let short = view(&[Bank { jars: 1, sold: 2 }, Bank { jars: 0, sold: 0 }], &[0, 0], &EMPTY);
        assert!(deficit(&short) && !exhausted(&short));
        let moving: &'static [Vec<Jars>] = Box::leak(Box::new([vec![Jars(1)], Vec::new()]));
        let in_transit = view(&[Bank { jars: 0, sold: 3 }, Bank { jars: 0, sold: 0 }], &[0, 0], moving);
        assert!(!exhausted(&in_transit) && !deficit(&in_transit) && !terminated(&in_transit));
    }

    #[test]
    fn what_partial_order_reduction_may_assume_of_the_bank() {
        use crate::apps::spec::{StepKind, TERMINATED};
        let t = Topology::ring(2).unwrap();
        let setups = [Setup { internal: false }, Setup { internal: true }];
        let moves_of = |b: &Bank, setup: &Setup| {
            let mut v = Vec::new();
            b.moves(ProcessId(0), &t, setup, &mut |m| v.push(m));
            v
        };
        for setup in &setups {
            for jars in 0..4 {
                let b = Bank { jars, sold: 1 };
                let before = moves_of(&b, setup);
                for cart in [Jars(1), Jars(2)] {
                    let mut r = b;
                    r.on_message(ProcessId(1), &cart);
                    let after = moves_of(&r, setup);
                    // A receipt disables no move, and enables moves only where none was enabled.
                    assert!(before.iter().all(|m| after.contains(m)));
                    assert!(before.is_empty() || after == before);
                    for mv in &before {
                        let apply = |mut x: Bank| {
                            match mv {
                                Move::Send { msg, .. } => x.on_send(ProcessId(1), msg).unwrap(),
                                Move::Internal(sale) => x.on_internal(sale).unwrap(),
                            }
                            x
                        };
                        let mut moved_then_received = apply(b);
                        moved_then_received.on_message(ProcessId(1), &cart);
                        assert_eq!(apply(r), moved_then_received, "{mv:?} and a receipt of {cart:?}");
                    }
                }
            }
        }
        // Budget: every move costs one unit.
        assert!(!Bank::new(3).may_move_again(0) && Bank::new(0).may_move_again(1));
        // The predicates each kind of step may turn on, checked on every small two-house state
        // (jars in stock 0..2, carts of one jar in transit 0..2 on the first road).
        let names: Vec<&str> = Bank::stable().iter().map(|p| p.name).collect();
        assert_eq!(names, [DEFICIT, EXHAUSTED]);
        assert_ne!(names[0], TERMINATED);
        let view_of = |states: &[Bank; 2], carts: usize, setup: Setup| -> [bool; 2] {
            let channels = [vec![Jars(1); carts], Vec::new()];
            let v = View { topology: &t, states, budgets: &[1, 1], channels: &channels, initial: 4, setup };
            [deficit(&v), exhausted(&v)]
        };
        for setup in setups {
            for (a, b, carts) in (0..3).flat_map(|a| (0..3).flat_map(move |b| (0..3).map(move |c| (a, b, c)))) {
                if a + b + carts as u32 > 4 {
                    continue;
                }
                let sold = 4 - a - b - carts as u32;
                let states = [Bank { jars: a, sold }, Bank { jars: b, sold: 0 }];
                let before = view_of(&states, carts, setup);
                let mut steps: Vec<(StepKind, [Bank; 2], usize)> = Vec::new();
                if a > 0 {
                    steps.push((StepKind::Send, [Bank { jars: a - 1, sold }, states[1]], carts + 1));
                    if setup.internal {
                        steps.push((StepKind::Internal, [Bank { jars: a - 1, sold: sold + 1 }, states[1]], carts));
                    }
                }
                if carts > 0 {
                    steps.push((StepKind::Receive, [states[0], Bank { jars: b + 1, sold: 0 }], carts - 1));
                    steps.push((StepKind::Theft, states, carts - 1));
                }
                for (kind, after, carts) in steps {
                    let after = view_of(&after, carts, setup);
                    for i in 0..2 {
                        if !before[i] && after[i] {
                            assert!(Bank::stable_may_turn_on(i, kind, &setup), "{kind:?} turns on {}", names[i]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_house_moves_one_jar_on_each_road_and_sells_with_internal_steps() {
        let t = Topology::complete(3).unwrap();
        let mut moves = Vec::new();
        Bank::new(1).moves(ProcessId(0), &t, &Setup { internal: true }, &mut |m| moves.push(m));
        let roads: Vec<Move<Jars, Sale>> =
            t.outgoing(ProcessId(0)).iter().map(|&channel| Move::Send { channel, msg: Jars(1) }).collect();
        assert_eq!(moves[..2], roads[..]);
        assert_eq!(moves[2], Move::Internal(Sale(1)));
        moves.clear();
        Bank::new(1).moves(ProcessId(0), &t, &Setup::default(), &mut |m| moves.push(m));
        assert_eq!(moves, roads);
        moves.clear();
        Bank::new(0).moves(ProcessId(0), &t, &Setup { internal: true }, &mut |m| moves.push(m));
        assert!(moves.is_empty());
        assert_eq!(Bank { jars: 2, sold: 3 }.held(), 5);
        assert_eq!(Bank::carried(&Jars(4)), 4);
    }
}
