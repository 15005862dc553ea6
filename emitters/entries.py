"""The public entry points of the emitted modules: their names and what their reflection records.

Each entry's function carries, in its `iree.reflection` metadata, its stage and shape
(`gemma3n.stage = "encode"`, `gemma3n.frames = "2997"`, `gemma3n.clips = "8"`), so a loaded artifact
finds its entries by reading the reflection (`from_reflection`), never by parsing function names;
the name itself is written here only (`.symbol`: `encode_f2997_c8`, `prefill_c512_a2`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from .symbols import Int, Specialisation, token

E = TypeVar("E", bound="EntryPoint")
STAGE_KEY = "gemma3n.stage"
_PREFIX = "gemma3n."


class EntryReflectionError(ValueError):
    """An entry's reflection names its stage but not a valid shape."""


@dataclass(frozen=True)
class EntryPoint(Specialisation):
    """An entry point: its stage is its family; every field is recorded as `gemma3n.<field>`."""

    @property
    def reflection(self) -> dict[str, str]:
        return {
            STAGE_KEY: self.family,
            **{_PREFIX + f.name: str(getattr(self, f.name)) for f in dataclasses.fields(self)},
        }

    @classmethod
    def from_reflection(cls: type[E], reflection: Mapping[str, str]) -> E | None:
        """The entry a function's reflection describes, or None for a function of another stage."""
        if reflection.get(STAGE_KEY) != cls.family:
            return None
        try:
            return cls(**{f.name: int(reflection[_PREFIX + f.name]) for f in dataclasses.fields(cls)})
        except (KeyError, ValueError) as exc:
            raise EntryReflectionError(
                f"a {cls.family} entry's reflection {dict(reflection)} lacks a valid {exc}"
            ) from None


@dataclass(frozen=True)
class EncodeEntry(EntryPoint):
    """The audio stage for `clips` clips of `frames` mel frames."""

    family: ClassVar[str] = "encode"
    frames: int = token(Int("f"))
    clips: int = token(Int("c"))


@dataclass(frozen=True)
class PrefillEntry(EntryPoint):
    """The prefill merge for a context of `capacity` rows holding `clips` audio clips."""

    family: ClassVar[str] = "prefill"
    capacity: int = token(Int("c"))
    clips: int = token(Int("a"))


@dataclass(frozen=True)
class DecoderPrefillEntry(EntryPoint):
    """A prompt of up to `tokens` positions into one slot of a cache of `slots` x `capacity` rows."""

    family: ClassVar[str] = "decoder_prefill"
    capacity: int = token(Int("c"))
    slots: int = token(Int("s"))
    tokens: int = token(Int("t"))


@dataclass(frozen=True)
class DecoderPrefillBatchEntry(EntryPoint):
    """`prompts` prompts of up to `tokens` positions each, every one into its own slot, in one call: the rows of
    all of them share each linear, each prompt's attention is its own (a prompt is computed as it is alone)."""

    family: ClassVar[str] = "decoder_prefill_batch"
    capacity: int = token(Int("c"))
    slots: int = token(Int("s"))
    tokens: int = token(Int("t"))
    prompts: int = token(Int("p"))


@dataclass(frozen=True)
class DecoderDecodeEntry(EntryPoint):
    """One token for each of `batch` sequences whose positions are below `context` (the full-attention
    layers read only their first `context` cache rows)."""

    family: ClassVar[str] = "decoder_decode"
    capacity: int = token(Int("c"))
    slots: int = token(Int("s"))
    context: int = token(Int("x"))
    batch: int = token(Int("b"))


@dataclass(frozen=True)
class DecoderTopKEntry(EntryPoint):
    """The `k` most likely tokens (and their log-softmax) of `batch` rows of logits: a decode entry's (or, with
    batch 1, a prefill entry's) logits result passed back while it is still on the device."""

    family: ClassVar[str] = "decoder_top_k"
    batch: int = token(Int("b"))
    k: int = token(Int("k"))


@dataclass(frozen=True)
class DecoderSampleEntry(EntryPoint):
    """A token drawn for each of `batch` rows of logits (`contracts/sampling.py`, each row with its own
    temperature, top-k, top-p, seed and counter): like the top-k entry, run on an entry's logits result while
    it is still on the device."""

    family: ClassVar[str] = "decoder_sample"
    batch: int = token(Int("b"))


@dataclass(frozen=True)
class DecoderCacheEntry(EntryPoint):
    """Reads one slot's rows of every owning layer's keys and values (tests, diagnostics)."""

    family: ClassVar[str] = "decoder_cache"
    capacity: int = token(Int("c"))
    slots: int = token(Int("s"))
