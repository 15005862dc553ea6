#!/usr/bin/env bash
# Where the time goes on the GPU: per-dispatch statistics from IREE's HAL profiler for one encode
# call at batch 1 and 8 (30 s clips), plus iree-benchmark-module for the same entries (no Python).
# Needs .whl/ and .gpu/audio_bench_sm90.vmfb (emit-gemma3n --frames 2997 --clips 1 --clips 8 --clips 32).
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
TOOLS=/tmp/site/iree/_runtime_libs
VMFB="$R/.gpu/audio_bench_sm90.vmfb"
$G3 -c "import numpy as np; from gemma3n_iree.diagnostics.bench import speechlike_mel as m
for b in (1, 8): np.save(f'/tmp/mel{b}.npy', m(b, 2997)); np.save(f'/tmp/frames{b}.npy', np.full(b, 2997, np.int32))"
for b in 1 8; do
  "$TOOLS/iree-benchmark-module" --device=cuda --module="$VMFB" --function=encode_f2997_c$b \
    --parameters=model=/tmp/ckpt/model.safetensors --input=@/tmp/mel$b.npy --input=@/tmp/frames$b.npy \
    --benchmark_repetitions=5 --benchmark_min_warmup_time=1 2>&1 | grep -E "real_time|mean|median|BM_" | tee "$OUT/benchmark_b$b.txt"
  "$TOOLS/iree-run-module" --device=cuda --module="$VMFB" --function=encode_f2997_c$b \
    --parameters=model=/tmp/ckpt/model.safetensors --input=@/tmp/mel$b.npy --input=@/tmp/frames$b.npy \
    --device_profiling_mode=dispatch-events --device_profiling_output="$OUT/prof_b$b.ireeprof" > /dev/null 2> "$OUT/run_b$b.err"
  tail -3 "$OUT/run_b$b.err"
  "$TOOLS/iree-profile" statistics "$OUT/prof_b$b.ireeprof" > "$OUT/stats_b$b.txt" 2>&1
  head -60 "$OUT/stats_b$b.txt"
done
