"""The decoder's device KV cache: its layout, and the index policy every program and the emulation share.

One cache per program, resident on the device and updated in place.  It has `slots` sequences; for every
layer that owns K/V (layers below `first_kv_shared_layer`, spec gemma3n-text §1.2, §7) two tensors
`[slots, rows, kv_heads, head_dim]`, keys stored after k_norm and RoPE, values after v_norm:

* a **full-attention** layer has `rows = capacity`; position p lives in row p;
* a **sliding** layer has `rows = window`, a ring: position p lives in row `p mod window`, so after position
  p is written the ring holds exactly the window p-window+1 .. p (transformers keeps window-1 rows and
  appends the current one: the same keys).

Attention reads a layer's rows as *columns* in row order: column c of a full layer holds position c; column
c of a sliding layer, seen from query position p, holds position `p - ((p - c) mod window)` (the one
position of the window congruent to c).  A column is visible when that position is >= 0 and (full layers)
<= p.  Prefill uses the same column order for its own keys (sliding: each query's window laid out by
position mod window), so a prefill and the decode steps that continue it sum the same values in the same
order: a prefill over a longer prompt equals a shorter prefill plus decode steps bit for bit.  Shared
layers read their producer's tensors (after this step's write) with the same visibility.

Keys being stored after RoPE is what makes the ring's row order irrelevant to the math; only the
summation order (pinned above) depends on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.decoder_config import DecoderConfig
from .policy import NumericContract


# ---------------------------------------------------------------------------------------------- index policy
def write_row(sliding: bool, position: int, window: int) -> int:
    """The row a key/value of `position` is written to."""
    if position < 0:
        raise ValueError(f"position must be >= 0, got {position}")
    return position % window if sliding else position


def column_positions(sliding: bool, query_position: int, columns: int, window: int) -> np.ndarray:
    """The position each of `columns` key columns holds as seen from `query_position` (may be < 0 or, for full
    layers, > the query: such columns are not visible)."""
    c = np.arange(columns, dtype=np.int64)
    if sliding:
        return query_position - np.mod(query_position - c, window)
    return c


def visible_columns(sliding: bool, query_position: int, columns: int, window: int) -> np.ndarray:
    """Which key columns a query at `query_position` attends to (causal; sliding: the last `window` positions)."""
    pos = column_positions(sliding, query_position, columns, window)
    ok = (pos >= 0) & (pos <= query_position)
    if sliding:
        ok &= pos > query_position - window
    return ok


def visible(sliding: bool, query_position: int, key_position: int, window: int) -> bool:
    """transformers' mask: causal `k <= q`, and for sliding layers `k > q - window` (masking_utils)."""
    return key_position <= query_position and (not sliding or key_position > query_position - window)


# ---------------------------------------------------------------------------------------------- layout
@dataclass(frozen=True)
class KVCacheLayout:
    """Shapes and dtype of the device KV cache of one decoder program."""

    slots: int
    capacity: int
    window: int
    kv_heads: int
    head_dim: int
    #: per owning layer (0 .. first_kv_shared_layer - 1): True for sliding layers
    sliding: tuple[bool, ...]
    #: "bf16" under contracts that round (every stored value is a BF16 value), else "f32"
    dtype: str

    def __post_init__(self) -> None:
        if min(self.slots, self.capacity, self.window, self.kv_heads, self.head_dim) < 1:
            raise ValueError(f"every KV cache dimension must be positive: {self}")
        if self.dtype not in ("bf16", "f32"):
            raise ValueError(f"dtype must be bf16 or f32, got {self.dtype!r}")

    @classmethod
    def for_config(cls, cfg: DecoderConfig, contract: NumericContract, slots: int, capacity: int) -> KVCacheLayout:
        if capacity > cfg.max_position_embeddings:
            raise ValueError(f"capacity {capacity} exceeds max_position_embeddings {cfg.max_position_embeddings}")
        return cls(
            slots=slots,
            capacity=capacity,
            window=cfg.sliding_window,
            kv_heads=cfg.num_key_value_heads,
            head_dim=cfg.head_dim,
            sliding=tuple(cfg.is_sliding(i) for i in range(cfg.first_kv_shared_layer)),
            dtype="bf16" if contract.round_bf16 else "f32",
        )

    @property
    def layers(self) -> int:
        return len(self.sliding)

    def rows(self, layer: int) -> int:
        """Rows of an owning layer: the window (a ring) for sliding layers, the capacity for full ones.  A
        window longer than the capacity never fills: the ring is then as long as the capacity."""
        return min(self.window, self.capacity) if self.sliding[layer] else self.capacity

    def shape(self, layer: int) -> tuple[int, int, int, int]:
        return (self.slots, self.rows(layer), self.kv_heads, self.head_dim)

    @property
    def element_bytes(self) -> int:
        return 2 if self.dtype == "bf16" else 4

    @property
    def row_bytes(self) -> int:
        """Bytes of one cache row: one position's keys (or values) of one layer, [kv_heads, head_dim]."""
        return self.kv_heads * self.head_dim * self.element_bytes

    @property
    def nbytes(self) -> int:
        """Device bytes of the whole cache (K and V of every owning layer)."""
        return sum(2 * math.prod(self.shape(i)) * self.element_bytes for i in range(self.layers))

    def decode_write_bytes(self, batch: int) -> int:
        """Bytes one decode step of `batch` sequences writes into the cache: a key row and a value row per sequence
        and owning layer, nothing else (a padding row writes its rows into the program's scratch slot)."""
        return batch * self.layers * 2 * self.row_bytes


class KVCache:
    """The emulation's copy of the device cache: float32 carriers in the layout's shapes."""

    def __init__(self, layout: KVCacheLayout) -> None:
        self.layout = layout
        self.keys = [np.zeros(layout.shape(i), np.float32) for i in range(layout.layers)]
        self.values = [np.zeros(layout.shape(i), np.float32) for i in range(layout.layers)]

    def write(self, layer: int, slot: int, position: int, k: np.ndarray, v: np.ndarray) -> None:
        """Store one position's K/V [kv_heads, head_dim] (rows past a full layer's capacity are an error)."""
        row = write_row(self.layout.sliding[layer], position, self.layout.window)
        if row >= self.layout.rows(layer):
            raise ValueError(f"position {position} is past the KV cache capacity {self.layout.capacity}")
        self.keys[layer][slot, row] = k
        self.values[layer][slot, row] = v

    def copy(self) -> KVCache:
        other = KVCache.__new__(KVCache)
        other.layout = self.layout
        other.keys = [k.copy() for k in self.keys]
        other.values = [v.copy() for v in self.values]
        return other
