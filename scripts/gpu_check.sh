#!/usr/bin/env bash
# The H200 verification run: stage agreement with the emulation, determinism, timing, and encode of
# a 45 s file plus two short ones (together and alone) with a deterministic random E4B checkpoint.
# Needs .whl/ (iree-base-runtime, soundfile, soxr, cffi, pycparser for Python 3.12) and .gpu/ (CUDA
# artifacts from emit-gemma3n) carried along; see ../shared/bench/README.md.
set -uo pipefail
source "$(dirname "$0")/gpu_env.sh"
nvidia-smi -L
$G3 "$R/scripts/device_parity.py" --vmfb "$R/.gpu/audio_stages_sm90.vmfb" --device cuda --out "$OUT/stages" --emulate --repeats 2
$G3 "$R/scripts/device_parity.py" --vmfb "$R/.gpu/audio_sm90.vmfb" --device cuda --out "$OUT/plain" --repeats 10
ENC="$G3 -m gemma3n_iree encode --target cuda --checkpoint /tmp/ckpt --artifact $R/.gpu/audio_encode_sm90.vmfb"
$ENC -o "$OUT/mixed.npz" /tmp/long45.wav "$R/runtime/data/sample_speech.wav" "$R/tests/data/speech_16k.wav"
$ENC -o "$OUT/alone0.npz" /tmp/long45.wav
$ENC -o "$OUT/alone1.npz" "$R/runtime/data/sample_speech.wav"
$ENC -o "$OUT/alone2.npz" "$R/tests/data/speech_16k.wav"
