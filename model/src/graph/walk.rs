//! The state graph that stateright's checkers, this crate's engine and the Explorer walk:
//! [`Model`] for [`SnapshotModel`], the model's steps with `--por` applied, its properties and
//! its space-time diagram.
//!
//! It sits above the model, the reductions and the diagram so that none of them calls up into
//! another: the model offers every enabled action, and this graph hands them to the reduction.

use chandy_lamport::apps::spec::Spec;
use stateright::{Model, Path, Property};

use super::svg::space_time;
use crate::engine::{InPlace, Probe};
use crate::reduce::por;
use crate::system::action::Act;
use crate::system::machine::SnapshotModel;
use crate::system::properties;
use crate::system::state::State;

impl<A: Spec> Model for SnapshotModel<A> {
    type State = State<A>;
    type Action = Act<A>;

    fn init_states(&self) -> Vec<State<A>> {
        self.initial_states()
    }

    fn actions(&self, state: &State<A>, actions: &mut Vec<Act<A>>) {
        self.push_enabled(state, actions);
        if self.cfg.por {
            por::reduce(self, state, actions);
        }
    }

    fn next_state(&self, last: &State<A>, action: Act<A>) -> Option<State<A>> {
        self.successor(last, action)
    }

    fn format_action(&self, action: &Act<A>) -> String {
        self.describe_action(action)
    }

    fn format_step(&self, last: &State<A>, action: Act<A>) -> Option<String> {
        self.successor(last, action).map(|next| format!("{}\n\n{next:#?}", self.describe(last, &action)))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::list(self)
    }

    fn as_svg(&self, path: Path<State<A>, Act<A>>) -> Option<String> {
        Some(space_time(self, &path.into_vec()))
    }
}

impl<A: Spec> InPlace for SnapshotModel<A> {
    fn digest(&self, state: &State<A>) -> Option<u64> {
        self.in_place_digest(state)
    }

    fn probe(&self, state: &mut State<A>, digest: u64, action: &Act<A>) -> Probe {
        self.probe_in_place(state, digest, action)
    }

    fn probe_all(&self, state: &mut State<A>, digest: u64, actions: &[Act<A>], out: &mut Vec<Probe>) {
        self.probe_all_in_place(state, digest, actions, out)
    }

    fn pure_steps(&self) -> bool {
        self.steps_are_pure()
    }
}
