//! Applications: what the harness needs of one ([`spec::Spec`]), and the three it ships — the
//! trading houses ([`bank`]), houses ordering jars that can deadlock ([`orders`]) and a dataflow
//! job ([`stream`]).

pub mod bank;
pub mod orders;
pub mod spec;
pub mod stream;
