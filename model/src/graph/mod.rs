//! What the checkers and stateright's Explorer see of the modelled system: its state graph (the
//! [`Model`](stateright::Model) implementation, in [`walk`]) and the space-time diagram of a
//! path ([`svg`]).

pub mod svg;
pub mod walk;
