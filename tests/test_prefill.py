"""The prefill stage (merge audio into the language model's inputs + dense per-layer inputs) on llvm-cpu.

* Prompt expansion and the host row map: Gemma 3n's chat format, 188 placeholders per clip, several
  clips per long file in prompt order, and a typed error for every violation.
* The compiled stage equals its numpy emulation (`contracts/prefill.py`) bit for bit: the merged
  embeddings, and the dense per-layer inputs after the one contraction (`per_layer_model_projection`),
  whose F32 accumulation order may legitimately differ (checked against the summation envelope); the
  soft audio rows land unchanged at their placeholders; rows past the real length are zero.
* Against transformers (test-only): a tiny random-weight `Gemma3nModel` (tests/oracles/hf_prefill.py),
  its own `forward` merging two clips into a prompt.  f32-reference is within 1e-4 relative L2 of
  transformers-fp32 (measured: ~2e-7).  mlx-cuda-v1 is judged as the audio stage is
  (tests/test_hf_parity.py): no farther from transformers-fp32 than 1.5x transformers' own bf16 mode
  (measured: inputs_embeds 3.5e-3 vs 3.5e-3, per_layer_inputs 4.7e-3 vs 4.3e-3; the PLE's extra is the
  MLX norm's second rounding point, which transformers-bf16 does not have), and its text rows are
  bit-identical to transformers-bf16's (BF16 scale 45.25-style constant, one rounding).
* `gemma3n-iree prefill` writes the documented .npz.
"""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from synthetic_text import add_random_text_tensors, build_test_tokenizer, write_test_tokenizer

from gemma3n_iree.contracts import F32_REFERENCE, MLX_CUDA_V1, get_contract
from gemma3n_iree.contracts import prefill as emulated
from gemma3n_iree.contracts.emulation import round_bf16
from gemma3n_iree.contracts.metrics import bf16_ulp, f32_accumulation_bound, relative_l2
from gemma3n_iree.emitters.prefill import PrefillBucketError, PrefillModuleSpec
from gemma3n_iree.model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, AudioConfig, builtin_config
from gemma3n_iree.model.checkpoint_config import CheckpointConfig
from gemma3n_iree.model.text_config import TextConfig, builtin_text_config
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.synthetic import write_random_checkpoint
from gemma3n_iree.runtime.text.prefill import AudioPrefill
from gemma3n_iree.runtime.text.tokens import (
    AUDIO_TOKEN,
    AudioMarkerError,
    ContextCapacityError,
    PlaceholderCountError,
    PlaceholderRunError,
    PromptError,
    TokenizerError,
    TokenRangeError,
    VisionTokenError,
    audio_row_map,
    chat_prompt,
    expand_prompt,
    load_tokenizer,
)

AUDIO = builtin_config("tiny")
TEXT = builtin_text_config("tiny")
N = AUDIO_SOFT_TOKENS_PER_CLIP
PROMPT = "Transcribe the following speech segment in English: summarize first and second clip."


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """A tiny random checkpoint: audio stage, the four text tensors (sharded + indexed), a tokenizer."""
    directory = tmp_path_factory.mktemp("prefill-ckpt")
    write_random_checkpoint(directory, AUDIO, seed=3)
    add_random_text_tensors(directory, TEXT, seed=4)
    write_test_tokenizer(directory)
    return directory


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> ArtifactCache:
    return ArtifactCache(tmp_path_factory.mktemp("prefill-cache"))


@pytest.fixture(scope="module")
def prefillers(checkpoint, cache):
    made: dict[str, AudioPrefill] = {}

    def get(contract: str) -> AudioPrefill:
        if contract not in made:
            made[contract] = AudioPrefill(
                checkpoint, contract=contract, cache=cache, capacities=(256, 512, 1024), stages=True
            )
        return made[contract]

    return get


def random_features(clips: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return round_bf16(rng.standard_normal((clips, N, TEXT.hidden_size)).astype(np.float32))


# ---------------------------------------------------------------------------------------------- prompt expansion


def test_chat_format():
    assert chat_prompt("  Hi there ", 2) == (
        "<bos><start_of_turn>user\n<audio_soft_token><audio_soft_token>Hi there<end_of_turn>\n<start_of_turn>model\n"
    )
    assert chat_prompt(f"a {AUDIO_TOKEN} b {AUDIO_TOKEN}", 2, chat=False) == f"a {AUDIO_TOKEN} b {AUDIO_TOKEN}"
    with pytest.raises(AudioMarkerError):
        chat_prompt(f"only {AUDIO_TOKEN} here", 2)


def test_expansion_places_one_block_per_clip_in_prompt_order():
    tok = build_test_tokenizer()
    ids = expand_prompt(tok, TEXT, f"First {AUDIO_TOKEN} second {AUDIO_TOKEN}.", [2, 1])
    assert ids[0] == 2 and ids[1] == 105  # <bos><start_of_turn>
    row_map = audio_row_map(ids, TEXT, 3)
    starts = [int(i) for i in np.flatnonzero(row_map % N == 0)]
    assert len(starts) == 3
    for k, s in enumerate(starts):
        assert ids[s - 1] == TEXT.boa_token_id and ids[s + N] == TEXT.eoa_token_id
        np.testing.assert_array_equal(row_map[s : s + N], np.arange(k * N, (k + 1) * N))
        assert (ids[s : s + N] == TEXT.audio_token_id).all()
    assert (row_map[ids != TEXT.audio_token_id] == -1).all()
    # the two clips of the first file are adjacent blocks: <end_of_audio> "\n\n\n\n" <start_of_audio>
    assert starts[1] - (starts[0] + N) == 3 and ids[starts[0] + N + 1] == 110


def test_row_map_errors():
    ids = np.array([2, 256000] + [TEXT.audio_token_id] * N + [262272, 5], np.int32)
    audio_row_map(ids, TEXT, 1)
    short = np.delete(ids, 10)
    with pytest.raises(PlaceholderRunError) as err:
        audio_row_map(short, TEXT, 1)
    assert (err.value.start, err.value.length) == (2, N - 1)
    with pytest.raises(PlaceholderCountError) as err:
        audio_row_map(ids, TEXT, 2)
    assert (err.value.runs, err.value.clips) == (1, 2)
    with pytest.raises(VisionTokenError):
        audio_row_map(np.array([2, 262145], np.int32), TEXT, 0)
    for bad in (-1, TEXT.vocab_size):
        with pytest.raises(TokenRangeError):
            audio_row_map(np.array([2, bad], np.int64), TEXT, 0)


def test_tokenizer_is_checked_against_the_config(tmp_path):
    with pytest.raises(TokenizerError, match="no tokenizer.json"):
        load_tokenizer(tmp_path, TEXT)
    write_test_tokenizer(tmp_path)
    load_tokenizer(tmp_path, TEXT)
    other = TextConfig(**{**TEXT.__dict__, "audio_token_id": 262274})
    with pytest.raises(TokenizerError, match="disagree"):
        load_tokenizer(tmp_path, other)


def test_spec_and_capacity_errors(prefillers):
    with pytest.raises(PrefillBucketError, match="more than the largest context capacity"):
        PrefillModuleSpec(AUDIO, TEXT, MLX_CUDA_V1, (256,), (2,))
    assert PrefillModuleSpec(AUDIO, TEXT, MLX_CUDA_V1, (256, 512), (1, 2)).entries == [(256, 1), (512, 1), (512, 2)]
    with pytest.raises(ContextCapacityError):
        prefillers(MLX_CUDA_V1.name).run(np.full(2000, 5, np.int32))


def test_config_json_round_trip(checkpoint):
    assert CheckpointConfig.read(checkpoint).text == TEXT
    index = json.loads((checkpoint / "model.safetensors.index.json").read_text())["weight_map"]
    assert index["model.language_model.embed_tokens_per_layer.weight"] == "model-text.safetensors"


def test_host_gather_rows_and_the_per_layer_vocabulary(checkpoint):
    from gemma3n_iree.runtime.text.prefill import TextTables

    tables = TextTables(checkpoint, TEXT)
    ids = np.array([5, 511, 512, 262272, 262273], np.int32)  # per-layer vocabulary: [0, 512)
    ple, table = tables.ple_rows(ids, 8), tables.read("text.embed_tokens_per_layer")
    for i, row in enumerate([5, 511, 0, 0, 0]):
        np.testing.assert_array_equal(ple[i], table[row])
    assert not ple[len(ids) :].astype(np.float32).any()
    np.testing.assert_array_equal(tables.text_rows(ids, 8)[: len(ids)], tables.read("text.embed_tokens")[ids])


def test_text_tensors_are_validated(tmp_path):
    from synthetic_text import add_text_tensors

    from gemma3n_iree.model.audio_weights import MLX_LAYOUT
    from gemma3n_iree.runtime.checkpoint import CheckpointSchemaError
    from gemma3n_iree.runtime.text.prefill import TextTables

    mlx = tmp_path / "mlx"
    write_random_checkpoint(mlx, AUDIO, seed=0)
    add_random_text_tensors(mlx, TEXT, seed=0, layout=MLX_LAYOUT)
    TextTables(mlx, TEXT, MLX_LAYOUT)  # mlx-vlm names: language_model.model.*
    with pytest.raises(CheckpointSchemaError, match="the mlx layout"):
        TextTables(mlx, TEXT)
    with pytest.raises(CheckpointSchemaError, match="expected BF16"):
        TextTables(mlx, TextConfig(**{**TEXT.__dict__, "num_hidden_layers": 3}), MLX_LAYOUT)
    quantized = tmp_path / "quantized"
    write_random_checkpoint(quantized, AUDIO, seed=0)
    add_random_text_tensors(quantized, TEXT, seed=0)
    add_text_tensors(
        quantized,
        TEXT,
        {"model.language_model.per_layer_model_projection.scales": np.ones((TEXT.ple_width, 1), ml_dtypes.bfloat16)},
        shard="model-extra.safetensors",
    )
    with pytest.raises(CheckpointSchemaError, match="affine-quantized"):
        TextTables(quantized, TEXT)
    from gemma3n_iree.emitters.prefill import emit_prefill_module

    text = emit_prefill_module(PrefillModuleSpec(AUDIO, TEXT, MLX_CUDA_V1, (256,), (1,), MLX_LAYOUT))
    assert '"model"::"language_model.model.per_layer_model_projection.weight"' in text
    assert '"model"::"embed_audio.embedding_projection.weight"' in text


# ---------------------------------------------------------------------------------------------- artifact vs emulation


def _full_outputs(p: AudioPrefill, ids: np.ndarray, features: np.ndarray):
    """Run the entry on its full capacity (untrimmed outputs) exactly as AudioPrefill.run feeds it."""
    clips = len(features)
    row_map = audio_row_map(ids, p.text, clips)
    cap = p.capacity_for(len(ids), clips)
    session = p._load((cap, clips))
    pid = np.zeros(cap, np.int32)
    pid[: len(ids)] = ids
    pmap = np.full(cap, -1, np.int32)
    pmap[: len(ids)] = row_map
    text_rows, ple_rows = p.tables.text_rows(ids, cap), p.tables.ple_rows(ids, cap)
    got = session.run(cap, clips, pid, text_rows, ple_rows, features.reshape(-1, p.text.hidden_size), pmap, len(ids))
    return got, (pid, text_rows.astype(np.float32), ple_rows.astype(np.float32), pmap)


@pytest.mark.parametrize("contract", [MLX_CUDA_V1.name, F32_REFERENCE.name])
@pytest.mark.parametrize("files", [(1, 1), (2, 1), ()], ids=["two-files", "long-file-and-short", "text-only"])
def test_artifact_matches_emulation(prefillers, checkpoint, contract, files):
    p = prefillers(contract)
    c = get_contract(contract)
    features = random_features(sum(files), seed=len(files) + sum(files))
    ids = p.expand(PROMPT if files else "What is said?", list(files))
    got, (pid, text_rows, ple_rows, pmap) = _full_outputs(p, ids, features)
    length = len(ids)
    # the merge has no contraction: bit for bit, given the module's own hard table
    want_embeds = emulated.merge(
        c, p.text, pid, text_rows, got["hard_table"], features.reshape(-1, p.text.hidden_size), pmap, length
    )
    np.testing.assert_array_equal(got["inputs_embeds"], want_embeds)
    soft = pmap >= 0
    np.testing.assert_array_equal(got["inputs_embeds"][soft], features.reshape(-1, p.text.hidden_size)[pmap[soft]])
    assert not got["inputs_embeds"][length:].any() and not got["per_layer_inputs"][length:].any()
    # the hard table is the audio embedder's hard path (the encoder stage's own function)
    hard = p.checkpoint.read("embed.embedding")
    assert got["hard_table"].shape == (hard.shape[0], p.text.hidden_size)
    # the projection: exact sum, or within the F32 accumulation envelope (+ one BF16 step)
    tables = p.tables
    w_proj = np.asarray(tables.read("text.per_layer_model_projection"), np.float32)
    w_norm = np.asarray(tables.read("text.per_layer_projection_norm"), np.float32)
    full = emulated.dense_ple(c, p.text, want_embeds, ple_rows, w_proj, w_norm, length)
    linear = got["ple_projection_linear"]
    if not np.array_equal(linear, full["ple_projection_linear"]):
        bound = f32_accumulation_bound(want_embeds, w_proj) + (
            bf16_ulp(full["ple_projection_linear"]) if c.round_bf16 else 0.0
        )
        assert (np.abs(linear.astype(np.float64) - full["ple_projection_linear"]) <= bound).all()
    # everything after it: bit for bit on the module's own projection
    chained = emulated.dense_ple(c, p.text, want_embeds, ple_rows, w_proj, w_norm, length, projection_linear=linear)
    np.testing.assert_array_equal(got["per_layer_inputs"], chained["per_layer_inputs"])
    # and the API trims to the real length
    result = p.run(ids, features)
    np.testing.assert_array_equal(result.inputs_embeds, got["inputs_embeds"][:length])
    np.testing.assert_array_equal(result.per_layer_inputs, got["per_layer_inputs"][:length])
    np.testing.assert_array_equal(result.audio_rows, pmap[:length])


def test_prompts_in_one_call_equal_each_prompt_alone(prefillers):
    """Three one-clip windows (the transcription server's prompts, one with other words), padded to four, in
    one call of the (1024, 4) entry: each prompt's rows are the bits `run` gives it alone in the (256, 1) entry
    (the stage is row by row); bad counts are refused."""
    p = prefillers(MLX_CUDA_V1.name)
    prompts = [
        (p.expand(text, [1]), random_features(1, seed=20 + i))
        for i, text in enumerate([PROMPT, PROMPT, "What is said in this clip?"])
    ]
    together = p.run_many(prompts, pad_to=4)
    assert [r.capacity for r in together] == [1024] * 3
    for (ids, features), got in zip(prompts, together):
        alone = p.run(ids, features)
        assert alone.capacity == 256
        for name in ("input_ids", "inputs_embeds", "per_layer_inputs", "audio_rows"):
            np.testing.assert_array_equal(getattr(got, name), getattr(alone, name), err_msg=name)
    short = p.run_many(prompts[2:], pad_to=4, capacity=1024)  # the same entry for one window
    np.testing.assert_array_equal(short[0].per_layer_inputs, together[2].per_layer_inputs)
    with pytest.raises(ContextCapacityError, match="more than capacity 256"):
        p.run_many(prompts, capacity=256)
    with pytest.raises(PromptError, match="fewer than the 3 prompts"):
        p.run_many(prompts, pad_to=2)
    with pytest.raises(PromptError, match="at least one prompt"):
        p.run_many([])


def test_a_prebuilt_stage_runs_a_lone_window_in_its_one_window_entry(prefillers, checkpoint, cache):
    """A prefill artifact with entries for one window and for four (what `serve` and the GPU benchmark load
    with --prefill-artifact) has every entry at hand, so `run_stage` under a transcription pack of four windows
    runs a lone window in the (256, 1) entry rather than padded to four in (1024, 4), and three windows in the
    (1024, 4) entry; each window's rows are the bits the stage gives it alone. Programs built per entry have only
    the resident one at hand; entries prepared together are one program, both at hand once it is loaded."""
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.emitters.targets import parse_target
    from gemma3n_iree.runtime.text.prefill import build_prefill_artifact
    from gemma3n_iree.runtime.text.transcribe import run_stage

    per_entry = prefillers(MLX_CUDA_V1.name)
    target = parse_target("llvm-cpu")
    spec = PrefillModuleSpec(AUDIO, TEXT, MLX_CUDA_V1, (256, 1024), (1, 4), lowering=lowering_for(target, MLX_CUDA_V1))
    artifact = build_prefill_artifact(cache, spec, target, per_entry.weight_schema).path
    staged = AudioPrefill(checkpoint, contract=MLX_CUDA_V1.name, cache=cache, artifact=artifact)
    assert staged.entries_at_hand() == ((256, 1), (1024, 1), (1024, 4))
    prompts = [(per_entry.expand(PROMPT, [1]), random_features(1, seed=30 + i)) for i in range(3)]
    pack = (4, 1024)
    for group, capacity in ((prompts[:1], 256), (prompts, 1024)):
        results = run_stage(staged, pack, group)
        assert [r.capacity for r in results] == [capacity] * len(group)
        for (ids, features), got in zip(group, results):
            alone = per_entry.run(ids, features)
            for name in ("input_ids", "inputs_embeds", "per_layer_inputs", "audio_rows"):
                np.testing.assert_array_equal(getattr(got, name), getattr(alone, name), err_msg=name)
    assert per_entry.entries_at_hand() == ((256, 1),)  # the last run's program, resident
    # a stage built here with the pack's and one window's entries prepared together: the same one program
    built = AudioPrefill(checkpoint, contract=MLX_CUDA_V1.name, cache=cache, capacities=(256, 1024))
    built.prepare((1024, 4), (256, 1))
    assert built.entries_at_hand() == ()  # nothing loaded yet
    assert [r.capacity for r in run_stage(built, pack, prompts)] == [1024] * 3
    resident = built._session  # noqa: SLF001
    assert built.entries_at_hand() == staged.entries_at_hand()
    [one] = run_stage(built, pack, prompts[:1])
    assert one.capacity == 256 and built._session is resident  # noqa: SLF001
    np.testing.assert_array_equal(one.per_layer_inputs, per_entry.run(*prompts[0]).per_layer_inputs)


def test_prefill_groups_clips_by_file(prefillers):
    """A file longer than 30 s is several clips: its blocks are adjacent and take its clips' rows in order."""
    from gemma3n_iree.runtime.encoder.clips import Clip, EncodeResult

    features = random_features(3, seed=9)

    class TwoFilesThreeClips:  # the encoder's interface, standing in for two decoded files
        def clips_from_files(self, paths, max_seconds=None):
            f = np.zeros((10, 128), np.float32)
            return [Clip(0, 0.0, f, 10), Clip(0, 30.0, f, 10), Clip(1, 0.0, f, 10)]

        def encode_clips(self, clips):
            return EncodeResult(features, None, None, None, None)

    p = prefillers(MLX_CUDA_V1.name)
    p._encoder = TwoFilesThreeClips()
    try:
        result = p.prefill(f"Long {AUDIO_TOKEN} then short {AUDIO_TOKEN}", ["long.wav", "short.wav"])
    finally:
        p._encoder = None
    rows = result.audio_rows
    np.testing.assert_array_equal(rows[rows >= 0], np.arange(3 * N))
    np.testing.assert_array_equal(result.inputs_embeds[rows >= 0], features.reshape(-1, TEXT.hidden_size))


# ---------------------------------------------------------------------------------------------- transformers


@pytest.fixture(scope="module")
def hf_case(tmp_path_factory):
    torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
    pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")
    from oracles.configs import TINY
    from oracles.hf_prefill import checkpoint_tensors, make_model
    from safetensors.numpy import save_file
    from synthetic_text import add_text_tensors

    from gemma3n_iree.runtime.synthetic import hf_config_json

    assert AudioConfig.from_mapping(TINY, source="TINY") == AUDIO
    model = make_model(TINY, TEXT, seed=5)
    audio, text = checkpoint_tensors(model)
    bf16 = {k: v.astype(ml_dtypes.bfloat16) for k, v in audio.items()}
    directory = tmp_path_factory.mktemp("hf-prefill-ckpt")
    (directory / "config.json").write_text(json.dumps(hf_config_json(AUDIO)))
    save_file(bf16, str(directory / "model.safetensors"))
    add_text_tensors(directory, TEXT, {k: v.astype(ml_dtypes.bfloat16) for k, v in text.items()})
    write_test_tokenizer(directory)
    rng = np.random.default_rng(0)
    frames = 100  # two clips of the same length: transformers' batch needs no padding
    t = np.arange(frames)[None, :, None]
    mel = (rng.normal(-4.0, 2.0, (2, frames, 128)) + 3.0 * np.sin(t / 7.0)).astype(np.float32)
    return torch, model, bf16, directory, mel


def _ours(hf_case, cache, contract):
    from audio_artifacts import load_session

    from gemma3n_iree.emitters.audio import AudioModuleSpec

    _, _, weights, directory, mel = hf_case
    bucket = 203  # the bucket tests/test_hf_parity.py compiles: the encoder artifact is shared
    session = load_session(AudioModuleSpec(AUDIO, get_contract(contract), (bucket,), (1,)), weights)
    features = []
    for clip in mel:
        padded = np.zeros((1, bucket, 128), np.float32)
        padded[0, : len(clip)] = clip
        # (copied: AudioSession.run returns host views of device buffers that a later call may reuse)
        features.append(np.array(session.run(padded, np.array([len(clip)], np.int32))["audio_features"][0]))
    p = AudioPrefill(directory, contract=contract, cache=cache, capacities=(512,))
    ids = p.expand(PROMPT, [1, 1])
    return ids, p.run(ids, np.stack(features))


def test_f32_reference_matches_transformers_fp32(hf_case, cache):
    from oracles.hf_prefill import run_forward

    _, model, _, _, mel = hf_case
    ids, ours = _ours(hf_case, cache, F32_REFERENCE.name)
    ref = run_forward(model, ids, mel)
    for name in ("inputs_embeds", "per_layer_inputs"):
        got = getattr(ours, name)
        assert got.shape == ref[name].shape, name
        assert relative_l2(got, ref[name]) <= 1e-4, f"{name}: {relative_l2(got, ref[name]):.3e}"


def test_mlx_cuda_v1_is_as_close_to_fp32_as_transformers_bf16(hf_case, cache):
    from oracles.hf_prefill import run_forward

    torch, model, _, _, mel = hf_case
    ids, ours = _ours(hf_case, cache, MLX_CUDA_V1.name)
    fp32 = run_forward(model, ids, mel)
    bf16 = run_forward(model, ids, mel, torch.bfloat16)
    for name in ("inputs_embeds", "per_layer_inputs"):
        got = getattr(ours, name)
        ours_err, hf_err = relative_l2(got, fp32[name]), relative_l2(bf16[name], fp32[name])
        assert ours_err <= 1.5 * hf_err, f"{name}: ours {ours_err:.3e} vs transformers-bf16 {hf_err:.3e}"
        assert ours_err <= 1e-2, name  # a handful of BF16 rounding points (2^-9 each), nothing more
    text_rows = (ours.audio_rows < 0) & (ids < TEXT.audio_vocab_offset)
    np.testing.assert_array_equal(ours.inputs_embeds[text_rows], bf16["inputs_embeds"][text_rows])


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_prefill_writes_the_npz(checkpoint, cache, tmp_path):
    import soundfile as sf
    from click.testing import CliRunner

    from gemma3n_iree.runtime.commands.cli import main

    rng = np.random.default_rng(0)
    wavs = []
    for i, seconds in enumerate((1.0, 2.2)):
        path = tmp_path / f"clip{i}.wav"
        sf.write(path, (0.1 * rng.standard_normal(int(16000 * seconds))).astype(np.float32), 16000)
        wavs.append(str(path))
    out = tmp_path / "prefill.npz"
    args = [
        "prefill",
        "--checkpoint",
        str(checkpoint),
        "--prompt",
        f"Transcribe {AUDIO_TOKEN} and {AUDIO_TOKEN}.",
        "--frames",
        "256",
        "--cache-dir",
        str(cache.root),
        "-o",
        str(out),
        *wavs,
    ]
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 0, run.output
    z = np.load(out)
    assert sorted(z.files) == ["audio_rows", "input_ids", "inputs_embeds", "per_layer_inputs"]
    length = len(z["input_ids"])
    assert z["input_ids"].dtype == np.int32 and z["audio_rows"].dtype == np.int32
    assert z["inputs_embeds"].shape == (length, TEXT.hidden_size) and z["inputs_embeds"].dtype == np.float32
    assert z["per_layer_inputs"].shape == (length, TEXT.num_hidden_layers, TEXT.hidden_size_per_layer_input)
    np.testing.assert_array_equal(z["audio_rows"][z["audio_rows"] >= 0], np.arange(2 * N))
    # explicit ids give the same tensors
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text(" ".join(map(str, z["input_ids"])))
    out2 = tmp_path / "prefill2.npz"
    run = CliRunner().invoke(
        main,
        [
            a if a != str(out) else str(out2)
            for a in args
            if a not in ("--prompt", f"Transcribe {AUDIO_TOKEN} and {AUDIO_TOKEN}.")
        ]
        + ["--input-ids", str(ids_file)],
    )
    assert run.exit_code == 0, run.output
    z2 = np.load(out2)
    for key in z.files:
        np.testing.assert_array_equal(z[key], z2[key], err_msg=key)
    # a typed error becomes one message, not a traceback
    run = CliRunner().invoke(
        main,
        [
            "prefill",
            "--checkpoint",
            str(checkpoint),
            "--prompt",
            f"one {AUDIO_TOKEN}",
            "--frames",
            "256",
            "--cache-dir",
            str(cache.root),
            "-o",
            str(out2),
            *wavs,
        ],
    )
    assert run.exit_code == 1 and "marker" in run.output
