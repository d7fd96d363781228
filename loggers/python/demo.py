#!/usr/bin/env python3
"""The Python logger's test: 3 processes (threads) P0..P2 trade integer balances over in-memory
FIFO queues, one per channel, and P0 initiates snapshots 0 and 1; each process logs with
snapshot_log.py to OUTDIR/P<i>.jsonl (their topology: loggers/demo.top).

    python3 loggers/python/demo.py OUTDIR [--bug | --stress]

--bug breaks the marker rule: P0 sends its round's transfers after recording and before its
markers, so the first process to receive P0's marker has received a transfer sent after P0's
cut before recording: `model verify` must report an inward crossing."""
import os
import queue
import sys
import threading
import time

from snapshot_log import SnapshotLog

N, ROUNDS, SNAPSHOT_AT = 3, 10, {2: 0, 6: 1}  # P0 initiates snapshot s at round r


def process(me, out, bug, queues):
    log = SnapshotLog(f"P{me}", os.path.join(out, f"P{me}.jsonl"))
    peers = [p for p in range(N) if p != me]
    balance = 100
    recording = {}  # snapshot -> {src: ids received since recording}, while the channel is open
    counts = {src: [0, 0] for src in peers}  # messages and markers received from src

    def send_markers(snap):
        for dst in peers:
            queues[me, dst].put(("marker", snap))
            log.marker_send(snap, f"P{me}->P{dst}")

    def handle(src, item):
        nonlocal balance
        channel = f"P{src}->P{me}"
        if item[0] == "marker":
            snap = item[1]
            counts[src][1] += 1
            if snap not in recording:  # the first marker: record, the channel closed empty
                recording[snap] = {p: [] for p in peers if p != src}
                log.record(snap, state=balance, marker=channel)
                send_markers(snap)
            else:  # a later one closes its channel's record
                log.marker_receive(snap, channel, recording[snap].pop(src))
        else:
            msg, amount = item
            counts[src][0] += 1
            balance += amount
            for open_channels in recording.values():
                if src in open_channels:
                    open_channels[src].append(msg)
            log.receive(channel, msg, state=balance)

    def poll():
        handled = False
        for src in peers:
            while True:
                try:
                    handle(src, queues[src, me].get_nowait())
                    handled = True
                except queue.Empty:
                    break
        return handled

    for r in range(ROUNDS):
        snap = SNAPSHOT_AT.get(r) if me == 0 else None
        if snap is not None:
            recording[snap] = {p: [] for p in peers}
            log.record(snap, state=balance)
            if not bug:
                send_markers(snap)
        for dst in peers:
            amount = (r + me + dst) % 4  # 0 is a ping
            balance -= amount
            msg = log.new_id()
            queues[me, dst].put((msg, amount))
            log.send(f"P{me}->P{dst}", msg, amount, state=balance)
        if snap is not None and bug:
            send_markers(snap)
        poll()
    while any(c != [ROUNDS, len(SNAPSHOT_AT)] for c in counts.values()):
        if not poll():
            time.sleep(0.001)
    log.close()


def stress(out):
    """--stress: 4 threads log through one logger at once, each a send and a record on a marker
    250 times, to OUTDIR/stress.jsonl (the test checks the lines are whole, numbered, paired)."""
    log = SnapshotLog("P0", os.path.join(out, "stress.jsonl"))

    def work(t):
        for i in range(250):
            log.send("P0->P1", log.new_id(), i, state=i)
            log.record(t * 1000 + i, state=i, marker="P1->P0")
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()


def main():
    out, bug = sys.argv[1], "--bug" in sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    if "--stress" in sys.argv[2:]:
        return stress(out)
    queues = {(a, b): queue.Queue() for a in range(N) for b in range(N) if a != b}
    threads = [threading.Thread(target=process, args=(p, out, bug, queues)) for p in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
