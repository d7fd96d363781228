//! The theorem's checker: recorded runs ([`Trace`]) and the trace checker ([`verify()`]) for
//! clauses (a)–(e) of Chandy and Lamport's theorem.

pub mod fifo;
pub mod trace;
pub mod verify;

pub use fifo::{fifo_breaks, FifoBreak, Item};
pub use trace::*;
pub use verify::*;
