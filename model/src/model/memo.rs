//! The houses' steps, remembered. A house's step is a function of its core state and what it is
//! asked to do (the model's configuration being fixed), and a search meets the same house in
//! the same state in a great many global states: each thread keeps its latest steps in a small
//! table, and a step found there hands out the house it led to (shared, not copied) and its
//! effects, without calling the core again. Only accepted steps are kept.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, CoreError, Effect, Message, SnapshotId, Topology};
use rustc_hash::FxHasher;
use smallvec::SmallVec;

use super::state::{Cart, Shared};

/// What a house is asked to do: the core call and its arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input<A: Spec> {
    /// `send` on the channel.
    Send(ChannelId, Cart<A>),
    /// `internal`.
    Internal(A::Step),
    /// `receive_overtaking`: the channel, the message and the carts it overtakes.
    Receive(ChannelId, Message<Cart<A>>, SmallVec<[Cart<A>; 4]>),
    /// `initiate`.
    Initiate(SnapshotId),
    /// `flush`.
    Flush,
    /// `transmit` on the channel.
    Transmit(ChannelId),
}

impl<A: Spec> Input<A> {
    /// Carries the input out on `house` (the core's own call).
    fn apply(&self, t: &Topology, house: &mut Shared<A>, fx: &mut Vec<Effect<Cart<A>>>) -> Result<(), CoreError> {
        house.edit(|h| match self {
            Input::Send(c, cart) => h.send(t, *c, *cart, fx),
            Input::Internal(step) => h.internal(t, step, fx),
            Input::Receive(c, msg, overtaken) => h.receive_overtaking(t, *c, *msg, overtaken, fx),
            Input::Initiate(s) => h.initiate(t, *s, fx),
            Input::Flush => {
                h.flush(t, fx);
                Ok(())
            }
            Input::Transmit(c) => h.transmit(t, *c, fx),
        })
    }
}

/// One remembered step.
struct Entry<A: Spec> {
    before: Shared<A>,
    input: Input<A>,
    after: Shared<A>,
    effects: SmallVec<[Effect<Cart<A>>; 4]>,
}

/// A thread's table of steps of one model (`owner`), direct-mapped by house and input.
struct Memo<A: Spec> {
    owner: u64,
    entries: Vec<Option<Entry<A>>>,
}

/// Entries per thread: `1 << BITS`.
const BITS: u32 = 14;

thread_local! {
    /// This thread's table (of whatever application: type-erased).
    static MEMO: RefCell<Option<Box<dyn std::any::Any>>> = const { RefCell::new(None) };
}

/// Carries `input` out on `house` for the model numbered `owner` (whose topology is `t`), its
/// effects appended to `fx`: from this thread's table when the same house took the same input
/// before, else by the core (and then remembered).
pub fn step<A: Spec>(
    owner: u64,
    t: &Topology,
    house: &mut Shared<A>,
    input: Input<A>,
    fx: &mut Vec<Effect<Cart<A>>>,
) -> Result<(), CoreError> {
    MEMO.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.as_ref().is_none_or(|b| b.downcast_ref::<Memo<A>>().is_none_or(|m| m.owner != owner)) {
            *cell = Some(Box::new(Memo::<A> { owner, entries: (0..1usize << BITS).map(|_| None).collect() }));
        }
        let memo = cell.as_mut().and_then(|b| b.downcast_mut::<Memo<A>>()).expect("this thread's table was just made");
        let mut h = FxHasher::default();
        input.hash(&mut h);
        let slot = ((house.hash_word() ^ h.finish()).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - BITS)) as usize;
        match &memo.entries[slot] {
            Some(e) if e.input == input && e.before == *house => {
                *house = e.after.clone();
                fx.extend(e.effects.iter().cloned());
                Ok(())
            }
            _ => {
                let (before, start) = (house.clone(), fx.len());
                let result = input.apply(t, house, fx);
                if result.is_ok() {
                    let effects = fx[start..].iter().cloned().collect();
                    memo.entries[slot] = Some(Entry { before, input, after: house.clone(), effects });
                }
                result
            }
        }
    })
}
