"""The admission policy (`serve/admission.py`), property-tested over random limits, counters and requests.

* Each refusal is returned exactly when its bound is reached, the first bound in the documented order
  wins, and "retry later" (Rejected, with the limits' Retry-After) is kept apart from "this request can
  never be served" (BadInput, no Retry-After).  The expected bounds are written out here from the limits'
  fields, not taken from `Limits`' own properties.
* The memory bound of a request grows with its upload byte for byte, never shrinks with more audio,
  channels or prompt, and covers what the request really holds: its upload, its decoded frames and
  samples, its clips' log-mel features and every array of its encode result (so finishing a request
  never raises its reservation above what it was admitted with).
* A simulated ledger (uploads opened, refused, submitted, finished, fetched in random order, the
  scheduler's own bookkeeping applied to what the policy returns) never goes negative, never exceeds the
  budget, never has more bodies in flight than upload slots, and is back at zero once all is released.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.runtime.audio.decode import AudioInfo, resample
from gemma3n_iree.serve.admission import (
    MIB,
    Limits,
    ModelSizes,
    duration_refusal,
    held_bytes,
    limits_contradiction,
    memory_refusal,
    queue_refusal,
    request_memory_bound,
    request_refusal,
    upload_refusal,
    upload_reservation,
)
from gemma3n_iree.serve.errors import BadInput, Rejected, ServeError

RATE = 16_000
CLIP_SAMPLES = 30 * RATE  # one clip: 30 s at 16 kHz
CLIP_FRAMES = 2997  # the log-mel frames of a full 30 s clip
TOKENS_PER_CLIP = 188  # the encoder's rows per clip

limits_st = st.builds(
    Limits,
    max_queue=st.integers(1, 50),
    max_memory_bytes=st.integers(0, 64 * MIB),
    max_upload_bytes=st.integers(0, 16 * MIB),
    max_concurrent_uploads=st.integers(1, 10),
    max_client_held_bytes=st.none() | st.integers(0, 16 * MIB),
    max_seconds=st.floats(0.0, 3600.0),
    retry_after_s=st.floats(0.1, 30.0),
    max_prompt_chars=st.integers(0, 1000),
    frontend_workers=st.just(1),
)


def body_bound(limits: Limits) -> int:
    """The largest body: the audio plus 64 KiB of part headers plus the prompt at 4 bytes a character."""
    return limits.max_upload_bytes + 65536 + 4 * limits.max_prompt_chars


def client_bound(limits: Limits) -> int:
    return limits.max_client_held_bytes if limits.max_client_held_bytes is not None else limits.max_memory_bytes // 4


def assert_retry_later(refusal: ServeError | None, limits: Limits, code: str, status: int) -> None:
    assert isinstance(refusal, Rejected), refusal
    assert (refusal.code, refusal.status, refusal.retry_after) == (code, status, limits.retry_after_s)


def assert_never(refusal: ServeError | None, code: str, status: int) -> None:
    assert isinstance(refusal, BadInput) and not isinstance(refusal, Rejected), refusal
    assert (refusal.code, refusal.status, refusal.retry_after) == (code, status, None)


# ---------------------------------------------------------------------------------------------- refusals


def test_the_limits_derived_bounds():
    limits = Limits(max_memory_bytes=400 * MIB, max_upload_bytes=10 * MIB, max_prompt_chars=1000)
    assert limits.form_overhead_bytes == 64 * 1024 + 4000
    assert limits.max_body_bytes == 10 * MIB + 64 * 1024 + 4000
    assert limits.client_held_bytes == 100 * MIB  # a quarter of the budget by default
    assert Limits(max_memory_bytes=400 * MIB, max_client_held_bytes=0).client_held_bytes == 0


@settings(max_examples=400, deadline=None)
@given(
    limits=limits_st,
    reserved=st.integers(0, 80 * MIB),
    uploads=st.integers(0, 12),
    client_held=st.integers(0, 20 * MIB),
)
def test_an_upload_is_refused_exactly_when_a_bound_is_reached(limits, reserved, uploads, client_held):
    refusal = upload_refusal(limits, reserved=reserved, uploads=uploads, client_held=client_held)
    if uploads >= limits.max_concurrent_uploads:
        assert_retry_later(refusal, limits, "uploads_full", 503)
    elif client_held >= client_bound(limits):
        assert_retry_later(refusal, limits, "results_unfetched", 429)
    elif body_bound(limits) > limits.max_memory_bytes:
        assert_never(refusal, "too_large", 413)  # no retry can help: the largest body exceeds the empty budget
    elif reserved + body_bound(limits) > limits.max_memory_bytes:
        assert_retry_later(refusal, limits, "memory_full", 503)
    else:
        assert refusal is None


@settings(max_examples=400, deadline=None)
@given(
    limits=limits_st,
    reserved=st.integers(0, 80 * MIB),
    declared=st.none() | st.integers(0, 20 * MIB),
    client_uploads=st.integers(0, 12),
    client_cap=st.none() | st.integers(1, 10),
)
def test_a_body_reserves_its_declared_length_and_a_client_its_share_of_the_slots(
    limits, reserved, declared, client_uploads, client_cap
):
    """A body with a Content-Length reserves that (the largest body without one); a client sending its share
    of the upload slots waits (429) while other clients' uploads still start; a retry hint only where
    waiting can help."""
    limits = dataclasses.replace(limits, max_client_uploads=client_cap, max_client_held_bytes=1)  # none held
    body = upload_reservation(limits, declared)
    assert body == (body_bound(limits) if declared is None else min(declared, body_bound(limits)))
    share = client_cap if client_cap is not None else max(1, limits.max_concurrent_uploads // 2)
    assert limits.client_uploads == share
    refusal = upload_refusal(
        limits, reserved=reserved, uploads=0, client_held=0, client_uploads=client_uploads, body_bytes=body
    )
    if client_uploads >= share:
        assert_retry_later(refusal, limits, "client_uploads_full", 429)
    elif body > limits.max_memory_bytes:
        assert_never(refusal, "too_large", 413)
    elif reserved + body > limits.max_memory_bytes:
        assert_retry_later(refusal, limits, "memory_full", 503)
    else:
        assert refusal is None
    other = upload_refusal(limits, reserved=reserved, uploads=0, client_held=0, client_uploads=0, body_bytes=body)
    assert other is None or other.code != "client_uploads_full"


def test_the_default_upload_slots_follow_the_queue_and_the_budget():
    """By default the server receives as many bodies at once as its queue holds (half of them from one
    client), each reserving its declared length: 64 clients sending 4 MiB each fit the default 4 GiB budget."""
    limits = Limits()
    assert (limits.concurrent_uploads, limits.client_uploads) == (limits.max_queue, limits.max_queue // 2) == (256, 128)
    reserved = 0
    for client in range(64):
        body = upload_reservation(limits, 4 * MIB)
        assert upload_refusal(limits, reserved=reserved, uploads=client, client_held=0, body_bytes=body) is None
        reserved += body
    # a chunked body (no Content-Length) still reserves the largest one
    assert upload_reservation(limits, None) == limits.max_body_bytes


def test_limits_that_contradict_each_other_are_named():
    assert limits_contradiction(Limits()) is None
    tight = Limits(max_memory_bytes=40 * MIB)  # below one default upload (100 MiB + form fields)
    why = limits_contradiction(tight)
    assert "--max-memory-mb" in why and "40 MiB" in why and "--max-upload-mb" in why
    assert limits_contradiction(dataclasses.replace(tight, max_upload_bytes=39 * MIB)) is None
    over = Limits(max_concurrent_uploads=4, max_client_uploads=5)
    assert "--max-client-uploads" in limits_contradiction(over)


def test_upload_refusals_at_their_edges():
    limits = Limits(
        max_memory_bytes=100 * MIB, max_upload_bytes=10 * MIB, max_concurrent_uploads=3, max_client_held_bytes=MIB
    )
    room = 100 * MIB - body_bound(limits)  # the most that may be reserved for one more body to fit
    assert upload_refusal(limits, reserved=room, uploads=2, client_held=MIB - 1) is None
    assert upload_refusal(limits, reserved=room + 1, uploads=2, client_held=0).code == "memory_full"
    assert upload_refusal(limits, reserved=0, uploads=3, client_held=0).code == "uploads_full"
    assert upload_refusal(limits, reserved=0, uploads=0, client_held=MIB).code == "results_unfetched"


@settings(max_examples=200, deadline=None)
@given(limits=limits_st, accepting=st.booleans(), active=st.integers(0, 60))
def test_the_queue_refuses_exactly_when_stopped_or_full(limits, accepting, active):
    refusal = queue_refusal(limits, accepting=accepting, active=active)
    if not accepting:
        assert_retry_later(refusal, limits, "stopping", 503)
    elif active >= limits.max_queue:
        assert_retry_later(refusal, limits, "queue_full", 429)
        assert f"({active} of {limits.max_queue} requests" in refusal.message
    else:
        assert refusal is None


@settings(max_examples=400, deadline=None)
@given(
    limits=limits_st,
    kind=st.sampled_from(["encode", "prefill", "decode", ""]),
    prompt=st.none() | st.text(max_size=1200),
    upload_bytes=st.integers(0, 20 * MIB),
)
def test_a_request_is_refused_for_what_it_is(limits, kind, prompt, upload_bytes):
    refusal = request_refusal(limits, kind, name="talk.flac", upload_bytes=upload_bytes, prompt=prompt)
    if kind not in ("encode", "prefill"):
        assert_never(refusal, "bad_kind", 400)
    elif kind == "prefill" and prompt is None:
        assert_never(refusal, "bad_prompt", 400)
    elif kind == "prefill" and len(prompt) > limits.max_prompt_chars:
        assert_never(refusal, "too_large", 413)
        assert "prompt" in refusal.message
    elif upload_bytes > limits.max_upload_bytes:
        assert_never(refusal, "too_large", 413)
        assert refusal.message.startswith("talk.flac: ")
    else:
        assert refusal is None  # an encode request's prompt, if any, is never looked at


@settings(max_examples=200, deadline=None)
@given(limits=limits_st, seconds=st.floats(0.0, 7200.0))
def test_audio_is_refused_exactly_when_longer_than_the_limit(limits, seconds):
    refusal = duration_refusal(limits, name="talk.flac", seconds=seconds)
    if seconds > limits.max_seconds:
        assert_never(refusal, "too_long", 413)
        assert refusal.message.startswith("talk.flac: ")
    else:
        assert refusal is None


@settings(max_examples=400, deadline=None)
@given(
    limits=limits_st,
    need=st.integers(0, 80 * MIB),
    reserved=st.integers(0, 80 * MIB),
    replacing=st.integers(0, 20 * MIB),
)
def test_memory_is_refused_exactly_when_the_budget_would_be_exceeded(limits, need, reserved, replacing):
    replacing = min(replacing, reserved)  # the upload's reservation is part of what is reserved
    refusal = memory_refusal(limits, name="talk.flac", need=need, reserved=reserved, replacing=replacing)
    after = reserved - replacing + need
    if after <= limits.max_memory_bytes:
        assert refusal is None
    elif need > limits.max_memory_bytes:
        assert_never(refusal, "too_large", 413)  # retrying cannot help: it exceeds the empty budget
    else:
        assert_retry_later(refusal, limits, "memory_full", 503)
    # a request alone on the server (only its own upload reserved) is admitted whenever it fits at all
    alone = memory_refusal(limits, name="talk.flac", need=need, reserved=replacing, replacing=replacing)
    assert (alone is None) == (need <= limits.max_memory_bytes)


def test_memory_refusal_at_its_edge():
    limits = Limits(max_memory_bytes=100 * MIB)
    fits = memory_refusal(limits, name="x", need=30 * MIB, reserved=80 * MIB, replacing=10 * MIB)
    one_more = memory_refusal(limits, name="x", need=30 * MIB + 1, reserved=80 * MIB, replacing=10 * MIB)
    assert fits is None and one_more.code == "memory_full"
    assert memory_refusal(limits, name="x", need=100 * MIB + 1, reserved=0, replacing=0).code == "too_large"


# ---------------------------------------------------------------------------------------------- the bound

sizes_st = st.builds(
    lambda mel, text, hidden, token: SimpleNamespace(
        audio=SimpleNamespace(input_feat_size=mel, text_hidden_size=text, hidden_size=hidden),
        text=None if token is None else SimpleNamespace(hidden_size=token[0], ple_width=token[1]),
    ),
    st.integers(1, 160),
    st.integers(1, 64),
    st.integers(1, 64),
    st.none() | st.tuples(st.integers(1, 64), st.integers(0, 64)),
)
probe_st = st.builds(
    lambda rate, channels, frames: AudioInfo(rate, channels, frames, "WAV PCM_16", "wav", True),
    st.sampled_from([8000, 16000, 22050, 44100, 48000]),
    st.integers(1, 8),
    st.integers(0, 48000 * 150),
)


def model_sizes(model) -> ModelSizes:
    return ModelSizes.of(model.audio, model.text)


def resampled_length(probe: AudioInfo) -> int:
    """The most 16 kHz samples the header's frames decode to: the rate ratio rounded to the nearest
    sample (what soxr returns; no resampling at 16 kHz)."""
    return math.floor(probe.frames * RATE / probe.rate + 0.5)


def with_frames(probe: AudioInfo, frames: int, channels: int | None = None) -> AudioInfo:
    return AudioInfo(probe.rate, channels or probe.channels, frames, probe.format, probe.container, True)


@settings(max_examples=300, deadline=None)
@given(
    model=sizes_st,
    probe=probe_st,
    upload=st.integers(0, 100 * MIB),
    extra=st.integers(0, 10 * MIB),
    kind=st.sampled_from(["encode", "prefill"]),
    prompt=st.text(max_size=300),
)
def test_the_bound_counts_the_upload_byte_for_byte(model, probe, upload, extra, kind, prompt):
    sizes = model_sizes(model)
    more = request_memory_bound(probe, upload + extra, kind, prompt, sizes)
    assert more == request_memory_bound(probe, upload, kind, prompt, sizes) + extra


@settings(max_examples=300, deadline=None)
@given(
    model=sizes_st,
    probe=probe_st,
    more_frames=st.integers(0, 48000 * 60),
    more_channels=st.integers(0, 4),
    kind=st.sampled_from(["encode", "prefill"]),
    prompt=st.text(max_size=300),
    more_prompt=st.text(max_size=300),
)
def test_the_bound_never_shrinks_with_more_audio_or_prompt(
    model, probe, more_frames, more_channels, kind, prompt, more_prompt
):
    sizes = model_sizes(model)
    base = request_memory_bound(probe, 1000, kind, prompt, sizes)
    longer = with_frames(probe, probe.frames + more_frames, probe.channels + more_channels)
    assert request_memory_bound(longer, 1000, kind, prompt, sizes) >= base
    assert request_memory_bound(probe, 1000, kind, prompt + more_prompt, sizes) >= base


@settings(max_examples=300, deadline=None)
@given(model=sizes_st, probe=probe_st, prompt=st.text(max_size=300))
def test_a_prefill_adds_its_token_rows_and_an_encode_ignores_the_prompt(model, probe, prompt):
    sizes = model_sizes(model)
    encode = request_memory_bound(probe, 1000, "encode", None, sizes)
    assert request_memory_bound(probe, 1000, "encode", prompt, sizes) == encode
    prefill = request_memory_bound(probe, 1000, "prefill", prompt, sizes)
    if model.text is None:  # no prefill stage: nothing to add
        assert prefill == encode
    else:
        clips = max(1, math.ceil(probe.frames * RATE / probe.rate / CLIP_SAMPLES))
        row = (model.text.hidden_size + model.text.ple_width) * 4  # inputs_embeds + per_layer_inputs, f32
        # one token per UTF-8 byte at most (byte fallback: a character outside the vocabulary is its bytes)
        assert prefill - encode >= (clips * TOKENS_PER_CLIP + len(prompt.encode("utf-8"))) * row


@settings(max_examples=200, deadline=None)
@given(model=sizes_st, probe=probe_st, upload=st.integers(0, MIB), data=st.data())
def test_the_bound_covers_what_an_encode_request_holds(model, probe, upload, data):
    """Upload + the decoder's float64 frames + the 16 kHz float32 samples + full-length log-mel of every
    clip + the result's arrays, for any decoded length up to what the header's frames resample to (soxr
    rounds to the nearest sample)."""
    samples = data.draw(st.integers(0, resampled_length(probe)), label="samples")
    assert_covers(model, probe, upload, samples)


def test_the_bound_covers_a_clip_that_resampling_adds():
    """44.1 kHz audio a fraction of a sample past 30 s: the resampler rounds it up to 480,001 samples, two
    clips, and the bound (from the header, before decoding) must count both."""
    model = SimpleNamespace(audio=builtin_config("tiny"), text=None)
    probe = AudioInfo(44100, 1, 1_323_002, "WAV PCM_16", "wav", True)
    samples = resample(np.zeros(probe.frames, np.float32), probe.rate).shape[0]
    assert samples == 480_001 == resampled_length(probe)
    assert_covers(model, probe, 0, samples)


def encode_result(model, clips: int) -> dict[str, np.ndarray]:
    """What the scheduler's device thread hands back for an encode request of `clips` clips."""
    audio = model.audio
    return {
        "audio_features": np.zeros((clips, TOKENS_PER_CLIP, audio.text_hidden_size), np.float32),
        "encoder_hidden": np.zeros((clips, TOKENS_PER_CLIP, audio.hidden_size), np.float32),
        "valid_tokens": np.zeros(clips, np.int32),
        "clip_source": np.zeros(clips, np.int32),
        "clip_start_s": np.zeros(clips, np.float32),
    }


def assert_covers(model, probe: AudioInfo, upload: int, samples: int) -> None:
    bound = request_memory_bound(probe, upload, "encode", None, model_sizes(model))
    clips = max(1, math.ceil(samples / CLIP_SAMPLES))
    result = encode_result(model, clips)
    features = clips * CLIP_FRAMES * model.audio.input_feat_size * 4
    held = sum(a.nbytes for a in result.values())
    assert held_bytes(result) == held
    decoded = probe.frames * probe.channels * 8  # `decode_audio` reads every frame as float64
    assert bound >= upload + decoded + samples * 4 + features + held, (bound, clips)


def test_the_model_sizes_of_a_real_config():
    cfg = builtin_config("tiny")
    sizes = ModelSizes.of(cfg)
    assert sizes.mel_bins == cfg.input_feat_size and sizes.prefill_token_bytes is None
    assert sizes.clip_output_bytes >= TOKENS_PER_CLIP * (cfg.text_hidden_size + cfg.hidden_size) * 4 + 12
    text = SimpleNamespace(hidden_size=7, ple_width=5)
    assert ModelSizes.of(cfg, text).prefill_token_bytes >= (7 + 5) * 4 + 8  # + input id and audio row


def test_held_bytes_of_an_error_and_of_a_result():
    error = ServeError("x" * 1000)
    assert held_bytes(None, error) == 1256
    assert held_bytes({"a": np.zeros(3, np.float32)}, error) == 1256  # a failed request keeps no arrays
    assert held_bytes({"a": np.zeros((3, 4), np.float32), "b": np.zeros(5, np.int64)}) == 48 + 40


# ---------------------------------------------------------------------------------------------- the ledger

_op = st.tuples(st.sampled_from(["open", "refuse_body", "submit", "finish", "fail", "fetch"]), st.integers(0, 3))


@st.composite
def ledger_limits_st(draw) -> Limits:
    """A budget of a few largest bodies and requests, so that the ledger runs into every bound and also
    admits."""
    upload = draw(st.integers(0, 2 * MIB))
    prompt = draw(st.integers(0, 1000))
    body = upload + 65536 + 4 * prompt
    return Limits(
        max_memory_bytes=body * draw(st.integers(0, 6)) + draw(st.integers(0, 32 * MIB)),
        max_upload_bytes=upload,
        max_concurrent_uploads=draw(st.integers(1, 6)),
        max_client_held_bytes=draw(st.none() | st.integers(0, 8 * MIB)),
        max_prompt_chars=prompt,
        frontend_workers=1,
    )


short_probe_st = st.builds(
    lambda rate, channels, frames: AudioInfo(rate, channels, frames, "WAV PCM_16", "wav", True),
    st.sampled_from([8000, 16000, 44100]),
    st.integers(1, 2),
    st.integers(1, 8000 * 40),
)


@settings(max_examples=300, deadline=None)
@given(
    limits=ledger_limits_st(),
    model=sizes_st,
    probes=st.lists(short_probe_st, min_size=1, max_size=8),
    ops=st.lists(_op, min_size=10, max_size=60),
)
def test_the_ledger_stays_within_the_budget(limits, model, probes, ops):
    """The scheduler's bookkeeping (`open_upload`, `submit`, `_finish`, `_drop`) applied to the policy's
    answers: what is reserved stays in [0, budget] after every step."""
    sizes = model_sizes(model)
    reserved = 0
    slots: list[tuple[str, int]] = []  # (client, reserved) of bodies being received
    jobs: list[dict] = []  # {"client", "reserved", "active"}
    for step, (op, who) in enumerate(ops):
        client = f"client{who % 2}"
        held_by_client = sum(j["reserved"] for j in jobs if j["client"] == client and not j["active"])
        if op == "open":
            if upload_refusal(limits, reserved=reserved, uploads=len(slots), client_held=held_by_client) is None:
                slots.append((client, body_bound(limits)))
                reserved += body_bound(limits)
        elif op == "refuse_body" and slots:
            reserved -= slots.pop(who % len(slots))[1]
        elif op == "submit" and slots:
            client, slot = slots[who % len(slots)]
            probe = probes[step % len(probes)]
            upload = min(limits.max_upload_bytes, 1000 * (step + 1))
            need = request_memory_bound(probe, upload, "encode", None, sizes)
            if memory_refusal(limits, name="x", need=need, reserved=reserved, replacing=slot) is None:
                jobs.append({"client": client, "reserved": need, "active": True, "probe": probe})
                reserved += need
            slots.remove((client, slot))  # released whatever happened
            reserved -= slot
        elif op in ("finish", "fail") and any(j["active"] for j in jobs):
            job = [j for j in jobs if j["active"]][who % sum(j["active"] for j in jobs)]
            if op == "fail":
                held = held_bytes(None, ServeError("the encoder call failed: " + "x" * 100))
            else:
                probe = job["probe"]
                held = held_bytes(encode_result(model, max(1, math.ceil(resampled_length(probe) / CLIP_SAMPLES))))
            reserved += held - job["reserved"]
            job.update(reserved=held, active=False)
        elif op == "fetch" and any(not j["active"] for j in jobs):
            done = [j for j in jobs if not j["active"]]
            job = done[who % len(done)]
            jobs.remove(job)
            reserved -= job["reserved"]
        assert 0 <= reserved <= limits.max_memory_bytes, (op, reserved)
        assert len(slots) <= limits.max_concurrent_uploads
    for _, slot in slots:
        reserved -= slot
    for job in jobs:
        reserved -= job["reserved"]
    assert reserved == 0
