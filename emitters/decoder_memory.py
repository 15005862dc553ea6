"""What a decoder program keeps on the GPU, from its specification alone (issue 26 item 5).

    memory = decoder_memory(spec)        # weights, KV cache: exact, no compiler needed
    memory = memory.with_transients(stream_profile(...))   # + each entry's transient allocations, from IREE

* **weights**: every parameter the program binds (`emit_decoder_module`'s globals: every tensor of
  `decoder_weight_specs` but the host tables), one resident BF16 copy; `embed_tokens_per_layer` stays on the host
  (`host_tables`, for reference, is not on the device);
* **KV cache**: the one global [slots + 1, rows, kv_heads, head_dim] (`emitters/decoder.py`: every owning layer's
  keys and values per slot, plus the scratch slot padding rows write to), in the contract's cache dtype; per
  slot; per position: what one more position of capacity adds to a slot (the full-attention owning layers'
  key and value rows; a sliding layer's ring stops growing at the window), and the rings' fixed part per slot;
* **transients** (optional): per entry, the transient allocations of one call as IREE's stream level states them
  (static sizes, after IREE packed each execution's temporaries into one allocation;
  `diagnostics/dispatches.EntryProfile`): their peak in program order and their sum. Inputs and outputs of a
  call (logits, the host rows) are not included.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..model.decoder_weights import HOST_TABLES, decoder_weight_specs

#: Bytes per element of a resident parameter (the program binds every weight as BF16).
WEIGHT_BYTES = 2


@dataclass(frozen=True)
class EntryTransients:
    peak: int  # the most transient bytes live at once, in program order
    total: int  # every transient allocation of one call, added up
    allocations: int  # how many


@dataclass(frozen=True)
class DecoderMemory:
    weights: int
    host_tables: int
    kv_cache: int  # the whole global, scratch slot included
    kv_per_slot: int
    kv_per_position: int  # per slot, per position of capacity (full-attention owning layers)
    kv_rings_per_slot: int  # per slot, the sliding layers' rings
    slots: int
    capacity: int
    transients: dict[str, EntryTransients] = field(default_factory=dict)

    @property
    def resident(self) -> int:
        """Weights and KV cache: what the program holds between calls."""
        return self.weights + self.kv_cache

    def with_transients(self, profile: Any) -> DecoderMemory:
        """The same report with each entry's transient allocations from a `StreamProfile` of this program."""
        transients = {
            name: EntryTransients(e.transient_peak, sum(e.transient_allocations), len(e.transient_allocations))
            for name, e in profile.entries.items()
        }
        return replace(self, transients=transients)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["resident"] = self.resident
        if self.transients:
            out["largest_transient_peak"] = max(t.peak for t in self.transients.values())
        return out


def decoder_memory(spec: Any) -> DecoderMemory:
    """The device memory of the program `spec` (a `DecoderModuleSpec`) describes."""
    specs = decoder_weight_specs(spec.cfg, spec.layout)
    weights = sum(math.prod(s.shape) * WEIGHT_BYTES for name, s in specs.items() if name not in HOST_TABLES)
    host = sum(math.prod(s.shape) * WEIGHT_BYTES for name, s in specs.items() if name in HOST_TABLES)
    layout = spec.kv_layout
    per_slot = spec.slot_rows * layout.row_bytes
    full = sum(1 for sliding in layout.sliding if not sliding)
    rings = sum(2 * layout.rows(i) * layout.row_bytes for i, sliding in enumerate(layout.sliding) if sliding)
    return DecoderMemory(
        weights=weights,
        host_tables=host,
        kv_cache=(spec.slots + 1) * per_slot,
        kv_per_slot=per_slot,
        kv_per_position=2 * full * layout.row_bytes,
        kv_rings_per_slot=rings,
        slots=spec.slots,
        capacity=spec.capacity,
    )
