//! What the checkers and stateright's Explorer see of the model: its state graph (the
//! [`Model`](stateright::Model) implementation) and the space-time diagram of a path.

pub mod graph;
pub mod svg;
