#!/usr/bin/env bash
# The logits of every carried decode-step program against transformers fp32 and bf16 on the same tokens (issue 26
# item 6: a program's logits no farther from the references than before), and the programs against each other.
#
#   bash scripts/gpu_decode_numerics.sh e4b "1 8" [STEPS]
#
# Carry `.whl` (iree-base-runtime 3.13.0) and `.gpu/step/<variant>/*.vmfb` (as scripts/gpu_decode_step.sh: this
# tree's program and older builds). Writes the deterministic random checkpoint of
# `tests/synthetic_text.ensure_random_decoder` (seed 0, well-conditioned scales) to /tmp/w unless it is there, then
# `scripts/decode_logits.py run` for each program (one process each), `reference` with transformers fp32 and bf16,
# and `compare` of each program against both references and against the first program, into $OUT (one JSON each:
# `relative_l2_finite` is the distance over the reference's norm).
set -u
V=${1:-e4b}
WIDTHS=${2:-1}
STEPS=${3:-8}
source "$(dirname "${BASH_SOURCE[0]}")/gpu_decoder_env.sh"
L=/tmp/logits
mkdir -p "$L"
step 200 python3 "$R/scripts/decode_logits.py" reference --checkpoint "$W/decoder-$V" --widths $WIDTHS \
  --steps "$STEPS" --dtype fp32 bf16 --out "$L/${V}_transformers_{dtype}.npz"
FIRST=""
for A in "$R"/.gpu/step/$V/*.vmfb; do
  N=$(basename "$A" .vmfb)
  step 120 python3 "$R/scripts/decode_logits.py" run --artifact "$A" --checkpoint "$W/decoder-$V" \
    --widths $WIDTHS --steps "$STEPS" --out "$L/${V}_$N.npz"
  for T in fp32 bf16; do
    step 60 python3 "$R/scripts/decode_logits.py" compare "$L/${V}_$N.npz" "$L/${V}_transformers_$T.npz" \
      > "$OUT/numerics_${V}_${N}_vs_transformers_$T.json"
  done
  if [ -z "$FIRST" ]; then FIRST=$N; else
    step 60 python3 "$R/scripts/decode_logits.py" compare "$L/${V}_$N.npz" "$L/${V}_$FIRST.npz" \
      > "$OUT/numerics_${V}_${N}_vs_$FIRST.json"
  fi
done
step 60 python3 "$R/scripts/decode_logits.py" compare "$L/${V}_transformers_bf16.npz" "$L/${V}_transformers_fp32.npz" \
  > "$OUT/numerics_${V}_transformers_bf16_vs_fp32.json"
grep -H '"differing"\|relative_l2_finite\|max_abs_difference_finite' "$OUT"/numerics_*.json >&2
