"""Speech in, tokens out, end to end, against transformers' `generate(do_sample=False)` with the audio.

One checkpoint, written by transformers' own `save_pretrained` from the whole tiny Gemma 3n model with audio
(tests/oracles/hf_audio_model.py: the tiny audio tower, the tiny decoder with every feature, every parameter
random), plus the test tokenizer.  Our side is the product's composed pipeline (`runtime/transcribe.py`):
host log-mel -> the compiled encoder (llvm-cpu) -> the compiled prefill stage (llvm-cpu) -> greedy decoding on
the COMPILED decoder program (llvm-cpu, built by `runtime/transcribe_decoder.py` for the windows: one prompt
bucket, capacity = prompt + 32 new tokens, decode widths 1 and 2), and the same on the contract's emulation
(`EmulatedDecoder`) as the reference the program is held to.  transformers' side is its feature extractor
and its own `Gemma3nForConditionalGeneration.generate` on the same samples and prompt ids.

* f32-reference: the compiled program's greedy ids equal transformers-fp32's, and the emulation's, for 32 new
  tokens of the bundled speech (stop ids off on both sides: the random model would emit them at any time).
  Why exact equality can be asserted: every stage's f32-reference output is within ~1e-6 relative of
  transformers-fp32 (tests/test_prefill.py, tests/test_decoder_numerics.py, tests/test_decoder_program.py),
  far below a random model's top-2 logit gaps (scripts/greedy_near_ties.py measures them).
* Audio over 30 s (the speech repeated to 35.2 s): two windows, [0, 30] and [30, 35.2], each transcribed on its
  own (decoded together in the program's width-2 entry), each window's ids equal to transformers' on that
  window's samples; nothing is truncated (the windows cover the file).
* `gemma3n-iree transcribe` (the registered command, compiled decoder): the text per file and `--json`, the
  artifact cache reused, a prebuilt `--decoder-artifact`, and refusals.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from gemma3n_iree.contracts import F32_REFERENCE  # noqa: E402
from gemma3n_iree.decoder_config import builtin_decoder_config  # noqa: E402
from gemma3n_iree.runtime.artifacts import ArtifactCache  # noqa: E402
from gemma3n_iree.runtime.decoder import DecoderSession  # noqa: E402
from gemma3n_iree.runtime.emulated_decoder import EmulatedDecoder  # noqa: E402
from gemma3n_iree.runtime.frontend import load_audio  # noqa: E402
from gemma3n_iree.runtime.transcribe import DEFAULT_PROMPT, Transcriber, windows_of  # noqa: E402
from gemma3n_iree.runtime.generate import GenerationError  # noqa: E402
from gemma3n_iree.runtime.transcribe_decoder import check_fits, load_transcription_decoder  # noqa: E402

from oracles import hf_audio_model as A  # noqa: E402
from oracles.configs import TINY  # noqa: E402

CFG = builtin_decoder_config("tiny")
SPEECH = Path(__file__).parent / "data" / "speech_16k.wav"
CAPACITY = 256  # the tiny model's max_position_embeddings: one window's ~208 prompt tokens + 32 new ones
NEW_TOKENS = 32


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """transformers' model and checkpoint, the artifact cache, and two transcribers sharing one encoder and
    prefill stage: on the compiled decoder program and on the emulation."""
    model = A.make_model(TINY, CFG, seed=21)
    directory = A.write_checkpoint(model, tmp_path_factory.mktemp("gemma3n-tiny"))
    cache = ArtifactCache(tmp_path_factory.mktemp("transcribe-cache"))
    emulated = EmulatedDecoder(directory, F32_REFERENCE.name, slots=2, capacity=CAPACITY)
    reference = Transcriber(directory, emulated, contract=F32_REFERENCE.name, cache=cache, capacities=(CAPACITY,),
                            encoder_options={"frame_buckets": (2997,)})
    prompt_tokens = len(reference.prefill.expand(DEFAULT_PROMPT, [1]))
    program = load_transcription_decoder(directory, "llvm-cpu", F32_REFERENCE.name, prompt_tokens=prompt_tokens,
                                         max_new_tokens=NEW_TOKENS, slots=2, cache=cache)
    compiled = Transcriber(directory, program, prefill=reference.prefill)
    return model, directory, cache, compiled, reference


def test_the_transcription_decoder_program_is_sized_for_the_windows(case):
    _, _, _, compiled, _ = case
    program = compiled.decoder
    assert isinstance(program, DecoderSession)
    prompt_tokens = len(compiled.prefill.expand(DEFAULT_PROMPT, [1]))
    # the 64-rounded prompt bucket (256) + 32 would exceed the tiny model's 256 positions: the exact prompt
    assert program.info.prompts == (prompt_tokens,) and program.capacity == prompt_tokens + NEW_TOKENS
    assert program.slots == 2 and program.decode_widths == (1, 2) and program.info.contexts == (program.capacity,)
    assert program.contract is F32_REFERENCE and program.max_prompt_tokens == prompt_tokens


def test_the_checkpoint_is_transformers_own(case):
    _, directory, _, transcriber, _ = case
    config = json.loads((directory / "config.json").read_text())
    assert config["architectures"] == ["Gemma3nForConditionalGeneration"] and config["transformers_version"]
    assert transcriber.config == CFG  # our strict parser reads transformers' config.json back to the same model
    assert transcriber.stop_ids == {1, 106}  # config.json and generation_config.json eos ids, <end_of_turn>


def test_f32_reference_greedy_ids_equal_transformers_fp32(case, monkeypatch):
    model, _, _, compiled, reference = case
    ids = compiled.prefill.expand(DEFAULT_PROMPT, [1])
    samples = load_audio(SPEECH)[0]
    want = A.generate_ids(model, ids, samples, NEW_TOKENS)
    for transcriber in (compiled, reference):
        monkeypatch.setattr(transcriber, "stop_ids", frozenset())
        streamed: list[int] = []
        run = transcriber.transcribe_files([SPEECH], DEFAULT_PROMPT, NEW_TOKENS,
                                           on_token=lambda w, e: streamed.append(e.token))
        [window] = run.files[0].windows
        assert window.tokens == want == streamed and window.finish_reason == "length", type(transcriber.decoder)
        assert window.text == transcriber.tokenizer.decode(want) and run.files[0].text == window.text.strip()
        assert (window.window.start_s, window.window.end_s) == (0.0, len(samples) / 16000)


def test_audio_over_30_s_is_transcribed_window_by_window(case, monkeypatch):
    model, _, _, compiled, _ = case
    monkeypatch.setattr(compiled, "stop_ids", frozenset())
    speech = load_audio(SPEECH)[0]
    gap = np.zeros(3200, np.float32)
    long = np.concatenate([np.concatenate([speech, gap])] * 11)[:int(35.2 * 16000)]
    assert len(long) == int(35.2 * 16000)
    run = compiled.transcribe_audio([("long", long)], DEFAULT_PROMPT, 8)
    windows = run.files[0].windows
    assert [(w.window.start_s, w.window.end_s) for w in windows] == [(0.0, 30.0), (30.0, 35.2)]
    assert windows_of(35.2, 0) == [w.window for w in windows]
    ids = compiled.prefill.expand(DEFAULT_PROMPT, [1])
    for w in windows:
        part = long[int(w.window.start_s * 16000):int(w.window.end_s * 16000)]
        assert w.tokens == A.generate_ids(model, ids, part, 8), w.window
    assert run.files[0].text == " ".join(w.text.strip() for w in windows if w.text.strip())


def test_cli_prints_the_text_and_json(case):
    """The registered command: compiles nothing new (the fixture's programs are in the cache under the same
    identities), then the same with a prebuilt --decoder-artifact, and the refusals."""
    from click.testing import CliRunner

    from gemma3n_iree.runtime.cli import main

    _, directory, cache, compiled, _ = case
    args = ["transcribe", "--checkpoint", str(directory), "--contract", F32_REFERENCE.name, "--frames", "2997",
            "--capacity", str(CAPACITY), "--cache-dir", str(cache.root), "--slots", "2"]
    run = CliRunner().invoke(main, args + ["--max-new-tokens", str(NEW_TOKENS), "--json", str(SPEECH), str(SPEECH)])
    assert run.exit_code == 0, run.output
    assert "compiling" not in run.stderr.lower(), run.stderr
    doc = json.loads(run.stdout)
    assert [f["file"] for f in doc["files"]] == [str(SPEECH)] * 2
    first = doc["files"][0]
    assert first["windows"][0]["start_s"] == 0.0 and len(first["windows"]) == 1
    tokens = first["windows"][0]["tokens"]
    assert 1 <= len(tokens) <= NEW_TOKENS and first["text"] == compiled.tokenizer.decode(tokens).strip()
    assert first["windows"][0]["finish_reason"] in ("stop", "length")
    assert doc["files"][1]["windows"][0]["tokens"] == tokens  # the same audio, batched with the first
    assert doc["timings_s"]["generate"] > 0 and doc["tokens_per_s"] > 0 and doc["real_time_factor"] > 0
    assert "window 1/1" in run.stderr and "real-time factor" in run.stderr
    prebuilt = ["--decoder-artifact", _program_path(cache)]
    plain = CliRunner().invoke(main, args + prebuilt + ["--max-new-tokens", "3", str(SPEECH)])
    assert plain.exit_code == 0, plain.output
    assert plain.stdout == compiled.tokenizer.decode(tokens[:3]).strip() + "\n"  # greedy: a prefix of the above
    bad = CliRunner().invoke(main, args + ["--prompt", "<audio_soft_token> <audio_soft_token>", str(SPEECH)])
    assert bad.exit_code == 1 and "marker" in bad.output
    long = CliRunner().invoke(main, args + ["--max-new-tokens", "100", str(SPEECH)])
    assert long.exit_code == 1 and "more than the model's context of 256 (max_position_embeddings)" in long.output
    unfit = CliRunner().invoke(main, args + prebuilt + ["--max-new-tokens", str(NEW_TOKENS + 2), str(SPEECH)])
    assert unfit.exit_code == 1 and "cannot transcribe these windows" in unfit.output and "capacity" in unfit.output
    with pytest.raises(GenerationError, match="x.vmfb: .* built under contract f32-reference, not mlx-cuda-v1"):
        check_fits(compiled.decoder, "x.vmfb", "mlx-cuda-v1", 200, 3)
    with pytest.raises(GenerationError, match=r"prompt buckets \[\d+\] do not hold a window's 300 tokens"):
        check_fits(compiled.decoder, "x.vmfb", F32_REFERENCE.name, 300, 3)


def _program_path(cache: ArtifactCache, kind: str = "decoder") -> str:
    [path] = [p for p in cache.root.rglob("*.vmfb") if kind in p.name]
    return str(path)


def test_transcribe_help_explains_every_option():
    import click
    from click.testing import CliRunner

    from gemma3n_iree.runtime.cli import main

    command = main.commands["transcribe"]
    result = CliRunner().invoke(main, ["transcribe", "--help"])
    assert result.exit_code == 0 and result.output.startswith("Usage:")
    assert "Transcribe speech FILES" in result.output and "never truncated" in " ".join(result.output.split())
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.opts[-1] in result.output and param.help and param.help.strip(), param.opts
