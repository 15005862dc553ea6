"""The decoder configuration: built-ins against the spec's tables (gemma3n-text §1.1-1.2), strict parsing of a
checkpoint's `config.json` (one-line errors naming the field; transformers' defaults only where transformers
has one), the KV-sharing producer map against transformers' own `kv_sharing_modes`, and the identity."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from gemma3n_iree.model.audio_config import ConfigError
from gemma3n_iree.model.decoder_config import (
    BUILTIN_DECODER_CONFIGS,
    DEFAULTED_TEXT_FIELDS,
    FULL,
    REQUIRED_TEXT_FIELDS,
    SLIDING,
    DecoderConfig,
    builtin_decoder_config,
)

E2B, E4B, TINY = (builtin_decoder_config(n) for n in ("e2b", "e4b", "tiny"))


def test_builtins_match_the_spec_tables():
    for cfg, layers, width, shared in ((E2B, 30, 8192, 10), (E4B, 35, 16384, 15)):
        assert cfg.num_hidden_layers == layers and set(cfg.intermediate_sizes) == {width}
        assert (cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim) == (2048, 8, 2, 256)
        assert (cfg.sliding_window, cfg.laurel_rank, cfg.altup_num_inputs, cfg.hidden_size_per_layer_input) == (
            512,
            64,
            4,
            256,
        )
        assert (cfg.rope_theta_sliding, cfg.rope_theta_full, cfg.final_logit_softcapping) == (1e4, 1e6, 30.0)
        assert (cfg.vocab_size, cfg.vocab_size_per_layer_input) == (262400, 262144)
        assert cfg.num_kv_shared_layers == shared and cfg.first_kv_shared_layer == 20
        assert cfg.kv_store_layers == {SLIDING: 18, FULL: 19}
        assert [i for i, t in enumerate(cfg.layer_types) if t == FULL] == list(range(4, layers, 5))
        assert [i for i, s in enumerate(cfg.activation_sparsity) if s] == list(range(10))
        producers = cfg.kv_producers
        assert producers[:20] == tuple(range(20))
        assert all(producers[i] == (19 if cfg.layer_types[i] == FULL else 18) for i in range(20, layers))
        owning = [i for i in range(layers) if cfg.owns_kv(i)]
        assert len(owning) == 20 and sum(cfg.is_sliding(i) for i in owning) == 16
        assert cfg.eos_token_ids == (1, 106)


def test_tiny_exercises_every_feature():
    cfg = TINY
    assert set(cfg.layer_types) == {SLIDING, FULL} and cfg.num_kv_shared_layers > 0
    assert cfg.kv_store_layers == {SLIDING: 3, FULL: 4} and cfg.kv_producers[5:] == (3, 3, 3, 3, 4)
    assert any(cfg.activation_sparsity) and not all(cfg.activation_sparsity)
    assert len(set(cfg.intermediate_sizes)) > 1 and cfg.altup_num_inputs == 4 and cfg.kv_groups == 2
    assert cfg.sliding_window < 13 <= cfg.max_position_embeddings  # prompts longer than the window fit


@pytest.mark.parametrize("name", sorted(BUILTIN_DECODER_CONFIGS))
def test_config_json_round_trip(name):
    cfg = BUILTIN_DECODER_CONFIGS[name]
    assert DecoderConfig.from_config_json(cfg.to_config_json(), source="x") == cfg


def _without(data: dict, key: str) -> dict:
    data = copy.deepcopy(data)
    del data["text_config"][key]
    return data


def _with(data: dict, key: str, value) -> dict:
    data = copy.deepcopy(data)
    data["text_config"][key] = value
    return data


@pytest.mark.parametrize("key", REQUIRED_TEXT_FIELDS)
def test_a_missing_shape_field_is_a_one_line_error_naming_it(key):
    with pytest.raises(ConfigError) as err:
        DecoderConfig.from_config_json(_without(TINY.to_config_json(), key), source="ckpt/config.json")
    message = str(err.value)
    assert f"ckpt/config.json: text_config.{key} is missing" in message and "\n" not in message


@pytest.mark.parametrize(
    "key, value",
    [
        ("hidden_size", "48"),
        ("num_attention_heads", 4.0),
        ("head_dim", True),
        ("sliding_window", None),
        ("intermediate_size", [96] * 9),
        ("intermediate_size", "96"),
        ("layer_types", ["sliding_attention"] * 9),
        ("layer_types", ["local"] * 10),
        ("activation_sparsity_pattern", [0.95] * 11),
        ("rms_norm_eps", "1e-6"),
        ("altup_correct_scale", 1),
        ("final_logit_softcapping", "30"),
        ("hidden_activation", "gelu"),
        ("attention_bias", True),
        ("rope_scaling", {"rope_type": "linear", "factor": 2.0}),
        ("rope_parameters", {SLIDING: {"rope_type": "yarn", "rope_theta": 1e4}}),
    ],
)
def test_a_mistyped_field_is_a_one_line_error_naming_it(key, value):
    with pytest.raises(ConfigError) as err:
        DecoderConfig.from_config_json(_with(TINY.to_config_json(), key, value), source="ckpt/config.json")
    message = str(err.value)
    assert f"text_config.{key}" in message and "\n" not in message, message


@pytest.mark.parametrize("key", sorted(DEFAULTED_TEXT_FIELDS))
def test_absent_fields_take_transformers_defaults(key):
    data = E4B.to_config_json()
    data["eos_token_id"] = [1, 106]  # the top-level ids stay (only the text_config key goes)
    cfg = DecoderConfig.from_config_json(_without(data, key), source="x")
    assert cfg == E4B  # E4B's values are transformers' defaults


def test_legacy_rope_keys_and_null_soft_cap():
    data = TINY.to_config_json()
    del data["text_config"]["rope_parameters"]
    data["text_config"].update(
        rope_theta=5e5, rope_local_base_freq=2e4, rope_scaling=None, final_logit_softcapping=None
    )
    cfg = DecoderConfig.from_config_json(data, source="x")
    assert (cfg.rope_theta_sliding, cfg.rope_theta_full, cfg.final_logit_softcapping) == (2e4, 5e5, None)


def test_semantic_errors_are_reported():
    with pytest.raises(ConfigError, match="multiple of num_key_value_heads"):
        dataclasses.replace(TINY, num_key_value_heads=3)
    with pytest.raises(ConfigError, match="no layer of that type below"):
        dataclasses.replace(TINY, layer_types=(SLIDING,) * 5 + (FULL,) * 5)
    with pytest.raises(ConfigError, match="num_kv_shared_layers"):
        dataclasses.replace(TINY, num_kv_shared_layers=10)
    with pytest.raises(ConfigError, match="outside the vocabulary"):
        dataclasses.replace(TINY, eos_token_ids=(TINY.vocab_size,))


def test_identity_covers_every_field():
    changed = {
        "intermediate_sizes": (128, 96) * 5,
        "num_attention_heads": 2,
        "head_dim": 8,
        "sliding_window": 7,
        "rope_theta_sliding": 2e4,
        "rope_theta_full": 2e6,
        "altup_active_idx": 1,
        "altup_coef_clip": None,
        "altup_correct_scale": False,
        "laurel_rank": 3,
        "num_kv_shared_layers": 0,
        "activation_sparsity": (0.9,) * 3 + (0.0,) * 7,
        "final_logit_softcapping": None,
        "eos_token_ids": (1,),
        "hidden_size_per_layer_input": 8,
        "rms_norm_eps": 1e-5,
    }
    seen = {TINY.identity()}
    for key, value in changed.items():
        identity = dataclasses.replace(TINY, **{key: value}).identity()
        assert identity not in seen, key
        seen.add(identity)


def test_producer_map_equals_transformers():
    pytest.importorskip("transformers", reason="cross-check against transformers (test-only dependency)")
    from transformers.models.gemma3n.configuration_gemma3n import Gemma3nTextConfig

    for cfg in BUILTIN_DECODER_CONFIGS.values():
        text = {k: v for k, v in cfg.to_config_json()["text_config"].items() if k != "model_type"}
        hf = Gemma3nTextConfig(**text)
        modes = hf.kv_sharing_modes
        for layer, producer in enumerate(cfg.kv_producers):
            if modes[layer] == "reuse":
                assert producer != layer and modes[producer] == "store"
                assert hf.layer_types[producer] == hf.layer_types[layer]
                assert producer == max(
                    i for i in range(cfg.first_kv_shared_layer) if hf.layer_types[i] == hf.layer_types[layer]
                )
            else:
                assert producer == layer
        assert sorted(i for i, m in enumerate(modes) if m == "store") == sorted(cfg.kv_store_layers.values())
    # transformers' own defaults (E4B) parse to our E4B
    default = Gemma3nTextConfig().to_dict()
    assert DecoderConfig.from_config_json({"text_config": default, "eos_token_id": [1, 106]}, source="hf") == E4B
