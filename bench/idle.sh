# shellcheck shell=bash
# bench/idle.sh -- sourced by the bench scripts: wait for a quiet machine before measuring.
#
# The development machine has 2 cores shared with other people's compiles; a benchmark running
# beside a compiler measures the compiler. wait_for_idle blocks until the CPUs were at most
# IDLE_MAX_BUSY percent busy over a 3-second window (default 15), or IDLE_MAX_WAIT seconds
# passed (default 300; then it warns and lets the measurement go ahead). It prints the busy
# percentage it last saw on stdout so callers can record it next to their results.
#
# When the machine never gets quiet, the measurement itself runs at high priority: BENCH_NICE
# (default -20 when running as root, else 0) is the niceness `bench_run` uses. At nice -20 a
# thread outweighs ~90 nice-0 threads in the CFS scheduler, so a benchmark beside a few
# compilers gets nearly whole cores for the minute it runs (the compilers just pause); shared
# caches and DRAM bandwidth are still contended, which is why idle is tried first.

IDLE_MAX_BUSY="${IDLE_MAX_BUSY:-15}"
IDLE_MAX_WAIT="${IDLE_MAX_WAIT:-300}"

# Percent of CPU time (all cores) spent busy over a 3-second window, from /proc/stat.
cpu_busy() {
    local a b total=0 idle i
    read -r -a a < <(head -n1 /proc/stat)
    sleep 3
    read -r -a b < <(head -n1 /proc/stat)
    for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
    idle=$((b[4] - a[4] + b[5] - a[5]))
    echo $(((100 * (total - idle)) / (total > 0 ? total : 1)))
}

wait_for_idle() {
    local waited=0 busy
    while :; do
        busy="$(cpu_busy)"
        ((busy <= IDLE_MAX_BUSY)) && break
        if ((waited >= IDLE_MAX_WAIT)); then
            printf '[idle] WARNING: CPU still %s%% busy after %ss; measuring anyway (numbers suspect)\n' \
                "$busy" "$waited" >&2
            break
        fi
        printf '[idle] CPU %s%% busy (others are working); waiting ...\n' "$busy" >&2
        sleep 20
        waited=$((waited + 23))
    done
    echo "$busy"
}

if [[ -z "${BENCH_NICE:-}" ]]; then
    if [[ "$(id -u)" == 0 ]]; then BENCH_NICE=-20; else BENCH_NICE=0; fi
fi

# bench_run CMD ARGS...: run a measurement at niceness BENCH_NICE.
# With kernel.sched_autogroup_enabled (the default here), niceness only ranks threads inside
# one session's autogroup, and each session's group gets an equal CPU share: a benchmark in one
# session beside compilers in four others gets ~1/5 of the CPUs whatever its nice value. So
# the command runs in a fresh session (setsid) whose autogroup is given the same niceness.
#
# Even so, llama.cpp's threads meet at a barrier after every op: one preemption of either
# thread stalls both, so on a 100%-busy machine nice alone still halved llama-bench's numbers.
# BENCH_RT=1 (root only) runs the measurement SCHED_FIFO instead: it then preempts every normal
# task for its duration (the kernel's RT throttling still leaves others 5% of each second).
# Each run is wrapped in `timeout` so a hung benchmark cannot hold the CPUs.
bench_run() {
    if [[ "${BENCH_RT:-0}" == 1 && "$(id -u)" == 0 ]]; then
        timeout "${BENCH_TIMEOUT:-600}" chrt -f 1 "$@"
        return
    fi
    # shellcheck disable=SC2016  # expanded by the inner bash, on purpose
    setsid -w bash -c 'n="$1"; shift; echo "$n" >/proc/self/autogroup 2>/dev/null || true
                       exec nice -n "$n" "$@"' _ "$BENCH_NICE" "$@"
}
