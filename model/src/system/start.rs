//! How a run starts: the initial state (the processes with their initial application states and
//! budgets, empty channels, and what the configuration adds: the barrier coordinator, full
//! mode's ghost data, literal mode's history), and a process as a run starts it, which a
//! recovery uses too.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::Trace;
use chandy_lamport::{Coordinator, Initiators, Process, ProcessId};
use smallvec::SmallVec;

use super::chans::Chans;
use super::config::Mode;
use super::ghost::Ghost;
use super::machine::SnapshotModel;
use super::stamp::Stamped;
use super::state::{Checkpoints, History, Shared, State, StateData, MAX_PROCESSES};

impl<A: Spec> SnapshotModel<A> {
    /// The initial state (stateright's `init_states`: there is one).
    pub fn initial_states(&self) -> Vec<State<A>> {
        let procs: SmallVec<[Shared<A>; 4]> =
            self.cfg.topology.processes().map(|p| self.process(p, A::initial(p, self.cfg.tokens[p.index()]))).collect();
        let ckpt = self.cfg.algorithm.coordinated().then(|| {
            let c = self.cfg.checkpointing;
            let coord = Coordinator::new(procs.len(), usize::from(c.max_concurrent), self.cfg.variant)
                .with_tolerable_failures(u32::from(c.tolerable_failures));
            Box::new(Checkpoints {
                coord,
                triggers: [0; MAX_PROCESSES],
                latest: None,
                budgets: SmallVec::new(),
                ids_decreased: false,
                declines: c.declines,
                crashes: c.crashes,
                failed_over: false,
            })
        });
        let history = (self.cfg.mode == Mode::Literal).then(|| {
            let initiators = self.cfg.topology.processes().filter(|p| self.cfg.initiators[p.index()]).collect();
            let trace =
                Trace::new(procs.iter().map(|p| *p.app()).collect()).with_initiators(Initiators::Only(initiators));
            Box::new(History { trace, next_msg: 0, digest: 0 })
        });
        vec![State(Box::new(StateData {
            chans: Chans::new(self.cfg.topology.channels().len()),
            budget: std::array::from_fn(|i| if i < procs.len() { self.cfg.sends } else { 0 }),
            sent: [0; MAX_PROCESSES],
            refused: None,
            procs,
            ghost: (self.cfg.mode == Mode::Full).then(|| Ghost::new(self.cfg.snapshots as usize)),
            history,
            sym: self.sym,
            ckpt,
        }))]
    }

    /// A process as a run starts it (or a recovery restores it): `app` inside the core, with the
    /// configured variant and algorithm.
    pub(super) fn process(&self, p: ProcessId, app: A) -> Shared<A> {
        // Snapshots start at the initiators: the aligned mode's back edges are found from them.
        let roots: SmallVec<[ProcessId; 4]> =
            self.cfg.topology.processes().filter(|p| self.cfg.initiators[p.index()]).collect();
        let core = Process::with_variant(p, Stamped(app), self.core_variant).with_algorithm(
            &self.cfg.topology,
            self.cfg.algorithm,
            &roots,
        );
        Shared::new(core)
    }
}
