#!/usr/bin/env bash
# bench/route/head.sh: train the learned routing head and measure it on prompts it never saw.
#
#   bench/route/head.sh [PER_KIND_TRAIN] [PER_KIND_TEST]
#
# 1. make_set.py: a training set (seed 0, PER_KIND_TRAIN [40] per kind) and a test set (seed 1,
#    PER_KIND_TEST [20]); test prompts whose messages also occur in the training set (the fact
#    and code kinds draw from fixed pools) are dropped, so the test is held out;
# 2. one `folio serve --config bench/route/serve.json`: evaluate.py grades SmolLM2 and Gemma 3
#    on both sets and `auto` (the feature score) on the test set;
# 3. train_head.py fetches each prompt's pooled state (/v1/embeddings, chat form), trains with
#    5-fold cross-validation (the out-of-fold table) and writes head.json trained on all of it;
# 4. the head scores the held-out test set (replayed on the single-model answers);
# 5. a second server with the virtual model `auto-head` (the head, threshold at SHARE [0.2] of
#    the training set in-sample) answers the test set: measured accuracy and large share.
# Environment: THREADS [all cores], FOLIO_BIN [build/release/folio], SHARE [0.2].
# Results go to bench/.work/results/route-head-<time>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
train=${1:-40}
test=${2:-20}
folio=${FOLIO_BIN:-build/release/folio}
threads=${THREADS:-$(nproc)}
share=${SHARE:-0.2}
py=.venv/bin/python
out=bench/.work/results/route-head-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
echo "learned routing head: $cpu, $(nproc) cores, threads $threads; results in $out" >&2
$py bench/route/make_set.py --per-kind "$train" --seed 0 --out "$out/train.jsonl"
$py bench/route/make_set.py --per-kind "$test" --seed 1 --out "$out/all_test.jsonl"
$py - "$out/train.jsonl" "$out/all_test.jsonl" "$out/test.jsonl" <<'PY'
import json, sys
seen = {json.dumps(json.loads(l)["messages"]) for l in open(sys.argv[1])}
kept = [l for l in open(sys.argv[2]) if json.dumps(json.loads(l)["messages"]) not in seen]
open(sys.argv[3], "w").writelines(kept)
print(f"test set: {len(kept)} prompts not in the training set", file=sys.stderr)
PY
port=18641
serve() {  # CONFIG LOG
  "$folio" serve --config "$1" --port $port -t "$threads" --kv-cache-memory 1GiB >"$2" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && return
    sleep 0.1
  done
  echo "server did not start: $2" >&2
  exit 1
}
stop() { kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap stop EXIT
stops=(--stop $'\nQuestion:' --stop $'\nAnswer:')
url=http://127.0.0.1:$port
serve bench/route/serve.json "$out/server.log"
$py bench/route/evaluate.py --url $url --models smollm2,gemma3 --set "$out/train.jsonl" \
  --out "$out/train_results.jsonl" "${stops[@]}" 2>"$out/evaluate.log"
$py bench/route/evaluate.py --url $url --models smollm2,gemma3,auto --set "$out/test.jsonl" \
  --out "$out/test_results.jsonl" "${stops[@]}" 2>>"$out/evaluate.log"
common=(--small smollm2 --large gemma3 --url $url --embed-model smollm2)
$py bench/route/train_head.py --set "$out/train.jsonl" --results "$out/train_results.jsonl" \
  "${common[@]}" --save-embeddings "$out/train_emb.jsonl" --out "$out/head.json" \
  --oof-out "$out/train_oof.jsonl" >"$out/train.md" 2>"$out/train.log"
$py bench/route/train_head.py --set "$out/test.jsonl" --results "$out/test_results.jsonl" \
  "${common[@]}" --save-embeddings "$out/test_emb.jsonl" --evaluate-head "$out/head.json" \
  --oof-out "$out/test_head.jsonl" >"$out/test.md" 2>>"$out/train.log"
stop
threshold=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['info']['share_thresholds_in_sample'][sys.argv[2]])" "$out/head.json" "$share")
$py - "$out/head.json" "$threshold" "$out/serve_head.json" <<'PY'
import json, sys
c = json.load(open("bench/route/serve.json"))
c["virtual_models"] = [{"name": "auto-head", "small": "smollm2", "large": "gemma3",
                        "policy": {"head": sys.argv[1], "threshold": float(sys.argv[2])}}]
json.dump(c, open(sys.argv[3], "w"), indent=1)
PY
serve "$out/serve_head.json" "$out/server_head.log"
$py bench/route/evaluate.py --url $url --models auto-head --set "$out/test.jsonl" \
  --out "$out/test_auto_head.jsonl" "${stops[@]}" 2>>"$out/evaluate.log"
stop
{
  echo "CPU: $cpu; train $train per kind (seed 0), test $test per kind (seed 1, unseen prompts only); greedy"
  echo
  echo "## cross-validated on the training set"
  cat "$out/train.md"
  echo
  echo "## held-out test set: auto (feature score), head replayed, auto-head measured"
  $py bench/route/tradeoff.py "$out/test_results.jsonl" "$out/test_head.jsonl" \
    "$out/test_auto_head.jsonl" --small smollm2 --large gemma3 --routers auto,head,auto-head
} | tee "$out/summary.md"
