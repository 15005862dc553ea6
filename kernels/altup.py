"""AltUp's predict and correct steps, router included, one kernel each (`altup_triton.py`).

One file per norm schedule block size (`SCHEDULE_THREADS`, as the RMS norms): the router's norm keeps the
contract's 8-read lane/XOR schedule of THREADS threads, so a row of up to THREADS x 8 values is one program's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .reductions import SCHEDULE_THREADS
from .spec import KernelCall, KernelFile, KernelSignature, Pointer, PushConstant

#: AltUp's streams: 4 in every Gemma 3n configuration, compiled into the files.
STREAMS = 4

_WEIGHTS = (Pointer("w_norm", "bf16"), Pointer("w_router", "bf16"), Pointer("w_coefs", "bf16"))
_SHAPE = (PushConstant("tokens"), PushConstant("width"), PushConstant("active"))
_SCALARS = (
    PushConstant("eps_bits", f32=True),
    PushConstant("scale_bits", f32=True),
    PushConstant("clip_bits", f32=True),
)
_ROUND = (PushConstant("round_bf16"), PushConstant("round_scale"))

PREDICT = KernelSignature(
    source="altup_triton",
    entry="altup_predict",
    inputs=(Pointer("s", "f32"), *_WEIGHTS),
    output=Pointer("out", "f32"),
    constants=(*_SHAPE, *_SCALARS, *_ROUND, PushConstant("round_out")),
    constexprs=("THREADS", "N"),
)
CORRECT = KernelSignature(
    source="altup_triton",
    entry="altup_correct",
    inputs=(Pointer("p", "f32"), Pointer("a", "f32"), *_WEIGHTS),
    output=Pointer("out", "f32"),
    constants=(*_SHAPE, *_SCALARS, *_ROUND, PushConstant("round_innovation"), PushConstant("round_out")),
    constexprs=("THREADS", "N"),
)


def _file(signature: KernelSignature, threads: int) -> KernelFile:
    return KernelFile(
        f"{signature.entry}_t{threads}_sm90",
        signature,
        warps=max(4, threads // 32),
        constexprs=(("THREADS", threads), ("N", STREAMS)),
        bf16_rounding_only=True,  # the router's linear reads BF16 operands
    )


@dataclass(frozen=True)
class AltupKernels:
    """The predict and correct files, by the router norm's schedule block size."""

    predict: dict[int, KernelFile]
    correct: dict[int, KernelFile]

    @staticmethod
    def supports(streams: int, width: int, threads: int) -> bool:
        return streams == STREAMS and width <= threads * 8 and threads in SCHEDULE_THREADS

    def call(
        self,
        step: str,
        threads: int,
        tokens: int,
        streams: int,
        width: int,
        active: int,
        eps: float,
        scale: float,
        clip: float | None,
        rounds: dict[str, bool],
    ) -> KernelCall | None:
        """AltUp's `step` ("predict" or "correct") of [streams, tokens, width], or None for a shape the files do not
        cover; `rounds`: round_bf16, round_scale, (correct) round_innovation, round_out."""
        if not self.supports(streams, width, threads):
            return None
        file = (self.predict if step == "predict" else self.correct)[threads]
        return file.call(tokens, **_constants(tokens, width, active, eps, scale, clip), **rounds)


def _constants(tokens: int, width: int, active: int, eps: float, scale: float, clip: float | None) -> dict[str, float]:
    return {
        "tokens": tokens,
        "width": width,
        "active": active,
        "eps_bits": eps,
        "scale_bits": scale,
        "clip_bits": float("inf") if clip is None else clip,
    }


ALTUP_SM90 = AltupKernels(
    {t: _file(PREDICT, t) for t in SCHEDULE_THREADS},
    {t: _file(CORRECT, t) for t in SCHEDULE_THREADS},
)
