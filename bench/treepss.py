#!/usr/bin/env python3
"""Peak total memory and CPU time of a process tree, sampled: bench/treepss.py PID [INTERVAL_S]

Every INTERVAL_S seconds (default 0.5) sums the proportional set size (Pss, /proc/P/smaps_rollup) of PID
and all its descendants, and once PID has exited (or is a zombie) prints the largest sum seen, in KB, and
the user+system CPU seconds of every process seen in the tree (at its last sample: a process's last
interval is missed; it counts the workers that a tool forks and does not wait for, which time's %U %S miss).
Pss splits shared pages between the processes mapping them, so a multi-process checker (SPIN's -DNCORE
and -DBFS_PAR workers share one state store) is counted once, where max RSS counts only its largest process.
A sample can miss a peak shorter than the interval; the state stores measured here only grow.
"""
import os
import sys
import time


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def state_and_ppid(pid):
    rest = stat(pid)
    return rest[0], int(rest[1])


def cpu_ticks(pid):
    try:
        rest = stat(pid)
        return int(rest[11]) + int(rest[12])  # utime, stime (fields 14 and 15 of /proc/P/stat)
    except (OSError, IndexError, ValueError):
        return 0


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
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    peak, ticks = 0, {}
    while True:
        try:
            if state_and_ppid(root)[0] == "Z":
                break
        except (OSError, IndexError, ValueError):
            break
        procs = tree(root)
        peak = max(peak, sum(pss_kb(p) for p in procs))
        for p in procs:
            ticks[p] = max(ticks.get(p, 0), cpu_ticks(p))
        time.sleep(interval)
    print(peak, f"{sum(ticks.values()) / os.sysconf('SC_CLK_TCK'):.2f}")


if __name__ == "__main__":
    main()
