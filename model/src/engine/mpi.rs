//! [`Ranks`] on MPI (feature `mpi`): the processes `mpirun` or `srun` started, through the
//! `mpi` crate (Open MPI). An MPI error aborts every rank (MPI's default handler), a rank that
//! panics aborts the job, and a rank that dies makes the launcher end the others: a run never
//! reports on part of the ranks, and never waits for a rank that is gone.

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

use super::ranks::Ranks;

/// Every process of the MPI job (its world communicator).
pub struct Mpi {
    world: SimpleCommunicator,
    /// The ranks on this rank's machine.
    local: usize,
    /// The flat send and receive buffers, kept between exchanges.
    scratch: std::cell::RefCell<(Vec<u8>, Vec<u8>)>,
}

impl Mpi {
    /// The ranks of `universe`'s world.
    pub fn world(universe: &mpi::environment::Universe) -> Self {
        let world = universe.world();
        let local = world.split_shared(world.rank()).size() as usize;
        Mpi { world, local, scratch: Default::default() }
    }

    /// Makes a panic on this rank abort the whole job once its message is printed (exit 101).
    /// Unwinding would reach MPI_Finalize (the universe's drop), which waits for the other ranks
    /// while they wait for this one at the next exchange: the job would hang.
    pub fn abort_job_on_panic() {
        let print = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            print(info);
            SimpleCommunicator::world().abort(101);
        }));
    }

    /// `out[r]` (`send_counts[r]` bytes) to rank `r`, and `recv_counts[r]` bytes from rank `r`
    /// into `into[r]`: one all-to-all, every rank's counts agreeing with the others'.
    fn all_to_all(&self, out: &[Vec<u8>], send_counts: &[Count], into: &mut [Vec<u8>], recv_counts: &[Count]) {
        let send_displs = displacements(send_counts);
        let recv_displs = displacements(recv_counts);
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut scratch = self.scratch.borrow_mut();
        let (send, recv) = &mut *scratch;
        // Both buffers are real allocations, even when empty: Open MPI refuses a send buffer at
        // the receive buffer's address (as two empty vectors' dangling pointers would be).
        send.clear();
        send.reserve(1);
        out.iter().for_each(|b| send.extend_from_slice(b));
        recv.clear();
        recv.resize(total.max(1), 0);
        {
            let sent = Partition::new(&send[..], send_counts, &send_displs[..]);
            let mut received = PartitionMut::new(&mut recv[..total], recv_counts, &recv_displs[..]);
            self.world.all_to_all_varcount_into(&sent, &mut received);
        }
        for ((to, &c), &d) in into.iter_mut().zip(recv_counts).zip(&recv_displs) {
            to.clear();
            to.extend_from_slice(&recv[d as usize..(d + c) as usize]);
        }
    }
}

/// Buffer lengths as MPI counts.
fn counts(lengths: impl Iterator<Item = usize>) -> Vec<Count> {
    lengths.map(|len| Count::try_from(len).expect("a buffer of under 2 GiB")).collect()
}

/// Offsets of consecutive blocks of `counts` elements.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |at, &c| {
            let here = *at;
            *at = at.checked_add(c).expect("an exchange of under 2 GiB");
            Some(here)
        })
        .collect()
}

impl Ranks for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn local(&self) -> usize {
        self.local
    }

    fn exchange(&self, out: &[Vec<u8>], into: &mut [Vec<u8>]) {
        let n = self.size();
        assert_eq!((out.len(), into.len()), (n, n), "one buffer per rank");
        let send_counts = counts(out.iter().map(Vec::len));
        let mut recv_counts = vec![0 as Count; n];
        self.world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        self.all_to_all(out, &send_counts, into, &recv_counts);
    }

    fn exchange_sized(&self, out: &[Vec<u8>], into: &mut [Vec<u8>], sizes: &[usize]) {
        let n = self.size();
        assert_eq!((out.len(), into.len(), sizes.len()), (n, n, n), "one buffer per rank");
        self.all_to_all(out, &counts(out.iter().map(Vec::len)), into, &counts(sizes.iter().copied()));
    }

    fn sum(&self, values: &mut [u64]) {
        let mine = values.to_vec();
        self.world.all_reduce_into(&mine[..], values, SystemOperation::sum());
    }

    fn max(&self, values: &mut [u64]) {
        let mine = values.to_vec();
        self.world.all_reduce_into(&mine[..], values, SystemOperation::max());
    }
}
