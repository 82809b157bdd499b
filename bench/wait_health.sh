# shellcheck shell=bash
# bench/wait_health.sh -- sourced by the bench scripts that start a server (folio serve or
# llama-server): wait_health PORT PID LOGFILE polls http://127.0.0.1:PORT/health every 0.2 s
# until it answers 200 (returns 0), or the process PID has exited, or 120 s have passed
# (both: the last lines of LOGFILE on stderr, returns 1).

wait_health() {
  local port=$1 pid=$2 logfile=$3
  for _ in $(seq 600); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the server exited during start-up; last lines of $logfile:" >&2
      tail -n 20 "$logfile" >&2
      return 1
    fi
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "the server on port $port did not become healthy within 120 s; last lines of $logfile:" >&2
  tail -n 20 "$logfile" >&2
  return 1
}
