#!/usr/bin/env bash
# The model checker beside SPIN and Rumur on the reference model of ../shared/anchors (3 houses,
# complete graph, 2 jars each, at most K one-jar transfers each, house 0 initiates one snapshot),
# all measured in this one run on this machine, then our full mode on the same configuration and
# the effect of --symmetry with --initiators any.
#
# usage: bench/model-vs-anchors.sh [K ...]        (default: 1 2 3; K=3 takes several minutes)
# Installs spin and rumur from Debian when missing (run-anchor.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
anchors=${ANCHORS:-../shared/anchors}
[ -x "$anchors/run-anchor.sh" ] || { echo "no $anchors/run-anchor.sh (set ANCHORS)" >&2; exit 2; }
ks=("$@"); [ ${#ks[@]} -gt 0 ] || ks=(1 2 3)
cargo build --release -p model -q
model=target/release/model
base=(--procs 3 --topology complete --tokens 2)

# ours MODE K [extra flags...] -> "unique wall rss_kb"
ours() {
    local mode=$1 k=$2; shift 2
    local out; out=$(mktemp)
    /usr/bin/time -f "%e %M" -o "$out.time" "$model" check "${base[@]}" --sends "$k" --properties "$mode" --json "$@" \
        >"$out" 2>/dev/null || true
    local unique; unique=$(python3 -c "import json,sys; print(json.load(open('$out'))['unique_states'])")
    read -r wall rss <"$out.time"
    rm -f "$out" "$out.time"
    echo "$unique $wall $rss"
}

# anchor TOOL K -> "unique wall rss_kb"
anchor() {
    "$anchors/run-anchor.sh" "$1" "$2" 2>/dev/null | tail -1 |
        sed -E 's/.*unique_states=([0-9]+) wall_s=([0-9.]+) peak_rss_kb=([0-9]+).*/\1 \2 \3/'
}

ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
mb() { python3 -c "print(f'{$1/1024:.0f}')"; }

printf '%-3s %-8s %12s %9s %9s\n' K checker unique wall_s peak_MB
for k in "${ks[@]}"; do
    read -r ou ow om < <(ours basic "$k" --initiators 0)
    read -r su sw sm < <(anchor spin "$k")
    read -r ru rw rm_ < <(anchor rumur "$k")
    printf '%-3s %-8s %12s %9s %9s\n' "$k" ours "$ou" "$ow" "$(mb "$om")"
    printf '%-3s %-8s %12s %9s %9s   (SPIN counts its end-state monitor too)\n' "$k" spin "$su" "$sw" "$(mb "$sm")"
    printf '%-3s %-8s %12s %9s %9s\n' "$k" rumur "$ru" "$rw" "$(mb "$rm_")"
    printf '    ours/SPIN: time %s, memory %s;  ours/Rumur: time %s, memory %s;  states equal Rumur: %s\n' \
        "$(ratio "$ow" "$sw")" "$(ratio "$om" "$sm")" "$(ratio "$ow" "$rw")" "$(ratio "$om" "$rm_")" \
        "$([ "$ou" = "$ru" ] && echo yes || echo NO)"
done

echo
echo "full mode (every property, ghost data) on the same configuration:"
for k in "${ks[@]}"; do
    read -r fu fw fm < <(ours full "$k" --initiators 0)
    printf '  K=%s: %s unique states, %s s, %s MB\n' "$k" "$fu" "$fw" "$(mb "$fm")"
done

echo
echo "symmetry (--initiators any, basic mode, DFS):"
for k in "${ks[@]}"; do
    [ "$k" -le 2 ] || continue
    read -r au aw am < <(ours basic "$k" --initiators any)
    read -r yu yw ym < <(ours basic "$k" --initiators any --symmetry)
    printf '  K=%s: %s states in %s s, %s MB without; %s states in %s s, %s MB with (%.1fx fewer states)\n' \
        "$k" "$au" "$aw" "$(mb "$am")" "$yu" "$yw" "$(mb "$ym")" "$(python3 -c "print($au/$yu)")"
done
