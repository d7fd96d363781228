//! The trading houses ([`crate::apps::bank`]) as a runtime service: a house checks a command
//! against its stock and queues the steps the core then applies.

use super::service::{Outbox, Service};
use crate::apps::bank::{Bank, BankError, Jars, Sale};
use crate::protocol::ProcessId;

/// A command to a house in the threaded runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BankCommand {
    /// Send a cart of `amount` jars to neighbour `to`.
    Transfer {
        /// The neighbour.
        to: ProcessId,
        /// Jars in the cart.
        amount: u32,
    },
    /// Sell `amount` jars to the port town.
    Sell {
        /// Jars sold.
        amount: u32,
    },
}

impl Service for Bank {
    type Command = BankCommand;
    type Rejection = BankError;

    /// Checks the command against the house as it is and queues its steps; the core applies
    /// them (the debit of a transfer, the sale), so every change of a house is a traced step.
    fn on_command(&self, cmd: BankCommand, out: &mut Outbox<'_, Jars, Sale>) -> Result<(), BankError> {
        let amount = match cmd {
            BankCommand::Transfer { amount, .. } | BankCommand::Sell { amount } => amount,
        };
        if amount == 0 {
            return Err(BankError::Empty);
        }
        if amount > self.jars {
            return Err(BankError::NotEnoughJars { have: self.jars, want: amount });
        }
        match cmd {
            BankCommand::Transfer { to, amount } => {
                out.send(to, Jars(amount)).map_err(|_| BankError::NotANeighbour { to })
            }
            BankCommand::Sell { amount } => {
                out.internal(Sale(amount));
                Ok(())
            }
        }
    }
}
