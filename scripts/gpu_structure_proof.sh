#!/usr/bin/env bash
# Issue 15's proof on the H200 (about 3 minutes): every output of the full-size stage build (94, stage tensors
# included) of this tree bit for bit against the build of 46ebdac (the landing before the restructure), each
# run by its own code, and `gemma3n-iree bench` of the two encode builds, alternated twice.
#
# Carry .whl/ (shared/bench/README.md) and .gpu/, made on the CPU machine:
#   git archive 46ebdac | tar -x -C .gpu/base                                          # the code before
#   (in a checkout of 46ebdac) emit-gemma3n --target cuda --builtin e4b --frames 2997 --clips 1 --stages \
#       -o .gpu/parity_before.vmfb
#   (in a checkout of 46ebdac) emit-gemma3n --target cuda --builtin e4b --frames 2997 --clips 1 --clips 8 \
#       --clips 32 -o .gpu/bench_before.vmfb
#   emit-gemma3n --stage audio --target cuda --builtin e4b --frames 2997 --clips 1 --stages -o .gpu/parity_after.vmfb
#   emit-gemma3n --target cuda --builtin e4b --frames 2997 --clips 1 --clips 8 --clips 32 --mel host \
#       -o .gpu/pipe_host_sm90.vmfb
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
A="$R/.gpu"
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/pkgbase "$A/base" || exit 1
BASE="env PYTHONPATH=/tmp/pkgbase:/tmp/site python3"
echo "== parity: 46ebdac's build, run by 46ebdac's code"
timeout 200 $BASE "$A/base/scripts/device_parity.py" --vmfb "$A/parity_before.vmfb" --out "$OUT/parity_before" \
  --repeats 1 --save-all /tmp/before.npz | tail -3
echo "== parity: this tree's build against it, bit for bit"
timeout 200 $G3 "$R/scripts/device_parity.py" --vmfb "$A/parity_after.vmfb" --out "$OUT/parity_after" \
  --repeats 1 --compare-with /tmp/before.npz | tee "$OUT/parity_compare.log" | tail -5
echo "== bench, alternated"
for _ in 1 2; do
  timeout 90 $BASE -m gemma3n_iree bench --target cuda --checkpoint /tmp/ckpt --artifact "$A/bench_before.vmfb" \
    --repeats 20 | sed 's/^{/{"build": "46ebdac", /' | tee -a "$OUT/bench_structure.jsonl"
  timeout 90 $G3 -m gemma3n_iree bench --target cuda --checkpoint /tmp/ckpt --artifact "$A/pipe_host_sm90.vmfb" \
    --repeats 20 | sed 's/^{/{"build": "after", /' | tee -a "$OUT/bench_structure.jsonl"
done
