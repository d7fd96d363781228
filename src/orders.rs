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

use crate::core::{Application, Refusal};
use crate::spec::{Move, Setup, Spec, Stable, View};
use crate::topology::{ChannelId, ProcessId, Topology};

/// A house of the orders application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
pub fn route(topology: &Topology, from: ProcessId, to: ProcessId) -> Option<ChannelId> {
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
