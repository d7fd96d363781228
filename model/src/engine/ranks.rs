//! The processes of a distributed search (*ranks*, as MPI calls them) and what the search needs
//! of them: collective operations (an all-to-all exchange of byte buffers, element-wise sums and
//! maxima), which every rank calls in the same order; messages from one rank to another, sent
//! without waiting and delivered in the order sent; and a barrier entered without waiting.
//!
//! [`Threads`] runs the ranks as threads of one process (tests, and `--distributed` without
//! MPI's launcher); `crate::engine::mpi` (feature `mpi`) runs them on MPI.

use std::cell::Cell;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

/// A message that has arrived: the rank it is from, its tag, its bytes.
pub type Message = (usize, u8, Vec<u8>);

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

    /// Replaces each value by its sum over the ranks (wrapping).
    fn sum(&self, values: &mut [u64]);

    /// Replaces each value by its maximum over the ranks.
    fn max(&self, values: &mut [u64]);

    /// Sends `bytes` tagged `tag` to rank `to` (another rank), without waiting for it to be
    /// received. Messages from one rank to another arrive in the order they were sent.
    fn post(&self, to: usize, tag: u8, bytes: Vec<u8>);

    /// A message sent to this rank, if one has arrived; with `wait`, this rank has nothing else
    /// to do: it may wait a little for one (or yield its core).
    fn poll(&self, wait: bool) -> Option<Message>;

    /// Enters a barrier without waiting at it: [`Ranks::fenced`] says when every rank has. The
    /// caller makes sure that once every rank has entered, every message posted before has been
    /// received (the search: a rank enters once each of its asks is answered).
    fn fence(&self);

    /// Whether every rank has entered the barrier this rank last entered ([`Ranks::fence`]);
    /// then this rank's messages are all received, and their buffers freed (on MPI, its sends
    /// are waited for).
    fn fenced(&self) -> bool;
}

/// What the ranks of a [`Threads`] group leave for each other between two barriers.
struct Board {
    buffers: Vec<Vec<Vec<u8>>>,
    values: Vec<Vec<u64>>,
    /// Ranks in the barrier being entered ([`Ranks::fence`]), and barriers every rank has entered.
    fences: (usize, u64),
}

/// Ranks that are threads of one process, meeting at a barrier for every collective operation;
/// their messages go through channels.
pub struct Threads {
    rank: usize,
    size: usize,
    board: Arc<Mutex<Board>>,
    barrier: Arc<Barrier>,
    senders: Vec<Sender<Message>>,
    inbox: Receiver<Message>,
    /// The barriers every rank had entered when this rank entered its last.
    entered: Cell<u64>,
}

impl Threads {
    /// The `size` ranks of one group (at least one), to be handed one to each thread.
    pub fn group(size: usize) -> Vec<Threads> {
        let size = size.max(1);
        let board = Arc::new(Mutex::new(Board {
            buffers: vec![Vec::new(); size],
            values: vec![Vec::new(); size],
            fences: (0, 0),
        }));
        let barrier = Arc::new(Barrier::new(size));
        let (senders, inboxes): (Vec<_>, Vec<_>) = (0..size).map(|_| mpsc::channel()).unzip();
        inboxes
            .into_iter()
            .enumerate()
            .map(|(rank, inbox)| Threads {
                rank,
                size,
                board: Arc::clone(&board),
                barrier: Arc::clone(&barrier),
                senders: senders.clone(),
                inbox,
                entered: Cell::new(0),
            })
            .collect()
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

    fn post(&self, to: usize, tag: u8, bytes: Vec<u8>) {
        assert_ne!(to, self.rank, "a message to another rank");
        // A rank's inbox lives as long as its thread: a send fails only once it has ended.
        let _ = self.senders[to].send((self.rank, tag, bytes));
    }

    fn poll(&self, wait: bool) -> Option<Message> {
        if wait {
            self.inbox.recv_timeout(Duration::from_micros(200)).ok()
        } else {
            self.inbox.try_recv().ok()
        }
    }

    fn fence(&self) {
        let mut board = self.board();
        let f = &mut board.fences;
        self.entered.set(f.1);
        f.0 += 1;
        if f.0 == self.size {
            *f = (0, f.1 + 1);
        }
    }

    fn fenced(&self) -> bool {
        self.board().fences.1 > self.entered.get()
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
    fn thread_ranks_deliver_messages_in_order_and_meet_at_fences() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let late = Arc::new(AtomicBool::new(false));
        let handles = Threads::spawn(3, move |r| {
            let me = r.rank();
            for to in (0..3).filter(|&to| to != me) {
                for i in 0..50u8 {
                    r.post(to, i % 2, vec![me as u8, i]);
                }
            }
            let mut got = Vec::new();
            while got.len() < 100 {
                got.extend(r.poll(true));
            }
            for _ in 0..3 {
                // Rank 0 enters each fence late: no rank is past it before.
                if me == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                    late.store(true, Ordering::SeqCst);
                }
                r.fence();
                while !r.fenced() {
                    assert!(r.poll(true).is_none(), "no message is left");
                }
                assert!(late.load(Ordering::SeqCst), "rank {me} past a fence rank 0 had not entered");
                r.sum(&mut [0]);
                if me == 0 {
                    late.store(false, Ordering::SeqCst);
                }
                r.sum(&mut [0]);
            }
            (me, got)
        });
        for h in handles {
            let (me, got) = h.join().unwrap();
            for from in (0..3u8).filter(|&f| usize::from(f) != me) {
                let theirs: Vec<_> = got.iter().filter(|m| m.0 == usize::from(from)).cloned().collect();
                let sent: Vec<_> = (0..50u8).map(|i| (usize::from(from), i % 2, vec![from, i])).collect();
                assert_eq!(theirs, sent, "rank {me}, from {from}");
            }
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
