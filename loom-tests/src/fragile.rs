//! A house that burns down (its application panics) in the middle of a run, and the scenario
//! around it: the cluster must report the panic to a waiter and at shutdown, without hanging
//! and without leaving a message unreceived.

use chandy_lamport::apps::bank::{Bank, BankError, Jars, Sale};
use chandy_lamport::protocol::Refusal;
use chandy_lamport::runtime::BankCommand;
use chandy_lamport::runtime::{Cluster, Options, Outbox, RuntimeError, Service};
use chandy_lamport::{Application, GlobalSnapshot, ProcessId, SnapshotId, Topology};

use crate::judge::Failure;

/// The panic message of a burning house.
pub const FIRE: &str = "the house burned down";

/// A bank house that panics on [`FragileCommand::Burn`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fragile(pub Bank);

/// A command to a [`Fragile`] house.
#[derive(Clone, Copy, Debug)]
pub enum FragileCommand {
    /// Send one jar to this neighbour.
    Transfer(ProcessId),
    /// Panic with [`FIRE`].
    Burn,
}

impl Application for Fragile {
    type Msg = Jars;
    type Step = Sale;

    fn on_send(&mut self, to: ProcessId, msg: &Jars) -> Result<(), Refusal> {
        self.0.on_send(to, msg)
    }

    fn on_message(&mut self, from: ProcessId, msg: &Jars) {
        self.0.on_message(from, msg);
    }

    fn on_internal(&mut self, step: &Sale) -> Result<(), Refusal> {
        self.0.on_internal(step)
    }
}

impl Service for Fragile {
    type Command = FragileCommand;
    type Rejection = BankError;

    fn on_command(&self, cmd: FragileCommand, out: &mut Outbox<'_, Jars, Sale>) -> Result<(), BankError> {
        match cmd {
            FragileCommand::Transfer(to) => self.0.on_command(BankCommand::Transfer { to, amount: 1 }, out),
            FragileCommand::Burn => std::panic::panic_any(FIRE),
        }
    }
}

/// What the main thread got back from a cluster whose house `P1` burned down.
#[derive(Debug)]
pub struct Burned {
    /// `wait` for the snapshot initiated after the fire.
    pub wait: Result<GlobalSnapshot<Fragile>, RuntimeError>,
    /// `shutdown`.
    pub shutdown: Result<(), RuntimeError>,
}

/// Complete graph of `n` houses: `P0` sends a cart to `P1`, `P1` burns, `P0` initiates snapshot
/// 0 (which cannot complete), every other house sends a cart to its ring successor; wait for the
/// snapshot, shut down.
pub fn burning_house(n: usize) -> Burned {
    let topology = Topology::complete(n).expect("n >= 2");
    let houses = vec![Fragile(Bank::new(10)); n];
    let cluster = Cluster::start(topology, houses, Options::default()).expect("a valid cluster");
    let next = |i: usize| ProcessId(((i + 1) % n) as u16);
    let send = |cluster: &Cluster<Fragile>, i: usize| {
        cluster.command(ProcessId(i as u16), FragileCommand::Transfer(next(i))).expect("the house is running");
    };
    send(&cluster, 0);
    cluster.command(ProcessId(1), FragileCommand::Burn).expect("the house is running");
    cluster.initiate(SnapshotId(0), ProcessId(0)).expect("P0 may initiate");
    for i in 1..n {
        // A house that has burned drains its inbox, so commands to it are still accepted.
        send(&cluster, i);
    }
    let wait = cluster.wait(SnapshotId(0));
    let shutdown = cluster.shutdown().map(|_| ());
    Burned { wait, shutdown }
}

impl Burned {
    /// Passes when both `wait` and `shutdown` reported the fire at `P1`.
    pub fn judge(&self) -> Result<(), Failure> {
        let fire = Err(RuntimeError::Panicked { process: "P1".into(), message: FIRE.into() });
        if self.wait.as_ref().map(|_| ()).map_err(Clone::clone) == fire && self.shutdown == fire {
            Ok(())
        } else {
            Err(Failure::PanicNotReported {
                wait: format!("{:?}", self.wait),
                shutdown: format!("{:?}", self.shutdown),
            })
        }
    }
}
