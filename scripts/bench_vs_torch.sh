#!/usr/bin/env bash
# One GPU run, same machine, same shapes: gemma3n-iree bench and the PyTorch reference
# (../shared/bench/torch_audio_encoder.py, copied into .gpu/), then the ratios.
# Needs .whl/ and .gpu/ (audio_bench_sm90.vmfb from emit-gemma3n --frames 2997 --clips 1 --clips 8 --clips 32).
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
$G3 -m gemma3n_iree bench --target cuda --checkpoint /tmp/ckpt --artifact "$R/.gpu/audio_bench_sm90.vmfb" \
  --repeats 20 | tee "$OUT/iree.jsonl"
PYTHONUNBUFFERED=1 timeout 300 python3 "$R/.gpu/torch_audio_encoder.py" eager compile | tee "$OUT/torch.jsonl"
python3 - "$OUT/iree.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, sys
iree = {r["batch"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("frames") == 2997}
torch = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
for t in torch:
    if "median_ms" in t and t["batch"] in iree:
        i = iree[t["batch"]]
        print(f"batch {t['batch']:3d}  {t['impl']:14s} {t['dtype']:15s} {t['median_ms']:8.2f} ms   "
              f"iree {i['median_ms']:8.2f} ms   torch/iree time ratio {t['median_ms'] / i['median_ms']:.2f}")
PY
