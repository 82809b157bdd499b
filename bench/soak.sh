#!/usr/bin/env bash
# bench/soak.sh: the soak test of `folio serve` (issue #18): one server on 127.0.0.1 at a free
# port, saturating mixed load (chat and completions, streamed or not, n > 1, prompts up to the
# context, shared prefixes, stop strings; 10 % random disconnects, 5 % mid-stream aborts, 1 %
# garbage that must get a 4xx) from a bounded number of clients, sampled every 10 s (RSS, fds,
# threads, /metrics queue and KV, client throughput, TTFT/ITL), then pass criteria: no 5xx, no
# crash (exit 0 on SIGTERM), every request accounted for, KV back to 0 when idle, RSS growth
# after warm-up <= 2 %, fds and threads flat, throughput held. Exit status 1 on any FAIL.
#
#   bench/soak.sh [--minutes 60] [--clients 16] [--interval 10] [--max-tokens 128]
#                 [--drain 20] [--seed 0] [--results DIR] [MODEL] [-- SERVE_FLAGS...]
#
# MODEL defaults to the default model; SERVE_FLAGS go to `folio serve` as they are (the soak
# adds --max-model-len 2048 --kv-cache-memory 256MiB unless they name them). FOLIO_BIN picks
# the binary [build/release/folio]. Results (samples.csv, samples.jsonl, requests.jsonl, server.log,
# unexpected.jsonl) go to --results [bench/.work/results/soak-<time>/]. The criteria, the
# warm-up rule and the slack are written down at the top of bench/soak.py.
# scripts/test runs `bench/soak.sh --minutes 2`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python bench/soak.py "$@"
