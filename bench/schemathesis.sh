#!/usr/bin/env bash
# bench/schemathesis.sh: schemathesis (PyPI, pinned in requirements.txt) generates requests from
# the OpenAPI document folio serves (GET /openapi.json, src/server/openapi.json) and checks every
# reply against it; by hand, at scale (tests/python/test_openapi.py runs a short version).
#
#   bash bench/schemathesis.sh [EXAMPLES] [SEED]
#
# One `folio serve` (the default model) on a free localhost port, with small bounds so that each
# case is fast (--max-model-len 64, --max-n 2, --max-logprobs 3, --max-prompts 4, one thread)
# and an API key, so that 401s are exercised too (schemathesis' ignored_auth check drops it).
# `st run` then makes EXAMPLES (default 400) cases per operation and phase, schema-valid and
# schema-violating, all against one server in turn (-w 1: with two workers, hypothesis trips a
# CPython 3.11 thread race in its ast use, "AST constructor recursion depth mismatch"). Every
# check runs but positive_data_acceptance: a schema-valid request may still be refused where
# the rule cannot be written as a schema (prompt + max_tokens over the context, top_logprobs
# without logprobs, two output constraints, a regex that does not compile ...), and the
# document says so in words.
#
# Prints the cases generated, failures per check (cases, not only the unique ones: schemathesis
# runs with --continue-on-failure), reply status codes per operation, the server's logged
# internal errors and the wall time. Reports: $SCHEMATHESIS_OUT (default: a fresh temporary
# folder; its path is printed). Exit status 1 when a reply is a 5xx or does not conform to the
# document (status code, content type, headers, body), schemathesis itself failed, or the
# server logged an internal error; other checks' failures are printed only.
set -euo pipefail
cd "$(dirname "$0")/.."
examples=${1:-400}
seed=${2:-$RANDOM}
folio=${FOLIO_BIN:-build/release/folio}
out=${SCHEMATHESIS_OUT:-$(mktemp -d)}
mkdir -p "$out"
key="schemathesis-$RANDOM$RANDOM"
port=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

"$folio" serve --host 127.0.0.1 --port "$port" --api-key "$key" --max-model-len 64 --max-n 2 \
  --max-logprobs 3 --max-prompts 4 -t 1 >"$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
source bench/wait_health.sh
wait_health "$port" "$server" "$out/server.log"

echo "folio $(git rev-parse --short HEAD), schemathesis $(.venv/bin/st --version | awk '{print $NF}')," \
  "$examples examples per operation and phase, seed $seed; reports in $out"
start=$SECONDS
st_rc=0
# From a copy of the served document: loaded from its URL, schemathesis leaves out the operation
# that serves it (GET /openapi.json), which is to be tested too.
# st runs in $out: it keeps a crash cache (.schemathesis/) in its working directory.
curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$port/openapi.json" >"$out/openapi.json"
(cd "$out" && "$OLDPWD/.venv/bin/st" run openapi.json --url "http://127.0.0.1:$port" \
  -H "Authorization: Bearer $key" --checks all --exclude-checks positive_data_acceptance \
  --continue-on-failure -n "$examples" -w 1 --seed "$seed" --generation-database none \
  --request-timeout 60 --no-color --output-sanitize false --report json,ndjson --report-dir . \
  >st.log 2>&1) || st_rc=$?
wall=$((SECONDS - start))
kill -TERM "$server"
server_rc=0
wait "$server" || server_rc=$?
trap - EXIT

.venv/bin/python - "$out" "$wall" "$st_rc" "$server_rc" <<'EOF'
import collections
import glob
import json
import sys

out, wall, st_rc, server_rc = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
MUST = {"not_a_server_error", "status_code_conformance", "content_type_conformance",
        "response_headers_conformance", "response_schema_conformance"}
report = json.load(open(glob.glob(f"{out}/json-*.json")[0]))
statuses = collections.defaultdict(collections.Counter)
failed = collections.Counter()  # check -> failing cases
examples = collections.defaultdict(list)
for line in open(glob.glob(f"{out}/ndjson-*.ndjson")[0]):
    event = json.loads(line)
    rec = event.get("ScenarioFinished", {}).get("recorder", {})
    for interaction in rec.get("interactions", {}).values():
        method = interaction["request"]["method"]
        own = rec["label"].split(" ")[0] == method or rec["label"] == "Stateful tests"
        key = interaction["response"]["status_code"] if own else f"{method} {interaction['response']['status_code']}"
        statuses[rec["label"]][key] += 1
    for case_checks in rec.get("checks", {}).values():
        for check in case_checks:
            if check["status"] == "failure":
                failed[check["name"]] += 1
                info = check.get("failure_info", {}).get("failure", {})
                if len(examples[check["name"]]) < 3:
                    examples[check["name"]].append(
                        f"{info.get('operation')}: {info.get('message', '').splitlines()[-1:]}")
internal = sum("internal error" in line for line in open(f"{out}/server.log"))
cases = report["test_cases"]
print(f"cases: {cases['generated']} generated, {cases['with_failures']} with failures, "
      f"{cases['errored']} errored; wall {wall:.0f} s ({cases['generated'] / max(wall, 1):.0f} cases/s)")
print("failures by check (cases):", dict(failed) or "none")
for name, lines in examples.items():
    for line in lines:
        print(f"  {name}: {line}")
for f in report["failures"]:
    print(f"  unique: {f['code']} {f['title']} x{f['count']} ({', '.join(f['operations'])})")
for e in report["errors"]:
    print(f"  schemathesis error: {json.dumps(e)[:300]}")
print("replies by operation and status (\"METHOD status\": an undocumented method):")
total = collections.Counter()
for label in sorted(statuses):
    for key, n in statuses[label].items():
        total[key if isinstance(key, int) else int(key.split()[1])] += n
    print(f"  {label}: {dict(sorted(statuses[label].items(), key=str))}")
print(f"  all: {sum(total.values())} replies, {dict(sorted(total.items()))}")
server_errors = sum(n for status, n in total.items() if status >= 500)
print(f"5xx replies: {server_errors}; server log internal errors: {internal}; "
      f"st exit {st_rc}; server exit {server_rc}")
bad = server_errors or internal or any(failed[c] for c in MUST) or report["errors"] or server_rc
sys.exit(1 if bad else 0)
EOF
