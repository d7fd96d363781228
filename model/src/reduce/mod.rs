//! The reductions: partial-order reduction (`--por`), which the model's stateright face applies
//! to the enabled actions, and symmetry reduction (`--symmetry`), a representative per state.

pub mod por;
pub mod symmetry;
