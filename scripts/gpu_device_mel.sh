#!/usr/bin/env bash
# The device log-mel in one GPU run (scripts/device_mel_gpu.py): the front end against the host mel, its
# emulation and its error bound; tiny encoders with the host or device mel against transformers and a
# float64 evaluation; the host mel + encode and the device-mel encode of 30 s clips in calls of 1, 8, 32
# with the random E4B checkpoint. Needs .whl/ (iree-base-runtime, soundfile, soxr, cffi, pycparser for
# Python 3.12) and .gpu/mel-cuda/ (`.venv/bin/python scripts/device_mel_gpu.py build` on the CPU machine)
# carried along; see ../shared/bench/README.md. Writes $OUT/device_mel.jsonl and $OUT/device_mel.log.
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
nvidia-smi -L
timeout 540 $G3 "$R/scripts/device_mel_gpu.py" run --target cuda --out "$OUT" --timeout 240 2>&1 | tee "$OUT/device_mel.log"
