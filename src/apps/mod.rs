//! Applications: what the harness needs of one ([`spec::Spec`]), and the three it ships — the
//! trading houses ([`bank`]), houses ordering jars that can deadlock ([`orders`]) and a dataflow
//! job ([`stream`]) — and, for the logs of any other system, integer balances and opaque states
//! ([`json`]).

pub mod bank;
pub mod json;
pub mod orders;
pub mod spec;
pub mod stream;
