"""`gemma3n-iree serve`: the continuous-batching scheduler and its HTTP server, on llvm-cpu, tiny config.

One encoder artifact (frame buckets 320 and 2997, 1 or 2 clips per call: two buckets and two call widths
for the packer to choose from) is compiled once for the module; every server in this file loads it
(each its own resident copy) and the references are computed by yet another copy, so nothing is shared
between a request and its reference but the artifact and the checkpoint.

* Load: 72 requests at once, both kinds (encode and prefill), 0.3 s to 45 s, PCM16/float/stereo/44.1 kHz
  WAV and FLAC, raw bodies and multipart forms; 8 of them cancelled at random points.  Every result
  equals the same audio run alone -- through `AudioEncoder.encode_files` / `AudioPrefill.prefill`, and a
  few through the `encode` CLI -- bit for bit; the cancelled ones produce nothing; afterwards the
  queue, the bucket queues, the memory reservations and the held results are all back to zero, and
  calls of width 2 did happen (requests shared calls).
* Malformed uploads (not audio, truncated WAV / Ogg, empty, oversized body, audio over the duration
  limit, wrong content type, form without audio, bad prompt) and client disconnects (mid-upload, while
  long-polling) fail only themselves; a good request right after is still exact.
* Ownership: another request's token can neither read nor cancel; no token is a 401.
* Backpressure: a full queue is a 429 and a full memory budget a 503, both with Retry-After.
* Cancellation at every stage boundary (queued, front end, bucket queue, on the device, prefill merge,
  finished result), driven deterministically by the scheduler's stage hook; results expire after the TTL.
* Packing: with the device held, five short clips become two calls of width 2 and one of width 1.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import math
import random
import socket
import threading
import time
from pathlib import Path

import aiohttp
import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner
from conftest import assert_bits_equal
from synthetic_text import add_random_text_tensors, write_test_tokenizer

from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.text_config import builtin_text_config
from gemma3n_iree.runtime.audio.decode import probe_audio
from gemma3n_iree.runtime.audio.frontend import SAMPLE_SPEECH, AudioError, load_audio
from gemma3n_iree.runtime.commands.cli import main as cli_main
from gemma3n_iree.runtime.encoder.encode import AudioEncoder
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.synthetic import write_random_checkpoint
from gemma3n_iree.runtime.text.prefill import AudioPrefill
from gemma3n_iree.serve.admission import Limits
from gemma3n_iree.serve.errors import BadInput, NotFound, Rejected
from gemma3n_iree.serve.jobs import ENCODE_OUTPUTS, PREFILL, PREFILL_OUTPUTS
from gemma3n_iree.serve.launch import BackgroundServer
from gemma3n_iree.serve.scheduler import Scheduler

AUDIO = builtin_config("tiny")
TEXT = builtin_text_config("tiny")
BUCKETS = (320, 2997)
CLIPS_PER_CALL = (1, 2)
CAPACITIES = (256, 512)
RATE = 16_000
SPEECH = Path(__file__).resolve().parent / "data" / "speech_16k.wav"
MARK = "<audio_soft_token>"


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("server")


@pytest.fixture(scope="module")
def checkpoint(workdir) -> Path:
    directory = workdir / "checkpoint"
    write_random_checkpoint(directory, AUDIO, seed=11)
    add_random_text_tensors(directory, TEXT, seed=12)
    write_test_tokenizer(directory)
    return directory


@pytest.fixture(scope="module")
def cache(workdir) -> ArtifactCache:
    return ArtifactCache(workdir / "artifacts")


@pytest.fixture(scope="module")
def artifact(checkpoint, cache) -> Path:
    """Compiled once; every encoder below loads this file (its own context, its own copy of the weights)."""
    return AudioEncoder(checkpoint, frame_buckets=BUCKETS, clips_per_call=CLIPS_PER_CALL, cache=cache).artifact


def load_encoder(checkpoint: Path, artifact: Path) -> AudioEncoder:
    return AudioEncoder(checkpoint, artifact=artifact)


def load_prefill(checkpoint: Path, cache: ArtifactCache, encoder: AudioEncoder) -> AudioPrefill:
    return AudioPrefill(checkpoint, cache=cache, capacities=CAPACITIES, encoder=encoder)


@pytest.fixture(scope="module")
def reference(checkpoint, cache, artifact):
    """(encoder, prefill) that run each request alone, the way the CLI / Python API does."""
    encoder = load_encoder(checkpoint, artifact)
    return encoder, load_prefill(checkpoint, cache, encoder)


def make_scheduler(checkpoint, cache, artifact, prefill: bool = True, **limits) -> Scheduler:
    encoder = load_encoder(checkpoint, artifact)
    runner = load_prefill(checkpoint, cache, encoder) if prefill else None
    hook = limits.pop("stage_hook", None)
    defaults = dict(
        max_queue=256,
        max_upload_bytes=4 << 20,
        max_seconds=60.0,
        max_wait_s=0.02,
        result_ttl_s=300.0,
        frontend_workers=2,
    )  # upload slots: the defaults (the queue's 256, half of them for one client: every test client is loopback)
    defaults.update(limits)
    return Scheduler(encoder, runner, Limits(**defaults), stage_hook=hook)


@pytest.fixture(scope="module")
def server(checkpoint, cache, artifact):
    """The server of the load, malformed-input and ownership tests: (url, scheduler)."""
    scheduler = make_scheduler(checkpoint, cache, artifact)
    with BackgroundServer(scheduler) as url:
        yield url, scheduler


# ---------------------------------------------------------------------------------------------- audio


def base_signal() -> np.ndarray:
    """Both bundled speech files, int16, tiled to a bit more than 2 x 45 s."""
    a, rate_a = sf.read(SPEECH, dtype="int16")
    b, rate_b = sf.read(SAMPLE_SPEECH, dtype="int16")
    assert rate_a == rate_b == RATE
    one = np.concatenate([a, b])
    return np.tile(one, -(-100 * RATE // len(one)))


def encode_file(samples: np.ndarray, rate: int, fmt: str = "WAV", subtype: str = "PCM_16") -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


LENGTHS = (0.3, 0.7, 1.5, 3.2, 5.0, 8.0, 12.0, 20.0, 29.5, 30.0, 33.0, 45.0)


def corpus(directory: Path, count: int, seed: int = 0) -> list[dict]:
    """`count` distinct requests: lengths cycle through 0.3-45 s (6 of 72 are 45 s), every offset differs;
    a third are prefills (of one and two clips); a few are float WAV, stereo, 44.1 kHz or FLAC; about half
    are multipart forms."""
    rng = random.Random(seed)
    base = base_signal()
    prompts = [f"Transcribe {MARK} please.", "Summarize the speech.", f"{MARK} What is said?", ""]
    out = []
    for i in range(count):
        seconds = LENGTHS[i % len(LENGTHS)]
        start = (i * 7919 + 123) % (len(base) - 46 * RATE)
        pcm = base[start : start + int(seconds * RATE)]
        if i % 11 == 3:
            data, name = encode_file(pcm.astype(np.float32) / 32768.0, RATE, subtype="FLOAT"), f"r{i}.wav"
        elif i % 11 == 5:
            right = np.roll(pcm, 400) // 2
            data, name = encode_file(np.stack([pcm, right], axis=1), RATE), f"r{i}.wav"
        elif i % 11 == 7:
            from gemma3n_iree.runtime.audio.frontend import resample

            up = resample(pcm.astype(np.float64) / 32768.0, RATE, 44_100).astype(np.float32)
            data, name = encode_file(up, 44_100, subtype="FLOAT"), f"r{i}.wav"
        elif i % 11 == 9:
            data, name = encode_file(pcm, RATE, fmt="FLAC"), f"r{i}.flac"
        else:
            data, name = encode_file(pcm, RATE), f"r{i}.wav"
        path = directory / name
        path.write_bytes(data)
        kind = PREFILL if i % 4 == 1 or i % 12 == 11 else "encode"  # 1-clip and 2-clip prefills
        out.append(
            {
                "i": i,
                "kind": kind,
                "path": path,
                "data": data,
                "name": name,
                "seconds": seconds,
                "prompt": prompts[(i // 4) % len(prompts)] if kind == PREFILL else None,
                "chat": not (kind == PREFILL and i % 8 == 5),
                "multipart": rng.random() < 0.5,
            }
        )
    return out


# ---------------------------------------------------------------------------------------------- client


async def submit(session: aiohttp.ClientSession, url: str, req: dict) -> tuple[int, dict]:
    kind = req["kind"]
    if req["multipart"]:
        form = aiohttp.FormData()
        form.add_field("audio", req["data"], filename=req["name"], content_type="audio/wav")
        if req.get("prompt") is not None:
            form.add_field("prompt", req["prompt"])
        if not req.get("chat", True):
            form.add_field("chat", "0")
        async with session.post(f"{url}/v1/{kind}", data=form) as resp:
            return resp.status, await resp.json()
    params = {"filename": req["name"]}
    if req.get("prompt") is not None:
        params["prompt"] = req["prompt"]
    if not req.get("chat", True):
        params["chat"] = "0"
    ctype = "audio/flac" if req["name"].endswith(".flac") else "audio/wav"
    async with session.post(
        f"{url}/v1/{kind}", data=req["data"], params=params, headers={"Content-Type": ctype}
    ) as resp:
        return resp.status, await resp.json()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def fetch(session: aiohttp.ClientSession, url: str, job_id: str, token: str, wait: float = 60.0):
    """(status, npz dict or JSON) of the result endpoint, waiting up to `wait` s in long polls."""
    deadline = time.monotonic() + wait
    while True:
        async with session.get(
            f"{url}/v1/requests/{job_id}/result", params={"wait": "10"}, headers=auth(token)
        ) as resp:
            if resp.status == 200:
                raw = await resp.read()
                with np.load(io.BytesIO(raw)) as z:
                    return 200, {k: z[k] for k in z.files}
            body = await resp.json()
            if resp.status != 202 or time.monotonic() > deadline:
                return resp.status, body


def run(coro):
    return asyncio.run(coro)


def metrics(url: str) -> dict:
    async def get():
        async with aiohttp.ClientSession() as s, s.get(f"{url}/metrics") as resp:
            return await resp.json()

    return run(get())


def wait_idle(scheduler: Scheduler, timeout: float = 60.0, held: int = 0) -> dict:
    """Wait until nothing is queued or running (and `held` results remain); returns the metrics."""
    deadline = time.monotonic() + timeout
    while True:
        m = scheduler.metrics()
        if (
            m["queue_depth"] == 0
            and m["ready_clips"] == 0
            and not m["device_busy"]
            and m["pending_prefill"] == 0
            and m["results_held"] == held
        ):
            return m
        assert time.monotonic() < deadline, f"not idle after {timeout} s: {json.dumps(m)}"
        time.sleep(0.02)


def assert_drained(m: dict) -> None:
    assert m["queue_depth"] == 0 and m["ready_clips"] == 0 and m["pending_prefill"] == 0, m
    assert m["results_held"] == 0 and m["memory_bytes"] == 0, m
    assert all(v == 0 for v in m["requests_by_state"].values()), m


# ---------------------------------------------------------------------------------------------- references


def reference_result(reference, req: dict) -> dict[str, np.ndarray]:
    encoder, prefill = reference
    if req["kind"] == PREFILL:
        r = prefill.prefill(req["prompt"], [req["path"]], chat=req["chat"])
        return {
            "input_ids": r.input_ids.astype(np.int32),
            "inputs_embeds": r.inputs_embeds,
            "per_layer_inputs": r.per_layer_inputs,
            "audio_rows": r.audio_rows.astype(np.int32),
        }
    r = encoder.encode_files([req["path"]])
    return {name: getattr(r, name) for name in ENCODE_OUTPUTS}


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str) -> None:
    assert sorted(got) == sorted(want), what
    for name, value in want.items():
        if value.dtype == np.float32:
            assert_bits_equal(got[name], value, f"{what}: {name}")
        else:
            assert got[name].dtype == value.dtype, f"{what}: {name} dtype"
            np.testing.assert_array_equal(got[name], value, err_msg=f"{what}: {name}")


# ---------------------------------------------------------------------------------------------- load


def test_load_mixed_lengths_both_kinds_bit_exact(server, reference, workdir, checkpoint, artifact):
    url, scheduler = server
    directory = workdir / "load"
    directory.mkdir()
    requests = corpus(directory, 72)
    cancelled = {r["i"] for r in requests[5::9]}  # 8 requests, both kinds, various lengths
    assert len(cancelled) == 8 and any(requests[i]["kind"] == PREFILL for i in cancelled)
    delays = random.Random(1)

    async def one(session, req):
        status, body = await submit(session, url, req)
        assert status == 202, (req["name"], body)
        if req["i"] in cancelled:
            await asyncio.sleep(delays.choice([0.0, 0.0, 0.01, 0.05, 0.2, 0.5]))
            async with session.delete(f"{url}/v1/requests/{body['id']}", headers=auth(body["token"])) as resp:
                answer = await resp.json()
                assert resp.status == 200 and answer["status"] in ("cancelled", "discarded"), answer
            async with session.get(f"{url}/v1/requests/{body['id']}/result", headers=auth(body["token"])) as resp:
                assert resp.status == 404
            return req, None
        status, result = await fetch(session, url, body["id"], body["token"])
        assert status == 200, (req["name"], result)
        async with session.get(f"{url}/v1/requests/{body['id']}", headers=auth(body["token"])) as resp:
            assert resp.status == 404  # fetched: freed
        return req, result

    async def everything():
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            return await asyncio.gather(*(one(session, r) for r in requests))

    started = time.monotonic()
    outcomes = run(everything())
    elapsed = time.monotonic() - started
    m = wait_idle(scheduler)
    assert_drained(m)

    done = [(req, result) for req, result in outcomes if result is not None]
    assert len(done) == len(requests) - len(cancelled)
    # references one by one (prefills grouped by clip count: AudioPrefill keeps one entry loaded)
    for req, result in sorted(done, key=lambda d: (d[0]["kind"], d[0]["seconds"] > 30)):
        assert_same(
            result,
            reference_result(reference, req),
            f"request {req['i']} ({req['kind']}, {req['seconds']} s, {req['name']})",
        )
        clips = math.ceil(req["seconds"] * RATE / 480_000)
        if req["kind"] == "encode":
            assert tuple(result) == ENCODE_OUTPUTS and result["audio_features"].shape[0] == clips
        else:
            assert tuple(result) == PREFILL_OUTPUTS and int((result["audio_rows"] >= 0).sum()) == 188 * clips
    # a few through the CLI as well (its own process state: the artifact loaded again)
    runner = CliRunner()
    for req, result in [d for d in done if d[0]["kind"] == "encode"][:3]:
        out = directory / f"cli-{req['i']}.npz"
        res = runner.invoke(
            cli_main,
            ["encode", "--checkpoint", str(checkpoint), "--artifact", str(artifact), "-o", str(out), str(req["path"])],
        )
        assert res.exit_code == 0, res.output
        with np.load(out) as z:
            assert z["failed_source"].size == 0  # the CLI's npz adds its (empty) list of failed inputs
            assert_same(result, {k: z[k] for k in ENCODE_OUTPUTS}, f"request {req['i']} vs the encode CLI")

    counts = m["counts"]
    assert counts["completed"] == len(done) and counts.get("failed", 0) == 0
    assert counts["cancelled"] + counts.get("discarded", 0) == len(cancelled)
    assert m["latency"]["encode"]["count"] >= len([d for d in done if d[0]["kind"] == "encode"])
    batches = m["batches"]
    assert any(entry.endswith("x2") for entry in batches["calls_by_entry"]), batches  # requests shared calls
    assert batches["clips"] <= batches["slots"]
    print(
        f"\n{len(requests)} requests ({sum(r['seconds'] for r in requests):.0f} s of audio) in {elapsed:.1f} s; "
        f"batches {json.dumps(batches)}; latency {json.dumps(m['latency'])}"
    )


# ---------------------------------------------------------------------------------------------- bad input


def wav_bytes(seconds: float, rate: int = RATE) -> bytes:
    base = base_signal()
    return encode_file(base[: int(seconds * rate)], rate)


def test_malformed_uploads_fail_only_themselves(server, reference, workdir):
    url, scheduler = server
    good = wav_bytes(3.0)
    ogg = encode_file(base_signal()[: 5 * RATE].astype(np.float32) / 32768.0, RATE, fmt="OGG", subtype="VORBIS")
    host, port = url.removeprefix("http://").split(":")

    async def post(path, data, ctype, params=None):
        async with aiohttp.ClientSession() as session:
            async with session.post(url + path, data=data, params=params, headers={"Content-Type": ctype}) as resp:
                return resp.status, await resp.json(), resp.headers

    cases = [
        ("not audio", "/v1/encode", b"this is a text file, not audio\n" * 40, "audio/wav", 400, "not a readable audio"),
        ("truncated WAV", "/v1/encode", good[: len(good) // 2], "audio/wav", 400, "truncated"),
        ("truncated WAV header", "/v1/encode", good[:30], "audio/wav", 400, None),
        ("truncated Ogg", "/v1/encode", ogg[: len(ogg) * 2 // 3], "audio/ogg", 400, "truncated"),
        ("empty body", "/v1/encode", b"", "audio/wav", 400, "empty"),
        ("oversized body", "/v1/encode", b"\0" * (5 << 20), "audio/wav", 413, "limit"),
        ("over the duration limit", "/v1/encode", wav_bytes(70.0, 8_000), "audio/wav", 413, "60 s"),
        ("wrong content type", "/v1/encode", good, "text/plain", 415, "content type"),
        ("json body", "/v1/encode", b'{"audio": "x"}', "application/json", 415, None),
        ("prefill without prompt", "/v1/prefill", good, "audio/wav", 400, "prompt"),
    ]

    async def all_cases():
        answers = []
        for what, path, data, ctype, status, words in cases:
            got_status, body, headers = await post(path, data, ctype)
            answers.append((what, got_status, body))
            assert got_status == status, (what, body)
            assert set(body) == {"error"} and body["error"]["message"], (what, body)
            if words:
                assert words in body["error"]["message"], (what, body)
        # a form without an audio file
        form = aiohttp.FormData()
        form.add_field("prompt", "hello", content_type="text/plain")  # a multipart form, no file
        async with aiohttp.ClientSession() as session, session.post(url + "/v1/prefill", data=form) as resp:
            assert resp.status == 400 and "no audio file" in (await resp.json())["error"]["message"]
        # a prompt that does not fit the audio: admitted, then fails in the front end with its own error
        req = {
            "kind": PREFILL,
            "data": good,
            "name": "two.wav",
            "multipart": True,
            "prompt": f"one {MARK} two {MARK}",
            "chat": True,
        }
        async with aiohttp.ClientSession() as session:
            status, body = await submit(session, url, req)
            assert status == 202
            status, failed = await fetch(session, url, body["id"], body["token"])
            assert status == 400 and failed["error"]["code"] == "bad_prompt", failed
            async with session.get(f"{url}/v1/requests/{body['id']}", headers=auth(body["token"])) as resp:
                assert resp.status == 404  # the error was delivered: freed
        return answers

    run(all_cases())

    # client disconnects mid-upload (raw body and multipart): nothing admitted, nothing leaked
    for head in (b"Content-Type: audio/wav\r\n", b"Content-Type: multipart/form-data; boundary=XX\r\n"):
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                b"POST /v1/encode HTTP/1.1\r\nHost: t\r\n"
                + head
                + b"Content-Length: 2000000\r\n\r\n"
                + (
                    b'--XX\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\n'
                    if b"multipart" in head
                    else b""
                )
                + good[:20000]
            )
            time.sleep(0.05)
    time.sleep(0.3)

    # and the server still serves exactly
    req = {"kind": "encode", "data": good, "name": "good.wav", "path": workdir / "good.wav", "multipart": False}
    req["path"].write_bytes(good)

    async def good_one():
        async with aiohttp.ClientSession() as session:
            status, body = await submit(session, url, req)
            assert status == 202
            return await fetch(session, url, body["id"], body["token"])

    status, result = run(good_one())
    assert status == 200
    assert_same(result, reference_result(reference, req), "a good request after the bad ones")
    m = wait_idle(scheduler)
    assert_drained(m)
    rejections = m["rejections"]
    for code in (
        "bad_audio",
        "too_large",
        "too_long",
        "unsupported_media_type",
        "bad_prompt",
        "bad_form",
        "client_disconnected",
    ):
        assert rejections.get(code, 0) >= 1, (code, rejections)

    async def health():
        async with aiohttp.ClientSession() as session, session.get(url + "/health") as resp:
            return resp.status, await resp.json()

    status, body = run(health())
    assert status == 200 and body["status"] == "ok" and body["prefill"]["available"]


def test_long_poll_disconnect_and_result_download(server, reference, workdir):
    """A client that gives up while long-polling leaves the request intact; the result is still there."""
    url, scheduler = server
    good = wav_bytes(4.0)
    req = {"kind": "encode", "data": good, "name": "poll.wav", "path": workdir / "poll.wav", "multipart": True}
    req["path"].write_bytes(good)
    scheduler.pause_device()
    try:

        async def start_and_abandon():
            async with aiohttp.ClientSession() as session:
                status, body = await submit(session, url, req)
                assert status == 202
            timeout = aiohttp.ClientTimeout(total=0.3)
            async with aiohttp.ClientSession(timeout=timeout) as session:
                with pytest.raises(asyncio.TimeoutError):
                    async with session.get(
                        f"{url}/v1/requests/{body['id']}/result", params={"wait": "30"}, headers=auth(body["token"])
                    ) as resp:
                        await resp.read()
            return body

        body = run(start_and_abandon())
        time.sleep(0.1)
        assert scheduler.metrics()["queue_depth"] == 1
    finally:
        scheduler.resume_device()

    async def finish():
        async with aiohttp.ClientSession() as session:
            async with session.get(
                f"{url}/v1/requests/{body['id']}", params={"wait": "30"}, headers=auth(body["token"])
            ) as resp:
                meta = await resp.json()
                assert meta["status"] == "done" and meta["result"]["audio_features"]["shape"][0] == 1, meta
            # one array as .npy does not free the result; the .npz does
            async with session.get(
                f"{url}/v1/requests/{body['id']}/result",
                params={"format": "npy", "array": "valid_tokens"},
                headers=auth(body["token"]),
            ) as resp:
                assert resp.status == 200
                valid = np.load(io.BytesIO(await resp.read()))
            return valid, await fetch(session, url, body["id"], body["token"])

    valid, (status, result) = run(finish())
    assert status == 200
    np.testing.assert_array_equal(valid, result["valid_tokens"])
    assert_same(result, reference_result(reference, req), "after an abandoned long poll")
    assert_drained(wait_idle(scheduler))


def test_only_the_owner_can_read_or_cancel(server, workdir):
    url, scheduler = server
    scheduler.pause_device()
    try:

        async def scenario():
            async with aiohttp.ClientSession() as session:
                a = (
                    await submit(
                        session, url, {"kind": "encode", "data": wav_bytes(1.0), "name": "a.wav", "multipart": False}
                    )
                )[1]
                b = (
                    await submit(
                        session, url, {"kind": "encode", "data": wav_bytes(2.0), "name": "b.wav", "multipart": True}
                    )
                )[1]
                assert a["id"] != b["id"] and a["token"] != b["token"] and len(a["token"]) >= 43
                for method, suffix in (("GET", ""), ("GET", "/result"), ("DELETE", "")):
                    async with session.request(
                        method, f"{url}/v1/requests/{b['id']}{suffix}", headers=auth(a["token"])
                    ) as resp:
                        assert resp.status == 404, (method, suffix)
                    async with session.request(method, f"{url}/v1/requests/{b['id']}{suffix}") as resp:
                        assert resp.status == 401 and "Bearer" in resp.headers["WWW-Authenticate"]
                    async with session.request(
                        method, f"{url}/v1/requests/not-an-id{suffix}", headers=auth(b["token"])
                    ) as resp:
                        assert resp.status == 404
                return a, b

        a, b = run(scenario())
        assert scheduler.metrics()["queue_depth"] == 2  # nothing was cancelled by the wrong token
    finally:
        scheduler.resume_device()

    async def collect():
        async with aiohttp.ClientSession() as session:
            for job in (a, b):
                status, result = await fetch(session, url, job["id"], job["token"])
                assert status == 200 and result["audio_features"].shape[0] == 1

    run(collect())
    assert_drained(wait_idle(scheduler))


# ---------------------------------------------------------------------------------------------- backpressure


def test_backpressure_queue_and_memory(checkpoint, cache, artifact):
    scheduler = make_scheduler(checkpoint, cache, artifact, prefill=False, max_queue=2)
    data = wav_bytes(2.0)
    with BackgroundServer(scheduler) as url:
        scheduler.pause_device()

        async def scenario():
            async with aiohttp.ClientSession() as session:
                accepted = []
                for i in range(2):
                    status, body = await submit(
                        session, url, {"kind": "encode", "data": data, "name": f"{i}.wav", "multipart": bool(i)}
                    )
                    assert status == 202
                    accepted.append(body)
                async with session.post(f"{url}/v1/encode", data=data, headers={"Content-Type": "audio/wav"}) as resp:
                    assert resp.status == 429 and int(resp.headers["Retry-After"]) >= 1
                    assert (await resp.json())["error"]["code"] == "queue_full"
                async with session.post(
                    f"{url}/v1/prefill", data=data, headers={"Content-Type": "audio/wav"}, params={"prompt": "hi"}
                ) as resp:
                    assert resp.status == 501 and "not available" in (await resp.json())["error"]["message"]
                # cancelling frees the slot at once
                async with session.delete(
                    f"{url}/v1/requests/{accepted[0]['id']}", headers=auth(accepted[0]["token"])
                ) as resp:
                    assert resp.status == 200
                status, body = await submit(
                    session, url, {"kind": "encode", "data": data, "name": "x.wav", "multipart": False}
                )
                assert status == 202
                return [accepted[1], body]

        pending = run(scenario())
        # memory budget: the next request needs more than what is left
        scheduler.limits.max_queue = 10
        scheduler.limits.max_memory_bytes = scheduler.metrics()["memory_bytes"] + 1000
        with pytest.raises(Rejected) as info:
            scheduler.submit("encode", data)
        assert info.value.status == 503 and info.value.retry_after and "memory" in info.value.message
        with pytest.raises(BadInput) as info:  # needs more than the whole budget: never retry
            scheduler.submit("encode", wav_bytes(50.0))
        assert info.value.status == 413
        scheduler.limits.max_memory_bytes = 1 << 30
        scheduler.resume_device()

        async def collect():
            async with aiohttp.ClientSession() as session:
                for job in pending:
                    assert (await fetch(session, url, job["id"], job["token"]))[0] == 200
                async with session.get(f"{url}/metrics", params={"format": "prometheus"}) as resp:
                    return await resp.text()

        text = run(collect())
        assert "gemma3n_rejections_queue_full 1" in text and "gemma3n_rejections_memory_full 1" in text
        assert_drained(wait_idle(scheduler))


# ---------------------------------------------------------------------------------------------- cancellation


class Gate:
    """A stage hook that stops the first job reaching `stage` until released; records every call."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.reached = threading.Event()
        self.go = threading.Event()
        self.seen: list[tuple[str, str]] = []
        self.held: str | None = None

    def __call__(self, stage: str, job_id: str) -> None:
        self.seen.append((stage, job_id))
        if stage == self.stage and self.held is None:
            self.held = job_id
            self.reached.set()
            assert self.go.wait(30)


def test_cancellation_at_every_stage(checkpoint, cache, artifact):
    data, long = wav_bytes(2.0), wav_bytes(40.0)

    def idle_and_empty(scheduler):
        m = wait_idle(scheduler)
        assert_drained(m)
        return m

    # queued + front end: one worker, held in the front end on A; B waits in the pool's queue
    gate = Gate("frontend")
    with make_scheduler(checkpoint, cache, artifact, prefill=False, frontend_workers=1, stage_hook=gate) as s:
        a, token_a = s.submit("encode", long)
        assert gate.reached.wait(10) and gate.held == a.id
        b, token_b = s.submit("encode", data)
        states = s.metrics()["requests_by_state"]
        assert (states["queued"], states["frontend"]) == (1, 1)
        assert s.cancel(b.id, token_b) == "queued"
        assert s.cancel(a.id, token_a) == "frontend"
        assert s.metrics()["memory_bytes"] == 0 and s.metrics()["queue_depth"] == 0  # freed at once
        gate.go.set()
        m = idle_and_empty(s)
        assert m["batches"]["calls"] == 0  # A's clips never reached the device, B never reached the front end
        assert ("frontend", b.id) not in gate.seen
        with pytest.raises(NotFound):
            s.get(a.id, token_a)

    # bucket queue and on the device
    gate = Gate("device")
    with make_scheduler(checkpoint, cache, artifact, prefill=False, stage_hook=gate) as s:
        a, token_a = s.submit("encode", data)
        assert gate.reached.wait(10) and gate.held == a.id  # A's call is about to run
        c, token_c = s.submit("encode", long)  # two clips: they wait in the 2997 bucket behind A's call
        deadline = time.monotonic() + 10
        while s.metrics()["ready_clips"] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert s.cancel(c.id, token_c) == "encoding"
        assert s.metrics()["ready_clips"] == 0  # its clips left the bucket queue at once
        assert s.cancel(a.id, token_a) == "encoding"
        gate.go.set()
        m = idle_and_empty(s)
        assert m["batches"]["calls"] == 1 and m["counts"].get("completed", 0) == 0  # A's rows were discarded
        # the next request reuses the device at once and is exact
        d, token_d = s.submit("encode", data)
        assert s.wait(d, 30) and s.get(d.id, token_d).result["audio_features"].shape == (1, 188, AUDIO.text_hidden_size)
        s.release(d)
        idle_and_empty(s)

    # prefill merge: all clips encoded, the merge not started
    gate = Gate("prefill")
    with make_scheduler(checkpoint, cache, artifact, stage_hook=gate) as s:
        p, token_p = s.submit(PREFILL, data, prompt="Summarize.")
        assert gate.reached.wait(60) and gate.held == p.id
        assert s.cancel(p.id, token_p) == "prefill"
        gate.go.set()
        m = idle_and_empty(s)
        assert m["counts"].get("prefill_calls", 0) == 0 and m["counts"].get("completed", 0) == 0

    # finished result: discarded; and results expire after the TTL
    with make_scheduler(checkpoint, cache, artifact, prefill=False, result_ttl_s=0.3) as s:
        e, token_e = s.submit("encode", data)
        assert s.wait(e, 30) and e.result is not None and s.metrics()["memory_bytes"] > 0
        assert s.cancel(e.id, token_e) == "done"
        assert e.result is None
        f, token_f = s.submit("encode", data)
        assert s.wait(f, 30)
        deadline = time.monotonic() + 10
        while s.metrics()["results_held"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        m = idle_and_empty(s)
        assert m["counts"]["expired"] == 1 and m["counts"]["discarded"] == 1
        with pytest.raises(NotFound):
            s.get(f.id, token_f)


def test_packing_fills_the_widest_call(checkpoint, cache, artifact):
    with make_scheduler(checkpoint, cache, artifact, prefill=False) as s:
        s.pause_device()
        jobs = [s.submit("encode", wav_bytes(0.5 + 0.2 * i)) for i in range(5)]
        deadline = time.monotonic() + 10
        while s.metrics()["ready_clips"] < 5:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        s.resume_device()
        for job, _ in jobs:
            assert s.wait(job, 30)
        m = s.metrics()
        assert m["batches"]["calls_by_entry"] == {"320x1": 1, "320x2": 2}, m["batches"]
        assert m["batches"]["occupancy"] == 1.0
        for job, _ in jobs:
            s.release(job)
        assert_drained(wait_idle(s))


# ---------------------------------------------------------------------------------------------- audio bytes


def test_decoding_bytes_equals_decoding_the_file(tmp_path):
    base = base_signal()[: 5 * RATE]
    variants = {
        "pcm16.wav": encode_file(base, RATE),
        "float.wav": encode_file(base.astype(np.float32) / 32768.0, RATE, subtype="FLOAT"),
        "stereo.wav": encode_file(np.stack([base, base[::-1]], axis=1), RATE),
        "rate44k.wav": encode_file(np.repeat(base, 3)[: int(5 * 44_100)], 44_100),
        "speech.flac": encode_file(base, RATE, fmt="FLAC"),
        "speech.ogg": encode_file(base.astype(np.float32) / 32768.0, RATE, fmt="OGG", subtype="VORBIS"),
    }
    for name, data in variants.items():
        path = tmp_path / name
        path.write_bytes(data)
        got, got_rate = load_audio(data, name)
        want, want_rate = load_audio(path)
        assert got_rate == want_rate and got.dtype == want.dtype == np.float32
        assert_bits_equal(got, want, name)
        assert probe_audio(data, name).rate == want_rate
    for name in ("pcm16.wav", "speech.ogg", "speech.flac"):
        data = variants[name]
        with pytest.raises(AudioError, match="truncated|corrupt"):
            load_audio(data[: len(data) * 3 // 4], name)


def test_serve_command_is_registered():
    res = CliRunner().invoke(cli_main, ["serve", "--help"])
    assert res.exit_code == 0, res.output
    for option in (
        "--checkpoint",
        "--target",
        "--host",
        "--port",
        "--max-queue",
        "--max-batch-clips",
        "--artifact",
        "--cache-dir",
    ):
        assert option in res.output


def test_serve_refuses_limits_that_contradict_each_other_before_loading_anything(tmp_path):
    """A memory budget below one upload would refuse every upload with a "retry later" that never succeeds:
    `serve` names the two flags and exits before it reads the checkpoint (an empty directory here)."""
    res = CliRunner().invoke(cli_main, ["serve", "--checkpoint", str(tmp_path), "--max-memory-mb", "40"])
    assert res.exit_code == 2, res.output
    assert "--max-memory-mb" in res.output and "40 MiB" in res.output and "--max-upload-mb" in res.output
    res = CliRunner().invoke(
        cli_main, ["serve", "--checkpoint", str(tmp_path), "--max-concurrent-uploads", "4", "--max-client-uploads", "5"]
    )
    assert res.exit_code == 2 and "--max-client-uploads" in res.output, res.output


def test_prefill_unavailable_without_text_tensors(workdir, cache, artifact):
    """A checkpoint with only the audio stage still serves encode; prefill is a clear 501."""
    from gemma3n_iree.serve.errors import Unavailable
    from gemma3n_iree.serve.launch import build_scheduler

    directory = write_random_checkpoint(workdir / "audio-only", AUDIO, seed=11)
    scheduler = build_scheduler(directory, artifact=artifact, cache_dir=cache.root)
    # its config.json has no text model (only the width the audio embedder projects to): named, not guessed
    assert scheduler.prefill is None and "text_config.num_hidden_layers is missing" in scheduler.prefill_unavailable
    with scheduler:
        with pytest.raises(Unavailable) as info:
            scheduler.submit(PREFILL, wav_bytes(1.0), prompt="hi")
        assert info.value.status == 501 and "not available" in info.value.message
        job, _ = scheduler.submit("encode", wav_bytes(1.0))
        assert scheduler.wait(job, 30) and job.result["audio_features"].shape[0] == 1


# ---------------------------------------------------------------------------------------------- issue 13

CUT_CONTAINERS = [
    ("WAV", "PCM_16"),
    ("WAVEX", "FLOAT"),
    ("RF64", "PCM_16"),
    ("W64", "PCM_24"),
    ("AIFF", "PCM_16"),
    ("AU", "PCM_16"),
    ("NIST", "PCM_16"),
    ("VOC", "PCM_16"),
    ("CAF", "PCM_16"),
    ("SVX", "PCM_16"),
    ("AVR", "PCM_16"),
    ("MAT4", "PCM_16"),
    ("MAT5", "PCM_16"),
    ("MPC2K", "PCM_16"),
    ("WVE", "ALAW"),
    ("HTK", "PCM_16"),
    ("SDS", "PCM_16"),
    ("FLAC", "PCM_16"),
    ("OGG", "VORBIS"),
    ("OGG", "OPUS"),
    ("MP3", "MPEG_LAYER_III"),
]


def cli_error(checkpoint: Path, artifact: Path, path: Path) -> str:
    res = CliRunner().invoke(
        cli_main,
        [
            "encode",
            "--checkpoint",
            str(checkpoint),
            "--artifact",
            str(artifact),
            "-o",
            str(path.with_suffix(".npz")),
            str(path),
        ],
    )
    assert res.exit_code == 1, res.output
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("Error: "), res.output
    return line.removeprefix("Error: ")


def test_cli_and_server_give_the_same_answer_for_the_same_bytes(server, checkpoint, artifact, workdir):
    """Every container cut at 60 %, and a 1 Hz WAV: the same named error from both; a VBR MP3 without
    its Xing header: the same result, decoded to its end."""
    url, scheduler = server
    directory = workdir / "same-bytes"
    directory.mkdir()
    audio = base_signal()[: 3 * RATE].astype(np.float32) / 32768.0
    bad: list[tuple[str, bytes]] = []
    for fmt, sub in CUT_CONTAINERS:
        if fmt not in sf.available_formats():
            continue
        path = directory / f"{fmt}_{sub}.{fmt.lower()}"
        sf.write(str(path), audio, RATE, format=fmt, subtype=sub)
        data = path.read_bytes()
        bad.append((f"cut_{fmt}_{sub}.{fmt.lower()}", data[: int(len(data) * 0.6)]))
    one_hz = io.BytesIO()
    sf.write(one_hz, np.zeros(599, np.float32), 1, format="WAV", subtype="PCM_16")
    bad.append(("one_hz.wav", one_hz.getvalue()))

    async def post_all():
        out = []
        async with aiohttp.ClientSession() as session:
            for name, data in bad:
                async with session.post(
                    f"{url}/v1/encode",
                    data=data,
                    params={"filename": name},
                    headers={"Content-Type": "application/octet-stream"},
                ) as resp:
                    status, body = resp.status, await resp.json()
                if status == 202:  # refused only once decoded (a FLAC stream cut mid-frame): the same error
                    status, body = await fetch(session, url, body["id"], body["token"])
                out.append((status, body["error"]["message"]))
        return out

    answers = run(post_all())
    for (name, data), (status, message) in zip(bad, answers):
        path = directory / name
        path.write_bytes(data)
        assert status == 400, (name, message)
        assert message.startswith(f"{name}: ") and ("truncated" in message or "1 Hz" in message), message
        assert cli_error(checkpoint, artifact, path) == f"{path}: " + message.removeprefix(f"{name}: "), name

    if "MP3" in sf.available_formats():
        from gemma3n_iree.runtime.audio import mpeg

        mp3 = directory / "vbr.mp3"
        loud = base_signal()[: 20 * RATE].astype(np.float32) / 32768.0
        loud[:RATE] = np.random.default_rng(0).uniform(-0.9, 0.9, RATE)
        loud[10 * RATE :] = 0.0
        sf.write(str(mp3), loud, RATE, format="MP3", subtype="MPEG_LAYER_III", bitrate_mode="VARIABLE")
        data = mp3.read_bytes()
        found = mpeg.scan(data)
        bare = data[: found.audio_start] + data[found.frames_start :]
        mp3.write_bytes(bare)
        req = {"kind": "encode", "data": bare, "name": "vbr.mp3", "path": mp3, "multipart": True}

        async def one():
            async with aiohttp.ClientSession() as session:
                status, body = await submit(session, url, req)
                assert status == 202, body
                return await fetch(session, url, body["id"], body["token"])

        status, result = run(one())
        assert status == 200
        out = directory / "vbr.npz"
        res = CliRunner().invoke(
            cli_main, ["encode", "--checkpoint", str(checkpoint), "--artifact", str(artifact), "-o", str(out), str(mp3)]
        )
        assert res.exit_code == 0, res.output
        with np.load(out) as z:
            assert_same(result, {k: z[k] for k in ENCODE_OUTPUTS}, "VBR MP3 without its header: server vs CLI")
        assert len(result["clip_start_s"]) == 1 and int(result["valid_tokens"][0]) > 120  # all 20 s, not ~8
    assert_drained(wait_idle(scheduler))


def raw_post(host: str, port: int, head: bytes, body: bytes) -> socket.socket:
    sock = socket.create_connection((host, port))
    sock.sendall(b"POST /v1/encode HTTP/1.1\r\nHost: t\r\n" + head + b"\r\n" + body)
    return sock


def read_status(sock: socket.socket, timeout: float = 10.0) -> int:
    sock.settimeout(timeout)
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]) if data else 0


def test_uploads_are_bounded_before_their_bodies_are_read(checkpoint, cache, artifact, caplog):
    scheduler = make_scheduler(
        checkpoint,
        cache,
        artifact,
        prefill=False,
        max_concurrent_uploads=2,
        max_client_uploads=2,  # the stalled clients and the others share the loopback address
        upload_idle_s=0.6,
        max_upload_bytes=1 << 20,
    )
    good = wav_bytes(1.0)
    with BackgroundServer(scheduler) as url:
        host, port = url.removeprefix("http://").split(":")
        # two clients stall mid-body: each holds a slot and its reservation, nothing more
        stalled = [
            raw_post(host, int(port), b"Content-Type: audio/wav\r\nContent-Length: 900000\r\n", good[:5000])
            for _ in range(2)
        ]
        deadline = time.monotonic() + 5
        while scheduler.metrics()["uploads_in_progress"] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        m = scheduler.metrics()
        assert m["memory_bytes"] == 2 * 900000 and m["queue_depth"] == 0  # each reserves its Content-Length

        async def third():
            async with (
                aiohttp.ClientSession() as session,
                session.post(f"{url}/v1/encode", data=good, headers={"Content-Type": "audio/wav"}) as resp,
            ):
                return resp.status, resp.headers.get("Retry-After"), (await resp.json())["error"]["code"]

        assert run(third()) == (503, "1", "uploads_full")
        # the read timeout frees them: 408, and the budget is whole again
        assert [read_status(s) for s in stalled] == [408, 408]
        for s in stalled:
            s.close()
        assert scheduler.metrics()["uploads_in_progress"] == 0 and scheduler.metrics()["memory_bytes"] == 0

        # a chunked form (no Content-Length) with junk fields beside the audio: the limit still holds
        boundary = b"XX"
        junk = b"".join(
            b'--XX\r\nContent-Disposition: form-data; name="junk%d"\r\n\r\n' % i + b"j" * (300 << 10) + b"\r\n"
            for i in range(8)
        )
        form = junk + (
            b'--XX\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\n' + good + b"\r\n--XX--\r\n"
        )
        chunked = (
            b"".join(
                b"%x\r\n" % len(form[i : i + 65536]) + form[i : i + 65536] + b"\r\n" for i in range(0, len(form), 65536)
            )
            + b"0\r\n\r\n"
        )
        sock = raw_post(
            host,
            int(port),
            b"Content-Type: multipart/form-data; boundary=" + boundary + b"\r\nTransfer-Encoding: chunked\r\n",
            chunked,
        )
        assert read_status(sock) == 413
        sock.close()

        # a malformed request line is one log line, no traceback
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="aiohttp.server"):
            sock = raw_post(host, int(port), b"Content-Length: -5\r\n", b"")
            assert read_status(sock) == 400
            sock.close()
            time.sleep(0.2)
        records = [r for r in caplog.records if r.name == "aiohttp.server"]
        assert records and all(r.exc_info is None and "malformed request" in r.getMessage() for r in records), [
            (r.getMessage(), r.exc_info) for r in records
        ]
        assert all("\n" not in r.getMessage() for r in records)

        # and the server still serves exactly
        async def good_one():
            async with aiohttp.ClientSession() as session:
                status, body = await submit(
                    session, url, {"kind": "encode", "data": good, "name": "g.wav", "multipart": True}
                )
                assert status == 202
                return await fetch(session, url, body["id"], body["token"])

        assert run(good_one())[0] == 200
        m = wait_idle(scheduler)
        assert_drained(m)
        assert m["rejections"]["uploads_full"] == 1 and m["rejections"]["upload_timeout"] == 2
        assert m["rejections"]["too_large"] == 1


def test_one_fetch_wins_and_clients_are_bounded(checkpoint, cache, artifact):
    scheduler = make_scheduler(checkpoint, cache, artifact, prefill=False, max_client_held_bytes=1)
    data = wav_bytes(2.0)
    with BackgroundServer(scheduler) as url:

        async def scenario():
            async with aiohttp.ClientSession() as session:
                status, a = await submit(
                    session, url, {"kind": "encode", "data": data, "name": "a.wav", "multipart": False}
                )
                assert status == 202
                async with session.get(
                    f"{url}/v1/requests/{a['id']}", params={"wait": "30"}, headers=auth(a["token"])
                ) as resp:
                    assert (await resp.json())["status"] == "done"
                # the same client holds an unfetched result: its next submission waits for a fetch
                async with session.post(f"{url}/v1/encode", data=data, headers={"Content-Type": "audio/wav"}) as resp:
                    assert resp.status == 429 and (await resp.json())["error"]["code"] == "results_unfetched"
                # another client (another loopback address) is not held back
                other = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
                async with aiohttp.ClientSession(connector=other) as session2:
                    status, b = await submit(
                        session2, url, {"kind": "encode", "data": data, "name": "b.wav", "multipart": True}
                    )
                    assert status == 202
                    assert (await fetch(session2, url, b["id"], b["token"]))[0] == 200

                async def get():
                    async with session.get(f"{url}/v1/requests/{a['id']}/result", headers=auth(a["token"])) as resp:
                        return resp.status, await resp.read()

                answers = await asyncio.gather(*(get() for _ in range(4)))
                return answers

        answers = run(scenario())
        statuses = sorted(s for s, _ in answers)
        assert statuses.count(200) == 1 and set(statuses) <= {200, 404, 409}, statuses
        body = next(b for s, b in answers if s == 200)
        with np.load(io.BytesIO(body)) as z:
            assert z["audio_features"].shape == (1, 188, AUDIO.text_hidden_size)
        assert_drained(wait_idle(scheduler))

    # the claim itself: one caller at a time; a broken download keeps the result for a retry
    with make_scheduler(checkpoint, cache, artifact, prefill=False) as s:
        job, token = s.submit("encode", data)
        assert s.wait(job, 30)
        assert s.claim(job) and not s.claim(job)
        s.unclaim(job)
        assert s.claim(job)
        s.release(job)
        assert not s.claim(job)
        with pytest.raises(NotFound):
            s.get(job.id, token)
        assert_drained(wait_idle(s))


def test_prefill_entries_compile_off_the_device_thread(checkpoint, cache, artifact):
    scheduler = make_scheduler(checkpoint, cache, artifact)
    built: list[str] = []
    real_build = scheduler.prefill._build

    def recording_build(key):
        built.append(threading.current_thread().name)
        return real_build(key)

    scheduler.prefill._build = recording_build
    with scheduler:
        job, _ = scheduler.submit(PREFILL, wav_bytes(1.0), prompt="Summarize.")
        assert scheduler.wait(job, 120) and job.result is not None, job.error
        scheduler.release(job)
    assert built and all(name.startswith("gemma3n-frontend") for name in built), built
