"""Speech in, tokens out, end to end, against transformers' `generate(do_sample=False)` with the audio.

One checkpoint, written by transformers' own `save_pretrained` from the whole tiny Gemma 3n model with audio
(tests/oracles/hf_audio_model.py: the tiny audio tower, the tiny decoder with every feature, every parameter
random), plus the test tokenizer.  Our side is the product's composed pipeline (`runtime/text/transcribe.py`):
host log-mel -> the compiled encoder (llvm-cpu) -> the compiled prefill stage (llvm-cpu) -> greedy decoding on
the COMPILED decoder program (llvm-cpu, built by `runtime/text/transcribe_decoder.py` for the windows: one prompt
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
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")

from oracles import hf_audio_model as A  # noqa: E402
from oracles.configs import TINY  # noqa: E402

from gemma3n_iree.contracts import F32_REFERENCE  # noqa: E402
from gemma3n_iree.model.checkpoint_config import CheckpointConfig  # noqa: E402
from gemma3n_iree.model.decoder_config import builtin_decoder_config  # noqa: E402
from gemma3n_iree.runtime.audio.frontend import load_audio  # noqa: E402
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache  # noqa: E402
from gemma3n_iree.runtime.text.decoder import DecoderSession  # noqa: E402
from gemma3n_iree.runtime.text.emulated_decoder import EmulatedDecoder  # noqa: E402
from gemma3n_iree.runtime.text.generate import GenerationError  # noqa: E402
from gemma3n_iree.runtime.text.transcribe import (  # noqa: E402
    DEFAULT_PROMPT,
    TranscribeProgress,
    Transcriber,
    transcribe_progress_line,
    windows_of,
)
from gemma3n_iree.runtime.text.transcribe_decoder import check_fits, load_transcription_decoder  # noqa: E402
from gemma3n_iree.serve.errors import ServeError  # noqa: E402

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
    reference = Transcriber(
        directory,
        emulated,
        contract=F32_REFERENCE.name,
        cache=cache,
        capacities=(CAPACITY,),
        encoder_options={"frame_buckets": (2997,)},
    )
    prompt_tokens = len(reference.prefill.expand(DEFAULT_PROMPT, [1]))
    program = load_transcription_decoder(
        directory,
        "llvm-cpu",
        F32_REFERENCE.name,
        prompt_tokens=prompt_tokens,
        max_new_tokens=NEW_TOKENS,
        slots=2,
        cache=cache,
    )
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
        run = transcriber.transcribe_files(
            [SPEECH], DEFAULT_PROMPT, NEW_TOKENS, on_token=lambda w, e: streamed.append(e.token)
        )
        [window] = run.files[0].windows
        assert window.tokens == want == streamed and window.finish_reason == "length", type(transcriber.decoder)
        assert window.text == transcriber.tokenizer.decode(want) and run.files[0].text == window.text.strip()
        assert (window.window.start_s, window.window.end_s) == (0.0, len(samples) / 16000)


def test_audio_over_30_s_is_transcribed_window_by_window(case, monkeypatch):
    model, _, _, compiled, _ = case
    monkeypatch.setattr(compiled, "stop_ids", frozenset())
    speech = load_audio(SPEECH)[0]
    gap = np.zeros(3200, np.float32)
    long = np.concatenate([np.concatenate([speech, gap])] * 11)[: int(35.2 * 16000)]
    assert len(long) == int(35.2 * 16000)
    run = compiled.transcribe_audio([("long", long)], DEFAULT_PROMPT, 8)
    windows = run.files[0].windows
    assert [(w.window.start_s, w.window.end_s) for w in windows] == [(0.0, 30.0), (30.0, 35.2)]
    assert windows_of(35.2, 0) == [w.window for w in windows]
    ids = compiled.prefill.expand(DEFAULT_PROMPT, [1])
    for w in windows:
        part = long[int(w.window.start_s * 16000) : int(w.window.end_s * 16000)]
        assert w.tokens == A.generate_ids(model, ids, part, 8), w.window
    assert run.files[0].text == " ".join(w.text.strip() for w in windows if w.text.strip())


def test_windows_share_prefill_calls_where_the_decoder_takes_several(case, monkeypatch):
    """A decoder taking two prompts per prefill call: a 35.2 s input's two windows go through one prefill-stage
    call (its entry for two of the decoder's longest prompts) and one decoder prefill call, and get the tokens
    the one-window-per-call run gives them."""
    _, directory, _, _, reference = case
    speech = np.tile(load_audio(SPEECH)[0], 12)[: int(35.2 * 16000)]
    monkeypatch.setattr(reference, "stop_ids", frozenset())
    want = [w.tokens for w in reference.transcribe_audio([("long", speech)], DEFAULT_PROMPT, 6).files[0].windows]
    decoder = EmulatedDecoder(directory, F32_REFERENCE.name, slots=2, capacity=CAPACITY, prefill_widths=(1, 2))
    prefill = reference.prefill
    monkeypatch.setattr(prefill, "capacities", (CAPACITY, 2 * CAPACITY))
    calls = {"stage": [], "decoder": []}
    run_many, prefill_batch = prefill.run_many, decoder.prefill_batch_greedy
    monkeypatch.setattr(
        prefill, "run_many", lambda prompts, *a: calls["stage"].append(len(prompts)) or run_many(prompts, *a)
    )
    monkeypatch.setattr(
        decoder,
        "prefill_batch_greedy",
        lambda slots, *a: calls["decoder"].append(tuple(slots)) or prefill_batch(slots, *a),
    )
    batched = Transcriber(directory, decoder, prefill=prefill)
    monkeypatch.setattr(batched, "stop_ids", frozenset())
    states: list = []
    run = batched.transcribe_audio([("long", speech)], DEFAULT_PROMPT, 6, on_progress=states.append)
    got = [w.tokens for w in run.files[0].windows]
    assert got == want and len(got) == 2
    assert calls == {"stage": [2], "decoder": [(0, 1)]}
    # the terminal's progress line, told after each window (no message per window then)
    assert [(p.windows_done, p.windows, p.files_done, p.files, p.tokens) for p in states] == [
        (1, 2, 0, 1, 6),
        (2, 2, 1, 1, 12),
    ]
    assert states[-1].audio_s_done == pytest.approx(35.2)
    done = TranscribeProgress(2, 2, 1, 1, 12, 35.2, 2.0)
    assert transcribe_progress_line(done) == (
        "transcribing: 1/1 files, 2/2 windows, 12 tokens, 35.2 audio-s, 17.6 audio-s/s"
    )


def test_cli_prints_the_text_and_json(case):
    """The registered command: compiles nothing new (the fixture's programs are in the cache under the same
    identities), then the same with a prebuilt --decoder-artifact, and the refusals."""
    from click.testing import CliRunner

    from gemma3n_iree.runtime.commands.cli import main

    _, directory, cache, compiled, _ = case
    args = [
        "transcribe",
        "--checkpoint",
        str(directory),
        "--contract",
        F32_REFERENCE.name,
        "--frames",
        "2997",
        "--capacity",
        str(CAPACITY),
        "--cache-dir",
        str(cache.root),
        "--slots",
        "2",
    ]
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
    timings = doc["timings_s"]  # the first token after the files' reading, the encoder and the prefill stage
    assert timings["load"] + timings["encode"] + timings["prefill"] < timings["first_token"] < timings["total"]
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
    with pytest.raises(GenerationError, match=r"it has no sampler \(emit-gemma3n --stage decoder --sampling"):
        check_fits(compiled.decoder, "x.vmfb", F32_REFERENCE.name, 200, 3, sampling=True)
    with pytest.raises(GenerationError, match=r"do not hold a chat of 9999 positions"):
        check_fits(compiled.decoder, "x.vmfb", F32_REFERENCE.name, 200, 3, chat_tokens=9999)


def _program_path(cache: ArtifactCache, kind: str = "decoder") -> str:
    [path] = [p for p in cache.root.rglob("*.vmfb") if kind in p.name]
    return str(path)


def test_transcribe_help_explains_every_option():
    import click
    from click.testing import CliRunner

    from gemma3n_iree.runtime.commands.cli import main

    command = main.commands["transcribe"]
    result = CliRunner().invoke(main, ["transcribe", "--help"])
    assert result.exit_code == 0 and result.output.startswith("Usage:")
    assert "Transcribe speech FILES" in result.output and "never truncated" in " ".join(result.output.split())
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.opts[-1] in result.output and param.help and param.help.strip(), param.opts


# ---------------------------------------------------------------------------------------------- the server
SERVER_NEW_TOKENS = 8  # per window: the load test's requests stay short on the 2-core CPU


@pytest.fixture(scope="module")
def server(case):
    """`gemma3n-iree serve`'s pieces on the tiny checkpoint: the scheduler (its encoder and prefill artifacts
    are the fixture's, found in the cache) and the transcription service on a compiled decoder program of 4
    slots (decode widths 1 and 4), under f32-reference; (url, scheduler, service)."""
    from gemma3n_iree.serve.admission import Limits
    from gemma3n_iree.serve.launch import BackgroundServer, build_scheduler, build_transcription_service
    from gemma3n_iree.serve.openai_routes import add_transcription_routes

    _, directory, cache, _, _ = case
    limits = Limits(
        max_upload_bytes=16 << 20,
        max_seconds=300.0,
        max_wait_s=0.02,
        frontend_workers=2,
        max_queue=256,
    )
    scheduler = build_scheduler(
        directory,
        contract=F32_REFERENCE.name,
        frame_buckets=(2997,),
        cache_dir=cache.root,
        capacities=(CAPACITY,),
        limits=limits,
    )
    service = build_transcription_service(
        scheduler,
        directory,
        target="llvm-cpu",
        contract=F32_REFERENCE.name,
        slots=4,
        max_new_tokens=SERVER_NEW_TOKENS,
        cache=cache,
        model="tiny",
    )
    with BackgroundServer(scheduler, extensions=[lambda app: add_transcription_routes(app, service)]) as url:
        yield url, scheduler, service


def wav(samples: np.ndarray, subtype: str = "FLOAT", rate: int = 16000) -> bytes:
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, samples, rate, format="WAV", subtype=subtype)
    return buf.getvalue()


def long_speech(seconds: float) -> np.ndarray:
    speech = load_audio(SPEECH)[0]
    one = np.concatenate([speech, np.zeros(3200, np.float32)])
    return np.tile(one, int(seconds * 16000) // len(one) + 1)[: int(seconds * 16000)]


SHORT, LONG = wav(load_audio(SPEECH)[0]), wav(long_speech(35.2))


async def post(session, url: str, audio: bytes, *, task: str = "transcriptions", **fields: str):
    """One OpenAI-style request; (status, content type, body: bytes, or the list of SSE events when streamed)."""
    import aiohttp

    form = aiohttp.FormData()
    form.add_field("file", audio, filename="speech.wav", content_type="audio/wav")
    for name, value in {"model": "tiny", **fields}.items():
        form.add_field(name, value)
    async with session.post(f"{url}/v1/audio/{task}", data=form) as response:
        body = await response.read()
        if response.content_type == "text/event-stream":
            events = [json.loads(line[len("data: ") :]) for line in body.decode().split("\n\n") if line]
            return response.status, response.content_type, events
        return response.status, response.content_type, body


#: The load test's kinds of request: (audio, task, fields)
REQUESTS = [
    (SHORT, "transcriptions", {}),
    (SHORT, "transcriptions", {"response_format": "text", "language": "en"}),
    (LONG, "transcriptions", {"response_format": "verbose_json", "timestamp_granularities[]": "segment"}),
    (LONG, "transcriptions", {"stream": "true"}),
    (SHORT, "transcriptions", {"stream": "true", "response_format": "text", "prompt": "Names: Ada, Grace."}),
    (LONG, "transcriptions", {"response_format": "srt"}),
    (SHORT, "translations", {"response_format": "json"}),
    (SHORT, "transcriptions", {"include[]": "logprobs"}),
]


def run_async(coro):
    import asyncio

    return asyncio.run(coro)


def test_server_answers_as_the_pipeline_does(case, server):
    """A request's body is built from what `Transcriber` gives for the same audio and prompt."""
    import aiohttp

    from gemma3n_iree.serve import openai_audio as api

    _, _, _, compiled, _ = case
    url, _, service = server

    async def go():
        async with aiohttp.ClientSession() as session:
            return await post(session, url, LONG, response_format="verbose_json")

    status, ctype, body = run_async(go())
    assert status == 200 and ctype == "application/json", body
    doc = json.loads(body)
    # the same windows through the CLI's path: the same prompt ids, prefill stage and greedy tokens
    decoder = service.decoder
    alone = Transcriber(case[1], decoder, prefill=compiled.prefill).transcribe_audio(
        [("speech.wav", long_speech(35.2))], api.instruction("transcribe"), SERVER_NEW_TOKENS, logprobs=True
    )
    want = alone.files[0]
    assert [s["tokens"] for s in doc["segments"]] == [w.tokens for w in want.windows]
    assert [(s["start"], s["end"]) for s in doc["segments"]] == [(0.0, 30.0), (30.0, 35.2)]
    assert doc["text"] == want.text and doc["duration"] == 35.2 and doc["task"] == "transcribe"


def test_load_every_concurrent_result_equals_the_request_alone(server):
    """32 concurrent requests of 8 kinds (json, text, verbose_json, srt, streamed, logprobs; short audio and
    35.2 s, two windows; transcriptions and translations) on 4 decoder slots: each answer is byte for byte
    the answer to the same request sent alone."""
    import asyncio

    import aiohttp

    url, _, service = server
    before = service.metrics()

    async def go():
        async with aiohttp.ClientSession() as session:
            alone = [await post(session, url, audio, task=task, **fields) for audio, task, fields in REQUESTS]
            together = await asyncio.gather(
                *(post(session, url, audio, task=task, **fields) for audio, task, fields in REQUESTS * 4)
            )
            return alone, together

    alone, together = run_async(go())
    for (status, _, body), (_, task, fields) in zip(alone, REQUESTS):
        assert status == 200, (task, fields, body)
    for i, got in enumerate(together):
        assert got == alone[i % len(REQUESTS)], REQUESTS[i % len(REQUESTS)][1:]
    streamed = alone[3][2]
    assert [e["type"] for e in streamed[:-1]] == ["transcript.text.delta"] * (len(streamed) - 1)
    assert streamed[-1]["type"] == "transcript.text.done"
    assert "".join(e["delta"] for e in streamed[:-1]) == streamed[-1]["text"]
    assert streamed[-1]["text"] == json.loads(alone[2][2])["text"]  # the same audio and prompt as verbose_json
    after = service.metrics()
    assert after["completed"] - before["completed"] == 40 and after["slots_in_use"] == 0
    assert after["mean_batch_width"] > 1.5, after  # decode steps were shared between requests
    assert after["tokens_generated"] > before["tokens_generated"]


@pytest.mark.parametrize("stream", ["false", "true"])
def test_client_disconnect_cancels_its_windows(server, stream):
    """A request of 10 windows on 4 slots: the client goes away once its windows reach the decoder; its
    sequences are cancelled and every slot is free again, nothing completes."""
    import asyncio
    import time

    import aiohttp

    url, _, service = server
    before = service.metrics()
    audio = wav(long_speech(290.0), "PCM_16")

    async def go():
        async with aiohttp.ClientSession() as session:
            request = asyncio.ensure_future(post(session, url, audio, stream=stream))
            while service.metrics()["windows"] < before["windows"] + 10 and not request.done():
                await asyncio.sleep(0.005)
            assert not request.done(), request.result()
            request.cancel()  # the client goes away: its connection closes
            with pytest.raises(asyncio.CancelledError):
                await request

    run_async(go())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = service.metrics()
        if now["cancelled"] > before["cancelled"] and now["slots_in_use"] == 0 and now["windows_waiting"] == 0:
            break
        time.sleep(0.05)
    assert (now["cancelled"], now["completed"]) == (before["cancelled"] + 1, before["completed"]), now
    assert now["slots_in_use"] == 0 and now["windows_waiting"] == 0


def test_server_refusals_are_openai_errors(server):
    import aiohttp

    url, scheduler, _ = server

    async def go():
        async with aiohttp.ClientSession() as session:
            out = {
                "model": await post(session, url, SHORT, model="whisper-1"),
                "temperature": await post(session, url, SHORT, temperature="0.5"),
                "format": await post(session, url, SHORT, response_format="diarized_json"),
                "stream_srt": await post(session, url, SHORT, stream="true", response_format="srt"),
                "not_audio": await post(session, url, b"RIFF not really"),
                "too_long": await post(session, url, wav(np.zeros(301 * 8000, np.float32), "PCM_16", 8000)),
                "prompt": await post(session, url, SHORT, prompt="<start_of_turn>user"),
            }
            slots = []
            try:  # every upload slot taken (by other clients: one client holds at most half): the next is told to retry
                while True:
                    slots.append(scheduler.open_upload("encode", client=f"filler-{len(slots)}", declared=1))
            except ServeError as full:
                assert full.code == "uploads_full", full
            out["busy"] = await post(session, url, SHORT)
            async with session.post(f"{url}/v1/audio/transcriptions", data=b"x") as r:
                out["busy_headers"] = r.headers.get("Retry-After")
            for slot in slots:
                slot.release()
            async with session.get(f"{url}/metrics") as r:
                out["metrics"] = await r.json()
            async with session.get(f"{url}/health") as r:
                out["health"] = await r.json()
            return out

    out = run_async(go())

    def error(key):
        status, ctype, body = out[key]
        assert ctype == "application/json", out[key]
        return status, json.loads(body)["error"]

    assert error("model")[0] == 404 and error("model")[1]["code"] == "model_not_found"
    assert error("temperature") == (400, {**error("temperature")[1], "param": "temperature"})
    assert "diarization" in error("format")[1]["message"]
    assert error("stream_srt")[1]["param"] == "stream"
    assert error("not_audio")[0] == 400 and error("not_audio")[1]["param"] == "file"
    assert error("too_long")[0] == 413 and "limit of 300 s" in error("too_long")[1]["message"]
    assert error("prompt")[0] == 400 and "<start_of_turn>" in error("prompt")[1]["message"]
    status, err = error("busy")
    assert status == 503 and err["code"] == "uploads_full" and out["busy_headers"] == "1"
    report = out["metrics"]["transcription"]
    assert report["available"] and report["slots"] == 4 and report["decode_widths"] == [1, 4]
    assert {"slots_in_use", "tokens_generated", "steps", "mean_batch_width"} <= set(report)
    assert out["health"]["transcription"]["model"] == "tiny"


def test_serve_command_answers_then_shuts_down_cleanly(case, server):
    """`gemma3n-iree serve` as a user starts it (its programs found in the fixture's cache; the model is named after
    the checkpoint's directory): it answers as the in-process server does; on SIGINT, with a long transcription still in flight, it exits 0 within the
    shutdown timeout, that request ends (answered or its connection closed, never left hanging), and no IREE
    object outlives the interpreter (nanobind prints 'leaked ...' for each one that does)."""
    import signal
    import socket
    import subprocess
    import sys
    import threading
    import time
    import urllib.error
    import urllib.request

    import aiohttp

    url, _, _ = server
    _, directory, cache, _, _ = case
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "gemma3n_iree", "serve", "--checkpoint", str(directory), "--port", str(port)]
    command += ["--contract", F32_REFERENCE.name, "--frames", "2997", "--clips-per-call", "1", "--capacity"]
    command += [str(CAPACITY), "--cache-dir", str(cache.root), "--decoder-slots", "4", "--max-new-tokens"]
    command += [str(SERVER_NEW_TOKENS)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cli_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            try:
                urllib.request.urlopen(f"{cli_url}/health", timeout=5).read()
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "serve did not answer /health within 300 s"
                time.sleep(0.5)

        async def answers():
            async with aiohttp.ClientSession() as session:
                return await post(session, cli_url, SHORT, model=directory.name), await post(session, url, SHORT)

        ours, in_process = run_async(answers())
        assert ours[0] == 200 and ours == in_process

        in_flight: list = []

        def long_request() -> None:
            async def go():
                async with aiohttp.ClientSession() as session:
                    return await post(session, cli_url, LONG, stream="true", model=directory.name)

            try:
                in_flight.append(run_async(go()))
            except aiohttp.ClientError as exc:  # the connection closed by the shutdown: an ending too
                in_flight.append(exc)

        client = threading.Thread(target=long_request)
        client.start()
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        client.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr[-3000:]
    assert "leaked" not in stderr, stderr[-3000:]
    assert re.search(r"decoder: 4 slots; a chat takes up to \d+ positions with prompts of up to \d+ tokens", stderr)
    assert not client.is_alive() and len(in_flight) == 1


# ---------------------------------------------------------------------------------------------- the GPU benchmark
BENCH = Path(__file__).resolve().parent.parent / "scripts" / "transcribe_bench.py"


def bench(*args: str, timeout: float = 600) -> list[dict]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_gpu_benchmark_runs_on_the_cpu_with_the_tiny_model(case, server, tmp_path):
    """scripts/transcribe_bench.py's every part on the tiny configuration (llvm-cpu; the programs of the
    fixtures, found in the cache), so the one GPU run cannot fail on a mistake here."""
    import subprocess

    _, directory, cache, _, _ = case
    url, _, _ = server
    [made] = bench("checkpoint", "--dir", str(tmp_path / "tiny"), "--variant", "tiny")
    assert made["part"] == "checkpoint" and (tmp_path / "tiny" / "tokenizer.json").is_file()
    assert CheckpointConfig.read(tmp_path / "tiny").decoder == CFG
    ours = bench(
        "ours",
        "--checkpoint",
        str(directory),
        "--target",
        "llvm-cpu",
        "--contract",
        F32_REFERENCE.name,
        "--cache-dir",
        str(cache.root),
        "--counts",
        "1",
        "2",
        "--new-tokens",
        str(NEW_TOKENS),
        "--repeats",
        "1",
        "--max-clips-per-call",
        "1",
    )
    assert ours[0]["event"] == "loaded" and [r["clips"] for r in ours[1:]] == [1, 2]
    for r in ours[1:]:
        assert r["audio_s"] == 30.0 * r["clips"] and r["tokens_per_s"] > 0 and r["real_time_factor"] > 0
    theirs = bench(
        "torch",
        "--checkpoint",
        str(directory),
        "--variant",
        "tiny",
        "--device",
        "cpu",
        "--dtype",
        "fp32",
        "--attention",
        "eager",
        "--counts",
        "1",
        "2",
        "--new-tokens",
        "4",
        "--repeats",
        "1",
    )
    assert [r.get("clips") for r in theirs[1:]] == [1, 2] and all(r["tokens_per_s"] > 0 for r in theirs[1:])
    served = bench("server", "--url", url, "--model", "tiny", "--concurrency", "1", "3", "--requests", "3")
    assert [r["concurrency"] for r in served] == [1, 3] and all(r["output_tokens"] > 0 for r in served)
    # each level's own decoder calls: the single client's never hold more than one sequence
    assert served[0]["mean_decode_width"] == 1.0 and served[0]["decode_calls"] > 0
    assert all(1.0 <= r["mean_decode_width"] <= 3 and r["prefill_calls"] >= 1 for r in served)
    assert subprocess.run(["bash", "-n", str(BENCH.parent / "gpu_transcribe.sh")]).returncode == 0
