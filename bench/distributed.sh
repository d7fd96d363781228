#!/usr/bin/env bash
# `model check --distributed` under mpirun (np = 1, 2) beside the single-process depth-first engine
# (--threads 1, 2), and np 2 with every breadth-first level kept on disk (--rank-memory 0), on the
# reference configuration in basic mode (3 houses, complete graph, 2 jars
# each, at most K transfers each, house 0 initiates one snapshot; PROPERTIES=full: check's default
# mode, as `model check --sends K` runs), all measured in this one run on
# this machine; then a *model* of the expected scaling at N = 16 ... 1024 ranks from the measured
# per-state costs (not a measurement: its network figures are assumptions, printed with it) and
# from what crosses between the ranks at more ranks: measured once on the largest K with N ranks on
# this machine's cores (their wall times are not used: N ranks share 2 cores).
#
# usage: bench/distributed.sh [K ...]     (default K: 2 3; K=3 takes about 3 minutes a round, and
#                                          its traffic at 4, 8 and 16 ranks about 2 minutes)
# env: CARGO_TARGET_DIR; REPEAT (default 3): rounds, each running every configuration once in turn
#      (so that the machine's drift falls on all of them alike); a configuration's figures are the
#      median of its rounds (wall, CPU: user and system), its memory the largest;
#      NET_GBPS (default 10: bytes per second each rank can send, in Gb/s),
#      NET_LATENCY_US (default 20) and NET_PER_RANK_US (default 1): the modelled cost of one
#      collective operation, latency + per-rank term times N; NET_MESSAGE_US (default 2): the work
#      a message costs its sender and its receiver, each; TRAFFIC_NP (default "4 8 16"): the numbers
#      of ranks, each over 2, whose traffic is measured once on the largest K for the model;
#      PROPERTIES (default basic): the mode checked.
# For each run: unique states (each must equal the single run's, or the script stops), wall
# seconds, peak memory (max of the largest process's peak RSS and the sampled peak Pss of the
# whole process tree, so every rank counts), the cores other processes used meanwhile; for the
# distributed runs, what crossed between the ranks per unique state (fingerprints; those not sent
# because the rank had asked about them before; states moved to even out the levels; bytes) and
# the largest rank's share over the mean, of the seen set and of the states expanded.
# Installs Open MPI and libclang from Debian when missing (scripts/packages).
set -euo pipefail
cd "$(dirname "$0")/.."
ks=()
for a in "$@"; do
    case "$a" in
      -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) [[ $a =~ ^[0-9]+$ ]] || { echo "K must be a number: $a" >&2; exit 2; }; ks+=("$a") ;;
    esac
done
[ ${#ks[@]} -gt 0 ] || ks=(2 3)
scripts/packages
cargo build --release -p model --features mpi --quiet
model=${CARGO_TARGET_DIR:-target}/release/model
# shellcheck source=bench/measure.sh
. bench/measure.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

die() { echo "bench/distributed.sh: $1" >&2; [ -z "${2:-}" ] || cat "$2" >&2; exit 1; }

properties=${PROPERTIES:-basic}
case "$properties" in basic|full|literal) ;; *) echo "PROPERTIES must be basic, full or literal: $properties" >&2; exit 2 ;; esac
echo "distributed ($properties mode) on $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), model $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+dirty'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
rows=$tmp/rows
: >"$rows"
repeat=${REPEAT:-3}
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "REPEAT must be a positive number: $repeat" >&2; exit 2; }
read -r -a traffic_np <<<"${TRAFFIC_NP-4 8 16}"
for n in "${traffic_np[@]}"; do
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 2 ] || { echo "TRAFFIC_NP: each a number of ranks over 2: $n" >&2; exit 2; }
done
largest=$(printf '%s\n' "${ks[@]}" | sort -n | tail -1)
for k in "${ks[@]}"; do
    args=(check --procs 3 --topology complete --tokens 2 --sends "$k" --properties "$properties" --initiators 0 --json)
    # The rounds, each running every configuration once in turn; then, on the largest K, the
    # traffic at more ranks (once each).
    runs=()
    for round in $(seq "$repeat"); do
        for c in "single 1" "single 2" "mpi 1" "mpi 2" "disk 2"; do runs+=("$round $c"); done
    done
    if [ "$k" = "$largest" ]; then
        for n in "${traffic_np[@]}"; do runs+=("1 traffic $n"); done
    fi
    for run in "${runs[@]}"; do
        read -r round kind n <<<"$run"
        if [ "$kind" = single ]; then
            cmd=("$model" "${args[@]}" --threads "$n")
        else
            cmd=(mpirun --oversubscribe --bind-to none -np "$n" "$model" "${args[@]}" --distributed)
            if [ "$kind" = disk ]; then cmd+=(--rank-memory 0); fi
        fi
        M_ERR=$tmp/err measure "$tmp/out" "${cmd[@]}" || die "measuring ${cmd[*]} failed"
        [ "$M_RC" = 0 ] || die "${cmd[*]} exited with $M_RC:" "$tmp/err"
        python3 - "$tmp/out" "$k" "$kind" "$n" "$M_WALL" "$M_MEM" "$M_OTHERS" "$M_USER" "$M_SYS" "$M_CPU" "$round" >>"$rows" <<'EOF' || die "${cmd[*]}: not ok or not exhaustive:" "$tmp/out"
import json, sys
out, k, kind, n, wall, mem, others, user, sys_s, cpu, round_ = sys.argv[1:]
r = json.load(open(out))
assert r.get("ok") is True and r.get("exhaustive") is True, r.get("summary")
d = r.get("distributed") or {}
print(json.dumps({"k": int(k), "kind": kind, "n": int(n), "round": int(round_), "unique": r["unique_states"],
                  "states": r["states"], "levels": r["max_depth"] + 1, "wall": float(wall), "mem_kb": int(mem),
                  "others": others, "user": float(user), "sys": float(sys_s), "cpu": float(cpu), **d}))
EOF
    done
done
python3 - "$rows" <<'EOF'
import json, math, os, sys
import statistics
every = [json.loads(l) for l in open(sys.argv[1])]
# The traffic at more ranks: its own table below, and the model's.
traffic = [r for r in every if r["kind"] == "traffic"]
every = [r for r in every if r["kind"] != "traffic"]
# One row per configuration: the median of its rounds (the traffic of the round whose wall time is
# the median: what crosses between ranks depends on timing), the largest memory, the wall's range.
rows = []
for key in dict.fromkeys((r["k"], r["kind"], r["n"]) for r in every):
    runs = sorted((r for r in every if (r["k"], r["kind"], r["n"]) == key), key=lambda r: r["wall"])
    row = dict(runs[(len(runs) - 1) // 2])
    for f in ("wall", "user", "sys", "cpu"):
        row[f] = statistics.median(r[f] for r in runs)
    row["mem_kb"] = max(r["mem_kb"] for r in runs)
    row["others"] = max((r["others"] for r in runs), key=lambda o: -1.0 if o == "na" else float(o))
    row["range"] = f"{runs[0]['wall']:.1f}-{runs[-1]['wall']:.1f}" if len(runs) > 1 else "-"
    rows.append(row)
def mb(kb): return f"{kb / 1024:,.0f}"
rounds = max(r["round"] for r in every)
print(f"  median of {rounds} round{'s' * (rounds > 1)}; CPU s = user + system of all processes (system: mostly the kernel clearing fresh pages)")
print(f"  {'K':>2} {'run':<22} {'unique':>12} {'wall_s':>7} {'range':>11} {'cpu_s':>7} {'(sys)':>6} {'peak_MB':>8} {'others':>6}  per unique state: fingerprints sent (not sent: asked before), states moved, bytes sent; largest seen set, expanded / mean")
for r in rows:
    name = {"single": f"engine, {r['n']} thread{'s' * (r['n'] > 1)}", "mpi": f"--distributed, np {r['n']}",
            "disk": f"np {r['n']}, levels on disk"}[r["kind"]]
    extra = ""
    if r["kind"] != "single":
        u = r["unique"]
        extra = (f"  {r['fingerprints_sent'] / u:.2f} ({r['fingerprints_cached'] / u:.2f}), {r['states_sent'] / u:.4f}, {r['bytes_sent'] / u:.0f}; "
                 f"{r['largest_share'] * r['ranks'] / u:.3f}, {r['largest_expanded'] * r['ranks'] / u:.3f}")
        if r.get("spilled_states"):
            extra += f"; on disk {r['spilled_states']:,} states, {r['spilled_bytes'] / 2**20:,.0f} MB written"
    print(f"  {r['k']:>2} {name:<22} {r['unique']:>12,} {r['wall']:>7.2f} {r['range']:>11} {r['cpu']:>7.2f} {r['sys']:>6.2f} {mb(r['mem_kb']):>8} {r['others']:>6}{extra}")
for k in sorted({r["k"] for r in rows}):
    by = {(r["kind"], r["n"]): r for r in rows if r["k"] == k}
    uniques = {r["unique"] for r in every if r["k"] == k}
    if len(uniques) != 1:
        sys.exit(f"K={k}: the runs disagree on the unique states: {sorted(uniques)}")
    s1, s2, m1, m2, d2 = by["single", 1], by["single", 2], by["mpi", 1], by["mpi", 2], by["disk", 2]
    print(f"  K={k}: np 2 / engine 2 threads: time {m2['wall'] / s2['wall']:.2f}, memory {m2['mem_kb'] / s2['mem_kb']:.2f}; "
          f"np 1 / engine 1 thread: time {m1['wall'] / s1['wall']:.2f}; np 1 / np 2: {m1['wall'] / m2['wall']:.2f}x; "
          f"levels on disk / in memory (np 2): time {d2['wall'] / m2['wall']:.2f}, memory {d2['mem_kb'] / m2['mem_kb']:.2f}")

# The scaling model (not a measurement), from the largest K's np 1 and np 2 runs, and the traffic
# measured at more ranks.
k = max(r["k"] for r in rows)
by = {(r["kind"], r["n"]): r for r in rows if r["k"] == k}
m1, m2 = by["mpi", 1], by["mpi", 2]
U, G, L = m1["unique"], m1["states"], m1["levels"]
for t in traffic:
    if t["unique"] != U:
        sys.exit(f"K={k}: {t['n']} ranks found {t['unique']:,} unique states, the single run {U:,}")
c1 = m1["wall"] / U                                 # seconds per unique state on one rank (np 1)
f2 = m2["fingerprints_sent"] / U                    # fingerprints sent per unique state at np 2
# what np 2 cost beyond np 1's work shared in two, put on the fingerprints sent (asking, answering,
# building the successors an owner said were new, moving states, waiting at the exchanges)
r = max(0.0, (2 * m2["wall"] - m1["wall"]) / max(m2["fingerprints_sent"], 1))
# the same from each round's pair (np 1, np 2 run one after the other), and from CPU time: the spread
pairs = [(a, b) for a in every for b in every if a["k"] == b["k"] == k and a["round"] == b["round"]
         and (a["kind"], a["n"]) == ("mpi", 1) and (b["kind"], b["n"]) == ("mpi", 2)]
r_rounds = sorted((2 * b["wall"] - a["wall"]) / max(b["fingerprints_sent"], 1) for a, b in pairs)
r_cpu = (m2["cpu"] - m1["cpu"]) / max(m2["fingerprints_sent"], 1)
r_user = (m2["user"] - m1["user"]) / max(m2["fingerprints_sent"], 1)
fp_bytes = 17                                       # a fingerprint and its parent's (16), and the answer (1)
state_bytes = (m2["bytes_sent"] - m2["fingerprints_sent"] * fp_bytes) / max(m2["states_sent"], 1)
gbps = float(os.environ.get("NET_GBPS", "10"))
lat = float(os.environ.get("NET_LATENCY_US", "20")) * 1e-6
per_rank = float(os.environ.get("NET_PER_RANK_US", "1")) * 1e-6
msg = float(os.environ.get("NET_MESSAGE_US", "2")) * 1e-6
batch, hold = 4096, 65536                           # the search's BATCH (asks a message) and HOLD (states held)
m2_msgs = m2.get("messages_sent", 0)

# What crosses between the ranks as N grows, measured: a rank asks about every successor owned
# elsewhere ((N-1)/N of them) but those it asked about before (the cache of asks), and the more
# ranks, the fewer of a state's parents share a rank: the cache catches fewer.
measured = {2: m2, **{t["n"]: t for t in traffic}}
def asked(t): return t["fingerprints_sent"] + t["fingerprints_cached"]
print(f"\n  What crosses between the ranks, K={k}, per unique state (np 2: its median round; more ranks: once")
print(f"  each, N ranks on {os.cpu_count()} cores: their wall times not used):")
print(f"  {'N':>6} {'fingerprints sent':>18} {'not sent (asked before)':>24} {'states moved':>13} {'bytes':>7} {'messages':>9} {'largest expanded / mean':>24} {'user s':>7}")
for n, t in sorted(measured.items()):
    print(f"  {n:>6} {t['fingerprints_sent'] / U:>18.2f} {t['fingerprints_cached'] / max(asked(t), 1):>23.0%} "
          f"{t['states_sent'] / U:>13.4f} {t['bytes_sent'] / U:>7.0f} {t['messages_sent']:>9,} {t['largest_expanded'] * n / U:>24.3f} {t['user']:>7.2f}")
# A check on r, not used by the model: the user time all ranks took, per fingerprint sent, between
# two numbers of ranks (from np 1 on); with more ranks than cores it counts their switching too.
steps = [(1, m1)] + sorted(measured.items())
print("  user time per fingerprint sent, from N to the next (more ranks than cores: their switching too): " +
      ", ".join(f"{a}->{b} {(tb['user'] - ta['user']) / max(tb['fingerprints_sent'] - ta['fingerprints_sent'], 1) * 1e9:.0f} ns"
                for (a, ta), (b, tb) in zip(steps, steps[1:])))
top = max(measured)
# successors per state a rank asks about or finds asked before, as N -> infinity ((N-1)/N of them at N)
per_state = asked(measured[top]) / U * top / (top - 1)
h_top = measured[top]["fingerprints_cached"] / max(asked(measured[top]), 1)
def f_of(n):
    """Fingerprints sent per state at N ranks: measured; between two measured N, interpolated in
    log N; past the largest measured, every successor owned elsewhere less the cache's share there."""
    if n == 1:
        return 0.0
    if n in measured:
        return measured[n]["fingerprints_sent"] / U
    if n > top:
        return per_state * (n - 1) / n * (1 - h_top)
    lo = max(m for m in measured if m < n)
    hi = min(m for m in measured if m > n)
    w = (math.log(n) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return (1 - w) * f_of(lo) + w * f_of(hi)
def v_of(n):
    """States moved per state at N ranks: measured, or at the nearest measured N below."""
    return 0.0 if n == 1 else measured[max(m for m in measured if m <= n)]["states_sent"] / U

print(f"\n  scaling MODEL (not measured) for K={k}: {U:,} states, {G / U:.2f} successors per state, {L} levels.")
print(f"  Measured here: c = {c1 * 1e6:.2f} µs per state on one rank (np 1); r = {r * 1e9:.0f} ns per fingerprint sent (np 2's")
print(f"  median time beyond np 1's halved, over np 2's {f2:.2f} fingerprints sent per state; each round's pair:")
print(f"  {', '.join(f'{x * 1e9:.0f}' for x in r_rounds)} ns; from CPU time {r_cpu * 1e9:.0f} ns, user time alone {r_user * 1e9:.0f} ns); states moved to even out")
print(f"  the levels {state_bytes:.0f} bytes each; np 2 sent {m2_msgs:,} messages (asks and answers).")
print(f"  f(N), fingerprints sent per state: measured at N = {', '.join(str(n) for n in sorted(measured))}; past {top}, the {per_state:.2f}")
print(f"  successors per state a rank asks about, (N-1)/N of them owned elsewhere, less the {h_top:.0%} the cache of")
print(f"  asks caught at {top} (taken as constant: it still falls as N grows, so f past {top} is a lower bound).")
print(f"  (f grown as at np 2, 2·f2·(N-1)/N, would give {2 * f2 * (top - 1) / top:.2f} at N = {top}; measured: {f_of(top):.2f}.)")
print(f"  Assumed: {gbps:g} Gb/s per rank; an MPI collective costs {lat * 1e6:g} µs + {per_rank * 1e6:g} µs x N, 5 per level (the")
print(f"  shares' reduction, the moves' sizes and data, the barrier, the level's reduction); a message costs its")
print(f"  sender and its receiver {msg * 1e6:g} µs of work each (its latency overlaps the expansion: no rank waits for an")
print(f"  answer but at the window).")
print(f"  T(N) = U/N·(c + f(N)·r) + U/N·b(N)/bandwidth + messages(N)·2·{msg * 1e6:g} µs + levels·5·(latency + N·per-rank), where")
print(f"  b(N) = f(N)·17 + v(N)·{state_bytes:.0f} bytes (v(N): the states moved per state, as measured at the nearest N),")
print(f"  messages(N) = 2·(levels·(N-1) + U/N·f(N)/{batch} + U/N/{hold}·(N-1)) a rank sends or receives (each ask")
print(f"  message answered; one to each owner at a level's end, one per {batch} asks, one to each owner per {hold} states")
print(f"  held); every rank's share of the work taken as the mean (measured: the largest expanded share above).")
print(f"  N = 1 and 2 reproduce the measured times by construction.")
print(f"  Weak scaling: the same with U(N) = N·U/2 states (each rank as many as at np 2, the levels as many as at K={k},")
print(f"  f(N) as above), against one rank's U(N)·c. The last column: the strong scaling's efficiency with r from")
print(f"  user time alone (the system time, mostly clearing fresh pages, taken to scale with the states as at np 1).")
print(f"  {'N':>6} {'f(N)':>6} {'compute_s':>10} {'network_s':>10} {'sync_s':>8} {'total_s':>8} {'speed-up':>9} {'efficiency':>10}   {'weak: total_s':>13} {'efficiency':>10}   {'eff. (r user)':>13}")
t1 = m1["wall"]
def model(n, u, r=r):
    f = f_of(n)
    b = f * fp_bytes + v_of(n) * state_bytes
    c = u / n * (c1 + f * r)
    messages = 2 * (L * (n - 1) + u / n * f / batch + u / n / hold * (n - 1))
    net = u / n * b / (gbps * 1e9 / 8) + messages * 2 * msg if n > 2 else 0.0
    sync = L * 5 * (lat + n * per_rank) if n > 2 else 0.0
    return c, net, sync, c + net + sync
for n in [1, 2, 16, 64, 256, 1024]:
    c, net, sync, t = model(n, U)
    tw = model(n, n * U / 2)[3] if n > 2 else None
    weak = f"{tw:>13.2f} {n * U / 2 * c1 / tw / n:>10.2f}" if tw else f"{'(measured)':>13} {'':>10}"
    by_user = f"{t1 / model(n, U, max(r_user, 0.0))[3] / n:>13.2f}" if n > 2 else f"{'':>13}"
    mark = "" if n in measured or n == 1 else "*"
    print(f"  {n:>6} {f_of(n):>5.2f}{mark:1} {c:>10.2f} {net:>10.2f} {sync:>8.2f} {t:>8.2f} {t1 / t:>9.1f} {t1 / t / n:>10.2f}   {weak}   {by_user}")
print(f"  (* f(N) not measured: see above)")
EOF
