"""`POST /v1/chat/completions` (serve/chat_routes.py, serve/openai_chat.py), end to end and as pure functions.

The server is tests/test_transcribe.py's: transformers' own tiny Gemma 3n checkpoint (seed 21, 256 positions),
the scheduler's encoder and prefill stage and a 4-slot decoder program sized for 8-token windows (capacity
256, prompts of up to 249 tokens), all llvm-cpu under f32-reference, built with the same configuration so
that a full run compiles them once for both files.  One difference: its `tokenizer.json` names every id of the
vocabulary (`w123` for id 123, the test words and special tokens at their ids), so that the random model's
answers are text, and a token's text gives its id back.  The OpenAI Python client drives it; plain HTTP sends
what the client would refuse to send.

Shown: a multi-turn conversation with audio inside a user turn gives transformers-fp32's
`generate(do_sample=False)` ids on the same prompt and clip, and `gemma3n-iree generate`'s answer
(`runtime/text/ask.py`'s `answer` on the service's own decoder); streamed chunks concatenate to the answer; stop
strings cut it; usage counts the prompt's and the answer's tokens; refusals name their field; a prompt the
context cannot hold is refused before any audio is encoded; a chat and a transcription at once share decode
calls and each answers as alone.  Expected prompt texts are written out from Gemma 3n's chat template
(transformers' `convert_gemma3n_weights.py`, `_CHAT_TEMPLATE`), not produced by the code under test.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts.sampling import SamplingParams, sample_rows
from gemma3n_iree.runtime.text.tokens import (
    AUDIO_ITEM,
    AUDIO_TOKEN,
    MODEL,
    USER,
    PromptError,
    placeholder_runs,
    render_chat,
)
from gemma3n_iree.serve.openai_audio import OpenAIError
from gemma3n_iree.serve.openai_chat import GEMMA_TOP_K, GEMMA_TOP_P, StopText, parse_chat_request

SPECIAL = ("<start_of_turn>", "<end_of_turn>", AUDIO_TOKEN)
WAV_B64 = base64.b64encode(b"RIFF....WAVEfmt ").decode()  # base64 of bytes (never decoded by the pure tests)


def audio_part(data: str = WAV_B64, fmt: str = "wav") -> dict:
    return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}


def parse(**fields):
    doc = {"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], **fields}
    return parse_chat_request(doc, {"tiny"}, SPECIAL, max_audio_bytes=64)


# ---------------------------------------------------------------------------------------------- the prompt
def test_a_conversation_renders_as_gemma_3n_chat_template():
    """Written out from the template: the system text as given and a blank line open the first turn; text
    items are trimmed and joined with nothing between; an audio item is one marker where it stands; the
    assistant's turns are `model` turns; the model's turn is opened last."""
    turns = [
        (USER, [" What is said? "]),
        (MODEL, ["A clip.\n"]),
        (USER, ["Compare", AUDIO_ITEM, " with ", AUDIO_ITEM, "."]),
    ]
    assert render_chat(turns, " Be brief.") == (
        "<bos><start_of_turn>user\n Be brief.\n\nWhat is said?<end_of_turn>\n"
        "<start_of_turn>model\nA clip.<end_of_turn>\n"
        f"<start_of_turn>user\nCompare{AUDIO_TOKEN}with{AUDIO_TOKEN}.<end_of_turn>\n"
        "<start_of_turn>model\n"
    )
    assert render_chat([(USER, ["Hi"])]) == "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"
    with pytest.raises(PromptError, match="alternate"):
        render_chat([(USER, ["a"]), (USER, ["b"])])


def test_each_audio_part_becomes_its_clips_where_it_stands(tmp_path):
    """Two audio parts in the second user turn, of 1 and 2 clips: three runs of 188 placeholders, the first
    part's where its marker was, the second's two adjacent where its marker was."""
    from synthetic_text import build_test_tokenizer

    from gemma3n_iree.model.text_config import builtin_text_config
    from gemma3n_iree.runtime.text.tokens import expand_text

    cfg = builtin_text_config("tiny")
    tokenizer = build_test_tokenizer()
    req = parse(
        messages=[
            {"role": "user", "content": "What is said?"},
            {"role": "assistant", "content": [{"type": "text", "text": "this"}]},
            {"role": "user", "content": [audio_part(), {"type": "text", "text": "and"}, audio_part(fmt="flac")]},
        ]
    )
    assert [a.param for a in req.audio] == [
        "messages[2].content[0].input_audio.data",
        "messages[2].content[2].input_audio.data",
    ]
    text = render_chat(req.turns, req.system)
    ids = expand_text(tokenizer, cfg, text, [1, 2])
    runs = placeholder_runs(ids, cfg.audio_token_id)
    assert [length for _, length in runs] == [188, 188, 188]
    between = [[int(i) for i in ids[a + n : b]] for (a, n), (b, _) in zip(runs, runs[1:])]
    layout = {cfg.boa_token_id, cfg.eoa_token_id, *range(107, 111)}  # <start/end_of_audio>, newline runs
    assert tokenizer.token_to_id("and") in between[0]  # the text part stands between the two audio parts
    assert set(between[1]) <= layout  # the second part's two clips are adjacent
    assert tokenizer.decode(list(ids[: runs[0][0]]), skip_special_tokens=False).endswith("<start_of_audio>")


# ---------------------------------------------------------------------------------------------- requests
def test_defaults_and_the_sampling_each_request_maps_to():
    r = parse()
    assert r.turns == ((USER, ("Hi",)),) and r.system is None and r.audio == ()
    assert (r.temperature, r.top_p, r.seed, r.max_tokens, r.stop, r.stream) == (1.0, GEMMA_TOP_P, None, None, (), False)
    # OpenAI's default temperature (1) with Gemma's top-k and top-p, the server's seed
    assert r.sampling(lambda: 1234) == SamplingParams(1.0, GEMMA_TOP_K, 0.95, 1234) and GEMMA_TOP_K == 64
    assert 0 <= r.sampling().seed < 2**32
    given_ = parse(temperature=0.7, top_p=0.5, seed=7, max_tokens=5, stop="w1", n=1)
    assert given_.sampling() == SamplingParams(0.7, 64, 0.5, 7)
    assert (given_.max_tokens, given_.max_tokens_param, given_.stop) == (5, "max_tokens", ("w1",))
    assert parse(temperature=0).sampling() is None and parse(temperature=1.2, top_p=0).sampling() is None
    system = parse(
        messages=[
            {"role": "developer", "content": [{"type": "text", "text": " Be brief."}]},
            {"role": "user", "content": "Hi"},
        ]
    )
    assert system.system == " Be brief."  # the template takes it as given
    r = parse(
        logprobs=True, top_logprobs=3, stream=True, stream_options={"include_usage": True}, max_completion_tokens=9
    )
    assert (r.logprobs, r.top_logprobs, r.stream, r.include_usage, r.max_tokens) == (True, 3, True, True, 9)
    assert parse(user="me", metadata={}, response_format={"type": "text"}, frequency_penalty=0).model == "tiny"


def msgs(*content, role="user"):
    return [{"role": role, "content": c} for c in content]


@pytest.mark.parametrize(
    "fields, status, param, fragment",
    [
        ({"model": "gpt-4o"}, 404, "model", "does not exist"),
        ({"messages": []}, 400, "messages", "non-empty array"),
        ({"messages": [{"role": "robot", "content": "x"}]}, 400, "messages[0].role", "one of system"),
        ({"messages": [{"role": "tool", "content": "x"}]}, 400, "messages[0].role", "tool calls"),
        ({"messages": msgs("a", "b")}, 400, "messages[1].role", "alternate"),
        ({"messages": [{"role": "assistant", "content": "x"}]}, 400, "messages[0].role", "starting with user"),
        ({"messages": msgs("a") + [{"role": "system", "content": "s"}]}, 400, "messages[1].role", "must come first"),
        ({"messages": [{"role": "system", "content": "s"}]}, 400, "messages", "at least one user"),
        ({"messages": msgs([])}, 400, "messages[0].content", "non-empty array"),
        ({"messages": msgs(None)}, 400, "messages[0].content", "required"),
        ({"messages": msgs([{"type": "image_url"}])}, 400, "messages[0].content[0].type", "images"),
        ({"messages": msgs(["x"])}, 400, "messages[0].content[0]", "an object"),
        ({"messages": msgs([{"type": "text", "text": 3}])}, 400, "messages[0].content[0].text", "a string"),
        ({"messages": msgs("hi<end_of_turn>")}, 400, "messages[0].content", "special token"),
        ({"messages": [{"role": "user", "content": "a", "tool_calls": []}]}, 400, "messages[0].tool_calls", "tool"),
        ({"messages": msgs([audio_part("%%%")])}, 400, "messages[0].content[0].input_audio.data", "base64"),
        ({"messages": msgs([audio_part("")])}, 400, "messages[0].content[0].input_audio.data", "required"),
        (
            {"messages": msgs([audio_part(fmt="m4a")])},
            400,
            "messages[0].content[0].input_audio.format",
            "not supported",
        ),
        ({"messages": msgs([audio_part(fmt="xyz")])}, 400, "messages[0].content[0].input_audio.format", "one of wav"),
        ({"messages": msgs([audio_part("A" * 100)])}, 413, "messages[0].content[0].input_audio.data", "limit of 64"),
        (
            {"messages": msgs("a") + msgs([audio_part()], role="assistant")},
            400,
            "messages[1].content[0].type",
            "cannot carry audio",
        ),
        ({"n": 2}, 400, "n", "must be 1"),
        ({"temperature": 2.5}, 400, "temperature", "between 0 and 2"),
        ({"temperature": "hot"}, 400, "temperature", "a number"),
        ({"top_p": 1.5}, 400, "top_p", "between 0 and 1"),
        ({"seed": -1}, 400, "seed", "[0, 2^32)"),
        ({"stop": ["a", "b", "c", "d", "e"]}, 400, "stop", "1 to 4"),
        ({"stop": [""]}, 400, "stop", "non-empty"),
        ({"max_completion_tokens": 0}, 400, "max_completion_tokens", "positive integer"),
        ({"max_tokens": True}, 400, "max_tokens", "positive integer"),
        ({"max_tokens": 3, "max_completion_tokens": 3}, 400, "max_tokens", "not both"),
        ({"top_logprobs": 2}, 400, "top_logprobs", "needs logprobs"),
        ({"logprobs": True, "top_logprobs": 21}, 400, "top_logprobs", "between 0 and 20"),
        ({"logprobs": "yes"}, 400, "logprobs", "true or false"),
        ({"stream_options": {"include_usage": True}}, 400, "stream_options", "only allowed when stream"),
        ({"tools": []}, 400, "tools", "Unrecognized request argument"),
        ({"presence_penalty": 0.5}, 400, "presence_penalty", "only 0"),
        ({"response_format": {"type": "json_object"}}, 400, "response_format", "no JSON mode"),
        ({"modalities": ["text", "audio"]}, 400, "modalities", "no audio output"),
    ],
)
def test_refusals_name_the_field(fields, status, param, fragment):
    with pytest.raises(OpenAIError) as err:
        parse(**fields)
    e = err.value
    assert (e.status, e.param) == (status, param) and fragment in e.message, e.message
    assert e.body()["error"]["param"] == param and e.body()["error"]["type"] == "invalid_request_error"


# ---------------------------------------------------------------------------------------------- stop strings
def cut(text: str, stops: list[str]) -> tuple[str, bool]:
    """What OpenAI's `stop` leaves of `text` generated one character at a time: generation ends at the first
    prefix containing a stop string, and the answer is that prefix before the stop string (the earliest one)."""
    for k in range(1, len(text) + 1):
        found = [i for i in (text[:k].find(s) for s in stops) if i >= 0]
        if found:
            return text[: min(found)], True
    return text, False


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.text("ab c", max_size=4), max_size=12),
    stops=st.lists(st.text("ab c", min_size=1, max_size=4), min_size=1, max_size=4),
)
def test_stop_text_emits_exactly_the_text_before_the_first_stop(pieces, stops):
    stream = StopText(stops)
    out = []
    for piece in pieces:
        out.append(stream.push(piece))
        assert not stream.stopped or out[-1] is not None
        if stream.stopped:
            break
    out.append(stream.finish())
    assert ("".join(out), stream.stopped) == cut("".join(pieces), stops)


# ---------------------------------------------------------------------------------------------- the server
torch = pytest.importorskip("torch", reason="transformers parity needs torch (test-only dependency)")
pytest.importorskip("transformers", reason="transformers parity needs transformers (test-only dependency)")
openai = pytest.importorskip("openai", reason="the OpenAI client drives the endpoint (test extra)")

from oracles import hf_audio_model as A  # noqa: E402
from oracles.configs import TINY  # noqa: E402

from gemma3n_iree.contracts import F32_REFERENCE  # noqa: E402
from gemma3n_iree.model.decoder_config import builtin_decoder_config  # noqa: E402
from gemma3n_iree.runtime.audio.frontend import load_audio  # noqa: E402
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache  # noqa: E402

CFG = builtin_decoder_config("tiny")
SPEECH = Path(__file__).parent / "data" / "speech_16k.wav"
CAPACITY = 256
SERVER_NEW_TOKENS = 8  # per transcription window: sizes the decoder program as tests/test_transcribe.py's server
TOP = 3  # top_logprobs asked for
#: |our log probability - transformers-fp32's|: our logits are within ~1e-6 relative of transformers' (every
#: stage, tests/test_transcribe.py) and at most the softcap (30) in size, so each moves by < 3e-5 and a
#: log-softmax (x - m - log S) by at most twice that
LOGPROB_ATOL = 6e-5


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """float64 log-softmax of each row."""
    x = np.asarray(logits, np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def write_word_tokenizer(directory: Path) -> None:
    """The test tokenizer with every other id of the vocabulary a word `w<id>`."""
    from synthetic_text import NEWLINES, SPECIAL_TOKENS, WORDS, build_test_tokenizer

    taken = {*SPECIAL_TOKENS.values(), *NEWLINES.values(), *WORDS.values()}
    words = {**WORDS, **{f"w{i}": i for i in range(CFG.vocab_size) if i not in taken}}
    build_test_tokenizer(words).save(str(directory / "tokenizer.json"))


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    model = A.make_model(TINY, CFG, seed=21)
    directory = A.write_checkpoint(model, tmp_path_factory.mktemp("gemma3n-tiny-chat"))
    write_word_tokenizer(directory)
    return model, directory, ArtifactCache(tmp_path_factory.mktemp("chat-cache"))


@pytest.fixture(scope="module")
def server(case):
    """`gemma3n-iree serve`'s pieces as tests/test_transcribe.py builds them; (url, scheduler, service)."""
    from gemma3n_iree.serve.admission import Limits
    from gemma3n_iree.serve.chat_routes import add_decoder_routes
    from gemma3n_iree.serve.launch import BackgroundServer, build_scheduler, build_transcription_service

    _, directory, cache = case
    limits = Limits(max_upload_bytes=4 << 20, max_seconds=300.0, max_wait_s=0.02, frontend_workers=2, max_queue=64)
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
    with BackgroundServer(scheduler, extensions=[lambda app: add_decoder_routes(app, service)]) as url:
        yield url, scheduler, service
    service.close()


def wav(samples: np.ndarray, subtype: str = "FLOAT") -> bytes:
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, samples, 16000, format="WAV", subtype=subtype)
    return buf.getvalue()


SAMPLES = load_audio(SPEECH)[0]
SPEECH_B64 = base64.b64encode(wav(SAMPLES)).decode()
CONVERSATION = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "What is this?"},
    {"role": "assistant", "content": "this is audio."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Transcribe"},
            {"type": "input_audio", "input_audio": {"data": SPEECH_B64, "format": "wav"}},
            {"type": "text", "text": "then summarize."},
        ],
    },
]


def client(url: str):
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=120)


def post(url: str, body: bytes | dict, content_type: str = "application/json") -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}/v1/chat/completions", data, {"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def wait_idle(service, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = service.metrics()
        ended = m["completed"] + m["cancelled"] + m["failed"]
        if m["slots_in_use"] == 0 and m["windows_waiting"] == 0 and ended == m["requests"]:
            return m
        time.sleep(0.01)
    raise AssertionError(f"the decoder did not go idle: {service.metrics()}")


def token_ids(service, choice) -> list[int]:
    """The answer's token ids, read back from its log probabilities' token texts (every id is a word here)."""
    return [service.tokenizer.token_to_id(entry.token) for entry in choice.logprobs.content]


@pytest.fixture(scope="module")
def greedy(server):
    """The conversation's greedy answer through the OpenAI client (with log probabilities and the `TOP` most
    likely tokens of each step), and the prompt."""
    url, _, service = server
    response = client(url).chat.completions.create(
        model="tiny", messages=CONVERSATION, temperature=0, logprobs=True, top_logprobs=TOP
    )
    wait_idle(service)
    req = parse_chat_request({"model": "tiny", "messages": CONVERSATION}, {"tiny"}, max_audio_bytes=1 << 30)
    ids = service.prefill.expand_text(render_chat(req.turns, req.system), [1])
    return response, ids


def test_greedy_answer_equals_transformers_fp32_and_the_generate_command(case, server, greedy):
    """The endpoint's tokens are transformers-fp32's `generate(do_sample=False)` on the same prompt ids and clip
    (stop ids off there: ours may end at one), and `gemma3n-iree generate`'s `answer` on the service's decoder;
    usage counts the prompt (188 of it audio) and every generated token."""
    from gemma3n_iree.runtime.text.ask import PreparedPrompt, answer

    model = case[0]
    _, scheduler, service = server
    response, ids = greedy
    [choice] = response.choices
    tokens = token_ids(service, choice)
    room = CAPACITY + 1 - len(ids)
    assert response.object == "chat.completion" and response.model == "tiny" and response.id.startswith("chatcmpl-")
    assert choice.message.role == "assistant" and choice.index == 0
    want = A.generate_ids(model, ids, SAMPLES, room)
    assert tokens == want[: len(tokens)] and len(tokens) >= 1
    if choice.finish_reason == "length":
        assert len(tokens) == room
    else:
        assert choice.finish_reason == "stop" and tokens[-1] in service.stop_ids
    assert choice.message.content == service.tokenizer.decode(tokens)
    with scheduler.prefill_lock:  # the server is idle: its decoder and prefill stage are free
        alone = answer(service.prefill, service.decoder, service.stop_ids, PreparedPrompt(ids, (SAMPLES,), (1,)), room)
    assert alone.token_ids == tokens and alone.text == choice.message.content
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (len(ids), len(tokens))
    assert usage.total_tokens == len(ids) + len(tokens) and usage.prompt_tokens_details.audio_tokens == 188
    # each step's log probabilities are transformers' log-softmax along these tokens; the first of its most
    # likely tokens is the greedy token itself
    want_logprobs = log_softmax(A.step_logits(model, ids, SAMPLES, tokens))
    for k, entry in enumerate(choice.logprobs.content):
        top = [(service.tokenizer.token_to_id(t.token), t.logprob) for t in entry.top_logprobs]
        assert len(top) == TOP and top[0] == (tokens[k], entry.logprob)
        assert [lp for _, lp in top] == sorted((lp for _, lp in top), reverse=True)
        got = np.array([entry.logprob] + [lp for _, lp in top])
        np.testing.assert_allclose(got, want_logprobs[k, [tokens[k]] + [t for t, _ in top]], rtol=0, atol=LOGPROB_ATOL)


def test_streamed_chunks_concatenate_to_the_answer(server, greedy):
    url, _, service = server
    response, _ = greedy
    stream = client(url).chat.completions.create(
        model="tiny",
        messages=CONVERSATION,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    *deltas, last = chunks
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    assert deltas[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in deltas) == response.choices[0].message.content
    assert [c.choices[0].finish_reason for c in deltas] == [None] * (len(deltas) - 1) + [
        response.choices[0].finish_reason
    ]
    assert last.choices == [] and last.usage.completion_tokens == response.usage.completion_tokens
    assert last.usage.prompt_tokens == response.usage.prompt_tokens
    assert len(deltas) > 3  # the text came as it was decided, not at once


def test_stop_strings_cut_the_answer(server, greedy):
    """A word of the greedy answer as the stop string: the text ends right before it, finish_reason "stop",
    the tokens counted up to the one that completed it; streamed the same; the slot is freed."""
    url, _, service = server
    response, _ = greedy
    before = wait_idle(service)
    words = response.choices[0].message.content.split(" ")
    assert len(words) > 6, words
    stop = " " + words[5]
    first = response.choices[0].message.content.find(stop)
    cut = client(url).chat.completions.create(
        model="tiny", messages=CONVERSATION, temperature=0, stop=[stop, "never said"]
    )
    [choice] = cut.choices
    assert choice.message.content == response.choices[0].message.content[:first]
    assert choice.finish_reason == "stop" and cut.usage.completion_tokens == len(words[:6])
    streamed = client(url).chat.completions.create(
        model="tiny", messages=CONVERSATION, temperature=0, stop=stop, stream=True
    )
    pieces = [(c.choices[0].delta.content or "", c.choices[0].finish_reason) for c in streamed]
    assert "".join(p for p, _ in pieces) == choice.message.content and pieces[-1][1] == "stop"
    after = wait_idle(service)  # the two requests answered: completed, not cancelled; their slots free
    assert (after["completed"] - before["completed"], after["cancelled"] - before["cancelled"]) == (2, 0)


def test_refusals_are_openai_errors_naming_the_field(server):
    """Plain HTTP (what the client would not send) and the client: each refusal names its field; a prompt
    the context cannot hold is refused before any audio is encoded."""
    url, scheduler, service = server
    long_audio = base64.b64encode(wav(np.resize(SAMPLES, 35 * 16000), "PCM_16")).decode()  # 2 clips
    before = scheduler.metrics()
    cases = {
        "json": post(url, b"{not json"),
        "type": post(url, b"{}", "text/plain"),
        "messages": post(url, {"model": "tiny"}),
        "role": post(url, {"model": "tiny", "messages": [{"role": "robot", "content": "x"}]}),
        "not_audio": post(url, {"model": "tiny", "messages": msgs([audio_part(WAV_B64)])}),
        "format": post(url, {"model": "tiny", "messages": msgs([audio_part(SPEECH_B64, "aac")])}),
        "n": post(url, {"model": "tiny", "messages": msgs("Hi"), "n": 2}),
        "context": post(url, {"model": "tiny", "messages": msgs([audio_part(long_audio)])}),
        "max_tokens": post(url, {"model": "tiny", "messages": msgs("Hi"), "max_completion_tokens": 500}),
        "top_logprobs": post(url, {"model": "tiny", "messages": msgs("Hi"), "top_logprobs": 2}),
    }
    after = scheduler.metrics()

    def error(key):
        status, body = cases[key]
        assert "error" in body, (key, status, body)
        return status, body["error"]["param"], body["error"]["message"], body["error"]["code"]

    assert error("json")[:2] == (400, None) and "not valid JSON" in error("json")[2]
    assert error("type")[0] == 415
    assert error("messages")[:2] == (400, "messages")
    assert error("role")[:2] == (400, "messages[0].role")
    assert error("not_audio")[:2] == (400, "messages[0].content[0].input_audio.data")
    assert error("format")[:2] == (400, "messages[0].content[0].input_audio.format")
    assert error("n")[:2] == (400, "n")
    status, param, message, code = error("context")
    assert (status, param, code) == (400, "messages", "context_length_exceeded")
    assert re.search(r"has \d{3} tokens", message) and f"({CAPACITY})" in message and "2 clip(s)" in message, message
    status, param, message, code = error("max_tokens")
    assert (status, param, code) == (400, "max_completion_tokens", "context_length_exceeded") and "500" in message
    assert error("top_logprobs")[:2] == (400, "top_logprobs") and "needs logprobs" in error("top_logprobs")[2]
    assert after["counts"].get("submitted", 0) == before["counts"].get("submitted", 0)  # nothing was encoded
    # a body over the server's limit is refused from its Content-Length, before a byte of it is read
    import socket

    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {scheduler.limits.max_body_bytes + 1}\r\n\r\n".encode()
        )
        assert sock.recv(64).startswith(b"HTTP/1.1 413")
    with pytest.raises(openai.NotFoundError) as err:
        client(url).chat.completions.create(model="gpt-4o", messages=msgs("Hi"))
    assert err.value.body["param"] == "model" and err.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as err:
        client(url).chat.completions.create(model="tiny", messages=msgs("Hi"), n=3)
    assert err.value.body["param"] == "n"


def test_a_sampled_answer_is_the_contracts_draw_and_repeats_with_its_seed(case, server, greedy):
    """temperature 1.3, seed 99: token k is the sampling contract's draw (counter k) from transformers-fp32's
    logits along the drawn tokens (our logits are within ~1e-6 of them; a draw moves only when u x total
    lands that close to a running sum), and its log probability the model's log-softmax there (before
    temperature, as OpenAI reports it). The same seed answers the same again while other requests share the
    decode calls (a draw depends on its seed and position only); another seed answers differently."""
    from concurrent.futures import ThreadPoolExecutor

    model = case[0]
    url, _, service = server
    response, ids = greedy

    def ask(seed: int | None = 99, temperature: float = 1.3):
        return client(url).chat.completions.create(
            model="tiny", messages=CONVERSATION, temperature=temperature, seed=seed, logprobs=True
        )

    [choice] = ask().choices
    tokens = token_ids(service, choice)
    logits = A.step_logits(model, ids, SAMPLES, tokens)
    params = SamplingParams(1.3, GEMMA_TOP_K, GEMMA_TOP_P, 99)
    assert tokens == [int(sample_rows(logits[k : k + 1], [params], [k]).token[0]) for k in range(len(tokens))]
    assert tokens != token_ids(service, response.choices[0])
    np.testing.assert_allclose(
        [e.logprob for e in choice.logprobs.content],
        log_softmax(logits)[np.arange(len(tokens)), tokens],
        rtol=0,
        atol=LOGPROB_ATOL,
    )
    before = wait_idle(service)
    with ThreadPoolExecutor(4) as pool:
        again = [pool.submit(ask), pool.submit(ask, 5), pool.submit(ask), pool.submit(ask, None, 0.0)]
        answers = [f.result().choices[0] for f in again]
    after = wait_idle(service)
    assert [token_ids(service, answers[i]) for i in (0, 2)] == [tokens, tokens]
    assert token_ids(service, answers[1]) != tokens  # another seed, another answer
    assert token_ids(service, answers[3]) == token_ids(service, response.choices[0])
    assert after["decode_rows"] - before["decode_rows"] > after["decode_steps"] - before["decode_steps"]


def test_a_chat_and_a_transcription_share_the_decoder(server, greedy):
    """Sent together, a chat and a transcription each answer as alone, and decode calls carried both."""
    import aiohttp

    url, _, service = server
    response, _ = greedy
    audio = wav(SAMPLES)

    async def transcribe(session):
        form = aiohttp.FormData()
        form.add_field("file", audio, filename="speech.wav", content_type="audio/wav")
        form.add_field("model", "tiny")
        async with session.post(f"{url}/v1/audio/transcriptions", data=form) as r:
            return r.status, await r.json()

    async def ask(session):
        body = {"model": "tiny", "messages": CONVERSATION, "temperature": 0}
        async with session.post(f"{url}/v1/chat/completions", json=body) as r:
            return r.status, await r.json()

    async def go():
        async with aiohttp.ClientSession() as session:
            alone = await transcribe(session)
            wait_idle(service)
            before = service.metrics()
            together = await asyncio.gather(ask(session), transcribe(session), ask(session))
            return alone, before, together

    alone, before, (chat1, transcript, chat2) = asyncio.run(go())
    after = wait_idle(service)
    assert alone[0] == transcript[0] == 200 and transcript[1] == alone[1]
    for status, body in (chat1, chat2):
        assert status == 200 and body["choices"][0]["message"]["content"] == response.choices[0].message.content
    rows, calls = after["decode_rows"] - before["decode_rows"], after["decode_steps"] - before["decode_steps"]
    assert rows > calls, (rows, calls)  # some decode calls carried several sequences
    assert after["chat_requests"] - before["chat_requests"] == 2 and after["completed"] - before["completed"] == 3


def test_a_client_that_leaves_frees_its_slot(server):
    """A streamed answer the client stops reading after its first chunk: its sequence is cancelled (the
    answer is ~48 tokens, far from done) and its slot freed."""
    url, _, service = server
    before = wait_idle(service)
    stream = client(url).chat.completions.create(model="tiny", messages=CONVERSATION, temperature=0, stream=True)
    next(iter(stream))
    stream.close()
    now = wait_idle(service)
    assert (now["cancelled"] - before["cancelled"], now["completed"] - before["completed"]) == (1, 0), now


def test_the_readme_example_runs(server, tmp_path, monkeypatch):
    """The README's OpenAI client block as written, against this server: its address, model name and file
    replaced (talk.flac: the bundled speech as FLAC)."""
    import contextlib
    import io
    import re as _re

    import soundfile as sf

    url, _, service = server
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    [block] = [b for b in _re.findall(r"^( *)```python\n(.*?)^\1```", readme, flags=_re.S | _re.M) if "OpenAI(" in b[1]]
    code = "\n".join(line[len(block[0]) :] for line in block[1].splitlines())
    code = code.replace("http://127.0.0.1:8080", url).replace("gemma-3n-E4B-it", "tiny")
    sf.write(tmp_path / "talk.flac", SAMPLES, 16000, format="FLAC")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert "CompletionUsage(" in out.getvalue() and "prompt_tokens=" in out.getvalue()
    wait_idle(service)
