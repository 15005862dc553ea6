#!/usr/bin/env bash
# Issue 17 on the H200 in one call (about 9 minutes): transcription of 1, 8 and 64 clips of 30 s with a fixed
# 64-token output, ours (cuda, mlx-cuda-v1, kernels auto) against transformers bf16 (eager, then
# torch.compile), as real-time factor and tokens/s; then `gemma3n-iree serve`'s /v1/audio/transcriptions at
# concurrency 1, 16 and 64.  Each part has its own time limit (cut to what is left of 560 s) and writes JSON
# lines to $OUT as it goes (scripts/transcribe_bench.py says what each number is).
#
#   bash scripts/gpu_transcribe.sh            # everything
#   bash scripts/gpu_transcribe.sh ours       # one part: checkpoint is made first when missing
#   bash scripts/gpu_transcribe.sh ours torch server   # several parts, in the script's order
#
# Carry .whl/ (as scripts/gpu_pipeline.sh: iree-base-runtime 3.13.0, soundfile, soxr, cffi, pycparser,
# threadpoolctl for cp312; aiohttp and its dependencies in .whl/aio/) and .gpu/t17/, built here (CPU machine):
#   emit-gemma3n --builtin e4b --target cuda --frames 2997 --clips 1 --clips 8 --clips 32 -o .gpu/t17/encoder.vmfb
#     (the log-mel on the device, cuda's default: `--mel host` leaves it to the host, 3.4 s for 64 clips)
#   emit-gemma3n --builtin e4b --stage prefill --target cuda --capacity 256 --capacity 2048 --clips 1 --clips 8 \
#     -o .gpu/t17/prefill.vmfb
#   emit-gemma3n --builtin e4b --stage decoder --target cuda --slots 64 --capacity 320 --prompt 256 \
#     --batch 1 --batch 8 --batch 32 --batch 64 --prompt-batch 8 --context 320 --sampling -o .gpu/t17/decoder.vmfb
# (the decoder program `runtime/transcribe_decoder.py` sizes for 30 s windows and 64 new tokens: one prompt
# bucket of 256, capacity 256 + 64, decode widths 1/8/32/64 over 64 slots, 8 windows per batched prefill call;
# contract mlx-cuda-v1, kernels auto.)
set -uo pipefail
PARTS=" ${*:-all} "
want() { [[ $PARTS == *" all "* || $PARTS == *" $1 "* ]]; }
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
log() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/steps.log"; }
BUDGET=${BUDGET:-560}  # seconds this call may use (less where the device time left is less)
source "$R/scripts/gpu_budget.sh"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$R"/.whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/pkg "$R" || exit 1
export PYTHONUNBUFFERED=1
PP=/tmp/pkg:/tmp/site
if ! env PYTHONPATH=$PP python3 -c "import aiohttp" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/aio "$R"/.whl/aio/*.whl || exit 1
  PP=$PP:/tmp/aio
fi
G3="env PYTHONPATH=$PP python3"
B="$R/scripts/transcribe_bench.py"
A="$R/.gpu/t17"
CK=/tmp/ckpt17
nvidia-smi -L; ls -la "$A"
cd /tmp

if [ ! -f $CK/tokenizer.json ]; then
  log "random E4B checkpoint (audio tower + every decoder tensor, 13.7 GB streamed)"
  timeout $(cap 200) $G3 "$B" checkpoint --dir $CK --variant e4b 2>> "$OUT/checkpoint.err" | tee -a "$OUT/checkpoint.jsonl"
fi

if want ours; then
  log "ours: 1, 8, 64 clips x 64 tokens"
  timeout $(cap 150) $G3 "$B" ours --checkpoint $CK --target cuda --encoder-artifact "$A/encoder.vmfb" \
    --prefill-artifact "$A/prefill.vmfb" --decoder-artifact "$A/decoder.vmfb" --counts 1 8 64 --repeats 3 \
    2>> "$OUT/ours.err" | tee -a "$OUT/transcribe.jsonl"
fi
if want torch; then
  log "transformers bf16 eager: 1, 8, 64 clips x 64 tokens"
  timeout $(cap 110) $G3 "$B" torch --checkpoint $CK --variant e4b --mode eager --counts 1 8 64 --repeats 2 \
    2>> "$OUT/torch.err" | tee -a "$OUT/transcribe.jsonl"
fi
if want server; then
  log "server: /v1/audio/transcriptions at concurrency 1, 16, 64"
  $G3 -m gemma3n_iree serve --checkpoint $CK --target cuda --artifact "$A/encoder.vmfb" \
    --prefill-artifact "$A/prefill.vmfb" --decoder-artifact "$A/decoder.vmfb" --decoder-slots 64 \
    --max-new-tokens 64 --max-upload-mb 8 --max-memory-mb 16384 --port 8081 \
    > "$OUT/serve.log" 2>&1 &
  SERVER=$!
  for _ in $(seq $(cap 120)); do curl -sf http://127.0.0.1:8081/health > /dev/null && break; sleep 1; done
  curl -s http://127.0.0.1:8081/health > "$OUT/health.json"
  timeout $(cap 150) $G3 "$B" server --url http://127.0.0.1:8081 --model ckpt17 --concurrency 1 16 64 \
    --requests 16 2>> "$OUT/server.err" | tee -a "$OUT/transcribe.jsonl"
  curl -s http://127.0.0.1:8081/metrics > "$OUT/metrics.json"
  kill $SERVER; wait $SERVER 2>/dev/null
fi
if want compile; then
  log "transformers bf16 torch.compile: 1, 8, 64 clips x 64 tokens (given up at the time limit)"
  timeout $(cap 150) $G3 "$B" torch --checkpoint $CK --variant e4b --mode compile --counts 1 8 64 --repeats 2 \
    2>> "$OUT/torch_compile.err" | tee -a "$OUT/transcribe.jsonl"
fi
log "done"
