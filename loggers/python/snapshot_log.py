"""Logs one process's Chandy-Lamport events as the JSON lines `model verify` reads.

Copy this file into your project; it needs only the standard library. One `SnapshotLog` per
process, shared by all of that process's threads:

    log = SnapshotLog("P0", "logs/P0.jsonl")
    msg = log.new_id()                                  # a run-wide unique message id
    log.send("P0->P1", msg, payload=5, state=95)
    log.receive("P1->P0", "P1-3", state=98)
    log.record(0, state=98)                             # P0 initiates snapshot 0
    log.record(1, state=97, marker="P2->P0")            # a marker on P2->P0 made P0 record
    log.marker_send(0, "P0->P1")
    log.marker_receive(0, "P1->P0", recorded=["P1-4"])  # closes P1->P0's record

Every call writes one event under one lock, numbered by `seq` in the order of the calls, and
flushes it: call it right after the event, in the thread that made it happen, while that
thread still holds whatever lock orders the process's events. `record(..., marker=...)` writes
the marker's receipt and the record it caused as two adjacent lines, so another thread's line
never comes between them. `state` (optional everywhere) is the process's state right after the
event, as JSON; on `record` the state recorded.
"""
import json
import threading


class SnapshotLog:
    """The log of one process: `process` its name as in the topology, `path` its file."""

    def __init__(self, process, path):
        self.process = process
        self._file = open(path, "w", buffering=1)  # line-buffered: each event reaches the file
        self._lock = threading.Lock()
        self._seq = 0
        self._ids = 0

    def new_id(self):
        """A message id no other process's log gives: "<process>-<n>"."""
        with self._lock:
            self._ids += 1
            return f"{self.process}-{self._ids - 1}"

    def send(self, channel, msg, payload, state=None):
        """`msg` (an id) sent on `channel` ("FROM->TO") carrying `payload` (any JSON)."""
        self._write({"kind": "send", "channel": channel, "msg": msg, "payload": payload}, state)

    def receive(self, channel, msg, state=None):
        """Message `msg` taken from `channel` and applied."""
        self._write({"kind": "receive", "channel": channel, "msg": msg}, state)

    def loss(self, channel, msg, state=None):
        """Message `msg` lost in transit on `channel` (logged by the channel's receiver)."""
        self._write({"kind": "loss", "channel": channel, "msg": msg}, state)

    def internal(self, step, state=None):
        """An internal step (any JSON)."""
        self._write({"kind": "internal", "step": step}, state)

    def record(self, snapshot, state=None, marker=None):
        """The process records its `state` for `snapshot`: as the initiator when `marker` is
        None; else because the first marker of `snapshot` arrived on channel `marker`, whose
        receipt (closing that channel empty) is written with the record, adjacent."""
        if marker is None:
            self._write({"kind": "record", "snapshot": snapshot, "initiated": True}, state)
            return
        receipt = {"kind": "marker-receive", "snapshot": snapshot, "channel": marker, "recorded": []}
        record = {"kind": "record", "snapshot": snapshot, "initiated": False}
        self._write(receipt, None, (record, state))

    def marker_send(self, snapshot, channel=None):
        """A marker of `snapshot` sent on `channel` (None: on every outgoing channel at once)."""
        line = {"kind": "marker-send", "snapshot": snapshot}
        if channel is not None:
            line["channel"] = channel
        self._write(line, None)

    def marker_receive(self, snapshot, channel, recorded):
        """A later marker of `snapshot` on `channel`: it closes the channel's record, `recorded`
        the ids of the messages received on it since the process recorded, in order."""
        self._write({"kind": "marker-receive", "snapshot": snapshot, "channel": channel,
                     "recorded": list(recorded)}, None)

    def close(self):
        self._file.close()

    def _write(self, event, state, then=None):
        """Writes `event` (and `then`, an (event, state) pair) under the lock, adjacent."""
        with self._lock:
            text = ""
            for e, s in [(event, state)] + ([then] if then else []):
                line = {"process": self.process, "seq": self._seq, **e}
                if s is not None:
                    line["state"] = s
                text += json.dumps(line, separators=(",", ":")) + "\n"
                self._seq += 1
            self._file.write(text)
            self._file.flush()
