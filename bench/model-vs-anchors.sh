#!/usr/bin/env bash
# The model checker beside SPIN and Rumur on the reference model of ../shared/anchors (3 houses, complete
# graph, 2 jars each, at most K one-jar transfers each, house 0 initiates one snapshot), all measured in
# this one run on this machine.
#
# usage: bench/model-vs-anchors.sh [--full] [K ...]       (default K: 2 3; K=3 takes 20-30 minutes)
#   --full   also: SPIN storing whole states (-DSAFETY, the old baseline), our full mode (every property,
#            ghost data), full mode with --por at K+1 for the largest K (K=4 when K=3 is listed) and
#            --symmetry with --initiators any (K <= 2)
# env: ANCHORS (default ../shared/anchors), CARGO_TARGET_DIR, SPIN_CONFIGS (default below; see
#      bench/anchor.sh), and SPIN_W / SPIN_Z / SPIN_MEMLIM passed on to bench/anchor.sh;
#      BASELINE=REV (with --full): also build commit REV (in a git worktree, its own target directory)
#      and run its full mode at the largest K in this run, beside ours (issue 24's baseline: b851a1a);
#      PAIRS=N (default 3): after each K's rows, N more runs of SPIN's fastest configuration, each
#      followed at once by ours on 2 threads, and the median of the N pairs' time ratios (0: none).
#
# Like for like: we store a 64-bit fingerprint per state (hash compaction), so SPIN runs in its hash-compact
# and compressed modes, one core and two: -DHC4 (a 32-bit fingerprint in effect: it loses states),
# -DCOLLAPSE (exact), -DNCORE=2 multi-core DFS with either, and -DBFS_PAR multi-core BFS (64-bit hash
# compaction by default; its exact variant bfspar-collapse is left out by default: it preallocates
# 2^w x VECTORSZ/4 bytes, 16 GB at K=3). Rumur stores whole states, with 2 threads.
# Ours runs with --threads 1 and --threads 2, and with --por too when `model check --help` lists it.
# For each run: unique states, wall seconds, peak memory = max(peak RSS of the largest process, sampled
# peak Pss summed over the process tree), the CPU cores used by other processes during the run and the
# 1-minute load before it (the machine may be shared: compare figures measured in one quiet run).
# Every figure printed was measured in this run (known reference counts are labelled as such); a tool
# that fails, a search that was cut short, or a missing count stops the script with the tool's output.
# Installs spin and rumur from Debian when missing (bench/anchor.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
full=0; ks=()
for a in "$@"; do
    case "$a" in
      --full) full=1 ;;
      -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      -*) echo "unknown option $a (see --help)" >&2; exit 2 ;;
      *) [[ $a =~ ^[0-9]+$ ]] || { echo "K must be a number: $a" >&2; exit 2; }; ks+=("$a") ;;
    esac
done
[ ${#ks[@]} -gt 0 ] || ks=(2 3)
export ANCHORS=${ANCHORS:-$repo/../shared/anchors}
for f in spin-cl.pml murphi-cl.m.in; do
    [ -f "$ANCHORS/$f" ] || { echo "no $ANCHORS/$f (set ANCHORS)" >&2; exit 2; }
done
read -r -a spin_configs <<<"${SPIN_CONFIGS:-hc4 collapse ncore-hc4 ncore-collapse bfspar}"
[ "$full" = 1 ] && [[ " ${spin_configs[*]} " != *" full "* ]] && spin_configs+=(full)
baseline=${BASELINE:-}
pairs=${PAIRS:-3}
[[ $pairs =~ ^[0-9]+$ ]] || { echo "PAIRS must be a number: $pairs" >&2; exit 2; }
[ -z "$baseline" ] || [ "$full" = 1 ] || { echo "BASELINE needs --full" >&2; exit 2; }
[ -z "$baseline" ] || git rev-parse --verify -q "$baseline^{commit}" >/dev/null || { echo "BASELINE=$baseline: no such commit" >&2; exit 2; }
# shellcheck source=bench/measure.sh
. bench/measure.sh

cargo build --release -p model -q
target=${CARGO_TARGET_DIR:-target}
model=$target/release/model
[ -x "$model" ] || { echo "no $model after cargo build" >&2; exit 1; }
por=0
"$model" check --help | grep -q -- '--por' && por=1
top=${ks[0]}; for k in "${ks[@]}"; do [ "$k" -gt "$top" ] && top=$k; done

# unique states of this configuration: TLC and Rumur agree exactly (../shared/anchors/README.md)
declare -A known=([1]=20963 [2]=2009291 [3]=35218771)
# SPIN stores its end-state monitor too: its exact counts (with -DBFS_PAR 2 more: the atomic init steps)
declare -A spin_exact=([1]=21318 [2]=2018086 [3]=35255324)

tmp=$(mktemp -d /tmp/model-vs-anchors.XXXXXX)
cleanup() { [ -z "$baseline" ] || git worktree remove --force "$tmp/baseline" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
die() { echo "model-vs-anchors: $1" >&2; [ -f "${2:-}" ] && cat "$2" >&2; exit 1; }
kv() { sed -nE "s/.* $1=([^ ]+).*/\1/p" <<<" $2"; }
mb() { python3 -c "print(f'{$1/1024:.0f}')"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
thousands() { python3 -c "print(f'{$1:,}')"; }
collision() { python3 -c "n=$1; print(f'{n*(n-1)/2**65:.1e}')"; }
if [ -n "$baseline" ]; then
    git worktree add -q --detach "$tmp/baseline" "$baseline" || die "git worktree add $baseline failed"
    (cd "$tmp/baseline" && CARGO_TARGET_DIR=$tmp/baseline-target cargo build --release -p model -q) \
        || die "building $baseline failed"
    baseline_model=$tmp/baseline-target/release/model
fi

# Row store, one entry per measured run: name -> fields
declare -A R_UNIQUE R_WALL R_MEM R_RSS R_PSS R_OTHERS R_LOAD R_DESC R_NOTE
rows=()
add_row() {  # name unique wall mem rss pss others load desc
    rows+=("$1")
    R_UNIQUE[$1]=$2; R_WALL[$1]=$3; R_MEM[$1]=$4; R_RSS[$1]=$5; R_PSS[$1]=$6
    R_OTHERS[$1]=$7; R_LOAD[$1]=$8; R_DESC[$1]=$9; R_NOTE[$1]=""
}

anchor() {  # tool config K [name] -> a row named name (default "tool config")
    local line
    line=$(bench/anchor.sh "$1" "$2" "$3" 2>"$tmp/anchor.err") || die "bench/anchor.sh $1 $2 $3 failed:" "$tmp/anchor.err"
    local u; u=$(kv unique_states "$line")
    [[ $u =~ ^[0-9]+$ ]] || die "no count from bench/anchor.sh $1 $2 $3: $line"
    add_row "${4:-$1 $2}" "$u" "$(kv wall_s "$line")" "$(kv mem_kb "$line")" "$(kv peak_rss_kb "$line")" \
        "$(kv tree_pss_kb "$line")" "$(kv others_cores "$line")" "$(kv load1 "$line")" \
        "$(sed -nE 's/.* flags="(.*)"$/\1/p' <<<"$line")"
}

ours() {  # name mode K threads [extra flags...] -> a row (MODEL: another build's binary)
    local name=$1 mode=$2 k=$3 threads=$4; shift 4
    local args=(check --procs 3 --topology complete --tokens 2 --sends "$k" --properties "$mode"
                --threads "$threads" --json "$@")
    local bin=${MODEL:-$model}
    M_ERR=$tmp/ours.err measure "$tmp/ours.out" "$bin" "${args[@]}" || die "measuring $bin ${args[*]} failed"
    [ "$M_RC" = 0 ] || { cat "$tmp/ours.err" >&2; die "model ${args[*]} exited with $M_RC:" "$tmp/ours.out"; }
    local u
    u=$(python3 - "$tmp/ours.out" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    r = {}
ok = r.get("ok") is True and r.get("exhaustive") is True and isinstance(r.get("unique_states"), int)
print(r["unique_states"] if ok else "")
EOF
    ) || true
    [[ $u =~ ^[0-9]+$ ]] || { cat "$tmp/ours.err" >&2; die "model ${args[*]}: not ok, not exhaustive, or no unique_states:" "$tmp/ours.out"; }
    add_row "$name" "$u" "$M_WALL" "$M_MEM" "$M_RSS" "$M_PSS" "$M_OTHERS" "$M_LOAD" "model ${args[*]:1}"
}

print_rows() {  # names...
    printf '  %-22s %12s %8s %8s %8s %8s %6s %5s  %s\n' run unique wall_s peak_MB rss_MB pss_MB others load note
    local r pss
    for r in "$@"; do
        pss=${R_PSS[$r]}; [ "$pss" = na ] || pss=$(mb "$pss")
        printf '  %-22s %12s %8s %8s %8s %8s %6s %5s  %s\n' "$r" "$(thousands "${R_UNIQUE[$r]}")" "${R_WALL[$r]}" \
            "$(mb "${R_MEM[$r]}")" "$(mb "${R_RSS[$r]}")" "$pss" "${R_OTHERS[$r]}" "${R_LOAD[$r]}" "${R_NOTE[$r]}"
    done
}

echo "model-vs-anchors on $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  peak_MB = max(rss_MB: peak RSS of the largest process, pss_MB: sampled peak Pss of the process tree);"
echo "  others = CPU cores used by other processes during the run (the contention figure); load = 1-minute"
echo "  load average before the run (it still includes the previous run of this script)"
ours_counts=()
for k in "${ks[@]}"; do
    rows=()
    echo
    echo "K=$k  (model $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+dirty'); por: $([ $por = 1 ] && echo listed || echo 'not listed by model check --help'))"
    spin_rows=()
    for c in "${spin_configs[@]}"; do anchor spin "$c" "$k"; spin_rows+=("spin $c"); done
    anchor rumur threads2 "$k"
    ours "ours basic t1" basic "$k" 1 --initiators 0
    ours "ours basic t2" basic "$k" 2 --initiators 0
    ours_counts+=("$k:${R_UNIQUE[ours basic t2]}")
    if [ $por = 1 ]; then
        ours "ours basic --por t1" basic "$k" 1 --initiators 0 --por
        ours "ours basic --por t2" basic "$k" 2 --initiators 0 --por
    fi

    # SPIN's losses, against its exact count (known, else the largest count of an exact configuration here)
    exact=${spin_exact[$k]:-}
    if [ -z "$exact" ]; then
        for r in "${spin_rows[@]}"; do
            case "$r" in *collapse|*full) [ "${R_UNIQUE[$r]}" -gt "${exact:-0}" ] && exact=${R_UNIQUE[$r]} ;; esac
        done
    fi
    best=""; best_exact=""
    for r in "${spin_rows[@]}"; do
        if [ -n "$exact" ]; then
            want=$exact; [[ $r == "spin bfspar"* ]] && want=$((exact + 2))
            lost=$((want - ${R_UNIQUE[$r]}))
            if [ "$lost" = 0 ]; then R_NOTE[$r]="exact"
            elif [ "$lost" -lt 0 ]; then R_NOTE[$r]="$(thousands $((-lost))) states MORE than the exact count"
            else R_NOTE[$r]="lost $(thousands "$lost") states ($(python3 -c "print(f'{100*$lost/$want:.3f}')")%)"; fi
        else
            lost=unknown; R_NOTE[$r]="(no exact count to compare)"
        fi
        R_NOTE[$r]+="; ${R_DESC[$r]}"
        if [ -z "$best" ] || python3 -c "import sys; sys.exit(not ${R_WALL[$r]} < ${R_WALL[$best]})"; then best=$r; fi
        if [ "$lost" = 0 ] && { [ -z "$best_exact" ] || python3 -c "import sys; sys.exit(not ${R_WALL[$r]} < ${R_WALL[$best_exact]})"; }; then
            best_exact=$r
        fi
    done
    R_NOTE[rumur threads2]="whole states; ${R_DESC[rumur threads2]}"
    for r in "${rows[@]}"; do
        case "$r" in
          ours*)
            R_NOTE[$r]="64-bit fingerprints"
            if [ -n "${known[$k]:-}" ] && [[ $r != *--por* ]]; then
                if [ "${R_UNIQUE[$r]}" = "${known[$k]}" ]; then R_NOTE[$r]+="; = TLC/Rumur count"
                else R_NOTE[$r]+="; DIFFERS from the TLC/Rumur count $(thousands "${known[$k]}")"; fi
            fi ;;
        esac
    done
    print_rows "${rows[@]}"

    o="ours basic t2"
    echo "  SPIN best (fastest complete search, errors 0): ${best#spin }, ${R_WALL[$best]} s, $(mb "${R_MEM[$best]}") MB, $(thousands "${R_UNIQUE[$best]}") states (${R_NOTE[$best]%%;*})"
    if [ -n "$best_exact" ]; then
        echo "  SPIN best exact (no state lost):                ${best_exact#spin }, ${R_WALL[$best_exact]} s, $(mb "${R_MEM[$best_exact]}") MB"
    fi
    echo "  ours (2 threads) / SPIN best:  time $(ratio "${R_WALL[$o]}" "${R_WALL[$best]}"), memory $(ratio "${R_MEM[$o]}" "${R_MEM[$best]}")"
    if [ -n "$best_exact" ] && [ "$best_exact" != "$best" ]; then
        echo "  ours (2 threads) / SPIN best exact:  time $(ratio "${R_WALL[$o]}" "${R_WALL[$best_exact]}"), memory $(ratio "${R_MEM[$o]}" "${R_MEM[$best_exact]}")"
    fi
    echo "  ours (2 threads) / Rumur (2 threads):  time $(ratio "${R_WALL[$o]}" "${R_WALL[rumur threads2]}"), memory $(ratio "${R_MEM[$o]}" "${R_MEM[rumur threads2]}")"
    echo "  ours (1 thread) / ours (2 threads):  time $(ratio "${R_WALL[ours basic t1]}" "${R_WALL[$o]}")"
    # The ratio again from pairs measured back to back (SPIN's best configuration, then ours on 2 threads):
    # one pair's ratio moves with the machine's load between the two runs; the pairs' median less so.
    if [ "$pairs" -gt 0 ]; then
        pair_ratios=()
        for i in $(seq 1 "$pairs"); do
            rows=()
            anchor spin "${best#spin }" "$k" "spin pair"
            ours "ours pair" basic "$k" 2 --initiators 0
            # Ours is exact: the same count every run. SPIN's hash-compact search may lose a few
            # states more or less from run to run (its two cores' interleaving): its count is shown.
            [ "${R_UNIQUE[ours pair]}" = "${R_UNIQUE[$o]}" ] || die "pair $i: ours found ${R_UNIQUE[ours pair]} states, not ${R_UNIQUE[$o]}"
            pair_ratios+=("$(ratio "${R_WALL[ours pair]}" "${R_WALL[spin pair]}")")
            printf '  pair %s: SPIN %s %s s, %s states (others %s); ours %s s (others %s): time %s\n' "$i" "${best#spin }" \
                "${R_WALL[spin pair]}" "$(thousands "${R_UNIQUE[spin pair]}")" "${R_OTHERS[spin pair]}" \
                "${R_WALL[ours pair]}" "${R_OTHERS[ours pair]}" "${pair_ratios[-1]}"
        done
        echo "  ours (2 threads) / SPIN best, median of $pairs pairs measured back to back: time $(python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" "${pair_ratios[@]}") (pairs: ${pair_ratios[*]})"
    fi
    if [ -n "${known[$k]:-}" ]; then
        eq=NO; [ "${R_UNIQUE[$o]}" = "${known[$k]}" ] && [ "${R_UNIQUE[ours basic t1]}" = "${known[$k]}" ] && eq=yes
        echo "  our count equals the TLC/Rumur count $(thousands "${known[$k]}") exactly: $eq"
    fi
    eq=NO; [ "${R_UNIQUE[$o]}" = "${R_UNIQUE[rumur threads2]}" ] && eq=yes
    echo "  our count equals Rumur's count in this run: $eq"
    [ "${R_UNIQUE[ours basic t1]}" = "${R_UNIQUE[$o]}" ] || echo "  WARNING: 1 and 2 threads found different counts"
done

if [ "$full" = 1 ]; then
    echo
    echo "full mode (every property, ghost data) on the same configuration, all cores:"
    for k in "${ks[@]}"; do
        rows=()
        ours "full" full "$k" "$(nproc)" --initiators 0
        ours_counts+=("$k full:${R_UNIQUE[full]}")
        [ "$k" != "$top" ] || now=("${R_UNIQUE[full]}" "${R_WALL[full]}" "${R_MEM[full]}")
        printf '  K=%s: %s unique states, %s s, %s MB (others %s, load %s)\n' "$k" "$(thousands "${R_UNIQUE[full]}")" \
            "${R_WALL[full]}" "$(mb "${R_MEM[full]}")" "${R_OTHERS[full]}" "${R_LOAD[full]}"
    done
    if [ -n "$baseline" ]; then
        echo "  build $baseline (BASELINE) at K=$top, measured right after this build's K=$top:"
        rows=()
        MODEL=$baseline_model ours base full "$top" "$(nproc)" --initiators 0
        printf '  K=%s this build: %s unique states, %s s, %s MB; %s: %s unique states, %s s, %s MB (others %s, load %s)\n' \
            "$top" "$(thousands "${now[0]}")" "${now[1]}" "$(mb "${now[2]}")" "$baseline" "$(thousands "${R_UNIQUE[base]}")" \
            "${R_WALL[base]}" "$(mb "${R_MEM[base]}")" "${R_OTHERS[base]}" "${R_LOAD[base]}"
        [ "${now[0]}" = "${R_UNIQUE[base]}" ] || echo "  WARNING: the two builds found different counts"
        echo "  full mode, $baseline / this build: time $(ratio "${R_WALL[base]}" "${now[1]}"), memory $(ratio "${R_MEM[base]}" "${now[2]}")"
    fi
    echo
    echo "full mode with --por at K=$((top + 1)), all cores:"
    rows=()
    ours por full "$((top + 1))" "$(nproc)" --initiators 0 --por
    printf '  K=%s: %s unique states, %s s, %s MB (others %s, load %s)\n' "$((top + 1))" "$(thousands "${R_UNIQUE[por]}")" \
        "${R_WALL[por]}" "$(mb "${R_MEM[por]}")" "${R_OTHERS[por]}" "${R_LOAD[por]}"
    echo
    echo "symmetry (--initiators any, basic mode, DFS, all cores):"
    for k in "${ks[@]}"; do
        [ "$k" -le 2 ] || continue
        rows=()
        ours any basic "$k" "$(nproc)" --initiators any
        ours sym basic "$k" "$(nproc)" --initiators any --symmetry
        printf '  K=%s: %s states in %s s, %s MB without; %s states in %s s, %s MB with (%.1fx fewer states)\n' \
            "$k" "$(thousands "${R_UNIQUE[any]}")" "${R_WALL[any]}" "$(mb "${R_MEM[any]}")" \
            "$(thousands "${R_UNIQUE[sym]}")" "${R_WALL[sym]}" "$(mb "${R_MEM[sym]}")" \
            "$(python3 -c "print(${R_UNIQUE[any]}/${R_UNIQUE[sym]})")"
    done
fi

echo
echo "64-bit fingerprints: probability that two of n states collide (birthday bound) p ~ n(n-1)/2^65"
for e in "${ours_counts[@]}"; do
    echo "  K=${e%%:*} (measured here): n = $(thousands "${e##*:}"), p ~ $(collision "${e##*:}")"
done
echo "  K=3 full (the README's count 122,766,674, not measured in this run unless listed above): p ~ $(collision 122766674)"
echo "  (SPIN -DHC4 keeps 32 bits in effect: it is expected to lose about n^2/2^33 states; see its rows)"
