#!/usr/bin/env python3
"""Peak total memory of a process tree, sampled: bench/treepss.py PID [INTERVAL_S]

Every INTERVAL_S seconds (default 0.25) sums the proportional set size (Pss, /proc/P/smaps_rollup) of PID
and all its descendants, and prints the largest sum seen, in KB, once PID has exited (or is a zombie).
Pss splits shared pages between the processes mapping them, so a multi-process checker (SPIN's -DNCORE
and -DBFS_PAR workers share one state store) is counted once, where max RSS counts only its largest process.
A sample can miss a peak shorter than the interval; the state stores measured here only grow.
"""
import os
import sys
import time


def state_and_ppid(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return rest[0], int(rest[1])


def tree(root):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                _, ppid = state_and_ppid(name)
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    root = int(sys.argv[1])
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.25
    peak = 0
    while True:
        try:
            if state_and_ppid(root)[0] == "Z":
                break
        except (OSError, IndexError, ValueError):
            break
        peak = max(peak, sum(pss_kb(p) for p in tree(root)))
        time.sleep(interval)
    print(peak)


if __name__ == "__main__":
    main()
