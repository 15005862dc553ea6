"""Stage diagnostics: where an artifact first differs from a reference, by how much, and why.

The artifact is built with every named stage as an output and run on one clip.  Each stage is
compared with the reference twice:

* chained: against the reference's own forward pass (what a user sees end to end);
* local: against the emulation of that one stage applied to the artifact's own inputs (only for
  the contract reference).  A local difference is introduced by that stage itself; a chained-only
  difference was inherited from an earlier one.

For linear layers and convolutions, each differing element is classified with the accumulation
envelope (`contracts/envelope.py`): inside = a legitimate F32 accumulation order gives the
artifact's value; outside = a bug.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..contracts.envelope import inside_envelope
from ..contracts.metrics import bf16_ulp_distance
from ..files import write_atomically
from ..model.audio_config import AudioConfig

OUTLIERS = 32
ENVELOPE_SAMPLES = 64


@dataclass(frozen=True)
class Thresholds:
    max_abs: float = 5e-3
    rms: float = 5e-4

    def exceeded(self, max_abs: float, rms: float) -> bool:
        return max_abs > self.max_abs or rms > self.rms


def _bits(x: float) -> str:
    return f"0x{int(np.asarray([x], np.float32).view(np.uint32)[0]) >> 16:04X}"


def compare(name: str, ours: np.ndarray, ref: np.ndarray, promises_bf16: bool) -> dict[str, Any]:
    """The per-stage metrics of the diagnostic report (shape first; NaN-aware)."""
    row: dict[str, Any] = {"stage": name, "shape": list(ours.shape), "reference_shape": list(ref.shape)}
    if ours.shape != ref.shape:
        row["shape_ok"] = False
        return row
    row["shape_ok"] = True
    if ours.dtype.kind in "iu":
        row.update(max_abs=float(np.abs(ours.astype(np.int64) - ref.astype(np.int64)).max(initial=0)), rms=0.0)
        return row
    a, b = np.asarray(ours, np.float32), np.asarray(ref, np.float32)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    diff = np.where(np.isnan(diff), np.inf, diff)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    ulps = bf16_ulp_distance(a, b)
    row.update(
        max_abs=float(diff.max(initial=0.0)),
        rms=float(np.sqrt(np.mean(np.square(np.where(np.isfinite(diff), diff, 0.0))))) if diff.size else 0.0,
        max_index=[int(i) for i in index],
        max_pair={
            "ours": float(a[index]),
            "reference": float(b[index]),
            "ours_bf16": _bits(a[index]),
            "reference_bf16": _bits(b[index]),
        }
        if diff.size
        else {},
        max_bf16_ulp=int(ulps.max(initial=0)),
        over_one_bf16_ulp=int((ulps > 1).sum()),
        differing=int((ulps > 0).sum()),
        size=int(a.size),
        non_bf16_values=int((a.view(np.uint32) & 0xFFFF != 0).sum()) if promises_bf16 else None,
    )
    order = np.argsort(-ulps, axis=None, kind="stable")[:OUTLIERS]
    row["outliers"] = [
        {
            "index": [int(i) for i in np.unravel_index(int(k), a.shape)],
            "ours": float(a.flat[k]),
            "reference": float(b.flat[k]),
            "bf16_ulp": int(ulps.flat[k]),
        }
        for k in order
        if ulps.flat[k] > 1
    ]
    return row


@dataclass
class ContractionSite:
    """How to rebuild the K products of one output element of a linear or convolution stage."""

    operands: Callable[[tuple[int, ...]], tuple[np.ndarray, np.ndarray]]


def contraction_sites(
    cfg: AudioConfig, ours: Mapping[str, np.ndarray], weights: Mapping[str, np.ndarray]
) -> dict[str, ContractionSite]:
    """Stages that are a single contraction, with their operands taken from the artifact's own inputs."""

    def linear(source: str, weight: str, flat: bool = False) -> ContractionSite:
        def operands(index: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
            x = ours[source]
            if flat:
                x = x.reshape(*x.shape[:2], -1)
            return x[index[:-1]], weights[weight][index[-1]]

        return ContractionSite(operands)

    def conv(source: str, weight: str, stage: int) -> ContractionSite:
        kt, kf = cfg.sscp_conv_kernel_size[stage]
        st, sf = cfg.sscp_conv_stride_size[stage]

        def operands(index: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
            x = ours[source]
            x = x[..., None] if x.ndim == 3 else x
            xp = np.pad(x, [(0, 0), (0, kt - 1), (1, 1), (0, 0)])
            b, t, f, o = index
            patch = xp[b, st * t : st * t + kt, sf * f : sf * f + kf, :]  # [kt, kf, cin]
            w = weights[weight][o]  # [cin, kt, kf]
            return patch.reshape(-1), w.transpose(1, 2, 0).reshape(-1)

        return ContractionSite(operands)

    return {
        "sscp_conv_0_convolution": conv("mel", "sscp.conv_0.weight", 0),
        "sscp_conv_1_convolution": conv("sscp_conv_0", "sscp.conv_1.weight", 1),
        "input_projection": linear("sscp_conv_1", "sscp.input_proj", flat=True),
        "soft_linear": linear("soft_norm", "embed.projection"),
        "hard_linear": linear("hard_norm", "embed.projection"),
    }


def classify_envelope(site: ContractionSite, ours: np.ndarray, local_ref: np.ndarray) -> dict[str, int]:
    """Check up to ENVELOPE_SAMPLES locally differing elements against the accumulation envelope."""
    differing = np.argwhere(ours.view(np.uint32) != local_ref.view(np.uint32))
    inside = outside = 0
    examples: list[list[int]] = []
    for idx in differing[:ENVELOPE_SAMPLES]:
        index = tuple(int(i) for i in idx)
        a, b = site.operands(index)
        if inside_envelope(float(ours[index]), a, b):
            inside += 1
        else:
            outside += 1
            examples.append(list(index))
    return {
        "differing": int(len(differing)),
        "checked": inside + outside,
        "inside": inside,
        "outside": outside,
        "outside_examples": examples[:8],
    }


@dataclass
class Report:
    target: str
    contract: str
    reference: str
    thresholds: Thresholds
    stages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first_divergence(self) -> dict[str, Any] | None:
        for row in self.stages:
            if not row.get("shape_ok", True) or self.thresholds.exceeded(row.get("max_abs", 0), row.get("rms", 0)):
                return row
        return None

    def explanation(self) -> str | None:
        """Why the first divergence differs, from its stage-local check (contract reference only)."""
        first = self.first_divergence
        if first is None or "local" not in first:
            return None
        local, envelope = first["local"], first.get("envelope")
        if local["bit_exact"]:
            return (
                "the stage itself is bit-exact on the artifact's own inputs: the difference was inherited "
                "from earlier stages (accumulation-order differences amplified)"
            )
        if envelope is not None:
            if envelope["outside"]:
                return (
                    f"{envelope['outside']} of {envelope['checked']} checked elements are OUTSIDE the "
                    "accumulation envelope: no F32 summation order gives them (a bug)"
                )
            return (
                f"all {envelope['checked']} checked elements are inside the accumulation envelope: "
                "a legitimate F32 accumulation-order difference"
            )
        return (
            f"{local['differing']} element(s) differ on the artifact's own inputs in a stage that contains "
            "contractions; check its linear layers with the envelope (see the stages above)"
        )

    def to_json(self) -> dict[str, Any]:
        first = self.first_divergence
        return {
            "target": self.target,
            "contract": self.contract,
            "reference": self.reference,
            "thresholds": self.thresholds.__dict__,
            "verdict": "pass" if first is None else "fail",
            "first_divergence": None if first is None else first["stage"],
            "explanation": self.explanation(),
            "stages": self.stages,
        }

    def table(self) -> str:
        lines = [f"{'stage':42s} {'max_abs':>10s} {'rms':>10s} {'ulp':>6s} {'>1ulp':>8s} {'local':>8s} envelope"]
        for row in self.stages:
            if not row.get("shape_ok", True):
                lines.append(f"{row['stage']:42s} SHAPE {row['shape']} vs reference {row['reference_shape']}")
                continue
            local = row.get("local")
            env = row.get("envelope")
            lines.append(
                f"{row['stage']:42s} {row.get('max_abs', 0):10.3g} {row.get('rms', 0):10.3g} "
                f"{row.get('max_bf16_ulp', 0):6d} {row.get('over_one_bf16_ulp', 0):8d} "
                f"{'-' if local is None else str(local['differing']):>8s} "
                + ("" if env is None else f"{env['inside']}/{env['checked']} inside")
            )
        first = self.first_divergence
        lines.append(
            f"verdict: PASS (no stage over max_abs {self.thresholds.max_abs} / rms {self.thresholds.rms})"
            if first is None
            else f"verdict: FAIL — first divergence at {first['stage']} (max_abs {first.get('max_abs', 0):.3g}, "
            f"rms {first.get('rms', 0):.3g}; thresholds {self.thresholds.max_abs} / {self.thresholds.rms})"
        )
        if self.explanation():
            lines.append(f"why: {self.explanation()}")
        return "\n".join(lines)

    def write_json(self, path: str | Path) -> None:
        write_atomically(path, (json.dumps(self.to_json(), indent=1) + "\n").encode())

    def plot(self, path: str | Path) -> None:
        """Per-stage max |diff| and RMS on a log scale (needs matplotlib)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise RuntimeError("--plot needs matplotlib (pip install matplotlib)") from None
        rows = [r for r in self.stages if r.get("shape_ok", True) and "rms" in r]
        names = [r["stage"] for r in rows]
        fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.18), 4.5))
        ax.semilogy([max(r["max_abs"], 1e-12) for r in rows], label="max |diff|")
        ax.semilogy([max(r["rms"], 1e-12) for r in rows], label="rms")
        ax.axhline(self.thresholds.max_abs, ls="--", lw=0.8, color="C0")
        ax.axhline(self.thresholds.rms, ls="--", lw=0.8, color="C1")
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=6)
        ax.set_title(f"{self.contract} on {self.target} vs {self.reference}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def diagnose_stages(
    cfg: AudioConfig,
    ours: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    local: Mapping[str, np.ndarray] | None,
    weights: Mapping[str, np.ndarray] | None,
    promises_bf16: bool,
    report: Report,
) -> Report:
    """Fill `report` with every stage the artifact and the reference both have, in graph order."""
    sites = contraction_sites(cfg, ours, weights) if (local is not None and weights is not None) else {}
    order = [n for n in ours if n not in ("audio_features", "encoder_hidden", "valid_tokens")]
    order += ["audio_features", "encoder_hidden", "valid_tokens"]
    for name in order:
        if name not in reference:
            continue
        row = compare(name, ours[name], reference[name], promises_bf16 and "norm_" not in name)
        if local is not None and name in local and ours[name].shape == local[name].shape:
            equal = ours[name].view(np.uint8) == np.asarray(local[name], ours[name].dtype).view(np.uint8)
            row["local"] = {
                "bit_exact": bool(equal.all()),
                "differing": int((bf16_ulp_distance(ours[name], local[name]) > 0).sum())
                if ours[name].dtype == np.float32
                else int((~equal).sum()),
            }
            if name in sites and not row["local"]["bit_exact"]:
                row["envelope"] = classify_envelope(sites[name], ours[name], np.asarray(local[name], np.float32))
        report.stages.append(row)
    return report
