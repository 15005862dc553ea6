"""Speech in, tokens out, end to end, against transformers' `generate(do_sample=False)` with the audio.

One checkpoint, written by transformers' own `save_pretrained` from the whole tiny Gemma 3n model with audio
(tests/oracles/hf_audio_model.py: the tiny audio tower, the tiny decoder with every feature, every parameter
random), plus the test tokenizer.  Our side is the product's composed pipeline (`runtime/transcribe.py`):
host log-mel -> the compiled encoder (llvm-cpu) -> the compiled prefill stage (llvm-cpu) -> greedy decoding on
the decoder interface, here the contract's emulation (`EmulatedDecoder`), so only the decoder half changes
when the compiled decoder exists.  transformers' side is its feature extractor and its own
`Gemma3nForConditionalGeneration.generate` on the same samples and prompt ids.

* f32-reference: the greedy ids equal transformers-fp32's for 32 new tokens of the bundled speech (stop ids off
  on both sides: the random model would emit them at any time).  Why exact equality can be asserted: every
  stage's f32-reference output is within ~1e-6 relative of transformers-fp32 (tests/test_prefill.py,
  tests/test_decoder_numerics.py), far below a random model's top-2 logit gaps (scripts/greedy_near_ties.py
  measures them).
* Audio over 30 s (the speech repeated to 35.2 s): two windows, [0, 30] and [30, 35.2], each transcribed on its
  own, each window's ids equal to transformers' on that window's samples; nothing is truncated (the windows
  cover the file).
* `gemma3n-iree transcribe` (built with the emulated decoder): the text per file and `--json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from oracles import hf_audio_model as A  # noqa: E402
from oracles.configs import TINY  # noqa: E402

from gemma3n_iree.contracts import F32_REFERENCE  # noqa: E402
from gemma3n_iree.model.decoder_config import builtin_decoder_config  # noqa: E402
from gemma3n_iree.runtime.artifacts import ArtifactCache  # noqa: E402
from gemma3n_iree.runtime.emulated_decoder import EmulatedDecoder  # noqa: E402
from gemma3n_iree.runtime.frontend import load_audio  # noqa: E402
from gemma3n_iree.runtime.transcribe import DEFAULT_PROMPT, Transcriber, windows_of  # noqa: E402

CFG = builtin_decoder_config("tiny")
SPEECH = Path(__file__).parent / "data" / "speech_16k.wav"
CAPACITY = 256  # the tiny decoder's max_position_embeddings: one window's ~208 prompt tokens + 32 new ones
NEW_TOKENS = 32


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    model = A.make_model(TINY, CFG, seed=21)
    directory = A.write_checkpoint(model, tmp_path_factory.mktemp("gemma3n-tiny"))
    cache = ArtifactCache(tmp_path_factory.mktemp("transcribe-cache"))
    decoder = EmulatedDecoder(directory, F32_REFERENCE.name, slots=2, capacity=CAPACITY)
    transcriber = Transcriber(directory, decoder, contract=F32_REFERENCE.name, cache=cache, capacities=(CAPACITY,),
                              encoder_options={"frame_buckets": (2997,)})
    return model, directory, cache, transcriber


def test_the_checkpoint_is_transformers_own(case):
    _, directory, _, transcriber = case
    config = json.loads((directory / "config.json").read_text())
    assert config["architectures"] == ["Gemma3nForConditionalGeneration"] and config["transformers_version"]
    assert transcriber.config == CFG  # our strict parser reads transformers' config.json back to the same model
    assert transcriber.stop_ids == {1, 106}  # config.json and generation_config.json eos ids, <end_of_turn>


def test_f32_reference_greedy_ids_equal_transformers_fp32(case, monkeypatch):
    model, _, _, transcriber = case
    monkeypatch.setattr(transcriber, "stop_ids", frozenset())
    streamed: list[int] = []
    run = transcriber.transcribe_files([SPEECH], DEFAULT_PROMPT, NEW_TOKENS, on_token=lambda w, e: streamed.append(e.token))
    [window] = run.files[0].windows
    ids = transcriber.prefill.expand(DEFAULT_PROMPT, [1])
    samples = load_audio(SPEECH)[0]
    want = A.generate_ids(model, ids, samples, NEW_TOKENS)
    assert window.tokens == want == streamed and window.finish_reason == "length"
    assert window.text == transcriber.tokenizer.decode(want) and run.files[0].text == window.text.strip()
    assert (window.window.start_s, window.window.end_s) == (0.0, len(samples) / 16000)


def test_audio_over_30_s_is_transcribed_window_by_window(case, monkeypatch):
    model, _, _, transcriber = case
    monkeypatch.setattr(transcriber, "stop_ids", frozenset())
    speech = load_audio(SPEECH)[0]
    gap = np.zeros(3200, np.float32)
    long = np.concatenate([np.concatenate([speech, gap])] * 11)[:int(35.2 * 16000)]
    assert len(long) == int(35.2 * 16000)
    run = transcriber.transcribe_audio([("long", long)], DEFAULT_PROMPT, 6)
    windows = run.files[0].windows
    assert [(w.window.start_s, w.window.end_s) for w in windows] == [(0.0, 30.0), (30.0, 35.2)]
    assert windows_of(35.2, 0) == [w.window for w in windows]
    ids = transcriber.prefill.expand(DEFAULT_PROMPT, [1])
    for w in windows:
        part = long[int(w.window.start_s * 16000):int(w.window.end_s * 16000)]
        assert w.tokens == A.generate_ids(model, ids, part, 6), w.window
    assert run.files[0].text == " ".join(w.text.strip() for w in windows if w.text.strip())


def test_cli_prints_the_text_and_json(case, tmp_path):
    from click.testing import CliRunner

    from gemma3n_iree.runtime.transcribe_cli import make_transcribe_command

    _, directory, cache, transcriber = case

    def emulated(checkpoint, target, contract, slots):
        return EmulatedDecoder(checkpoint, contract, slots=slots, capacity=CAPACITY)

    command = make_transcribe_command(emulated)
    args = ["--checkpoint", str(directory), "--contract", F32_REFERENCE.name, "--frames", "2997",
            "--capacity", str(CAPACITY), "--cache-dir", str(cache.root), "--max-new-tokens", "3", "--slots", "2"]
    run = CliRunner().invoke(command, args + ["--json", str(SPEECH), str(SPEECH)])
    assert run.exit_code == 0, run.output
    doc = json.loads(run.stdout)
    assert [f["file"] for f in doc["files"]] == [str(SPEECH)] * 2
    first = doc["files"][0]
    assert first["windows"][0]["start_s"] == 0.0 and len(first["windows"]) == 1
    tokens = first["windows"][0]["tokens"]
    assert len(tokens) <= 3 and first["text"] == transcriber.tokenizer.decode(tokens).strip()
    assert doc["files"][1]["windows"][0]["tokens"] == tokens  # the same audio, batched with the first
    assert "window 1/1" in run.stderr and "real-time factor" in run.stderr
    plain = CliRunner().invoke(command, args + [str(SPEECH)])
    assert plain.exit_code == 0 and plain.stdout == first["text"] + "\n"
    bad = CliRunner().invoke(command, args + ["--prompt", "<audio_soft_token> <audio_soft_token>", str(SPEECH)])
    assert bad.exit_code == 1 and "marker" in bad.output
    long = CliRunner().invoke(command, args + ["--max-new-tokens", "100", str(SPEECH)])
    assert long.exit_code == 1 and "need 305 positions, more than the decoder's context capacity of 256" in long.output


def test_transcribe_help_explains_every_option():
    import click
    from click.testing import CliRunner

    from gemma3n_iree.runtime.transcribe_cli import make_transcribe_command

    command = make_transcribe_command(lambda *args: None)
    result = CliRunner().invoke(command, ["--help"])
    assert result.exit_code == 0 and result.output.startswith("Usage:")
    assert "Transcribe speech FILES" in result.output and "never truncated" in " ".join(result.output.split())
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.opts[-1] in result.output and param.help and param.help.strip(), param.opts
