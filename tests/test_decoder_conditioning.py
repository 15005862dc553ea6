"""The random decoder's weights are well conditioned (issue 26 item 6): at the real E2B layer shapes transformers'
bf16 run stays within a few percent of its fp32 run, as a trained model's does, so parity bounds at real shapes
mean something; the scales before (`CHAOTIC`) put it at ~1.0, unrelated (scripts/decoder_conditioning.py,
BENCHMARKS.md).  And scripts reuse a random checkpoint only when its record names the same seed and scales."""

from __future__ import annotations

import dataclasses
import json
import runpy

from synthetic_text import (
    CHAOTIC,
    RANDOM_DECODER_RECORD,
    TEXT_SHARD,
    WELL_CONDITIONED,
    ensure_random_decoder,
)

from gemma3n_iree.model.decoder_config import builtin_decoder_config

STUDY = runpy.run_path("scripts/decoder_conditioning.py", run_name="study")

#: "within a few percent" (issue 26): measured 0.024 here, 0.026 at E4B over 256 + 16 tokens; the chaotic
#: scales give 1.02 on this very run.
FEW_PERCENT = 0.05


def test_well_conditioned_at_e2b_layer_shapes():
    report = STUDY["measure"]("e2b", WELL_CONDITIONED, vocab=4096, prompt_length=64, steps=4)
    assert report["bf16_vs_fp32_relative_l2"] <= FEW_PERCENT, report
    assert report["same_argmax"] == 1.0, report


def test_random_checkpoint_reused_only_with_its_record(tmp_path):
    cfg = builtin_decoder_config("tiny")
    directory = ensure_random_decoder(tmp_path / "d", cfg, seed=0)
    record = json.loads((directory / RANDOM_DECODER_RECORD).read_text())
    assert record["seed"] == 0 and record["scales"] == dataclasses.asdict(WELL_CONDITIONED)
    shard = directory / TEXT_SHARD
    written = shard.stat().st_mtime_ns
    ensure_random_decoder(directory, cfg, seed=0)
    assert shard.stat().st_mtime_ns == written  # the same plan: reused
    before = shard.read_bytes()
    ensure_random_decoder(directory, cfg, seed=0, scales=CHAOTIC)
    assert shard.read_bytes() != before  # another plan: written again
    assert json.loads((directory / RANDOM_DECODER_RECORD).read_text())["scales"] == dataclasses.asdict(CHAOTIC)
