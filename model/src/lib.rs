//! The stateright model and the `model` command (to come).
