//! The second application: houses ordering jars from each other, which can deadlock.
//!
//! A house uses up its jars (an internal step). Out of jars, and not already waiting, it may
//! place an order for one jar with a neighbour (one of its outgoing channels), and then waits,
//! blocked, until a cart addressed to it arrives. A house that holds an order and has a jar ships
//! it — even while it waits itself. Carts travel to their addressee along a shortest path: a
//! house that receives a cart for another house passes it on (on a one-way ring a reply goes
//! round the ring). Only orders cost budget: a house uses at most the jars there are, and
//! shipments and passing on answer orders.
//!
//! A deadlock is a cycle of houses each waiting on the next with no jar to ship and no cart on
//! its way to any of them: no house of the cycle can ever get a jar, so it is stable.

use serde::{Deserialize, Serialize};

use super::spec::{Move, Setup, Spec, Stable, View};
use crate::protocol::{Application, Refusal};
use crate::protocol::{ChannelId, ProcessId, Topology};

/// A house of the orders application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Orders {
    /// This house's index (constant; the transitions need it to tell its own carts).
    pub me: u8,
    /// Jars in stock.
    pub jars: u8,
    /// Jars used up.
    pub used: u8,
    /// The house it ordered from and waits on, if any.
    pub waiting: Option<u8>,
    /// Bit `d`: house `d` ordered a jar from this house and it is not shipped yet.
    pub pending: u16,
    /// Bit `d`: a cart for house `d` is here, to be passed on.
    pub relay: u16,
}

/// A message of the orders application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OrderMsg {
    /// An order for one jar, to the receiver.
    Order,
    /// A cart of one jar for house `to`.
    Cart {
        /// The addressee.
        to: u8,
    },
}

/// The internal step of the orders application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OrderStep {
    /// Use up one jar.
    Use,
}

impl Orders {
    /// House `me` with `jars` in stock.
    pub fn new(me: ProcessId, jars: u8) -> Self {
        Orders { me: me.0 as u8, jars, ..Orders::default() }
    }
}

fn bit(p: u8) -> u16 {
    1u16.checked_shl(u32::from(p)).unwrap_or(0)
}

impl Application for Orders {
    type Msg = OrderMsg;
    type Step = OrderStep;

    fn on_send(&mut self, to: ProcessId, msg: &OrderMsg) -> Result<(), Refusal> {
        match *msg {
            OrderMsg::Order => {
                if let Some(w) = self.waiting {
                    return Err(Refusal(format!("already waiting on P{w}")));
                }
                if self.jars > 0 {
                    return Err(Refusal("orders only when out of jars".into()));
                }
                self.waiting = Some(to.0 as u8);
            }
            OrderMsg::Cart { to: d } if self.relay & bit(d) != 0 => self.relay &= !bit(d),
            OrderMsg::Cart { to: d } => {
                if self.pending & bit(d) == 0 {
                    return Err(Refusal(format!("no order from P{d} to ship")));
                }
                if self.jars == 0 {
                    return Err(Refusal("no jar to ship".into()));
                }
                self.jars -= 1;
                self.pending &= !bit(d);
            }
        }
        Ok(())
    }

    fn on_message(&mut self, from: ProcessId, msg: &OrderMsg) {
        match *msg {
            OrderMsg::Order => self.pending |= bit(from.0 as u8),
            OrderMsg::Cart { to } if to == self.me => {
                self.jars = self.jars.saturating_add(1);
                self.waiting = None;
            }
            OrderMsg::Cart { to } => self.relay |= bit(to),
        }
    }

    fn on_internal(&mut self, step: &OrderStep) -> Result<(), Refusal> {
        match step {
            OrderStep::Use if self.jars == 0 => Err(Refusal("no jar to use".into())),
            OrderStep::Use => {
                self.jars -= 1;
                self.used = self.used.saturating_add(1);
                Ok(())
            }
        }
    }
}

/// The first channel of a shortest path from `from` to `to`.
pub(crate) fn route(topology: &Topology, from: ProcessId, to: ProcessId) -> Option<ChannelId> {
    if let Some(c) = topology.channel_between(from, to) {
        return Some(c);
    }
    // Breadth-first search, remembering each house's first hop.
    let mut first: Vec<Option<ChannelId>> = vec![None; topology.len()];
    let mut queue = std::collections::VecDeque::new();
    for &c in topology.outgoing(from) {
        let next = topology.channel(c).to;
        if first[next.index()].is_none() && next != from {
            first[next.index()] = Some(c);
            queue.push_back(next);
        }
    }
    while let Some(p) = queue.pop_front() {
        if p == to {
            return first[p.index()];
        }
        for &c in topology.outgoing(p) {
            let next = topology.channel(c).to;
            if first[next.index()].is_none() && next != from {
                first[next.index()] = first[p.index()];
                queue.push_back(next);
            }
        }
    }
    None
}

fn houses(mask: u16) -> impl Iterator<Item = u8> {
    (0..16u8).filter(move |&d| mask & bit(d) != 0)
}

impl Spec for Orders {
    const NAME: &'static str = "orders";
    const CONSERVES: bool = true;

    const MAX_TOKENS: u32 = u8::MAX as u32;

    fn initial(p: ProcessId, tokens: u32) -> Self {
        Orders::new(p, u8::try_from(tokens).unwrap_or(u8::MAX))
    }

    /// Using a jar, or orders (one per outgoing channel) when out of jars and not waiting; then
    /// shipments, then carts passed on.
    fn moves(
        &self,
        me: ProcessId,
        topology: &Topology,
        _setup: &Setup,
        out: &mut dyn FnMut(Move<OrderMsg, OrderStep>),
    ) {
        if self.jars > 0 {
            out(Move::Internal(OrderStep::Use));
        } else if self.waiting.is_none() {
            for &channel in topology.outgoing(me) {
                out(Move::Send { channel, msg: OrderMsg::Order });
            }
        }
        let carts = if self.jars > 0 { self.pending } else { 0 } | self.relay;
        for d in houses(carts) {
            if let Some(channel) = route(topology, me, ProcessId(u16::from(d))) {
                out(Move::Send { channel, msg: OrderMsg::Cart { to: d } });
            }
        }
    }

    fn cost(mv: &Move<OrderMsg, OrderStep>) -> u8 {
        u8::from(matches!(mv, Move::Send { msg: OrderMsg::Order, .. }))
    }

    /// Jars in stock, used up, and held to pass on.
    fn held(&self) -> u64 {
        u64::from(self.jars) + u64::from(self.used) + u64::from(self.relay.count_ones())
    }

    fn carried(msg: &OrderMsg) -> u64 {
        u64::from(matches!(msg, OrderMsg::Cart { .. }))
    }

    fn stable() -> &'static [Stable<Self>] {
        &[Stable {
            name: DEADLOCK,
            holds: deadlocked,
            examples: Some(("a snapshot detects a deadlock", "the system deadlocks after a snapshot that saw none")),
        }]
    }

    fn relabel(&self, map: &dyn Fn(ProcessId) -> ProcessId) -> Self {
        let m = |d: u8| map(ProcessId(u16::from(d))).0 as u8;
        let mask = |bits: u16| houses(bits).fold(0, |acc, d| acc | bit(m(d)));
        Orders {
            me: m(self.me),
            jars: self.jars,
            used: self.used,
            waiting: self.waiting.map(m),
            pending: mask(self.pending),
            relay: mask(self.relay),
        }
    }

    fn relabel_msg(msg: &OrderMsg, map: &dyn Fn(ProcessId) -> ProcessId) -> OrderMsg {
        match *msg {
            OrderMsg::Order => OrderMsg::Order,
            OrderMsg::Cart { to } => OrderMsg::Cart { to: map(ProcessId(u16::from(to))).0 as u8 },
        }
    }

    fn describe_state(&self) -> String {
        let mut words = format!("{} jars", self.jars);
        if self.used > 0 {
            words += &format!(", {} used", self.used);
        }
        if let Some(w) = self.waiting {
            words += &format!(", waits on P{w}");
        }
        words
    }

    fn describe_move(mv: &Move<OrderMsg, OrderStep>, topology: &Topology) -> String {
        match mv {
            Move::Send { channel, msg } => {
                format!("sends {} on {}", Self::describe(msg), topology.channel_label(*channel))
            }
            Move::Internal(OrderStep::Use) => "uses a jar".to_string(),
        }
    }

    fn describe(msg: &OrderMsg) -> String {
        match msg {
            OrderMsg::Order => "an order".to_string(),
            OrderMsg::Cart { to } => format!("a cart for P{to}"),
        }
    }
}

/// The deadlock predicate's name.
pub const DEADLOCK: &str = "deadlock";

/// A cycle of houses, each waiting on the next, none with a jar, and no cart on its way to any
/// of them (in a channel or held to be passed on).
pub fn deadlocked(v: &View<'_, Orders>) -> bool {
    let n = v.states.len();
    let mut coming = 0u16;
    for msg in v.channels.iter().flatten() {
        if let OrderMsg::Cart { to } = msg {
            coming |= bit(*to);
        }
    }
    for s in v.states {
        coming |= s.relay;
    }
    // Follow each house's waits-on pointer for n steps: a house then on a cycle.
    (0..n).any(|start| {
        let mut h = start;
        for _ in 0..n {
            match v.states[h].waiting {
                Some(w) if usize::from(w) < n => h = usize::from(w),
                _ => return false,
            }
        }
        // `h` is on a cycle: check every house of it.
        let first = h;
        loop {
            let s = &v.states[h];
            if s.jars > 0 || coming & bit(h as u8) != 0 {
                return false;
            }
            h = s.waiting.map_or(first, usize::from);
            if h == first {
                return true;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(i: u16) -> ProcessId {
        ProcessId(i)
    }

    fn moves(o: &Orders, t: &Topology) -> Vec<Move<OrderMsg, OrderStep>> {
        let mut out = Vec::new();
        o.moves(p(o.me.into()), t, &Setup::default(), &mut |m| out.push(m));
        out
    }

    #[test]
    fn an_order_is_answered_by_a_cart_that_goes_round_a_one_way_ring() {
        let t = Topology::ring(3).unwrap();
        let mut h: Vec<Orders> = (0..3).map(|i| Orders::new(p(i), 1)).collect();
        // P0 uses its jar, then may only order (from P1, its one neighbour).
        assert_eq!(moves(&h[0], &t), [Move::Internal(OrderStep::Use)]);
        h[0].on_internal(&OrderStep::Use).unwrap();
        let to_p1 = t.channel_between(p(0), p(1)).unwrap();
        assert_eq!(moves(&h[0], &t), [Move::Send { channel: to_p1, msg: OrderMsg::Order }]);
        h[0].on_send(p(1), &OrderMsg::Order).unwrap();
        assert_eq!(h[0].waiting, Some(1));
        assert!(moves(&h[0], &t).is_empty(), "a waiting house without jars is blocked");
        h[1].on_message(p(0), &OrderMsg::Order);
        // P1 ships towards P0 through P2: the only way round.
        let cart = OrderMsg::Cart { to: 0 };
        let to_p2 = t.channel_between(p(1), p(2)).unwrap();
        assert_eq!(moves(&h[1], &t), [Move::Internal(OrderStep::Use), Move::Send { channel: to_p2, msg: cart }]);
        h[1].on_send(p(2), &cart).unwrap();
        assert_eq!((h[1].jars, h[1].pending), (0, 0));
        h[2].on_message(p(1), &cart);
        assert_eq!(h[2].relay, 0b001);
        assert_eq!(h[2].held(), 2, "a cart held to pass on counts in the ledger");
        let to_p0 = t.channel_between(p(2), p(0)).unwrap();
        assert!(moves(&h[2], &t).contains(&Move::Send { channel: to_p0, msg: cart }));
        h[2].on_send(p(0), &cart).unwrap();
        h[0].on_message(p(2), &cart);
        assert_eq!((h[0].jars, h[0].waiting), (1, None));
        assert_eq!(h.iter().map(Spec::held).sum::<u64>(), 3);
    }

    #[test]
    fn refused_steps_change_nothing() {
        let mut o = Orders::new(p(0), 1);
        let before = o;
        assert!(o.on_send(p(1), &OrderMsg::Order).is_err(), "orders only when out of jars");
        assert!(o.on_send(p(1), &OrderMsg::Cart { to: 1 }).is_err(), "no order to ship");
        assert_eq!(o, before);
        o.on_internal(&OrderStep::Use).unwrap();
        assert!(o.on_internal(&OrderStep::Use).is_err());
        o.on_send(p(1), &OrderMsg::Order).unwrap();
        let waiting = o;
        assert!(o.on_send(p(2), &OrderMsg::Order).is_err(), "already waiting");
        o.on_message(p(2), &OrderMsg::Order);
        assert!(o.on_send(p(2), &OrderMsg::Cart { to: 2 }).is_err(), "no jar to ship");
        assert_eq!(Orders { pending: 0b100, ..waiting }, o);
    }

    fn view<'a>(t: &'a Topology, states: &'a [Orders], channels: &'a [Vec<OrderMsg>]) -> View<'a, Orders> {
        View { topology: t, states, budgets: &[1, 1, 1], channels, initial: 3, setup: Setup::default() }
    }

    #[test]
    fn a_deadlock_is_a_waiting_cycle_without_jars_or_carts_coming() {
        let t = Topology::complete(3).unwrap();
        let none = vec![Vec::new(); t.channels().len()];
        let waits = |w: [Option<u8>; 3], jars: [u8; 3]| -> Vec<Orders> {
            (0..3).map(|i| Orders { waiting: w[i], jars: jars[i], ..Orders::new(p(i as u16), 0) }).collect()
        };
        // P0 and P1 wait on each other with no jar: a deadlock, whatever P2 does.
        let s = waits([Some(1), Some(0), None], [0, 0, 5]);
        assert!(deadlocked(&view(&t, &s, &none)));
        // A jar at either end of the cycle, or a cart on its way to one of them, releases it.
        assert!(!deadlocked(&view(&t, &waits([Some(1), Some(0), None], [0, 1, 0]), &none)));
        let mut coming = none.clone();
        coming[t.channel_between(p(2), p(0)).unwrap().index()].push(OrderMsg::Cart { to: 0 });
        assert!(!deadlocked(&view(&t, &s, &coming)));
        let relayed = [s[0], s[1], Orders { relay: 0b010, ..s[2] }];
        assert!(!deadlocked(&view(&t, &relayed, &none)));
        // A chain that ends in a house that is not waiting is no cycle.
        assert!(!deadlocked(&view(&t, &waits([Some(1), Some(2), None], [0, 0, 0]), &none)));
        // The whole ring of three.
        assert!(deadlocked(&view(&t, &waits([Some(1), Some(2), Some(0)], [0, 0, 0]), &none)));
    }

    #[test]
    fn relabelling_renames_every_house_a_state_names() {
        let o = Orders { me: 0, jars: 1, used: 2, waiting: Some(1), pending: 0b100, relay: 0b010 };
        let swap = |q: ProcessId| ProcessId([2, 0, 1][q.index()]);
        assert_eq!(
            o.relabel(&swap),
            Orders { me: 2, jars: 1, used: 2, waiting: Some(0), pending: 0b010, relay: 0b001 }
        );
        assert_eq!(Orders::relabel_msg(&OrderMsg::Cart { to: 2 }, &swap), OrderMsg::Cart { to: 1 });
        assert_eq!(Orders::relabel_msg(&OrderMsg::Order, &swap), OrderMsg::Order);
    }

    #[test]
    fn routes_follow_shortest_paths() {
        let ring = Topology::ring(4).unwrap();
        assert_eq!(route(&ring, p(1), p(0)), ring.channel_between(p(1), p(2)));
        assert_eq!(route(&ring, p(3), p(0)), ring.channel_between(p(3), p(0)));
        let bidi = Topology::bidi_ring(5).unwrap();
        assert_eq!(route(&bidi, p(0), p(3)), bidi.channel_between(p(0), p(4)));
        assert_eq!(route(&bidi, p(0), p(2)), bidi.channel_between(p(0), p(1)));
    }
}
