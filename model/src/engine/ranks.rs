//! The processes of a distributed search (*ranks*, as MPI calls them) and the few collective
//! operations the search needs of them: an all-to-all exchange of byte buffers, and element-wise
//! sums and maxima. Every operation is collective: every rank calls it, in the same order.
//!
//! [`Threads`] runs the ranks as threads of one process (tests, and `--distributed` without
//! MPI's launcher); `crate::engine::mpi` (feature `mpi`) runs them on MPI.

use std::sync::{Arc, Barrier, Mutex};

/// One rank's view of a group of ranks.
pub trait Ranks {
    /// This rank's number, 0 to `size() - 1`.
    fn rank(&self) -> usize;

    /// How many ranks there are.
    fn size(&self) -> usize;

    /// How many of them share this rank's machine (its memory).
    fn local(&self) -> usize;

    /// Sends `out[r]` to rank `r` (one buffer per rank, this rank's own included) and puts what
    /// rank `r` sent this one in `into[r]` (replacing its content, keeping its allocation).
    fn exchange(&self, out: &[Vec<u8>], into: &mut [Vec<u8>]);

    /// As [`Ranks::exchange`], when this rank knows how many bytes each rank sends it
    /// (`sizes[r]` from rank `r`): on MPI one collective fewer (no sizes exchanged first).
    /// Every rank's `sizes` must agree with what the others send it.
    fn exchange_sized(&self, out: &[Vec<u8>], into: &mut [Vec<u8>], sizes: &[usize]) {
        self.exchange(out, into);
        for (r, (got, &size)) in into.iter().zip(sizes).enumerate() {
            assert_eq!(got.len(), size, "rank {} was sent {} bytes by rank {r}, not {size}", self.rank(), got.len());
        }
    }

    /// Replaces each value by its sum over the ranks (wrapping).
    fn sum(&self, values: &mut [u64]);

    /// Replaces each value by its maximum over the ranks.
    fn max(&self, values: &mut [u64]);
}

/// What the ranks of a [`Threads`] group leave for each other between two barriers.
struct Board {
    buffers: Vec<Vec<Vec<u8>>>,
    values: Vec<Vec<u64>>,
}

/// Ranks that are threads of one process, meeting at a barrier for every operation.
#[derive(Clone)]
pub struct Threads {
    rank: usize,
    size: usize,
    board: Arc<Mutex<Board>>,
    barrier: Arc<Barrier>,
}

impl Threads {
    /// The `size` ranks of one group (at least one), to be handed one to each thread.
    pub fn group(size: usize) -> Vec<Threads> {
        let size = size.max(1);
        let board = Arc::new(Mutex::new(Board { buffers: vec![Vec::new(); size], values: vec![Vec::new(); size] }));
        let barrier = Arc::new(Barrier::new(size));
        (0..size).map(|rank| Threads { rank, size, board: Arc::clone(&board), barrier: Arc::clone(&barrier) }).collect()
    }

    /// A group of `size` ranks, each running `f` on a thread of its own (tests).
    #[cfg(test)]
    pub(crate) fn spawn<T, F>(size: usize, f: F) -> Vec<std::thread::JoinHandle<T>>
    where
        T: Send + 'static,
        F: Fn(Threads) -> T + Clone + Send + 'static,
    {
        Threads::group(size)
            .into_iter()
            .map(|r| {
                let f = f.clone();
                std::thread::spawn(move || f(r))
            })
            .collect()
    }

    fn board(&self) -> std::sync::MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reduce(&self, values: &mut [u64], op: fn(u64, u64) -> u64) {
        self.board().values[self.rank] = values.to_vec();
        self.barrier.wait();
        {
            let board = self.board();
            for (i, v) in values.iter_mut().enumerate() {
                *v = board.values.iter().map(|vs| vs[i]).reduce(op).unwrap_or(*v);
            }
        }
        self.barrier.wait();
    }
}

impl Ranks for Threads {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn local(&self) -> usize {
        self.size
    }

    fn exchange(&self, out: &[Vec<u8>], into: &mut [Vec<u8>]) {
        assert_eq!((out.len(), into.len()), (self.size, self.size), "one buffer per rank");
        self.board().buffers[self.rank] = out.to_vec();
        self.barrier.wait();
        {
            let board = self.board();
            for (to, from) in into.iter_mut().zip(&board.buffers) {
                to.clear();
                to.extend_from_slice(&from[self.rank]);
            }
        }
        self.barrier.wait();
    }

    fn sum(&self, values: &mut [u64]) {
        self.reduce(values, u64::wrapping_add);
    }

    fn max(&self, values: &mut [u64]) {
        self.reduce(values, u64::max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_exchange_buffers_and_reduce_values() {
        let handles = Threads::spawn(3, |r| {
            let me = r.rank() as u8;
            let out: Vec<Vec<u8>> = (0..r.size() as u8).map(|to| vec![me, to]).collect();
            let mut got = vec![vec![9]; r.size()];
            r.exchange(&out, &mut got);
            let mut sized = vec![Vec::new(); r.size()];
            r.exchange_sized(&out, &mut sized, &[2, 2, 2]);
            assert_eq!(sized, got);
            let mut v = [u64::from(me) + 1, 10 - u64::from(me)];
            r.sum(&mut v[..1]);
            r.max(&mut v[1..]);
            (me, got, v)
        });
        for h in handles {
            let (me, got, v) = h.join().unwrap();
            assert_eq!(got, (0..3u8).map(|from| vec![from, me]).collect::<Vec<_>>());
            assert_eq!(v, [6, 10]);
        }
    }

    #[test]
    fn an_exchange_of_other_sizes_than_known_fails() {
        let handles = Threads::spawn(2, |r| {
            let out = vec![vec![1, 2, 3]; 2];
            r.exchange_sized(&out, &mut vec![Vec::new(); 2], &[3, 2]);
        });
        for h in handles {
            let e = h.join().expect_err("3 bytes from rank 1, not 2");
            let said = e.downcast_ref::<String>().expect("a message");
            assert!(said.contains("was sent 3 bytes by rank 1, not 2"), "{said}");
        }
    }

    #[test]
    fn thread_ranks_share_one_machine() {
        // Every rank of the group is on this machine: a rank's memory budget is split by all.
        for r in Threads::group(3) {
            assert_eq!((r.size(), r.local()), (3, 3));
        }
    }
}
