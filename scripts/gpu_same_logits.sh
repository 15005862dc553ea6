#!/usr/bin/env bash
# Builds of a decode-step program on the H200, held to each other bit for bit (a change meant to move no number:
# the logits of the same decode run must be identical) and to a CPU build of the same program.
#
#   bash scripts/gpu_same_logits.sh tiny "1 4" [STEPS]
#
# Carry `.whl` (iree-base-runtime 3.13.0) and `.gpu/step/<variant>/` holding `step_mlx-cuda-v1_cuda.vmfb` (this
# tree's, `scripts/decoder_gpu.py build --step`), the builds to compare it with (`old_<commit>.vmfb`) and, in
# `cpu/`, llvm-cpu builds (`decoder_gpu.py build --step --target llvm-cpu --cpu x86-64-v3`, run here on the GPU
# machine's CPU). Writes the deterministic random checkpoint (seed 0) to /tmp/w, then for each program
# `scripts/decode_logits.py run` (one process each) and `compare` against this tree's and against each CPU
# build's, into $OUT (each comparison's JSON; the logits stay in /tmp).
set -u
V=${1:-tiny}
WIDTHS=${2:-1}
STEPS=${3:-8}
source "$(dirname "${BASH_SOURCE[0]}")/gpu_decoder_env.sh"
D=$R/.gpu/step/$V
L=/tmp/logits
mkdir -p $L
step 120 python3 "$R/scripts/decode_logits.py" run --artifact "$D/step_mlx-cuda-v1_cuda.vmfb" \
  --checkpoint "$W/decoder-$V" --widths $WIDTHS --steps "$STEPS" --out "$L/${V}_this.npz"
for A in "$D"/old_*.vmfb; do
  N=$(basename "$A" .vmfb)
  step 120 python3 "$R/scripts/decode_logits.py" run --artifact "$A" --checkpoint "$W/decoder-$V" \
    --widths $WIDTHS --steps "$STEPS" --out "$L/${V}_$N.npz"
  step 60 python3 "$R/scripts/decode_logits.py" compare "$L/${V}_this.npz" "$L/${V}_$N.npz" \
    > "$OUT/same_logits_${V}_$N.json"
done
for C in "$D"/cpu/*.vmfb; do
  [ -f "$C" ] || continue
  N=$(basename "$C" .vmfb)
  step 120 python3 "$R/scripts/decode_logits.py" run --artifact "$C" --device local-task \
    --checkpoint "$W/decoder-$V" --widths $WIDTHS --steps "$STEPS" --out "$L/${V}_$N.npz"
  for G in "$L/${V}"_this.npz "$L/${V}"_old_*.npz; do
    [ -f "$G" ] || continue
    step 60 python3 "$R/scripts/decode_logits.py" compare "$L/${V}_$N.npz" "$G" \
      > "$OUT/vs_${N}_$(basename "$G" .npz).json"
  done
done
grep -H '"differing"\|max_abs_difference_finite\|"differing_nan_bits"' "$OUT"/*.json >&2
