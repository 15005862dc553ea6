#!/usr/bin/env bash
# Issue 14 in one GPU run (about 8 minutes): the front end's thread fight, files -> .npz through the CLI and
# the Python API (host and device mel) against the encode-only throughput of the same build and
# transformers' pipeline (eager, torch.compile), and the server at concurrency 1/16/64/256 with the load
# from 8 separate processes.  Every part has its own time limit and writes JSON lines to $OUT as it goes.
#
# Carry .whl/ (iree-base-runtime, soundfile, soxr, cffi, pycparser, threadpoolctl for cp312; aiohttp and
# its dependencies in .whl/aio/, installed only when the machine lacks aiohttp) and .gpu/, built here:
#   emit-gemma3n --target cuda --frames 2997 --clips 1 --clips 8 --clips 32 --mel host   -o .gpu/pipe_host_sm90.vmfb
#   emit-gemma3n --target cuda --frames 2997 --clips 1 --clips 8 --clips 32 --mel device -o .gpu/pipe_device_sm90.vmfb
#   emit-gemma3n --target cuda --frames 256 --frames 1024 --frames 2997 --clips 1 --clips 2 --clips 4 --clips 8 \
#     --clips 16 --clips 32 --mel host -o .gpu/serve_host_sm90.vmfb      # what `serve --target cuda` compiles
set -uo pipefail
BUDGET=${BUDGET:-530}  # seconds this call may use
source "$(dirname "$0")/gpu_budget.sh"
source "$(dirname "$0")/gpu_env.sh"
if ! $G3 -c "import aiohttp" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/aio "$R"/.whl/aio/*.whl || exit 1
  G3="env PYTHONPATH=/tmp/pkg:/tmp/site:/tmp/aio python3"
fi
nvidia-smi -L; nproc
A="$R/.gpu"
IN=/tmp/bench-in
log() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/steps.log"; }

log "inputs"
[ -d $IN/flac44k ] || timeout $(cap 120) $G3 "$R/scripts/pipeline_bench.py" inputs --dir $IN --files 256 --seconds 30 \
  | tee -a "$OUT/inputs.jsonl"

log "1. the thread fight (front end alone, 16 cores)"
timeout $(cap 100) $G3 "$R/scripts/frontend_threads.py" --stages mel flac44k --workers 1 4 16 --items-per-worker 4 \
  2> "$OUT/threads.err" | tee "$OUT/threads.jsonl"

log "2. encode-only throughput of the same builds"
for mel in host device; do
  timeout $(cap 90) $G3 -m gemma3n_iree bench --target cuda --checkpoint /tmp/ckpt --artifact "$A/pipe_${mel}_sm90.vmfb" \
    --repeats 10 2>> "$OUT/bench.err" | tee -a "$OUT/bench.jsonl"
done

log "3. the Python API, files -> npz"
for mel in host device; do
  timeout $(cap 150) $G3 "$R/scripts/pipeline_bench.py" api --checkpoint /tmp/ckpt --target cuda \
    --artifact "$A/pipe_${mel}_sm90.vmfb" --inputs $IN --counts 1 8 32 256 --formats wav flac --repeats 3 \
    2>> "$OUT/api.err" | tee -a "$OUT/api.jsonl"
done

log "4. transformers' pipeline, bf16: eager 1/8/32/256 (WAV; FLAC at 32), torch.compile at 32"
timeout $(cap 130) $G3 "$R/scripts/pipeline_bench.py" torch --inputs $IN --device cuda --dtype bf16 --modes eager compile \
  --counts 1 8 32 256 --formats wav --compile-counts 32 --repeats 3 2>> "$OUT/torch.err" | tee -a "$OUT/torch.jsonl"
timeout $(cap 40) $G3 "$R/scripts/pipeline_bench.py" torch --inputs $IN --device cuda --dtype bf16 --modes eager \
  --counts 32 --formats flac --repeats 2 2>> "$OUT/torch.err" | tee -a "$OUT/torch.jsonl"
log "5. the server (default workers and widths, host mel), load from 8 processes"
$G3 -m gemma3n_iree serve --checkpoint /tmp/ckpt --target cuda --artifact "$A/serve_host_sm90.vmfb" --no-prefill \
  --port 8080 > "$OUT/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq $(cap 150)); do curl -sf http://127.0.0.1:8080/health > /dev/null && break; sleep 1; done
curl -s http://127.0.0.1:8080/health > "$OUT/health.json"
timeout $(cap 150) $G3 "$R/scripts/bench_server.py" --url http://127.0.0.1:8080 --concurrency 1 16 64 256 --verify \
  --processes 8 --server-pid $SERVER 2>> "$OUT/bench_server.err" | tee "$OUT/bench_server.jsonl"
curl -s http://127.0.0.1:8080/metrics > "$OUT/metrics.json"
kill $SERVER; wait $SERVER 2>/dev/null

log "6. the CLI, files -> npz (start-up included in total_s)"
for mel in host device; do
  timeout $(cap 100) $G3 "$R/scripts/pipeline_bench.py" cli --checkpoint /tmp/ckpt --target cuda \
    --artifact "$A/pipe_${mel}_sm90.vmfb" --inputs $IN --counts 32 256 --formats wav --timeout $(cap 45) \
    2>> "$OUT/cli.err" | tee -a "$OUT/cli.jsonl"
done
timeout $(cap 40) $G3 "$R/scripts/pipeline_bench.py" cli --checkpoint /tmp/ckpt --target cuda \
  --artifact "$A/pipe_host_sm90.vmfb" --inputs $IN --counts 1 8 --formats wav --timeout $(cap 18) \
  2>> "$OUT/cli.err" | tee -a "$OUT/cli.jsonl"

log "done"
