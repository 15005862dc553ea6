"""A checkpoint's `config.json`, read and parsed once; the audio, prefill (text) and decoder
configurations and the quantization block are all built from that one document.

Every module that needs a configuration from a checkpoint directory asks `CheckpointConfig.read`,
which parses the file once per content: a second call for the same bytes returns the same object,
so an encoder, a prefill stage and a decoder opened on one checkpoint share one parse (and one
strict check of each configuration).  The configurations themselves are strict (each class's
`from_config_json`) and are built on first use, so an audio-only checkpoint still opens for encoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .audio_config import AudioConfig, ConfigError, parse_json_object
from .decoder_config import DecoderConfig
from .text_config import TextConfig

CONFIG_NAME = "config.json"


@dataclass(frozen=True, eq=False)
class CheckpointConfig:
    """One checkpoint's parsed `config.json` (`document`, read-only at the top level)."""

    path: Path
    document: Mapping[str, Any] = field(repr=False)

    @classmethod
    def read(cls, directory: str | Path) -> CheckpointConfig:
        path = Path(directory) / CONFIG_NAME
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise ConfigError(f"{directory}: checkpoint directory has no {CONFIG_NAME}") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
        return _parse(path, raw)

    @property
    def source(self) -> str:
        """How errors name the file."""
        return str(self.path)

    @cached_property
    def audio(self) -> AudioConfig:
        return AudioConfig.from_config_json(self.document, source=self.source)

    @cached_property
    def text(self) -> TextConfig:
        return TextConfig.from_config_json(self.document, source=self.source)

    @cached_property
    def decoder(self) -> DecoderConfig:
        return DecoderConfig.from_config_json(self.document, source=self.source)


@lru_cache(maxsize=16)
def _parse(path: Path, raw: bytes) -> CheckpointConfig:
    """One parse per (file, content)."""
    return CheckpointConfig(path, MappingProxyType(parse_json_object(raw, path)))
