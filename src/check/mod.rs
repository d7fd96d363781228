//! The theorem's checker: recorded runs ([`Trace`]) and the trace checker ([`verify()`]) for
//! clauses (a)–(e) of Chandy and Lamport's theorem.

pub mod trace;
pub mod verify;

pub use trace::*;
pub use verify::*;
