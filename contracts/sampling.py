"""Sampling a token from a row of logits: temperature, top-k, top-p and a seed, as the device computes it.

transformers samples with `TemperatureLogitsWarper`, `TopKLogitsWarper` and `TopPLogitsWarper` in that order,
then `torch.multinomial` of the softmax. This is the same distribution, computed on at most `MAX_TOP_K`
candidates so that a device can do it in a few small steps after the top-k selection the programs already
have (`decoder_ops.token_top_k`):

1. the `MAX_TOP_K` most likely tokens by (logit descending, index ascending), their logits `v`;
2. temperature: `z = v / T` (F32, IEEE division: transformers' `scores / temperature`);
3. top-k: candidates of rank < `top_k` stay (on a tie at the k-th logit transformers keeps every tied token;
   here the lower indices win, so exactly k stay);
4. `e_j = exp(z_j - z_0)` on the ones that stay, 0 elsewhere; `p_j = e_j / S`, S their sum (the last value of
   their running sum);
5. top-p: the tail sums `t_j = p_j + p_(j+1) + ...`, the running sum from the least likely up (transformers'
   cumulative sum over its ascending sort); candidate j stays when `t_j > 1 - top_p` (transformers removes
   those with `cumulative <= 1 - top_p`), the most likely always;
6. the draw: `u` in [0, 1) from (seed, counter) (`uniform`: a counter-based hash, so a sequence's tokens
   depend on its seed and its positions only, never on what else is in the call); the token is the first
   candidate j whose running sum `w_0 + ... + w_j` of the kept `e` exceeds `u` times their total.

Every running sum is the contract's pinned one-block prefix scan (`emulation.prefix_scan`, the 17-add schedule
the encoder's cumulative norm uses): its order is fixed and, unlike 64 serial adds, it compiles into a few
dispatches with few bindings. Every step is row-wise F32 arithmetic in a fixed order, so the device and this emulation agree bit for bit
when they share the exponential (`decoder_ops.IREE_MATH` for IREE's). Greedy decoding is not a temperature of
0: it stays `decoder_ops.token_select`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .decoder_ops import CORRECTLY_ROUNDED, Transcendentals, token_top_k
from .emulation import prefix_scan

F32 = np.float32
U32 = np.uint32

#: The most candidates a sampled token is drawn from (Gemma 3n's generation_config.json: top_k 64).
MAX_TOP_K = 64
#: Gemma 3n's generation_config.json: the candidates a sampled token is drawn from and their top-p mass, the
#: defaults of `generate --temperature` and of a chat completion.
GEMMA_TOP_K, GEMMA_TOP_P = MAX_TOP_K, 0.95


class SamplingError(ValueError):
    """Sampling parameters outside what the device's sampler takes."""


@dataclass(frozen=True)
class SamplingParams:
    """One sequence's sampling: `temperature` > 0, `top_k` in [1, MAX_TOP_K], `top_p` in (0, 1], a 32-bit seed."""

    temperature: float
    top_k: int = MAX_TOP_K
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.temperature) and self.temperature > 0):
            raise SamplingError(f"temperature must be > 0 (greedy decoding is its own mode), got {self.temperature}")
        if not 1 <= self.top_k <= MAX_TOP_K:
            raise SamplingError(
                f"top_k must be in [1, {MAX_TOP_K}] (the candidates the device ranks), got {self.top_k}"
            )
        if not 0 < self.top_p <= 1:
            raise SamplingError(f"top_p must be in (0, 1], got {self.top_p}")
        if not 0 <= self.seed < 2**32:
            raise SamplingError(f"seed must be a 32-bit unsigned integer, got {self.seed}")


# ---------------------------------------------------------------------------------------------- the draw
def _fmix32(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer: every input bit moves every output bit (uint32 arithmetic, wrapping)."""
    x = np.asarray(x, U32)
    with np.errstate(over="ignore"):
        x = x ^ (x >> U32(16))
        x = (x * U32(0x85EBCA6B)).astype(U32)
        x = x ^ (x >> U32(13))
        x = (x * U32(0xC2B2AE35)).astype(U32)
        return (x ^ (x >> U32(16))).astype(U32)


def uniform(seed: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """F32 in [0, 1), a multiple of 2^-24: the top 24 bits of fmix32(seed ^ fmix32(counter + 0x9E3779B9))."""
    with np.errstate(over="ignore"):
        mixed = _fmix32(np.asarray(seed, U32) ^ _fmix32((np.asarray(counter, U32) + U32(0x9E3779B9)).astype(U32)))
    return ((mixed >> U32(8)).astype(F32) * F32(2.0**-24)).astype(F32)


@dataclass(frozen=True)
class SampleRows:
    """A call's sampling: row i draws with `params[i]` and counter `counters[i]` (its token's index in its
    sequence), or is greedy where `params[i]` is None."""

    params: tuple[SamplingParams | None, ...]
    counters: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.params) != len(self.counters):
            raise SamplingError(f"{len(self.params)} rows of parameters but {len(self.counters)} counters")
        for c in self.counters:
            if not 0 <= c < 2**32:
                raise SamplingError(f"a counter must be a 32-bit unsigned integer, got {c}")

    def arrays(self, width: int) -> tuple[np.ndarray, ...]:
        """(temperature, top_k, top_p, seed, counter) [width] as the device's sample entries take them: greedy
        and padding rows draw with top_k 1 (their token is the greedy one; the caller ignores it)."""
        if len(self.params) > width:
            raise SamplingError(f"{len(self.params)} rows do not fit a call of width {width}")
        rows = [p or _GREEDY_ROW for p in self.params] + [_GREEDY_ROW] * (width - len(self.params))
        counters = list(self.counters) + [0] * (width - len(self.counters))
        return (
            np.array([p.temperature for p in rows], F32),
            np.array([p.top_k for p in rows], np.int32),
            np.array([p.top_p for p in rows], F32),
            np.array([p.seed for p in rows], U32).view(np.int32),
            np.array(counters, U32).view(np.int32),
        )

    def draw(self, logits: np.ndarray, fn: Transcendentals = CORRECTLY_ROUNDED) -> Sampled:
        """`sample` of logits [R, V] with these rows' parameters (greedy rows padded as `arrays` pads them)."""
        temperature, top_k, top_p, seed, counter = self.arrays(len(logits))
        return sample(logits, temperature, top_k, top_p, seed.view(U32), counter.view(U32), fn)


_GREEDY_ROW = SamplingParams(1.0, 1, 1.0, 0)


# ---------------------------------------------------------------------------------------------- the sampler
@dataclass(frozen=True)
class Sampled:
    """Each row's token, the candidates it was drawn from (ids by rank) and which of them could be drawn, and
    the raw logits of the token and of the most likely one (`sampled_logprob`'s inputs)."""

    token: np.ndarray  # int32 [R]
    candidates: np.ndarray  # int32 [R, MAX_TOP_K]
    kept: np.ndarray  # bool [R, MAX_TOP_K]
    weights: np.ndarray  # float32 [R, MAX_TOP_K]: e_j on the kept candidates, 0 elsewhere
    logit: np.ndarray  # float32 [R]: the drawn token's logit
    top_logit: np.ndarray  # float32 [R]: the largest logit


def sampled_logprob(logit: np.ndarray, top_logit: np.ndarray, greedy_logprob: np.ndarray) -> np.ndarray:
    """The drawn token's log-softmax in F32, from what the device returns: (x - m) - L, where the greedy
    selection's log-probability is -L (`decoder_ops.token_select`: its token's x - m is 0). The model's
    distribution, before temperature and truncation (what OpenAI's `logprobs` report)."""
    gap = (np.asarray(logit, F32) - np.asarray(top_logit, F32)).astype(F32)
    return (gap + np.asarray(greedy_logprob, F32)).astype(F32)


def sample(
    logits: np.ndarray,
    temperature: np.ndarray,
    top_k: np.ndarray,
    top_p: np.ndarray,
    seed: np.ndarray,
    counter: np.ndarray,
    fn: Transcendentals = CORRECTLY_ROUNDED,
) -> Sampled:
    """Sample one token of each row of logits [R, V] (the module docstring's steps); per-row parameters [R].
    Rows with a non-finite logit give meaningless results (the selection's non-finite count reports them)."""
    x = np.asarray(logits, F32)
    ids, _ = token_top_k(x, MAX_TOP_K, fn)
    v = np.take_along_axis(x, ids, axis=-1)
    with np.errstate(all="ignore"):
        z = (v / np.asarray(temperature, F32)[:, None]).astype(F32)
        rank = np.arange(MAX_TOP_K)[None, :]
        in_top_k = rank < np.asarray(top_k)[:, None]
        e = np.where(in_top_k, fn.exp((z - z[:, :1]).astype(F32)), F32(0)).astype(F32)
        total = prefix_scan(e)[:, -1]
        p = (e / total[:, None]).astype(F32)
        tail = prefix_scan(p[:, ::-1])[:, ::-1]
        floor = (F32(1) - np.asarray(top_p, F32)).astype(F32)
        kept = in_top_k & ((tail > floor[:, None]) | (rank == 0))
        w = np.where(kept, e, F32(0)).astype(F32)
        cumulative = prefix_scan(w)
        threshold = (uniform(seed, counter) * cumulative[:, -1]).astype(F32)
        past = kept & (cumulative > threshold[:, None])
        # the first candidate past the threshold; the last kept one if rounding left none past it
        last_kept = MAX_TOP_K - 1 - np.argmax(kept[:, ::-1], axis=-1)
        chosen = np.where(past.any(axis=-1), np.argmax(past, axis=-1), last_kept)
    token = np.take_along_axis(ids, chosen[:, None], axis=-1)[:, 0].astype(np.int32)
    return Sampled(token, ids, kept, w, np.take_along_axis(v, chosen[:, None], axis=-1)[:, 0], v[:, 0])


def sample_rows(
    logits: np.ndarray, params: list[SamplingParams], counters: list[int], fn: Transcendentals = CORRECTLY_ROUNDED
) -> Sampled:
    """`sample` with each row's `SamplingParams`."""
    return SampleRows(tuple(params), tuple(counters)).draw(logits, fn)
