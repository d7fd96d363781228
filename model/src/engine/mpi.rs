//! [`Ranks`] on MPI (feature `mpi`): the processes `mpirun` or `srun` started, through the
//! `mpi` crate (Open MPI). An MPI error aborts every rank (MPI's default handler), a rank that
//! panics aborts the job, and a rank that dies makes the launcher end the others: a run never
//! reports on part of the ranks, and never waits for a rank that is gone.

use std::cell::RefCell;

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

use super::ranks::{Message, Ranks};

/// A message being sent: its request, and its buffer (leaked to MPI until the request is done).
type Sending = (Request<'static, [u8]>, *mut [u8]);

/// Every process of the MPI job (its world communicator).
pub struct Mpi {
    world: SimpleCommunicator,
    /// The ranks on this rank's machine.
    local: usize,
    /// The flat send and receive buffers, kept between exchanges.
    scratch: RefCell<(Vec<u8>, Vec<u8>)>,
    /// Messages posted and not yet known to be sent.
    sending: RefCell<Vec<Sending>>,
    /// Posts since the last look at `sending`.
    posts: std::cell::Cell<usize>,
    /// The barrier entered and not yet passed.
    fence: RefCell<Option<Request<'static, ()>>>,
}

impl Mpi {
    /// The ranks of `universe`'s world.
    pub fn world(universe: &mpi::environment::Universe) -> Self {
        let world = universe.world();
        let local = world.split_shared(world.rank()).size() as usize;
        Mpi {
            world,
            local,
            scratch: Default::default(),
            sending: Default::default(),
            posts: Default::default(),
            fence: Default::default(),
        }
    }

    /// Frees the buffers of the messages sent; with `all`, waits until every one is.
    fn settle(&self, all: bool) {
        let mut sending = self.sending.borrow_mut();
        let mut left = Vec::with_capacity(sending.len());
        for (request, buffer) in sending.drain(..) {
            let request = if all {
                request.wait_without_status();
                None
            } else {
                request.test().err()
            };
            match request {
                Some(request) => left.push((request, buffer)),
                // SAFETY: `buffer` was leaked from a `Box` by `post`, and the only other use of it,
                // the request's, is complete.
                None => drop(unsafe { Box::from_raw(buffer) }),
            }
        }
        *sending = left;
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

    fn sum(&self, values: &mut [u64]) {
        let mine = values.to_vec();
        self.world.all_reduce_into(&mine[..], values, SystemOperation::sum());
    }

    fn max(&self, values: &mut [u64]) {
        let mine = values.to_vec();
        self.world.all_reduce_into(&mine[..], values, SystemOperation::max());
    }

    fn post(&self, to: usize, tag: u8, bytes: Vec<u8>) {
        // The buffer is MPI's until the send is complete: leaked now, freed by `settle`.
        let buffer: &'static mut [u8] = Box::leak(bytes.into_boxed_slice());
        let raw: *mut [u8] = buffer;
        let rank = mpi::Rank::try_from(to).expect("a rank");
        // SAFETY: `raw` is the leaked buffer, not freed before the request is complete.
        let data: &'static [u8] = unsafe { &*raw };
        let request = self.world.process_at_rank(rank).immediate_send_with_tag(StaticScope, data, i32::from(tag));
        self.sending.borrow_mut().push((request, raw));
        self.posts.set(self.posts.get() + 1);
        if self.posts.get() >= 64 {
            self.posts.set(0);
            self.settle(false);
        }
    }

    fn poll(&self, wait: bool) -> Option<Message> {
        match self.world.any_process().immediate_matched_probe() {
            Some(probed) => {
                let (bytes, status) = probed.matched_receive_vec::<u8>();
                let tag = u8::try_from(status.tag()).expect("a tag this search sent");
                Some((status.source_rank() as usize, tag, bytes))
            }
            None => {
                if wait {
                    // Under `--oversubscribe` another rank may need this core.
                    std::thread::yield_now();
                }
                None
            }
        }
    }

    fn fence(&self) {
        let mut fence = self.fence.borrow_mut();
        assert!(fence.is_none(), "one barrier at a time");
        *fence = Some(self.world.immediate_barrier());
    }

    fn fenced(&self) -> bool {
        let Some(request) = self.fence.borrow_mut().take() else { return true };
        match request.test() {
            Ok(_) => {
                // Every rank is past its last message: the sends complete.
                self.settle(true);
                true
            }
            Err(request) => {
                *self.fence.borrow_mut() = Some(request);
                false
            }
        }
    }
}
