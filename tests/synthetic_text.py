"""The language-model side of deterministic random checkpoints, and a small test tokenizer.

`add_random_text_tensors(dir, text_cfg)` adds the four tensors the prefill stage reads
(`embed_tokens`, `embed_tokens_per_layer`, `per_layer_model_projection`, `per_layer_projection_norm`)
to a checkpoint written by `runtime.synthetic.write_random_checkpoint`: they go to their own shard,
streamed in row chunks (the real E4B per-layer table is 4.7 GB in BF16, never held in memory at
once), the directory becomes an indexed (sharded) checkpoint, and `config.json` gets the full text
configuration.  `add_text_tensors` does the same with given arrays (the tests' transformers weights).

`add_random_decoder_tensors(dir, decoder_cfg)` adds every tensor of the text decoder the same way (the
four above included), and `write_decoder_checkpoint(dir, decoder_cfg, tensors)` writes a language-model-only
checkpoint of given tensors.

`write_test_tokenizer(dir)` writes a `tokenizer.json` built with `tokenizers` (a WordLevel model) that
knows Gemma 3n's special tokens at their real ids (`<bos>` 2, `<start_of_turn>` 105, `<end_of_turn>`
106, newline runs 107-110, `<start_of_audio>` 256000, `<end_of_audio>` 262272, `<audio_soft_token>`
262273) and a small word list; real checkpoints ship their own.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import ml_dtypes
import numpy as np

from gemma3n_iree.emitters.prefill import text_weight_specs
from gemma3n_iree.model.audio_weights import HF_LAYOUT, WeightLayout
from gemma3n_iree.model.decoder_config import DecoderConfig
from gemma3n_iree.model.decoder_weights import decoder_weight_specs
from gemma3n_iree.model.text_config import TextConfig

TEXT_SHARD = "model-text.safetensors"
AUDIO_SHARD = "model-audio.safetensors"
INDEX = "model.safetensors.index.json"
#: what `add_random_decoder_tensors` wrote (configuration identity, seed, scales), written last
RANDOM_DECODER_RECORD = "random_weights.json"
_CHUNK_ROWS = 4096

# ---------------------------------------------------------------------------------------------- values


def _random_bf16(rng: np.random.Generator, shape: tuple[int, ...], lo_exp: int, spread: int) -> np.ndarray:
    """Random BF16 values made from random bits: random sign and mantissa, exponent lo_exp .. lo_exp+spread-1
    (2^(lo_exp-127) <= |x| < 2^(lo_exp+spread-127)); cheap enough for billions of values."""
    bits = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
    exponent = (np.uint16(lo_exp) + (bits >> np.uint16(7)) % np.uint16(spread)).astype(np.uint16)
    return ((bits & np.uint16(0x807F)) | (exponent << np.uint16(7))).view(ml_dtypes.bfloat16)


def _plan(cfg: TextConfig, layout: WeightLayout) -> list[tuple[str, tuple[int, ...], Callable]]:
    """(checkpoint name, shape, chunk maker(rng, rows)) of each text tensor, in write order."""
    specs = text_weight_specs(cfg, layout)
    h = cfg.hidden_size
    # exponents: embedding rows ~ 2^-7..2^-4 (|x| ~ 0.03, like a trained table; x sqrt(hidden) ~ 1),
    # the projection ~ hidden^-0.5 scale, norm weights near 1.
    proj_exp = 127 - max(1, int(np.ceil(np.log2(h) / 2))) - 1
    return [
        (
            specs["text.embed_tokens"].key,
            specs["text.embed_tokens"].shape,
            lambda rng, shape: _random_bf16(rng, shape, 120, 3),
        ),
        (
            specs["text.embed_tokens_per_layer"].key,
            specs["text.embed_tokens_per_layer"].shape,
            lambda rng, shape: _random_bf16(rng, shape, 120, 3),
        ),
        (
            specs["text.per_layer_model_projection"].key,
            specs["text.per_layer_model_projection"].shape,
            lambda rng, shape: _random_bf16(rng, shape, proj_exp, 2),
        ),
        (
            specs["text.per_layer_projection_norm"].key,
            specs["text.per_layer_projection_norm"].shape,
            lambda rng, shape: (1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)).astype(ml_dtypes.bfloat16),
        ),
    ]


# ---------------------------------------------------------------------------------------------- files


def _write_shard(path: Path, tensors: list[tuple[str, tuple[int, ...], Iterable[np.ndarray]]]) -> None:
    """A BF16 safetensors file written chunk by chunk (each tensor's chunks are consecutive row blocks)."""
    header: dict[str, object] = {}
    offset = 0
    for name, shape, _ in tensors:
        size = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for name, shape, chunks in tensors:
            written = 0
            for chunk in chunks:
                data = np.ascontiguousarray(chunk, ml_dtypes.bfloat16).tobytes()
                f.write(data)
                written += len(data)
            if written != int(np.prod(shape)) * 2:
                raise AssertionError(f"{name}: wrote {written} bytes for shape {shape}")
    tmp.replace(path)


def _make_indexed(directory: Path) -> None:
    """Turn the directory into a sharded checkpoint: the audio file + the text shard, with an index."""
    from gemma3n_iree.runtime.safetensors_files import read_safetensors_header

    single = directory / "model.safetensors"
    if single.is_file():
        single.replace(directory / AUDIO_SHARD)
    weight_map: dict[str, str] = {}
    index_path = directory / INDEX
    if index_path.is_file():
        weight_map.update(json.loads(index_path.read_text())["weight_map"])
    for shard in sorted(p.name for p in directory.glob("model-*.safetensors")):
        weight_map.update({name: shard for name in read_safetensors_header(directory / shard)})
    index_path.write_text(json.dumps({"metadata": {}, "weight_map": dict(sorted(weight_map.items()))}, indent=1) + "\n")


def _update_config(directory: Path, cfg: TextConfig) -> None:
    path = directory / "config.json"
    data = json.loads(path.read_text())
    values = dataclasses.asdict(cfg)
    text = dict(data.get("text_config") or {})
    text.update(
        {
            k: values[k]
            for k in (
                "hidden_size",
                "num_hidden_layers",
                "hidden_size_per_layer_input",
                "vocab_size",
                "vocab_size_per_layer_input",
                "rms_norm_eps",
                "pad_token_id",
            )
        }
    )
    if isinstance(cfg, DecoderConfig):  # the whole language model's configuration
        decoder = cfg.to_config_json()
        text.update(decoder["text_config"])
        data["eos_token_id"] = decoder["eos_token_id"]
    text.setdefault("model_type", "gemma3n_text")
    data["text_config"] = text
    for key in ("audio_token_id", "boa_token_id", "eoa_token_id", "audio_soft_tokens_per_image"):
        data[key] = values[key]
    data.setdefault(
        "vision_config",
        {"model_type": "gemma3n_vision", "vocab_offset": cfg.vision_vocab_offset, "vocab_size": cfg.vision_vocab_size},
    )
    path.write_text(json.dumps(data, indent=2) + "\n")


def add_random_text_tensors(
    directory: str | Path, cfg: TextConfig, seed: int = 0, layout: WeightLayout = HF_LAYOUT
) -> Path:
    """Add deterministic random language-model tensors (streamed) to a random audio checkpoint."""
    directory = Path(directory)
    rng = np.random.default_rng(seed)
    tensors = []
    for name, shape, make in _plan(cfg, layout):

        def chunks(shape=shape, make=make) -> Iterable[np.ndarray]:
            for start in range(0, shape[0], _CHUNK_ROWS):
                yield make(rng, (min(_CHUNK_ROWS, shape[0] - start),) + tuple(shape[1:]))

        tensors.append((name, shape, chunks()))
    _write_shard(directory / TEXT_SHARD, tensors)
    _make_indexed(directory)
    _update_config(directory, cfg)
    return directory


def add_text_tensors(
    directory: str | Path, cfg: TextConfig, tensors: Mapping[str, np.ndarray], shard: str = TEXT_SHARD
) -> Path:
    """Add given language-model tensors (checkpoint name -> array, written as BF16) to a checkpoint, in
    their own shard file `shard` (`model-*.safetensors`)."""
    directory = Path(directory)
    _write_shard(directory / shard, [(name, tuple(a.shape), [np.asarray(a)]) for name, a in tensors.items()])
    _make_indexed(directory)
    _update_config(directory, cfg)
    return directory


@dataclasses.dataclass(frozen=True)
class DecoderScales:
    """The scales of a random decoder's tensor families that decide how chaotic it is.

    With every norm weight near 1 and AltUp coefficients ~0.3 N(0, 1) (`CHAOTIC`, the checkpoints before
    issue 26), every sub-layer adds a vector as large as the residual stream, attention scores have a standard
    deviation of sqrt(head_dim) (one-hot softmaxes) and AltUp's 4x4 mixing grows some streams each layer: a
    BF16 run of the 35-layer E4B ends unrelated to its FP32 run.  A trained model adds small updates;
    `WELL_CONDITIONED` does so too (scripts/decoder_conditioning.py measures the choice)."""

    qk_norm: float = 1.0  # q_norm / k_norm weights: scores ~ qk_norm^2 sqrt(head_dim) N(0, 1)
    post_norm: float = 1.0  # the norms closing a residual branch (attention, MLP, LAuReL, per-layer input)
    altup_coefs: float = 0.3  # AltUp prediction / correction coefficient weights ~ altup_coefs N(0, 1)


CHAOTIC = DecoderScales()
WELL_CONDITIONED = DecoderScales(qk_norm=0.25, post_norm=0.1, altup_coefs=0.05)

#: norm weights that close a residual branch: they set how large each layer's update is.
_POST_NORMS = ("post_attention_layernorm", "post_feedforward_layernorm", "post_per_layer_input_norm", "post_laurel")


def with_vocabulary(cfg: DecoderConfig, vocab: int) -> DecoderConfig:
    """`cfg` with `vocab` text ids (0: unchanged), the vision and audio vocabularies moved to follow them: the layers
    at their real shapes without the real tables (scripts measuring a layer stack on a CPU machine)."""
    if not vocab:
        return cfg
    vision, audio = vocab, vocab + cfg.vision_vocab_size
    return dataclasses.replace(
        cfg,
        vocab_size=audio + cfg.audio_vocab_size,
        vocab_size_per_layer_input=vocab,
        vision_vocab_offset=vision,
        audio_vocab_offset=audio,
        eoa_token_id=audio + cfg.eoa_token_id - cfg.audio_vocab_offset,
        audio_token_id=audio + cfg.audio_token_id - cfg.audio_vocab_offset,
        boa_token_id=min(cfg.boa_token_id, vocab - 1),
    )


def _decoder_value_maker(logical: str, shape: tuple[int, ...], scales: DecoderScales) -> Callable:
    """Random BF16 values of one decoder tensor: tables ~ 2^-7..2^-4 (x sqrt(hidden) ~ 1, as the prefill
    tensors above), linear weights ~ fan_in^-0.5, norm weights and `correct_output_scale` ~ 1 + 0.1 N(0, 1)
    times their family's scale (`DecoderScales`), AltUp coefficients ~ `scales.altup_coefs` N(0, 1)."""
    if len(shape) == 1:
        scale = 1.0
        if logical.endswith(("q_norm", "k_norm")):
            scale = scales.qk_norm
        elif any(name in logical for name in _POST_NORMS):
            scale = scales.post_norm
        return lambda rng, s: (scale * (1.0 + 0.1 * rng.standard_normal(s, dtype=np.float32))).astype(
            ml_dtypes.bfloat16
        )
    if "coefs" in logical:
        return lambda rng, s: (scales.altup_coefs * rng.standard_normal(s, dtype=np.float32)).astype(ml_dtypes.bfloat16)
    if logical.startswith("embed_tokens"):
        return lambda rng, s: _random_bf16(rng, s, 120, 3)
    fan_in_exp = 127 - max(1, int(np.ceil(np.log2(shape[1]) / 2))) - 1
    return lambda rng, s: _random_bf16(rng, s, fan_in_exp, 2)


def add_random_decoder_tensors(
    directory: str | Path,
    cfg: DecoderConfig,
    seed: int = 0,
    layout: WeightLayout = HF_LAYOUT,
    scales: DecoderScales = WELL_CONDITIONED,
) -> Path:
    """Add every tensor the decoder reads (the prefill stage's four included), deterministic random BF16,
    streamed to their own shard (the real E4B's 13.7 GB never in memory at once); `config.json` (created if
    absent) gets the whole text configuration, `RANDOM_DECODER_RECORD` the seed and scales."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / "config.json").is_file():
        (directory / "config.json").write_text(json.dumps(cfg.to_config_json(), indent=2) + "\n")
    rng = np.random.default_rng(seed)
    tensors = []
    for logical, spec in decoder_weight_specs(cfg, layout).items():
        make = _decoder_value_maker(logical, spec.shape, scales)

        def chunks(shape=spec.shape, make=make) -> Iterable[np.ndarray]:
            for start in range(0, shape[0], _CHUNK_ROWS):
                yield make(rng, (min(_CHUNK_ROWS, shape[0] - start),) + tuple(shape[1:]))

        tensors.append((spec.key, spec.shape, chunks()))
    (directory / RANDOM_DECODER_RECORD).unlink(missing_ok=True)
    _write_shard(directory / TEXT_SHARD, tensors)
    _make_indexed(directory)
    _update_config(directory, cfg)
    (directory / RANDOM_DECODER_RECORD).write_text(json.dumps(_random_record(cfg, seed, scales)) + "\n")
    return directory


def _random_record(cfg: DecoderConfig, seed: int, scales: DecoderScales) -> dict:
    return {"config": cfg.identity(), "seed": seed, "scales": dataclasses.asdict(scales)}


def ensure_random_decoder(
    directory: str | Path, cfg: DecoderConfig, seed: int = 0, scales: DecoderScales = WELL_CONDITIONED
) -> Path:
    """`directory` holding `add_random_decoder_tensors(directory, cfg, seed, scales=scales)`: reused when its
    record says so, written (over whatever is there) otherwise, so that a scripts' work directory never
    silently keeps the weights of another plan."""
    directory = Path(directory)
    record = directory / RANDOM_DECODER_RECORD
    if record.is_file() and json.loads(record.read_text()) == _random_record(cfg, seed, scales):
        return directory
    return add_random_decoder_tensors(directory, cfg, seed, scales=scales)


def write_decoder_checkpoint(directory: str | Path, cfg: DecoderConfig, tensors: Mapping[str, np.ndarray]) -> Path:
    """A language-model-only checkpoint: `config.json` of `cfg` and the given tensors (checkpoint name ->
    array, written as BF16)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(cfg.to_config_json(), indent=2) + "\n")
    return add_text_tensors(directory, cfg, tensors)


# ---------------------------------------------------------------------------------------------- tokenizer

SPECIAL_TOKENS: dict[str, int] = {
    "<pad>": 0,
    "<eos>": 1,
    "<bos>": 2,
    "<unk>": 3,
    "<mask>": 4,
    "<start_of_turn>": 105,
    "<end_of_turn>": 106,
    "<start_of_image>": 255999,
    "<start_of_audio>": 256000,
    "<image_soft_token>": 262145,
    "<end_of_audio>": 262272,
    "<audio_soft_token>": 262273,
}
NEWLINES: dict[str, int] = {"\n": 107, "\n\n": 108, "\n\n\n": 109, "\n\n\n\n": 110}
#: Words with ids inside and outside a small per-layer vocabulary (the tiny config's is 512).
WORDS: dict[str, int] = {
    "user": 2364,
    "model": 4368,
    "Transcribe": 300,
    "the": 301,
    "following": 302,
    "speech": 303,
    "segment": 304,
    "in": 305,
    "English": 306,
    ":": 307,
    ".": 308,
    "this": 309,
    "audio": 310,
    "and": 311,
    "then": 312,
    "summarize": 100000,
    "clip": 511,
    "second": 512,
    "first": 7000,
    "What": 313,
    "is": 314,
    "said": 315,
    "?": 316,
}


def build_test_tokenizer(words: Mapping[str, int] = WORDS):
    """A `tokenizers.Tokenizer` with Gemma 3n's special tokens at their real ids and `words`."""
    from tokenizers import AddedToken, Regex, Tokenizer, models, pre_tokenizers

    vocab = {**SPECIAL_TOKENS, **NEWLINES, **words}
    if len(set(vocab.values())) != len(vocab):
        raise ValueError("token ids must be distinct")
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex("\n+"), behavior="isolated"),
            pre_tokenizers.Split(Regex(" +"), behavior="removed"),
            pre_tokenizers.Split(Regex("[.,:;!?]"), behavior="isolated"),
        ]
    )
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    return tokenizer


def write_test_tokenizer(directory: str | Path, words: Mapping[str, int] = WORDS) -> Path:
    path = Path(directory) / "tokenizer.json"
    build_test_tokenizer(words).save(str(path))
    return path
