#!/usr/bin/env bash
# One GPU run, same machine, same shapes: gemma3n-iree bench for each artifact in $ARTIFACTS (files in .gpu/,
# default audio_bench_sm90.vmfb, from emit-gemma3n --frames 2997 --clips 1 --clips 8 --clips 32 [--kernels ...])
# and the PyTorch reference (../shared/bench/torch_audio_encoder.py, copied into .gpu/), then the ratios
# torch / ours (> 1: we are faster) against our end-to-end time (mel upload and result download
# included) and against our device-side time (what the reference's CUDA events measure).
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
ARTIFACTS=${ARTIFACTS:-audio_bench_sm90.vmfb}
for a in $ARTIFACTS; do
  $G3 -m gemma3n_iree bench --target cuda --checkpoint /tmp/ckpt --artifact "$R/.gpu/$a" --repeats 20 \
    | sed "s/^{/{\"artifact\": \"$a\", /" | tee -a "$OUT/iree.jsonl"
done
PYTHONUNBUFFERED=1 timeout 300 python3 "$R/.gpu/torch_audio_encoder.py" eager compile | tee "$OUT/torch.jsonl"
python3 - "$OUT/iree.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, sys
iree = [r for r in map(json.loads, open(sys.argv[1])) if r.get("frames") == 2997]
torch = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
for t in torch:
    for i in (i for i in iree if "median_ms" in t and i["batch"] == t["batch"]):
        print(f"batch {t['batch']:3d}  {t['impl']:13s} {t['dtype']:14s} {t['median_ms']:8.2f} ms   {i['artifact']:26s} "
              f"end to end {i['median_ms']:8.2f} ms (ratio {t['median_ms'] / i['median_ms']:.2f})   "
              f"device side {i['execute_ms']:8.2f} ms (ratio {t['median_ms'] / i['execute_ms']:.2f})")
PY
