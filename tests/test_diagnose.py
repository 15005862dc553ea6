"""`diagnose` on a tiny random checkpoint and real speech: passes against both references, and a
deliberately broken contract is reported at the right stage."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemma3n_iree.contracts import policy
from gemma3n_iree.diagnostics.diagnose_run import run_diagnosis
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.runtime.commands.cli import main
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.synthetic import write_random_checkpoint

SPEECH = Path(__file__).resolve().parents[1] / "runtime" / "data" / "sample_speech.wav"
BROKEN = dataclasses.replace(
    policy.MLX_CUDA_V1,
    name="test-drops-sscp-norm-rounding",
    production=False,
    reference="mlx-cuda-v1",
    dropped_rounding=frozenset({"sscp_norm"}),
)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return write_random_checkpoint(tmp_path_factory.mktemp("ckpt"), builtin_config("tiny"), seed=0)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> ArtifactCache:
    return ArtifactCache(tmp_path_factory.mktemp("cache"))


@pytest.fixture
def broken_contract(monkeypatch):
    monkeypatch.setitem(policy.CONTRACTS, BROKEN.name, BROKEN)
    return BROKEN.name


def test_passes_against_the_contract_emulation(checkpoint, cache):
    """With this checkpoint and input no accumulation-order flip exceeds the default thresholds (chained);
    `test_an_accumulation_flip_is_explained` covers a case where one does."""
    report = run_diagnosis(checkpoint, SPEECH, contract="mlx-cuda-v1", reference="contract", cache=cache)
    assert report.first_divergence is None, report.table()
    rows = {r["stage"]: r for r in report.stages}
    assert len(rows) >= 40
    # Schedule-pinned stages are bit-exact given the artifact's own inputs.
    for name in ("sscp_conv_0_norm_cumulative_sum", "sscp_conv_1_norm_inverse_stddev", "sscp_conv_1_norm", "mel"):
        assert rows[name]["local"]["bit_exact"], name
    # Any local contraction difference is inside the accumulation envelope.
    for row in rows.values():
        if "envelope" in row:
            assert row["envelope"]["outside"] == 0, row["stage"]


def test_passes_against_transformers(checkpoint, cache):
    pytest.importorskip("transformers", reason="the transformers reference is optional (test-only dependency)")
    report = run_diagnosis(checkpoint, SPEECH, contract="f32-reference", reference="transformers", cache=cache)
    assert report.first_divergence is None, report.table()
    assert {"sscp_conv_0_convolution", "conformer.1.final_norm", "soft_post_norm"} <= {
        r["stage"] for r in report.stages
    }


def test_a_dropped_rounding_point_is_the_first_divergence(checkpoint, cache, broken_contract):
    report = run_diagnosis(checkpoint, SPEECH, contract=broken_contract, reference="contract", cache=cache)
    first = report.first_divergence
    assert first is not None and first["stage"] == "sscp_conv_0_norm", report.table()
    assert first["non_bf16_values"] > 0  # the contract promised BF16 there and the artifact broke it
    earlier = [r for r in report.stages[: report.stages.index(first)]]
    assert all(r.get("max_abs", 0) == 0 for r in earlier)


def test_bf16_result_convolution_is_outside_the_envelope(checkpoint, cache):
    """The seed's negative evidence: BF16-result SSCP convolutions accumulate in BF16 and leave the envelope."""
    report = run_diagnosis(checkpoint, SPEECH, contract="mlx-cuda-v1-bf16-conv", reference="contract", cache=cache)
    first = report.first_divergence
    assert first is not None and first["stage"] == "sscp_conv_0_convolution"
    assert first["envelope"]["outside"] > 0


def test_cli_exit_code_and_json(checkpoint, cache, tmp_path):
    out = tmp_path / "report.json"
    args = ["diagnose", "--checkpoint", str(checkpoint), "--cache-dir", str(cache.root), "--json", str(out)]
    result = CliRunner().invoke(main, args + ["--contract", "mlx-cuda-v1-bf16-conv", str(SPEECH)])
    assert result.exit_code == 1, result.output
    assert "first divergence at sscp_conv_0_convolution" in result.output and "OUTSIDE" in result.output
    data = json.loads(out.read_text())
    assert data["verdict"] == "fail" and data["first_divergence"] == "sscp_conv_0_convolution"
    passing = CliRunner().invoke(main, args + [str(SPEECH)])
    assert passing.exit_code == 0, passing.output
    assert "verdict: PASS" in passing.output


def test_an_accumulation_flip_is_explained(tmp_path, cache):
    """Another random checkpoint where a one-ULP F32 accumulation flip inside a conformer module is
    amplified past the default thresholds: the verdict fails (as the gate specifies) and the report
    explains it from the stage-local check instead of calling it a bug."""
    checkpoint = write_random_checkpoint(tmp_path / "ckpt", builtin_config("tiny"), seed=5)
    speech = Path(__file__).parent / "data" / "speech_16k.wav"
    report = run_diagnosis(checkpoint, speech, contract="mlx-cuda-v1", reference="contract", cache=cache)
    first = report.first_divergence
    assert first is not None and first["stage"].startswith("conformer.")
    assert first["max_bf16_ulp"] <= 1
    assert "OUTSIDE" not in report.explanation()
    for row in report.stages:
        assert row.get("envelope", {}).get("outside", 0) == 0, row["stage"]
