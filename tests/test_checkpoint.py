"""Checkpoint discovery, header-only parsing and the fail-closed audio weight schema (tiny config, fast)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import save_file

from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.audio_weights import HF_LAYOUT, MLX_LAYOUT, audio_weight_specs
from gemma3n_iree.model.checkpoint_config import CheckpointConfig
from gemma3n_iree.runtime import checkpoint as ckpt_mod
from gemma3n_iree.runtime.checkpoint import CheckpointNonFiniteError, CheckpointSchemaError, open_checkpoint
from gemma3n_iree.runtime.safetensors_files import CheckpointFormatError, read_safetensors_header
from gemma3n_iree.runtime.synthetic import hf_config_json, random_weights, write_random_checkpoint

CFG = builtin_config("tiny")
BF16 = ml_dtypes.bfloat16
LM_NAME = "model.language_model.embed_tokens.weight"
Q_PROJ = "model.audio_tower.conformer.0.attention.attn.q_proj.weight"


# ---------------------------------------------------------------------------------------------- helpers


def write_dir(
    directory: Path,
    tensors: dict[str, np.ndarray],
    *,
    quantization: dict | None = None,
    file: str = "model.safetensors",
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = hf_config_json(CFG)
    if quantization is not None:
        config["quantization"] = dict(quantization)
        config["quantization_config"] = dict(quantization)
    (directory / "config.json").write_text(json.dumps(config))
    save_file(tensors, str(directory / file))
    return directory


def to_mlx(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """mlx-vlm sanitize: strip `model.`, conv OIHW -> OHWI, depthwise [D,1,K] -> [D,K,1]."""
    out = {}
    for name, w in weights.items():
        if "conv.weight" in name:
            w = w.transpose(0, 2, 3, 1)
        elif "conv1d.weight" in name:
            w = w.transpose(0, 2, 1)
        out[name.removeprefix("model.")] = np.ascontiguousarray(w)
    return out


def quantize(w: np.ndarray, bits: int, group: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MLX affine quantize (spec gemma3n-audio §8.2), packed LSB-first into little-endian uint32 words."""
    rows, cols = w.shape
    g = w.astype(np.float32).reshape(rows, cols // group, group)
    n_bins = (1 << bits) - 1
    w_max, w_min = g.max(-1), g.min(-1)
    mask = np.abs(w_min) > np.abs(w_max)
    scales = np.maximum((w_max - w_min) / n_bins, 1e-7)
    scales = np.where(mask, scales, -scales)
    edge = np.where(mask, w_min, w_max)
    q0 = np.round(edge / scales)
    scales = np.where(q0 != 0, edge / np.where(q0 != 0, q0, 1), scales)
    biases = np.where(q0 == 0, 0, edge)
    scales, biases = scales.astype(BF16), biases.astype(BF16)
    s32, b32 = scales.astype(np.float32)[..., None], biases.astype(np.float32)[..., None]
    q = np.clip(np.round((g - b32) / s32), 0, n_bins).astype(np.uint32).reshape(rows, cols)
    per = 32 // bits
    lanes = q.reshape(rows, cols // per, per)
    packed = np.zeros((rows, cols // per), np.uint32)
    for j in range(per):
        packed |= lanes[:, :, j] << np.uint32(bits * j)
    return packed, scales, biases


def dequantize(packed: np.ndarray, scales: np.ndarray, biases: np.ndarray, bits: int, group: int) -> np.ndarray:
    per = 32 // bits
    words = np.asarray(packed, np.uint32)
    q = np.stack([(words >> np.uint32(bits * j)) & np.uint32((1 << bits) - 1) for j in range(per)], -1)
    q = q.reshape(words.shape[0], -1).astype(np.float32)
    s = np.repeat(np.asarray(scales, np.float32), group, axis=1)
    b = np.repeat(np.asarray(biases, np.float32), group, axis=1)
    return q * s + b


def mlx_quantized(bits: int, group: int, seed: int = 0) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(quantized mlx tensors, the original mlx tensors): every Linear/Embedding weight quantized."""
    original = to_mlx(random_weights(CFG, seed))
    out = {}
    for spec in audio_weight_specs(CFG, MLX_LAYOUT):
        w = original[spec.key]
        if len(spec.shape) == 2:
            base = spec.key.removesuffix(".weight")
            out[spec.key], out[base + ".scales"], out[base + ".biases"] = quantize(w, bits, group)
        else:
            out[spec.key] = w
    return out, original


# ---------------------------------------------------------------------------------------------- accepted


def test_hf_single_file(tmp_path: Path) -> None:
    directory = write_random_checkpoint(tmp_path / "hf", CFG, seed=3)
    ck = open_checkpoint(directory)
    specs = audio_weight_specs(CFG, HF_LAYOUT)
    assert ck.layout == HF_LAYOUT and ck.config == CFG and ck.quantization is None
    assert ck.files == [directory / "model.safetensors"]
    assert list(ck.tensors) == [s.key for s in specs]
    assert ck.quantized_names() == ()
    info = ck.tensors[Q_PROJ]
    file, dtype, shape, (begin, end) = info
    assert (file, dtype, shape, end - begin) == (directory / "model.safetensors", "BF16", (64, 64), 64 * 64 * 2)
    want = random_weights(CFG, 3)
    for spec in specs:
        got = ck.read(spec.key)
        assert got.dtype == BF16 and got.shape == spec.shape
        np.testing.assert_array_equal(got.view(np.uint16), want[spec.key].view(np.uint16))
    np.testing.assert_array_equal(
        ck.read("conformer.1.norm").view(np.uint16), want["model.audio_tower.conformer.1.norm.weight"].view(np.uint16)
    )
    ck.check_finite()
    assert len(ck.schema_digest()) == 64
    assert (
        open_checkpoint(write_random_checkpoint(tmp_path / "other", CFG, seed=4)).schema_digest() == ck.schema_digest()
    )


def test_sharded_index(tmp_path: Path) -> None:
    weights = random_weights(CFG, 0)
    names = list(weights)
    half = len(names) // 2
    directory = tmp_path / "sharded"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(hf_config_json(CFG)))
    shards = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
    for shard, members in shards.items():
        extra = {LM_NAME: np.zeros((4, 8), BF16)} if shard.startswith("model-00002") else {}
        save_file({n: weights[n] for n in members} | extra, str(directory / shard))
    weight_map = {n: s for s, members in shards.items() for n in members} | {
        LM_NAME: "model-00002-of-00002.safetensors"
    }
    (directory / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    ck = open_checkpoint(directory)
    assert ck.files == sorted(directory / s for s in shards)
    assert ck.tensors[names[0]].file.name == "model-00001-of-00002.safetensors"
    assert ck.tensors[names[-1]].file.name == "model-00002-of-00002.safetensors"
    single = open_checkpoint(write_random_checkpoint(tmp_path / "single", CFG))
    assert ck.schema_digest() == single.schema_digest()
    np.testing.assert_array_equal(ck.read(names[-1]).view(np.uint16), weights[names[-1]].view(np.uint16))


def test_audio_only_in_some_shards(tmp_path: Path) -> None:
    """`files` lists only the shards that hold audio tensors (the ones to give IREE)."""
    directory = tmp_path / "ck"
    write_dir(directory, random_weights(CFG, 0), file="model-00001-of-00002.safetensors")
    save_file({LM_NAME: np.zeros((4, 8), BF16)}, str(directory / "model-00002-of-00002.safetensors"))
    weight_map = {n: "model-00001-of-00002.safetensors" for n in random_weights(CFG, 0)}
    weight_map[LM_NAME] = "model-00002-of-00002.safetensors"
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    ck = open_checkpoint(directory)
    assert ck.files == [directory / "model-00001-of-00002.safetensors"]


def test_mlx_layout(tmp_path: Path) -> None:
    hf = random_weights(CFG, 1)
    mlx = to_mlx(hf)
    # mlx-vlm / mlx-lm write unindexed shards with arbitrary names too: found by *.safetensors.
    directory = write_dir(tmp_path / "mlx", mlx, file="weights.00.safetensors")
    ck = open_checkpoint(directory)
    assert ck.layout == MLX_LAYOUT and ck.quantization is None and ck.quantized_names() == ()
    assert list(ck.tensors) == [s.key for s in audio_weight_specs(CFG, MLX_LAYOUT)]
    conv = ck.read("audio_tower.subsample_conv_projection.conv_1.conv.weight")
    assert conv.shape == (4, 3, 3, 8)
    np.testing.assert_array_equal(
        conv.astype(np.float32),
        hf["model.audio_tower.subsample_conv_projection.conv_1.conv.weight"].astype(np.float32).transpose(0, 2, 3, 1),
    )
    dw = ck.read("conformer.0.lconv1d.depthwise_conv1d")
    assert dw.shape == (64, 5, 1)
    assert ck.schema_digest() != open_checkpoint(write_random_checkpoint(tmp_path / "hf", CFG)).schema_digest()


@pytest.mark.parametrize("bits,group", [(4, 32), (8, 64)])
def test_mlx_quantized(tmp_path: Path, bits: int, group: int) -> None:
    tensors, original = mlx_quantized(bits, group)
    directory = write_dir(tmp_path / "q", tensors, quantization={"group_size": group, "bits": bits})
    ck = open_checkpoint(directory)
    assert ck.layout == MLX_LAYOUT and ck.quantization == (bits, group)
    quantizable = [s.logical for s in audio_weight_specs(CFG, MLX_LAYOUT) if len(s.shape) == 2]
    assert ck.quantized_names() == tuple(quantizable)
    key = "audio_tower.conformer.1.ffw_layer_end.ffw_layer_2"
    w = ck.tensors[key + ".weight"]
    assert (w.dtype, w.shape) == ("U32", (64, 256 * bits // 32))
    assert ck.tensors[key + ".scales"][1:3] == ("BF16", (64, 256 // group))
    got = dequantize(ck.read(key + ".weight"), ck.read(key + ".scales"), ck.read(key + ".biases"), bits, group)
    ref = original[key + ".weight"].astype(np.float32)
    step = np.abs(np.repeat(ck.read(key + ".scales").astype(np.float32), group, axis=1))
    bias = np.abs(np.repeat(ck.read(key + ".biases").astype(np.float32), group, axis=1))
    # BF16-rounded scales and edges (biases) can cost about a step plus half a BF16 ulp of the edge
    assert np.all(np.abs(got - ref) <= 1.01 * step + 2.0**-8 * bias)
    assert np.mean(np.abs(got - ref) / step) < 0.3
    ck.check_finite()
    other_bits = 8 if bits == 4 else 4
    other, _ = mlx_quantized(other_bits, group)
    d2 = write_dir(tmp_path / "q2", other, quantization={"group_size": group, "bits": other_bits})
    assert open_checkpoint(d2).schema_digest() != ck.schema_digest()


def test_partially_quantized_embedder_only(tmp_path: Path) -> None:
    """The newer mlx-vlm policy: tower unquantized, embed_audio's Linear/Embedding quantized."""
    tensors, original = mlx_quantized(4, 32)
    for spec in audio_weight_specs(CFG, MLX_LAYOUT):
        if spec.key.startswith("audio_tower.") and len(spec.shape) == 2:
            base = spec.key.removesuffix(".weight")
            tensors[spec.key] = original[spec.key]
            del tensors[base + ".scales"], tensors[base + ".biases"]
    ck = open_checkpoint(write_dir(tmp_path / "q", tensors, quantization={"group_size": 32, "bits": 4}))
    assert ck.quantized_names() == ("embed.embedding", "embed.projection")
    assert ck.quantization == (4, 32)


def test_language_model_tensors_ignored_and_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    weights = random_weights(CFG, 0) | {
        LM_NAME: np.full((16, 48), np.nan, BF16),
        "model.vision_tower.x.weight": np.zeros(3, np.float32),
    }
    directory = write_dir(tmp_path / "ck", weights)
    touched: list[str] = []
    real_map = ckpt_mod._map

    def forbid(name, info):
        raise AssertionError(f"open_checkpoint read tensor data ({name})")

    monkeypatch.setattr(ckpt_mod, "_map", forbid)
    ck = open_checkpoint(directory)  # header only: any data access fails the test
    assert LM_NAME not in ck.tensors and "model.vision_tower.x.weight" not in ck.tensors

    def record(name, info):
        touched.append(name)
        return real_map(name, info)

    monkeypatch.setattr(ckpt_mod, "_map", record)
    ck.check_finite()  # the NaN-filled language-model tensor is not audio: never scanned
    assert LM_NAME not in touched and set(touched) == set(ck.tensors)
    with pytest.raises(KeyError):
        ck.read(LM_NAME)


def test_header_reader_reports_all_tensors(tmp_path: Path) -> None:
    path = tmp_path / "t.safetensors"
    save_file({"a": np.zeros((2, 3), BF16), "b": np.arange(5, dtype=np.uint32)}, str(path), metadata={"format": "pt"})
    header = read_safetensors_header(path)
    assert set(header) == {"a", "b"}
    assert header["b"].dtype == "U32" and header["b"].shape == (5,) and header["b"].nbytes == 20


# ---------------------------------------------------------------------------------------------- schema errors


def schema_error(directory: Path) -> CheckpointSchemaError:
    with pytest.raises(CheckpointSchemaError) as info:
        open_checkpoint(directory)
    return info.value


def test_missing_tensors_all_listed(tmp_path: Path) -> None:
    weights = random_weights(CFG, 0)
    gone = [Q_PROJ, "model.audio_tower.conformer.1.norm.weight", "model.embed_audio.embedding.weight"]
    for name in gone:
        del weights[name]
    err = schema_error(write_dir(tmp_path / "ck", weights))
    text = str(err)
    assert "3 missing" in text
    assert f"{Q_PROJ}: expected BF16 [64,64]" in text
    assert "model.audio_tower.conformer.1.norm.weight: expected BF16 [64]" in text
    assert "model.embed_audio.embedding.weight: expected BF16 [128,64]" in text
    assert len(err.missing) == 3 and not err.unexpected and not err.mismatched


def test_unexpected_audio_tensor(tmp_path: Path) -> None:
    weights = random_weights(CFG, 0)
    weights["model.audio_tower.conformer.2.norm.weight"] = np.ones(64, BF16)
    weights["model.embed_audio.extra.bias"] = np.ones(4, BF16)
    err = schema_error(write_dir(tmp_path / "ck", weights))
    assert "2 unexpected" in str(err)
    assert "model.audio_tower.conformer.2.norm.weight (in model.safetensors): BF16 [64]" in str(err)
    assert "model.embed_audio.extra.bias" in str(err)


def test_wrong_dtype(tmp_path: Path) -> None:
    weights = random_weights(CFG, 0)
    weights[Q_PROJ] = weights[Q_PROJ].astype(np.float16)
    err = schema_error(write_dir(tmp_path / "ck", weights))
    assert f"{Q_PROJ} (in model.safetensors): expected dtype BF16, found F16" in str(err)
    assert "F16 checkpoint" not in str(err)  # one mistyped tensor is not a checkpoint-wide dtype
    assert len(err.mismatched) == 1


def test_f32_checkpoint_says_convert(tmp_path: Path) -> None:
    weights = {n: w.astype(np.float32) for n, w in random_weights(CFG, 0).items()}
    err = schema_error(write_dir(tmp_path / "ck", weights))
    assert str(err).splitlines()[1].startswith("F32 checkpoint:")
    assert "convert" in str(err) and f"{Q_PROJ} (in model.safetensors): expected dtype BF16, found F32" in str(err)


def test_wrong_shape(tmp_path: Path) -> None:
    weights = random_weights(CFG, 0)
    weights[Q_PROJ] = np.zeros((64, 32), BF16)
    err = schema_error(write_dir(tmp_path / "ck", weights))
    assert f"{Q_PROJ} (in model.safetensors): expected shape [64,64], found [64,32]" in str(err)


def test_hf_conv_layout_under_mlx_names_is_explained(tmp_path: Path) -> None:
    mlx = to_mlx(random_weights(CFG, 0))
    name = "audio_tower.subsample_conv_projection.conv_1.conv.weight"
    mlx[name] = np.ascontiguousarray(mlx[name].transpose(0, 3, 1, 2))  # back to OIHW
    err = schema_error(write_dir(tmp_path / "ck", mlx))
    assert f"{name} (in model.safetensors): expected shape [4,3,3,8], found [4,8,3,3]" in str(err)
    assert "hf layout's oihw shape" in str(err)


def test_mixed_and_absent_layouts(tmp_path: Path) -> None:
    weights = random_weights(CFG, 0)
    weights["embed_audio.embedding.weight"] = np.zeros((128, 64), BF16)
    assert "both" in str(schema_error(write_dir(tmp_path / "both", weights)))
    err = schema_error(write_dir(tmp_path / "none", {LM_NAME: np.zeros((2, 2), BF16)}))
    assert "no audio tensors" in str(err)


def test_quantized_without_quantization_config(tmp_path: Path) -> None:
    tensors, _ = mlx_quantized(4, 32)
    err = schema_error(write_dir(tmp_path / "q", tensors))
    text = str(err)
    assert "config.json has no 'quantization' block (group_size, bits), but 25 weight(s) are quantized" in text
    assert "audio_tower.conformer.0.attention.attn.q_proj.weight, " in text
    assert "embed_audio.embedding_projection.weight" in text and len(err.mismatched) == 1


def test_quantized_wrong_packing(tmp_path: Path) -> None:
    tensors, _ = mlx_quantized(4, 32)
    # config says 8-bit: every packed weight has half the expected words
    err = schema_error(write_dir(tmp_path / "q", tensors, quantization={"group_size": 32, "bits": 8}))
    assert (
        "audio_tower.conformer.0.attention.attn.q_proj.weight (in model.safetensors): expected shape [64,16], "
        "found [64,8]"
    ) in str(err)
    tensors, _ = mlx_quantized(4, 32)
    tensors["embed_audio.embedding.scales"] = tensors["embed_audio.embedding.scales"].astype(np.float32)
    del tensors["embed_audio.embedding.biases"]
    err = schema_error(write_dir(tmp_path / "q2", tensors, quantization={"group_size": 32, "bits": 4}))
    assert "embed_audio.embedding.scales (in model.safetensors): expected dtype BF16, found F32" in str(err)
    assert "embed_audio.embedding.biases: expected BF16 [128,2]" in str(err)


def test_quantized_conv_is_unexpected(tmp_path: Path) -> None:
    mlx = to_mlx(random_weights(CFG, 0))
    mlx["audio_tower.conformer.0.lconv1d.depthwise_conv1d.scales"] = np.ones((64, 1), BF16)
    err = schema_error(write_dir(tmp_path / "q", mlx, quantization={"group_size": 32, "bits": 4}))
    assert "audio_tower.conformer.0.lconv1d.depthwise_conv1d.scales (in model.safetensors)" in str(err)
    assert "never quantized" in str(err)


def test_bad_quantization_block(tmp_path: Path) -> None:
    tensors, _ = mlx_quantized(4, 32)
    with pytest.raises(
        CheckpointSchemaError,
        match=r"config.json: quantization: bits must be one of \(4, 8\), got 3 "
        r"\(needed by 25 quantized weight\(s\): audio_tower",
    ):
        open_checkpoint(write_dir(tmp_path / "q", tensors, quantization={"group_size": 32, "bits": 3}))
    # a setting only the (absent here) language model would use does not matter to an unquantized audio stage
    ck = open_checkpoint(
        write_dir(
            tmp_path / "lm_only",
            to_mlx(random_weights(CFG, 0)),
            quantization={"group_size": 32, "bits": 3, "mode": "mxfp4"},
        )
    )
    assert ck.quantization is None and ck.quantized_names() == ()
    config = json.loads((tmp_path / "q" / "config.json").read_text())
    config["quantization_config"]["bits"] = 4
    (tmp_path / "q" / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointFormatError, match="disagree"):
        open_checkpoint(tmp_path / "q")


def test_per_module_quantization_override(tmp_path: Path) -> None:
    """mlx-lm records per-module settings in the quantization block under the module path."""
    tensors, _ = mlx_quantized(8, 32)
    quant = {"group_size": 32, "bits": 4, "language_model.model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 8}}
    for spec in audio_weight_specs(CFG, MLX_LAYOUT):
        if len(spec.shape) == 2:
            quant[spec.key.removesuffix(".weight")] = {"group_size": 32, "bits": 8}
    ck = open_checkpoint(write_dir(tmp_path / "q", tensors, quantization=quant))
    assert ck.quantization == (8, 32)
    del quant["embed_audio.embedding"]  # now that one module would be 4-bit: mixed settings are refused
    with pytest.raises(CheckpointSchemaError, match="different \\(bits, group_size\\)"):
        open_checkpoint(write_dir(tmp_path / "q2", tensors, quantization=quant))


# ---------------------------------------------------------------------------------------------- file errors


def test_truncated_file(tmp_path: Path) -> None:
    directory = write_random_checkpoint(tmp_path / "ck", CFG)
    path = directory / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[:-100])
    with pytest.raises(CheckpointFormatError, match="truncated") as info:
        open_checkpoint(directory)
    assert str(path) in str(info.value) and "tensor" in str(info.value)
    path.write_bytes(data[:200])  # inside the header
    with pytest.raises(CheckpointFormatError, match="truncated") as info:
        open_checkpoint(directory)
    assert str(path) in str(info.value)
    path.write_bytes(data[:5])
    with pytest.raises(CheckpointFormatError, match="not a safetensors file"):
        open_checkpoint(directory)


def test_corrupt_header(tmp_path: Path) -> None:
    directory = write_random_checkpoint(tmp_path / "ck", CFG)
    path = directory / "model.safetensors"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises(CheckpointFormatError, match="corrupt") as info:
        open_checkpoint(directory)
    assert str(path) in str(info.value)
    path.write_bytes(struct.pack("<Q", 16) + b"{not json at all" + b"\0" * 64)
    with pytest.raises(CheckpointFormatError, match="not valid UTF-8 JSON") as info:
        open_checkpoint(directory)
    assert str(path) in str(info.value)
    header = json.dumps({Q_PROJ: {"dtype": "BF16", "shape": [64, 64], "data_offsets": [0, 100]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 100)
    with pytest.raises(CheckpointFormatError, match="needs 8192 bytes") as info:
        open_checkpoint(directory)
    assert Q_PROJ in str(info.value)


def test_index_with_missing_shard(tmp_path: Path) -> None:
    directory = write_random_checkpoint(tmp_path / "ck", CFG)
    (directory / "model.safetensors").rename(directory / "model-00001-of-00002.safetensors")
    weight_map = {n: "model-00001-of-00002.safetensors" for n in random_weights(CFG, 0)}
    weight_map[LM_NAME] = "model-00002-of-00002.safetensors"
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(CheckpointFormatError, match="model-00002-of-00002.safetensors") as info:
        open_checkpoint(directory)
    assert "do not exist" in str(info.value) and "model.safetensors.index.json" in str(info.value)


def test_index_disagrees_with_shards(tmp_path: Path) -> None:
    directory = write_random_checkpoint(tmp_path / "ck", CFG)
    (directory / "model.safetensors").rename(directory / "model-00001-of-00001.safetensors")
    weight_map = {n: "model-00001-of-00001.safetensors" for n in random_weights(CFG, 0)}
    weight_map["model.audio_tower.conformer.0.norm.weight.ghost"] = "model-00001-of-00001.safetensors"
    del weight_map[Q_PROJ]
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(CheckpointFormatError, match="disagree") as info:
        open_checkpoint(directory)
    assert Q_PROJ in str(info.value) and "ghost" in str(info.value)


@pytest.mark.parametrize("indexed", [False, True])
def test_duplicate_tensor_across_shards(tmp_path: Path, indexed: bool) -> None:
    weights = random_weights(CFG, 0)
    directory = write_dir(tmp_path / "ck", weights, file="model-00001-of-00002.safetensors")
    save_file({Q_PROJ: weights[Q_PROJ]}, str(directory / "model-00002-of-00002.safetensors"))
    if indexed:
        weight_map = {n: "model-00001-of-00002.safetensors" for n in weights}
        weight_map[LM_NAME] = "model-00002-of-00002.safetensors"
        (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(CheckpointFormatError, match="more than one file") as info:
        open_checkpoint(directory)
    assert f"{Q_PROJ}: in model-00001-of-00002.safetensors and model-00002-of-00002.safetensors" in str(info.value)


def test_no_weights_or_config(tmp_path: Path) -> None:
    directory = tmp_path / "empty"
    directory.mkdir()
    with pytest.raises(ValueError, match="config.json"):
        open_checkpoint(directory)
    (directory / "config.json").write_text(json.dumps(hf_config_json(CFG)))
    with pytest.raises(CheckpointFormatError, match="no model.safetensors"):
        open_checkpoint(directory)


# ---------------------------------------------------------------------------------------------- non-finite


@pytest.mark.parametrize("value,word", [(np.nan, "NaN"), (-np.inf, "-Inf")])
def test_non_finite_reported(tmp_path: Path, value: float, word: str) -> None:
    weights = random_weights(CFG, 0)
    bad = "model.audio_tower.conformer.1.ffw_layer_end.ffw_layer_1.weight"
    w = weights[bad].copy()
    w[17, 5] = value
    weights[bad] = w
    ck = open_checkpoint(write_dir(tmp_path / "ck", weights))  # opening reads no data: still fine
    with pytest.raises(CheckpointNonFiniteError) as info:
        ck.check_finite()
    text = str(info.value)
    assert bad in text and word in text and f"flat index {17 * 64 + 5}" in text and "(17, 5)" in text
    assert "model.safetensors" in text


def test_non_finite_quantization_scale(tmp_path: Path) -> None:
    tensors, _ = mlx_quantized(4, 32)
    s = tensors["embed_audio.embedding_projection.scales"].copy()
    s[3, 1] = np.inf
    tensors["embed_audio.embedding_projection.scales"] = s
    ck = open_checkpoint(write_dir(tmp_path / "q", tensors, quantization={"group_size": 32, "bits": 4}))
    with pytest.raises(
        CheckpointNonFiniteError,
        match=r"embed_audio.embedding_projection.scales .* \+Inf at flat "
        r"index 7",
    ):
        ck.check_finite()


def test_quantized_scale_that_overflows_on_dequantize(tmp_path: Path) -> None:
    tensors, _ = mlx_quantized(8, 32)
    s = tensors["audio_tower.conformer.0.lconv1d.linear_end.scales"].copy()
    s[2, 1] = 3e36  # finite, but 255 * 3e36 is beyond BF16's ~3.39e38
    tensors["audio_tower.conformer.0.lconv1d.linear_end.scales"] = s
    ck = open_checkpoint(write_dir(tmp_path / "q", tensors, quantization={"group_size": 32, "bits": 8}))
    with pytest.raises(CheckpointNonFiniteError, match=r"linear_end.weight: group \(2, 1\) .* beyond the BF16 range"):
        ck.check_finite()


# ---------------------------------------------------------------------------------------------- config.json errors


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c.pop("audio_config"), "audio_config is missing (expected the audio tower's configuration object"),
        (
            lambda c: c["audio_config"].pop("hidden_size"),
            "audio_config.hidden_size is missing (expected an integer; the "
            "graph's shapes depend on it, so there is no default)",
        ),
        (
            lambda c: c["audio_config"].__setitem__("hidden_size", "64"),
            'audio_config.hidden_size must be an integer, got str "64"',
        ),
        (
            lambda c: c["audio_config"].__setitem__("conf_num_hidden_layers", True),
            "audio_config.conf_num_hidden_layers must be an integer, got bool true",
        ),
        (
            lambda c: c["audio_config"].__setitem__("sscp_conv_stride_size", [2, 2]),
            "audio_config.sscp_conv_stride_size must be a list of 2 lists of 2 integers, got a list [2, 2]",
        ),
        (lambda c: c["audio_config"].__setitem__("rms_norm_eps", "1e-6"), "audio_config.rms_norm_eps must be a number"),
        (lambda c: c["audio_config"].__setitem__("vocab_offset", None), "audio_config.vocab_offset must be an integer"),
        (lambda c: c["text_config"].pop("hidden_size"), "text_config.hidden_size is missing"),
        (lambda c: c.__setitem__("audio_config", [1]), "audio_config must be an object, got a list [1]"),
    ],
)
def test_config_errors_name_the_field(tmp_path, change, message):
    from gemma3n_iree.model.audio_config import ConfigError

    config = hf_config_json(CFG)
    change(config)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError) as err:
        _ = CheckpointConfig.read(tmp_path).audio
    text = str(err.value)
    assert text == f"{tmp_path / 'config.json'}: {message}" or text.startswith(f"{tmp_path / 'config.json'}: {message}")
    assert "\n" not in text


def test_config_defaults_only_what_transformers_defaults(tmp_path):
    from gemma3n_iree.model.audio_config import AUDIO_DEFAULTABLE

    config = hf_config_json(CFG)
    for name in AUDIO_DEFAULTABLE:  # numeric constants, as Gemma3nAudioConfig defaults them
        config["audio_config"].pop(name)
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert CheckpointConfig.read(tmp_path).audio == CFG  # CFG uses the released values for them


def test_text_config_errors_name_the_field(tmp_path):
    from synthetic_text import add_random_text_tensors

    from gemma3n_iree.model.audio_config import ConfigError
    from gemma3n_iree.model.text_config import builtin_text_config

    write_random_checkpoint(tmp_path, CFG, seed=0)
    add_random_text_tensors(tmp_path, builtin_text_config("tiny"), seed=1)
    path = tmp_path / "config.json"
    good = json.loads(path.read_text())
    for change, message in (
        (
            lambda c: c["text_config"].pop("num_hidden_layers"),
            "text_config.num_hidden_layers is missing (expected an integer",
        ),
        (
            lambda c: c["text_config"].__setitem__("vocab_size", "262400"),
            'text_config.vocab_size must be an integer, got str "262400"',
        ),
        (lambda c: c.__setitem__("audio_token_id", 1.5), "audio_token_id must be an integer"),
    ):
        config = json.loads(json.dumps(good))
        change(config)
        path.write_text(json.dumps(config))
        with pytest.raises(ConfigError, match=None) as err:
            _ = CheckpointConfig.read(tmp_path).text
        assert str(err.value).startswith(f"{path}: {message}") and "\n" not in str(err.value), str(err.value)
