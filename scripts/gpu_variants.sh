#!/usr/bin/env bash
# Compile-flag variants of the batch-8 encoder, timed with iree-benchmark-module in one GPU run.
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
$G3 -c "import numpy as np; from gemma3n_iree.diagnostics.bench import speechlike_mel as m
np.save('/tmp/mel8.npy', m(8, 2997)); np.save('/tmp/frames8.npy', np.full(8, 2997, np.int32))"
for v in "$R"/.gpu/var_*.vmfb; do
  echo "== $(basename "$v")"
  /tmp/site/iree/_runtime_libs/iree-benchmark-module --device=cuda --module="$v" --function=encode_f2997_c8 \
    --parameters=model=/tmp/ckpt/model.safetensors --input=@/tmp/mel8.npy --input=@/tmp/frames8.npy \
    --benchmark_repetitions=5 --benchmark_min_warmup_time=1 2>&1 | grep -E "real_time_median"
done
