#!/usr/bin/env bash
# A decode step of every carried decoder program on the H200, profiled, beside transformers on the same weights.
#
#   bash scripts/gpu_decode_step.sh e4b "1 8" [eager|eager,compile|none] ["256 1024 4096"]
#
# Carry `.whl` (iree-base-runtime 3.13.0, shared/bench/README.md) and `.gpu/step/` (the variant's programs, built
# on the CPU machine by `scripts/decoder_gpu.py build --step --variant <variant>` into `.gpu/step/<variant>/*.vmfb`).
# With a fourth argument each program's prefill of those prompt buckets is timed, digested and profiled too: carry
# programs with prompt entries (`decoder_gpu.py build --variant <variant>`, copied to `.gpu/prefill/<variant>/`)
# and set PROGRAMS=.gpu/prefill.
# Writes the deterministic random checkpoint of `tests/synthetic_text.add_random_decoder_tensors` (seed 0) to
# /tmp/w, then for each program `scripts/decoder_profile.py` (the step's wall time per width with the logits
# brought back and with the device's greedy selection, and a CUPTI kernel profile) and `decoder_gpu.py torch`
# (prefill and decode steps of transformers bf16) into $OUT.
set -u
V=${1:-e4b}
WIDTHS=${2:-1}
TORCH=${3:-eager}
[ "$TORCH" = none ] && TORCH=""  # our programs only
PROMPTS=${4:-}
source "$(dirname "${BASH_SOURCE[0]}")/gpu_decoder_env.sh"
for A in "$R"/${PROGRAMS:-.gpu/step}/$V/*.vmfb; do
  N=$(basename "$A" .vmfb)
  step 150 python3 "$R/scripts/decoder_profile.py" --artifact "$A" --checkpoint "$W/decoder-$V" \
    --widths $WIDTHS ${PROMPTS:+--prompts $PROMPTS} --out "$OUT/profile_${V}_$N.json" >&2
done
for M in ${TORCH//,/ }; do
  L=200; [ "$M" = compile ] && L=320  # torch.compile's first calls compile the model's graphs
  step $L python3 "$R/scripts/decoder_gpu.py" torch --mode "$M" --variant "$V" --workdir $W --repeats 10 \
    > "$OUT/transformers_${V}_$M.json"
  cat "$OUT/transformers_${V}_$M.json" >&2
done
