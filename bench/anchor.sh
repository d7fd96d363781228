#!/usr/bin/env bash
# Run SPIN or Rumur in one configuration on the reference Chandy-Lamport model of $ANCHORS
# (default ../shared/anchors: spin-cl.pml, murphi-cl.m.in; see its README.md), and print one line
#   tool=.. config=.. K=.. T0=.. unique_states=N wall_s=S peak_rss_kb=KB tree_pss_kb=KB mem_kb=KB
#   load1=L others_cores=C depth=D flags="..."
# or fail (exit 1) printing the tool's output. Never prints a figure that was not measured.
#
# usage: bench/anchor.sh spin CONFIG K [T0]      CONFIG is one of
#          hc4             -DSAFETY -DHC4 -DNOREDUCE            one core, hash compaction (lossy: see below)
#          collapse        -DSAFETY -DCOLLAPSE -DNOREDUCE       one core, exact (lossless compression)
#          full            -DSAFETY                             one core, exact, whole states (the old baseline)
#          ncore-hc4       -DNCORE=2 + hc4                      multi-core DFS, 2 cores, shared hash table
#          ncore-collapse  -DNCORE=2 + collapse                 multi-core DFS, 2 cores
#          bfspar          -DBFS_PAR -DSAFETY -DNOREDUCE, -u2   multi-core BFS, 2 cores, lock-free table; it
#                          stores 64-bit hash compaction by default (T_HC=2 words + a 32-bit hash value)
#          bfspar-collapse -DBFS_PAR -DNO_HC -DCOLLAPSE ..., -u2  multi-core BFS, exact
#        bench/anchor.sh rumur threads2 K [T0]   Rumur with 2 threads (stores whole states)
# env: ANCHORS; SPIN_W (pan -w, default by K: 1->16, 2->21, 3->25, else 28; one more for bfspar*); SPIN_Z (-z handoff depth for
#      -DNCORE, default 10); SPIN_MEMLIM (MB of shared memory for -DNCORE, default by K); KEEP=1 keeps the
#      work directory.
# SPIN's counts include its end-state monitor process: exact counts are K=1 21318, K=2 2018086,
# K=3 35255324 (-DBFS_PAR: 2 more, it also stores the 2 atomic init steps). -DHC4 keeps 32 bits of a hash
# per state beside the table index (which comes from the same hash), so it behaves like a 32-bit fingerprint:
# it loses about n^2/2^33 states (545 at K=2, ~0.4% at K=3).
# Installs spin / rumur from Debian when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:?spin or rumur}; config=${2:?config}; K=${3:?K}; T0=${4:-2}
anchors=${ANCHORS:-$here/../../shared/anchors}
anchors=$(cd "$anchors" && pwd)
# shellcheck source=bench/measure.sh
. "$here/measure.sh"
[[ $K =~ ^[0-9]+$ && $T0 =~ ^[0-9]+$ ]] || { echo "K and T0 must be numbers" >&2; exit 2; }

work=$(mktemp -d /tmp/anchor.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
need() { command -v "$1" >/dev/null || { apt-get update -qq >/dev/null && apt-get install -y -qq "$2" >/dev/null; }; }
die() { echo "anchor.sh $tool $config K=$K: $1" >&2; [ -f "${2:-}" ] && cat "$2" >&2; exit 1; }

case "$tool" in
  spin)
    need spin spin
    cp "$anchors/spin-cl.pml" "$work/cl.pml"; cd "$work"
    spin -DK="$K" -DT0="$T0" -a cl.pml >spin.out 2>&1 || die "spin -a failed" spin.out
    # pan -w: 2^w hash slots. hc4/collapse/full/ncore chain states from their slots: time hardly depends on
    # w (K=3 hc4: -w25 59.2 s 1.36 GB, -w27 60.0 s 2.15 GB), so about one slot per state. -DBFS_PAR has an
    # open-addressing table of fixed size that drops states when full: twice as many slots as states.
    case "$K" in 0|1) dw=16 ;; 2) dw=21 ;; 3) dw=25 ;; *) dw=28 ;; esac
    [[ $config == bfspar* ]] && dw=$((dw + 1))
    w=${SPIN_W:-$dw}
    case "$K" in 0|1|2) dmem=4000 ;; 3) dmem=12000 ;; *) dmem=20000 ;; esac
    memlim=${SPIN_MEMLIM:-$dmem}
    run=(./pan -m100000 "-w$w")
    case "$config" in
      hc4)             flags=(-DSAFETY -DHC4 -DNOREDUCE) ;;
      collapse)        flags=(-DSAFETY -DCOLLAPSE -DNOREDUCE) ;;
      full)            flags=(-DSAFETY) ;;
      ncore-hc4|ncore-collapse)
        # the hand-off slots are sized by VMAX: take the state-vector size from a probe run to depth 12
        # (the processes exist by then; deeper states have the same size)
        gcc -O2 -DSAFETY -o probe pan.c 2>gcc.out || die "gcc failed" gcc.out
        ./probe -m12 -w16 >probe.out 2>&1 || true
        vmax=$(awk '/State-vector/{print $2; exit}' probe.out)
        [[ $vmax =~ ^[0-9]+$ ]] || die "no state-vector size in the probe run" probe.out
        flags=(-DNCORE=2 "-DMEMLIM=$memlim" "-DVMAX=$vmax" -DSAFETY -DNOREDUCE)
        [ "$config" = ncore-hc4 ] && flags+=(-DHC4) || flags+=(-DCOLLAPSE)
        run+=("-z${SPIN_Z:-10}") ;;
      bfspar)          flags=(-DBFS_PAR -DSAFETY -DNOREDUCE); run+=(-u2) ;;
      bfspar-collapse) flags=(-DBFS_PAR -DNO_HC -DCOLLAPSE -DSAFETY -DNOREDUCE); run+=(-u2) ;;
      *) echo "unknown spin config $config" >&2; exit 2 ;;
    esac
    gcc -O2 "${flags[@]}" -o pan pan.c 2>gcc.out || die "gcc ${flags[*]} failed" gcc.out
    measure pan.out "${run[@]}" || die "measuring failed" pan.out
    [ "$M_RC" = 0 ] || die "pan exited with $M_RC" pan.out
    grep -q 'errors: 0' pan.out || die "pan did not report 'errors: 0'" pan.out
    # incomplete searches: depth limit, full hash table (-DBFS_PAR drops states then), memory exhausted
    if grep -Eiq 'search not completed|max search depth too small|depth limit reached|hash table (is )?full|out of memory|memory exhausted|aborting|recompile with -DVMAX' pan.out; then
        die "the search was not complete" pan.out
    fi
    states=$(awk '/states, stored/{print $1; exit}' pan.out)
    depth=$(sed -nE 's/.*depth reached ([0-9]+).*/\1/p' pan.out | head -1)
    [[ $depth =~ ^[0-9]+$ ]] || die "no 'depth reached' in the output" pan.out
    [ "$depth" -lt 100000 ] || die "depth $depth reached the -m limit" pan.out
    desc="${flags[*]} ${run[*]:1}" ;;
  rumur)
    need rumur rumur
    case "$config" in
      threads*) threads=${config#threads}; [[ $threads =~ ^[0-9]+$ ]] || { echo "rumur config threadsN" >&2; exit 2; } ;;
      *) echo "unknown rumur config $config (threadsN)" >&2; exit 2 ;;
    esac
    sed "s/@K@/$K/; s/T0  : 2;/T0  : $T0;/" "$anchors/murphi-cl.m.in" >"$work/cl.m"; cd "$work"
    rumur --threads "$threads" --deadlock-detection off --output cl.c cl.m >rumur.out 2>&1 ||
        die "rumur failed" rumur.out
    cc -std=c11 -O3 -march=native -mcx16 -o cl cl.c -lpthread 2>cc.out || die "cc failed" cc.out
    measure cl.out ./cl || die "measuring failed" cl.out
    [ "$M_RC" = 0 ] || die "the verifier exited with $M_RC" cl.out
    grep -q 'No error found' cl.out || die "no 'No error found'" cl.out
    states=$(sed -nE 's/^[[:space:]]*([0-9]+) states, .*/\1/p' cl.out | tail -1)
    depth=na
    desc="rumur --threads $threads --deadlock-detection off; cc -O3 -march=native" ;;
  *) echo "unknown tool $tool (spin or rumur)" >&2; exit 2 ;;
esac
[[ $states =~ ^[0-9]+$ ]] || die "no state count in the output" "$([ "$tool" = spin ] && echo pan.out || echo cl.out)"
echo "tool=$tool config=$config K=$K T0=$T0 unique_states=$states wall_s=$M_WALL peak_rss_kb=$M_RSS" \
     "tree_pss_kb=$M_PSS mem_kb=$M_MEM load1=$M_LOAD others_cores=$M_OTHERS depth=$depth flags=\"$desc\""
