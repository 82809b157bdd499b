#!/usr/bin/env bash
# bench/quantize.sh: folio quantize beside llama-quantize (issue #14 part 3, the published table).
#
#   bash bench/quantize.sh [NAME=MODEL.gguf ...]
#
# Default models: smollm2=models/SmolLM2-135M-Instruct.Q4_1.gguf and
# gemma3=models/gemma-3-270m-q4_k_m.gguf. For each model, in bench/.work/quantize/NAME/:
#   1. the float base: `folio quantize MODEL base-f32.gguf --type F32`, i.e. the f32 weights
#      DEQUANTIZED FROM OUR Q4_1 / Q4_K_M FILE (no float checkpoint is reachable here): every
#      quantized file below is a requantization of that, and "base" means that file;
#   2. importance matrices from the calibration corpus (scripts/corpora), ctx 512, the first
#      IMATRIX_CHUNKS chunks: `folio imatrix` and `llama-imatrix` on the same text (a prefix of
#      the corpus big enough for the chunks: llama.cpp tokenizes all of -f, minutes for Gemma's
#      vocabulary on the whole 6 MB), and how far apart they are;
#   3. the base quantized to each of TYPES by each of METHODS, time and size recorded:
#        folio-rtn      folio quantize --type T
#        folio-imatrix  folio quantize --type T --imatrix folio.imatrix
#        llama-rtn      llama-quantize BASE OUT T
#        llama-imatrix  llama-quantize --imatrix llama.imatrix BASE OUT T
#        folio-gptq     folio quantize --method gptq --calibration TEXT (when the binary has it)
#        folio-awq      folio quantize --method awq --calibration TEXT (when the binary has it)
#   4. byte comparison (bench/quantize_compare.py, gguf-py): folio-rtn vs llama-rtn, and
#      `folio quantize --imatrix llama.imatrix` vs llama-imatrix, per type; llama-perplexity
#      loads every folio file (PPL over LOADCHECK_CHUNKS chunks);
#   5. quality: folio perplexity writes the base's logits once (--kl-divergence-base, evaluation
#      corpus, ctx 512, PPL_CHUNKS chunks, f16 KV as llama.cpp), then reads them for every file
#      (--kl-divergence --json): PPL, change vs base, mean / 99 % KLD, same top; llama-perplexity
#      reads the same base file for the XCHECK_TYPES rows (folio-imatrix, llama-imatrix) as a
#      cross-check of the KLD;
#   6. speed: folio bench and llama-bench, pp512 / tg128, BENCH_ROUNDS alternating rounds of
#      BENCH_REPS repetitions on the BENCH_TYPES files of folio-imatrix and llama-imatrix,
#      medians of all samples, folio / llama.cpp.
# Outputs are kept between runs (delete the folder or FORCE=1 to redo); STAGES picks stages.
#
# Knobs (env): TYPES ("Q4_0 Q4_K_M Q5_K_M"), METHODS ("folio-rtn folio-imatrix llama-rtn
# llama-imatrix folio-gptq folio-awq"), IMATRIX_CHUNKS (64), PPL_CHUNKS (40), LOADCHECK_CHUNKS
# (4), XCHECK_TYPES ("Q4_K_M"), BENCH_TYPES ("Q4_K_M"), BENCH_REPS (3), BENCH_ROUNDS (2),
# THREADS (2), IDLE_MAX_WAIT (90 s before each speed run), BENCH_NICE / BENCH_RT
# (bench/idle.sh), GPTQ_CHUNKS (IMATRIX_CHUNKS), STAGES ("base imatrix quant compare ppl bench"),
# FOLIO_BIN (build/release/folio), FORCE (0), WORK (bench/.work/quantize).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
read -r -a types <<<"${TYPES:-Q4_0 Q4_K_M Q5_K_M}"
read -r -a methods <<<"${METHODS:-folio-rtn folio-imatrix llama-rtn llama-imatrix folio-gptq folio-awq}"
read -r -a xcheck_types <<<"${XCHECK_TYPES:-Q4_K_M}"
read -r -a bench_types <<<"${BENCH_TYPES:-Q4_K_M}"
stages=" ${STAGES:-base imatrix quant compare ppl bench} "
imatrix_chunks=${IMATRIX_CHUNKS:-64}
ppl_chunks=${PPL_CHUNKS:-40}
load_chunks=${LOADCHECK_CHUNKS:-4}
gptq_chunks=${GPTQ_CHUNKS:-$imatrix_chunks}
bench_reps=${BENCH_REPS:-3}
bench_rounds=${BENCH_ROUNDS:-2}
threads=${THREADS:-2}
force=${FORCE:-0}
folio=$(realpath "${FOLIO_BIN:-build/release/folio}")
bin=$root/bench/.work/llama.cpp-build/bin
py=$root/.venv/bin/python
cmp_py=$root/bench/quantize_compare.py
work=$(realpath -m "${WORK:-bench/.work/quantize}")
if (($#)); then specs=("$@"); else
  specs=(smollm2=models/SmolLM2-135M-Instruct.Q4_1.gguf gemma3=models/gemma-3-270m-q4_k_m.gguf)
fi

IDLE_MAX_WAIT=${IDLE_MAX_WAIT:-90}
# shellcheck source=bench/idle.sh
source bench/idle.sh
log() { printf '[quantize.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
has() { [[ $stages == *" $1 "* ]]; }
fresh() { [[ $force != 1 && -s $1 ]]; }
for t in llama-quantize llama-imatrix llama-perplexity llama-bench; do
  [[ -x $bin/$t ]] || { log "no $bin/$t: bash bench/llama_cpp.sh"; exit 1; }
done
[[ -x $folio ]] || { log "no folio binary $folio (FOLIO_BIN)"; exit 1; }
scripts/corpora >/dev/null
calib_full=$root/.cache/corpora/calibration.txt
eval_text=$root/.cache/corpora/evaluation.txt
mkdir -p "$work"
# The calibration prefix both imatrix tools read: whole lines, ~8 bytes a token of margin.
calib=$work/calibration.head.txt
head -c $((imatrix_chunks * 512 * 8 + 4096)) "$calib_full" | sed '$d' >"$calib"
# A short evaluation prefix for llama.cpp's load check (it tokenizes all of -f).
eval_head=$work/evaluation.head.txt
head -c $((load_chunks * 512 * 8 + 4096)) "$eval_text" | sed '$d' >"$eval_head"

quant_help=$("$folio" quantize --help 2>&1 || true)
method_ok() { # METHOD: is it runnable with this binary?
  case $1 in
    folio-gptq) grep -q 'gptq (' <<<"$quant_help" ;;
    folio-awq) grep -q 'awq (' <<<"$quant_help" ;;
    folio-rtn | folio-imatrix | llama-rtn | llama-imatrix) true ;;
    *) return 1 ;;
  esac
}
active=()
for m in "${methods[@]}"; do
  if method_ok "$m"; then active+=("$m"); else
    log "skipping method $m: not in $folio quantize --help (or unknown)"
    echo "note: method $m skipped (this folio binary has no such --method)"
  fi
done

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p')" \
  "model $(lscpu | sed -n 's/^Model: *//p'), $(nproc) cores), $threads threads;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); checkout $(git rev-parse --short HEAD)" \
  "($folio), llama.cpp $(sed -n 's/^llama.cpp commit \([0-9a-f]\{12\}\).*/\1/p' "$bin/../VERSION.txt" 2>/dev/null)"
echo "types: ${types[*]}; methods: ${active[*]}; imatrix: $imatrix_chunks chunks of 512 of" \
  "calibration.txt; quality: $ppl_chunks chunks of 512 of evaluation.txt"

# quantize METHOD TYPE OUT: runs one quantization, prints its wall seconds.
quantize() {
  local m=$1 t=$2 out=$3 d=$4 s e
  s=$(date +%s.%N)
  case $m in
    folio-rtn) "$folio" quantize "$d/base-f32.gguf" "$out" --type "$t" -t "$threads" ;;
    folio-imatrix) "$folio" quantize "$d/base-f32.gguf" "$out" --type "$t" -t "$threads" \
      --imatrix "$d/folio.imatrix" ;;
    folio-limatrix) "$folio" quantize "$d/base-f32.gguf" "$out" --type "$t" -t "$threads" \
      --imatrix "$d/llama.imatrix" ;;
    folio-gptq) "$folio" quantize "$d/base-f32.gguf" "$out" --type "$t" -t "$threads" \
      --method gptq --calibration "$calib" --calibration-chunks "$gptq_chunks" ;;
    folio-awq) "$folio" quantize "$d/base-f32.gguf" "$out" --type "$t" -t "$threads" \
      --method awq --calibration "$calib" --calibration-chunks "$gptq_chunks" ;;
    llama-rtn) "$bin/llama-quantize" "$d/base-f32.gguf" "$out" "$t" "$threads" ;;
    llama-imatrix) "$bin/llama-quantize" --imatrix "$d/llama.imatrix" "$d/base-f32.gguf" "$out" \
      "$t" "$threads" ;;
  esac >"$out.log" 2>&1 || { log "FAILED: $m $t (tail of $out.log):"; tail -5 "$out.log" >&2; return 1; }
  e=$(date +%s.%N)
  awk "BEGIN { print $e - $s }"
}

for spec in "${specs[@]}"; do
  name=${spec%%=*} model=$root/${spec#*=}
  [[ ${spec#*=} == /* ]] && model=${spec#*=}
  d=$work/$name
  mkdir -p "$d" "$d/bench"
  echo
  echo "=== $name: $(basename "$model")"

  if has base && ! fresh "$d/base-f32.gguf"; then
    log "$name: F32 base (dequantized from $(basename "$model"))"
    "$folio" quantize "$model" "$d/base-f32.gguf" --type F32 -t "$threads" >"$d/base.log" 2>&1 ||
      { tail -5 "$d/base.log"; exit 1; }
  fi
  echo "base: $d/base-f32.gguf, $(($(stat -c %s "$d/base-f32.gguf") / 1048576)) MiB, dequantized from $(basename "$model")"

  if has imatrix; then
    if ! fresh "$d/folio.imatrix"; then
      log "$name: folio imatrix, $imatrix_chunks chunks"
      s=$(date +%s.%N)
      "$folio" imatrix -m "$d/base-f32.gguf" -f "$calib" -o "$d/folio.imatrix" -c 512 \
        --chunks "$imatrix_chunks" -t "$threads" >"$d/folio.imatrix.log" 2>&1 ||
        { tail -5 "$d/folio.imatrix.log"; exit 1; }
      awk "BEGIN { print $(date +%s.%N) - $s }" >"$d/folio.imatrix.time"
    fi
    if ! fresh "$d/llama.imatrix"; then
      log "$name: llama-imatrix, $imatrix_chunks chunks"
      s=$(date +%s.%N)
      "$bin/llama-imatrix" -m "$d/base-f32.gguf" -f "$calib" -o "$d/llama.imatrix" -c 512 -b 512 \
        --chunks "$imatrix_chunks" -t "$threads" >"$d/llama.imatrix.log" 2>&1 ||
        { tail -5 "$d/llama.imatrix.log"; exit 1; }
      awk "BEGIN { print $(date +%s.%N) - $s }" >"$d/llama.imatrix.time"
    fi
    printf 'imatrix time: folio %.1f s, llama-imatrix %.1f s; ' "$(cat "$d/folio.imatrix.time")" \
      "$(cat "$d/llama.imatrix.time")"
    "$py" "$cmp_py" imatrix "$d/folio.imatrix" "$d/llama.imatrix"
  fi

  if has quant; then
    want=("${active[@]}")
    has compare && want+=(folio-limatrix)
    for t in "${types[@]}"; do
      for m in "${want[@]}"; do
        out=$d/$m.$t.gguf
        fresh "$out" && grep -q "^$m	$t	" "$d/runs.tsv" 2>/dev/null && continue
        log "$name: $m $t"
        secs=$(quantize "$m" "$t" "$out" "$d") || continue
        sed -i "/^$m	$t	/d" "$d/runs.tsv" 2>/dev/null || true
        printf '%s\t%s\t%s\t%s\n' "$m" "$t" "$(stat -c %s "$out")" "$secs" >>"$d/runs.tsv"
      done
    done
  fi

  if has compare; then
    echo "byte comparison (bench/quantize_compare.py tensors):"
    for t in "${types[@]}"; do
      for pair in folio-rtn:llama-rtn folio-limatrix:llama-imatrix; do
        fa=$d/${pair%%:*}.$t.gguf fb=$d/${pair##*:}.$t.gguf
        [[ -f $fa && -f $fb ]] || { echo "  $t ${pair/:/ vs }: missing file"; continue; }
        printf '  %-7s %-31s %s; ' "$t" "${pair/:/ vs }" \
          "$(cmp -s "$fa" "$fb" && echo "files identical" || echo "files differ")"
        "$py" "$cmp_py" tensors "$fa" "$fb" | sed '2,$s/^/    /'
      done
    done
    echo "llama-perplexity loads folio's files ($load_chunks chunks of evaluation.txt, ctx 512):"
    for t in "${types[@]}"; do
      for m in "${active[@]}"; do
        [[ $m == folio-* && -f $d/$m.$t.gguf ]] || continue
        ppl=$("$bin/llama-perplexity" -m "$d/$m.$t.gguf" -f "$eval_head" -c 512 -b 512 \
          --chunks "$load_chunks" -t "$threads" 2>&1 |
          sed -n 's/.*Final estimate: PPL = \([0-9.]*\).*/\1/p' | tail -1) || true
        [[ -n $ppl ]] && ppl="loaded, PPL $ppl" || ppl="FAILED to load or run"
        printf '  %-14s %-7s %s\n' "$m" "$t" "$ppl"
      done
    done
  fi

  if has ppl; then
    if ! fresh "$d/base.kld"; then
      log "$name: base logits, $ppl_chunks chunks"
      "$folio" perplexity -m "$d/base-f32.gguf" -f "$eval_text" -c 512 --chunks "$ppl_chunks" \
        -t "$threads" --kv-cache-dtype f16 --kl-divergence-base "$d/base.kld" >"$d/base.ppl.log" 2>&1 ||
        { tail -5 "$d/base.ppl.log"; exit 1; }
    fi
    for t in "${types[@]}"; do
      for m in "${active[@]}"; do
        f=$d/$m.$t.gguf j=$d/$m.$t.ppl.json
        [[ -f $f ]] || continue
        fresh "$j" && [[ $j -nt $d/base.kld && $j -nt $f ]] && continue
        log "$name: KLD $m $t"
        "$folio" perplexity -m "$f" -t "$threads" --kv-cache-dtype f16 \
          --kl-divergence-base "$d/base.kld" --kl-divergence --json >"$j" 2>"$j.log" ||
          { log "FAILED: perplexity $m $t"; tail -3 "$j.log" >&2; rm -f "$j"; }
      done
    done
    echo "quality: folio perplexity --kl-divergence against the F32 base's logits ($ppl_chunks chunks" \
      "of 512, f16 KV); time and size of the quantization on $threads threads"
    "$py" "$cmp_py" table "$d" "${types[*]}" "${active[*]}"
    for t in "${xcheck_types[@]}"; do
      for m in folio-imatrix llama-imatrix; do
        f=$d/$m.$t.gguf o=$d/$m.$t.llama-kld.txt
        [[ -f $f ]] || continue
        if ! fresh "$o" || [[ $o -ot $d/base.kld ]]; then
          "$bin/llama-perplexity" -m "$f" -c 512 -b 512 -t "$threads" \
            --kl-divergence-base "$d/base.kld" --kl-divergence >"$o" 2>&1 || true
        fi
        printf '  cross-check, llama-perplexity on the same base file: %-14s %-7s %s\n' "$m" "$t" \
          "$(sed -n 's/^Mean    KLD: *\([-0-9.]*\) *± *\([0-9.]*\).*/mean KLD \1 ± \2/p;
                     s/^Same top p: *\([0-9.]*\) *± *\([0-9.]*\).*/same top \1 ± \2 %/p' "$o" |
            paste -sd';' -)"
      done
    done
  fi

  if has bench; then
    # Quiet machine first (bench/idle.sh), then each run at high priority in its own session:
    # llama.cpp's OpenMP threads stall at every barrier when a core is taken (tg128 fell
    # 100-fold beside another job here). The CPU busy % seen before each run is logged.
    for ((r = 1; r <= bench_rounds; r++)); do
      for t in "${bench_types[@]}"; do
        for m in folio-imatrix llama-imatrix; do
          f=$d/$m.$t.gguf
          [[ -f $f ]] || continue
          o=$d/bench/$m-$t.folio.$r.json
          fresh "$o" || { log "$name: folio bench $m $t round $r (busy before: $(wait_for_idle) %)"
            bench_run "$folio" bench -m "$f" -p 512 -n 128 -r "$bench_reps" -t "$threads" --json >"$o" 2>/dev/null ||
              rm -f "$o"; }
          o=$d/bench/$m-$t.llama.$r.json
          fresh "$o" || { log "$name: llama-bench $m $t round $r (busy before: $(wait_for_idle) %)"
            bench_run "$bin/llama-bench" -m "$f" -p 512 -n 128 -r "$bench_reps" -t "$threads" -o json >"$o" \
              2>/dev/null || rm -f "$o"; }
        done
      done
    done
    echo "speed: pp512 / tg128, $threads threads, $bench_rounds rounds x $bench_reps repetitions," \
      "medians of the samples (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
    "$py" "$cmp_py" bench "$d"
  fi
done
