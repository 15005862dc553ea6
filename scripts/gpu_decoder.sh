#!/usr/bin/env bash
# The text decoder on the H200 for one variant: references, parity of the carried programs, speed.
#
#   bash scripts/gpu_decoder.sh e4b parity    # decoder_real_shapes references (256 + 16 tokens), both programs, --compare
#   bash scripts/gpu_decoder.sh e4b bench     # prefill/decode timings vs transformers eager + torch.compile
#
# Carry `.whl` (iree-base-runtime 3.13.0, shared/bench/README.md) and `.gpu` (the programs, built on the CPU
# machine: `python scripts/decoder_gpu.py build --variant e4b --contract mlx-cuda-v1`, and `--contract
# f32-reference`). The random checkpoint and the references stay in /tmp/w (gigabytes); the JSON reports go
# to $OUT. Each step has its own time limit inside the device's 10 minutes per command.
set -u
V=${1:-e4b}
PHASE=${2:-parity}
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-/tmp/out}
W=/tmp/w
mkdir -p "$OUT" "$W/ref"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$R"/.whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/pkg "$R" || exit 1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg:/tmp/site
BUDGET=${BUDGET:-570}  # seconds this call may use (less where the device time left is less)
source "$R/scripts/gpu_budget.sh"
step() { local limit; limit=$(cap "$1"); shift; echo "== [$(( $(date +%s) - T0 )) s] $*" >&2; timeout "$limit" python3 "$@"
         echo "rc=$?" >&2; }
if [ "$PHASE" = parity ]; then
  step 330 "$R/scripts/decoder_real_shapes.py" --variant "$V" --workdir $W --out $W/ref \
    > "$OUT/references_$V.json"
  cp $W/ref/report.json "$OUT/report_$V.json" 2>/dev/null
  for C in f32-reference mlx-cuda-v1; do
    step 100 "$R/scripts/decoder_gpu.py" parity --variant "$V" --contract $C --workdir $W --out $W/ref
    step 50 "$R/scripts/decoder_real_shapes.py" --variant "$V" --workdir $W --out $W/ref \
      --compare "$W/ref/program_$C.npz" --contract $C > "$OUT/compare_${V}_$C.json"
  done
else
  step 560 "$R/scripts/decoder_gpu.py" bench --variant "$V" --workdir $W --out "$OUT" --torch eager,compile
fi
