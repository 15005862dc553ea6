#!/usr/bin/env bash
# One GPU run: the stage profile of each directory in $PROFILES (from scripts/stage_profile.py build), then
# `diagnose` on the stage artifact $STAGES (see gpu_diagnose.sh). Results land in $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
for d in ${PROFILES:-stages}; do
  echo "== stage profile $d"
  mkdir -p "$OUT/$d"
  $G3 "$R/scripts/stage_profile.py" run --dir "$R/.gpu/$d" --out "$OUT/$d"
done
source "$R/scripts/gpu_diagnose.sh"  # (sources gpu_env.sh again: a no-op)
