"""`CheckpointConfig`: a checkpoint's config.json parsed once per content, the audio, text and decoder
configurations built from that one document, one error per unreadable file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemma3n_iree.model.audio_config import ConfigError, builtin_config
from gemma3n_iree.model.checkpoint_config import CheckpointConfig
from gemma3n_iree.model.decoder_config import builtin_decoder_config
from gemma3n_iree.model.text_config import TextConfig


def test_one_document_gives_every_configuration(tmp_path: Path):
    from gemma3n_iree.runtime.synthetic import hf_config_json

    decoder = builtin_decoder_config("tiny")
    document = decoder.to_config_json()
    document["audio_config"] = hf_config_json(builtin_config("tiny"))["audio_config"]
    (tmp_path / "config.json").write_text(json.dumps(document))
    config = CheckpointConfig.read(tmp_path)
    assert config.decoder == decoder
    assert config.text == TextConfig.from_config_json(document, source="x")
    assert config.audio.text_hidden_size == decoder.hidden_size
    assert CheckpointConfig.read(tmp_path) is config  # the same bytes: one parse, shared
    document["text_config"]["rms_norm_eps"] = decoder.rms_norm_eps * 2
    (tmp_path / "config.json").write_text(json.dumps(document))
    changed = CheckpointConfig.read(tmp_path)
    assert changed is not config and changed.decoder.rms_norm_eps == decoder.rms_norm_eps * 2


def test_an_audio_only_checkpoint_opens_for_its_audio_configuration(tmp_path: Path):
    from gemma3n_iree.runtime.synthetic import hf_config_json

    (tmp_path / "config.json").write_text(json.dumps(hf_config_json(builtin_config("tiny"))))
    config = CheckpointConfig.read(tmp_path)
    assert config.audio == builtin_config("tiny")
    with pytest.raises(ConfigError, match="text_config"):
        _ = config.decoder


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "checkpoint directory has no config.json"),
        (b"{not json", "config.json: not valid JSON"),
        (b"[1, 2]", "config.json: expected a JSON object"),
    ],
)
def test_unreadable_files_are_one_error_naming_the_file(tmp_path: Path, content: bytes | None, message: str):
    if content is not None:
        (tmp_path / "config.json").write_bytes(content)
    with pytest.raises(ConfigError, match=message) as err:
        CheckpointConfig.read(tmp_path)
    assert str(tmp_path) in str(err.value) and "\n" not in str(err.value)
