# shellcheck shell=bash disable=SC2034  # the M_* results are read by the sourcing script
# Sourced by bench/anchor.sh and bench/model-vs-anchors.sh.
#
# measure OUT CMD [ARGS...]: runs CMD with stdout and stderr to OUT (stderr to $M_ERR if set), under /usr/bin/time -f "%e %M %U %S",
# and sets
#   M_RC      CMD's exit status
#   M_WALL    wall seconds (time's %e)
#   M_RSS     peak RSS in KB of the largest single process (time's %M)
#   M_PSS     peak of the summed Pss over the whole process tree in KB, sampled every 0.5 s (treepss.py);
#             na when the run ended before the first sample
#   M_LOAD    1-minute load average just before the run
#   M_USER, M_SYS  user and system CPU seconds of CMD and the children it waited for (time's %U, %S)
#   M_CPU     CMD's CPU seconds: the larger of M_USER+M_SYS and treepss.py's sum over the process tree
#   M_OTHERS  CPU cores used by everything else during the run: (busy time of all cores from /proc/stat
#             minus M_CPU, which counts through treepss.py forked workers that are not waited for)
#             / wall; 0 on a quiet machine, up to 2 on 2 cores; na under 1 s
# M_MEM is max(M_RSS, M_PSS): the figure to compare (a multi-process tool is not under-counted).

_measure_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

_busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }

measure() {
    local out=$1; shift
    M_LOAD=$(cut -d' ' -f1 /proc/loadavg)
    local b0; b0=$(_busy_jiffies)
    local tf="$out.time"
    M_RC=0
    if [ -n "${M_ERR:-}" ]; then
        /usr/bin/time -f "%e %M %U %S" -o "$tf" "$@" >"$out" 2>"$M_ERR" &
    else
        /usr/bin/time -f "%e %M %U %S" -o "$tf" "$@" >"$out" 2>&1 &
    fi
    local pid=$!
    python3 "$_measure_here/treepss.py" "$pid" >"$out.pss" &
    local spid=$!
    wait "$pid" || M_RC=$?
    wait "$spid"
    local b1; b1=$(_busy_jiffies)
    # time writes "Command exited with non-zero status N" first when CMD fails: the figures are the last line
    read -r M_WALL M_RSS M_USER M_SYS < <(tail -1 "$tf")
    local tree_cpu
    read -r M_PSS tree_cpu <"$out.pss"
    [[ $M_WALL =~ ^[0-9.]+$ && $M_RSS =~ ^[0-9]+$ && $M_USER =~ ^[0-9.]+$ && $M_SYS =~ ^[0-9.]+$ &&
        $M_PSS =~ ^[0-9]+$ && $tree_cpu =~ ^[0-9.]+$ ]] ||
        { echo "measure: no figures for $* (time: $(cat "$tf"))" >&2; return 70; }
    M_MEM=$(( M_RSS > M_PSS ? M_RSS : M_PSS ))
    # a run shorter than the sampling interval gets no sample, and CPU shares of a sub-second run are noise
    [ "$M_PSS" -gt 0 ] || M_PSS=na
    M_CPU=$(python3 -c "print(f'{max($M_USER + $M_SYS, $tree_cpu):.2f}')")
    M_OTHERS=$(python3 -c "
hz = $(getconf CLK_TCK)
others = ($b1 - $b0) / hz - $M_CPU
print(f'{max(others, 0) / $M_WALL:.2f}' if $M_WALL >= 1 else 'na')")
    rm -f "$tf" "$out.pss"
}
