#!/usr/bin/env python3
"""A small, self-contained Chandy-Lamport snapshot demo: threads trading money.

N processes P0..P{N-1} each run in their own thread and hold an integer balance.
Every ordered pair (Pi, Pj) has a one-way FIFO channel (a queue.Queue). A process
repeatedly either sends a random amount (0 is allowed: a "ping") to a random peer,
debiting itself on send, or receives from its incoming channels, crediting itself.
P0 initiates --snapshots global snapshots (ids 0, 1, ...) at random moments during
its sends; snapshots may overlap and are tracked per id.

Marker rules (Chandy and Lamport, 1985):
  * initiator: record own state, then send a marker on every outgoing channel
    before any further message on it;
  * first marker of a snapshot at a process: record own state, record the
    marker's channel as empty, send markers on every outgoing channel;
  * later marker on channel c: close c's record = the messages received on c
    between the process's recording and this marker.

Termination: a shared counter of messages (and markers) in flight. A sender
increments it before putting, a receiver decrements it only after it has fully
handled the message (including any markers that handling sends). Once every
process has finished its sends and the counter is 0, nothing can ever be sent
again, so every marker has been delivered and every snapshot is complete.

--bug: after recording its state for a snapshot it initiates, P0 first "flushes"
one more transfer (at least 1 unit) onto every outgoing channel and only then
sends its markers. Each such transfer is sent after P0's cut but arrives ahead of
P0's marker, so it is either received by a process that has not yet recorded (an
inward crossing: the credit is in the snapshot but the debit is not) or recorded
in the channel's record; either way the recorded total exceeds the real one.

Output (--out DIR): DIR/topology.top and DIR/P<i>.jsonl, one JSON event per line, written by
loggers/python/snapshot_log.py. The 8 lines ending in "# log" are all the logging: without them
the program runs the same and writes only the topology.
--seed fixes each thread's random choices; the thread interleaving still varies.
Exit status 2 if the run does not finish within --timeout seconds.

    python3 examples/python/snapshot.py --out /tmp/run --seed 1 [--bug]
"""
import argparse
import os
import queue
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../loggers/python"))  # log
from snapshot_log import SnapshotLog  # log


class Process(threading.Thread):
    def __init__(self, idx, world, rng):
        super().__init__(name=f"P{idx}", daemon=True)
        self.idx, self.world, self.rng = idx, world, rng
        self.balance = world.balance
        self.log = SnapshotLog(self.name, os.path.join(world.out, f"{self.name}.jsonl"))  # log
        self.sent = 0          # counter for unique message ids
        self.snaps = {}        # snapshot id -> {"open": set of srcs, "rec": {src: [ids]}}
        self.peers = [j for j in range(world.n) if j != idx]

    # ---- channel helper ----
    def put(self, dst, item):
        with self.world.lock:
            self.world.in_flight += 1
        self.world.queues[(self.idx, dst)].put(item)

    # ---- application steps ----
    def transfer(self, dst, amount):
        self.balance -= amount
        msg = f"{self.name}-{self.sent}"
        self.sent += 1
        self.put(dst, (msg, amount))
        self.log.send(f"{self.name}->P{dst}", msg, amount, state=self.balance)  # log

    # ---- snapshot steps ----
    def record(self, snap, closed_src=None, channel=None):
        """Record own state for `snap`, as the initiator or on the first marker, which arrived on
        `channel` (from closed_src): every incoming channel but that one stays open."""
        self.log.record(snap, state=self.balance, marker=channel)  # log
        srcs = [j for j in self.peers if j != closed_src]
        self.snaps[snap] = {"open": set(srcs), "rec": {j: [] for j in srcs}}

    def send_markers(self, snap):
        for dst in self.peers:
            self.put(dst, ("marker", snap))
            self.log.marker_send(snap, f"{self.name}->P{dst}")  # log

    def initiate(self, snap):
        self.record(snap)
        if self.world.bug:
            # BUG: flush one more transfer on each channel before the markers.
            for dst in self.peers:
                self.transfer(dst, self.rng.randint(min(1, self.balance), min(self.balance, 50)))
        self.send_markers(snap)

    def handle(self, src, item):
        """Handle one item taken from channel src->self."""
        tag, value = item
        channel = f"P{src}->{self.name}"
        if tag == "marker":
            snap = value
            if snap not in self.snaps:        # first marker: record, channel empty
                self.record(snap, closed_src=src, channel=channel)
                self.send_markers(snap)
            else:                             # later marker: close the channel's record
                s = self.snaps[snap]
                s["open"].discard(src)
                self.log.marker_receive(snap, channel, s["rec"][src])  # log
        else:
            self.balance += value
            for s in self.snaps.values():     # record into every still-open record
                if src in s["open"]:
                    s["rec"][src].append(tag)
            self.log.receive(channel, tag, state=self.balance)  # log

    def try_receive(self):
        """Poll incoming channels in random order; handle at most one item."""
        for src in self.rng.sample(self.peers, len(self.peers)):
            try:
                item = self.world.queues[(src, self.idx)].get_nowait()
            except queue.Empty:
                continue
            self.handle(src, item)
            with self.world.lock:             # decrement only once fully handled
                self.world.in_flight -= 1
            return True
        return False

    # ---- main loop ----
    def run(self):
        w = self.world
        # P0 initiates snapshots just before randomly chosen send numbers.
        plan = sorted(self.rng.randrange(max(w.sends, 1)) for _ in range(w.snapshots)) \
            if self.idx == 0 else []
        next_snap, done = 0, 0
        while done < w.sends:
            if self.rng.random() < 0.5:
                while next_snap < len(plan) and plan[next_snap] == done:
                    self.initiate(next_snap)
                    next_snap += 1
                amount = self.rng.randint(0, min(self.balance, 50))   # 0 is a ping
                self.transfer(self.rng.choice(self.peers), amount)
                done += 1
            elif not self.try_receive():
                time.sleep(0.0002)
        for snap in range(next_snap, len(plan)):   # only when --sends is 0
            self.initiate(snap)
        with w.lock:
            w.finished += 1
        while True:                           # drain until the whole system is quiet
            if not self.try_receive():
                with w.lock:
                    if w.finished == w.n and w.in_flight == 0:
                        return
                time.sleep(0.0005)


class World:
    def __init__(self, args):
        self.n, self.balance, self.sends = args.procs, args.balance, args.sends
        self.snapshots, self.bug, self.out = args.snapshots, args.bug, args.out
        self.queues = {(i, j): queue.Queue() for i in range(self.n)
                       for j in range(self.n) if i != j}
        self.lock = threading.Lock()
        self.in_flight = 0
        self.finished = 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--balance", type=int, default=1000)
    ap.add_argument("--sends", type=int, default=30)
    ap.add_argument("--snapshots", type=int, default=3)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=20.0, help="global timeout, seconds")
    ap.add_argument("--bug", action="store_true", help="initiator sends before its markers")
    ap.add_argument("--out", required=True, help="directory for topology.top and P<i>.jsonl")
    args = ap.parse_args()
    if args.procs < 2 or args.balance < 0 or args.sends < 0 or args.snapshots < 0:
        ap.error("need --procs >= 2 and non-negative --balance, --sends, --snapshots")

    os.makedirs(args.out, exist_ok=True)
    world = World(args)
    with open(os.path.join(args.out, "topology.top"), "w") as f:
        f.write(f"{args.procs}\n")
        f.writelines(f"P{i} {args.balance}\n" for i in range(args.procs))
        f.writelines(f"P{i} P{j}\n" for (i, j) in world.queues)
    seeder = random.Random(args.seed)
    procs = [Process(i, world, random.Random(seeder.random())) for i in range(args.procs)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + args.timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    if any(p.is_alive() for p in procs):
        print(f"error: timed out after {args.timeout}s", file=sys.stderr)
        os._exit(2)                           # daemon threads may be stuck: exit hard

    print(f"wrote {args.out}: {args.procs} processes, {args.snapshots} snapshots"
          + (" (with --bug)" if args.bug else ""))


if __name__ == "__main__":
    main()
