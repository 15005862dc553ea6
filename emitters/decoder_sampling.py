"""The decoder's sampled token selection (`contracts/sampling.py`), an op family of its own beside the greedy one
(`DecoderOpEmitter.token_select`), whose top-k it draws its candidates from."""

from __future__ import annotations

from ..contracts.sampling import MAX_TOP_K
from .render import Func
from .render import tensor_type as tensor
from .shared_ops import f32
from .specialisations import TokenSample


class SamplingOps:
    """`token_sample` for `DecoderOpEmitter`, which supplies `token_select`, `prefix_scan`, `_add` and `_cfg`."""

    def token_sample(self, rows: int, vocab: int | None = None) -> Func:
        """One token per row of [rows, vocab] logits (default: the configuration's vocabulary), drawn with each
        row's temperature, top_k, top_p (f32, i32, f32 [rows]), seed and counter (i32 [rows], the bits of their
        uint32 values); returns the token, its logit and the row's largest logit."""
        v = self._cfg.vocab_size if vocab is None else vocab  # type: ignore[attr-defined]
        candidates = self.token_select(rows, MAX_TOP_K, v)  # type: ignore[attr-defined]
        scan = self.prefix_scan(rows, MAX_TOP_K)  # type: ignore[attr-defined]
        i32 = tensor([rows], "i32")
        func = Func(
            TokenSample(rows, v, MAX_TOP_K).symbol,
            (f32([rows, v]), f32([rows]), i32, f32([rows]), i32, i32),
            (i32, f32([rows]), f32([rows])),
        )
        return self._add(  # type: ignore[attr-defined]
            "token_sample.mlir.j2",
            func,
            calls=[candidates, scan],
            rows=rows,
            vocab=v,
            k=MAX_TOP_K,
            candidates=candidates,
            scan=scan,
        )
