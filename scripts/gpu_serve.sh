#!/usr/bin/env bash
# The server on the GPU: full-size random E4B checkpoint, the CUDA encode artifact carried in .gpu/
# (emit-gemma3n --target cuda --frames 256 --frames 1024 --frames 2997 --clips 1 --clips 2 --clips 4),
# then scripts/bench_server.py at several concurrency levels with --verify.
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
$G3 -m gemma3n_iree serve --checkpoint /tmp/ckpt --target cuda --artifact "$R/.gpu/audio_encode_sm90.vmfb" \
  --no-prefill --port 8080 --max-batch-clips 4 > "$OUT/serve.log" 2>&1 &
for _ in $(seq 120); do curl -sf http://127.0.0.1:8080/health > /dev/null && break; sleep 1; done
curl -s http://127.0.0.1:8080/health; echo
$G3 "$R/scripts/bench_server.py" --url http://127.0.0.1:8080 --concurrency 1 4 16 64 --requests 64 --verify \
  | tee "$OUT/bench_server.jsonl"
curl -s http://127.0.0.1:8080/metrics > "$OUT/metrics.json"
kill %1
