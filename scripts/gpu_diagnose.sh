#!/usr/bin/env bash
# diagnose on the GPU: the full-size random checkpoint and 30 s of speech (clip 0 of the 45 s file),
# stage artifact from `emit-gemma3n --target cuda --frames 2997 --stages` carried in .gpu/.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
$G3 -m gemma3n_iree diagnose --target cuda --checkpoint /tmp/ckpt --artifact "$R/.gpu/${STAGES:-audio_stages_sm90.vmfb}" \
  --json "$OUT/diagnose_cuda.json" /tmp/long45.wav | tee "$OUT/diagnose_cuda.txt"
