"""Every command README.md shows is executed by a test, so a documented command cannot crash unnoticed.

The README's ```bash blocks (also those indented under a list item) are split into commands (continuation lines joined, comments dropped,
`&&` chains split) and its ```python blocks are named by their first line.  Each must appear in
`EXECUTED_BY`, which says where it runs:

* `HERE`: in this file, from the README's own text with its placeholders replaced by tiny fixtures
  (`PLACEHOLDERS`: the checkpoint is the demo's tiny random one, `talk.flac`/`intro.mp3` are cut from
  the bundled speech sample).  Commands that run the model run on llvm-cpu (`--target cuda` becomes
  `--target llvm-cpu`: no GPU in CI); commands that only compile keep `--target cuda` and compile for
  sm_90.  The demo runs with `--builtin tiny` (its E4B default writes 1.4 GB and compiles for minutes).
* `CI`: the set-up and test commands, which `.ci/run` runs as written (checked here line by line).
* a test node id elsewhere: a test that runs the same command on a tiny configuration (checked to exist).

A README command without an entry, or an entry for a command the README no longer shows, fails.
GPU-only scripts named anywhere in the README must at least answer `--help`.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import click
import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner
from conftest import assert_bits_equal

from gemma3n_iree.emitters.cli import main as emit_main
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.text_config import builtin_text_config
from gemma3n_iree.runtime.commands.cli import main as iree_main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SPEECH = ROOT / "runtime" / "data" / "sample_speech.wav"
TINY = builtin_config("tiny")
ENCODE_OUTPUTS = [
    "audio_features",
    "encoder_hidden",
    "valid_tokens",
    "clip_source",
    "clip_start_s",
    "failed_source",
    "failed_error",
]

HERE = "here"
CI = ".ci/run"

#: README command (or python block's first line) -> where it is executed.
EXECUTED_BY: dict[str, str] = {
    "python3 -m venv .venv": CI,
    ".venv/bin/pip install -e '.[test,oracle,kernels]'": CI,
    ".venv/bin/gemma3n-iree demo": HERE,
    ".venv/bin/python -m pytest -q -n auto --dist loadfile": CI,
    "gemma3n-iree encode --checkpoint ~/models/gemma-3n-E4B-it --target cuda -o out.npz talk.flac intro.mp3": HERE,
    "emit-gemma3n --stage audio --target cuda --checkpoint ~/models/gemma-3n-E4B-it -o audio.vmfb "
    "--emit-mlir audio.mlir": HERE,
    "gemma3n-iree encode --checkpoint ~/models/gemma-3n-E4B-it --target cuda --mel device -o out.npz talk.flac "
    "intro.mp3": HERE,
    "from gemma3n_iree.runtime.encoder.encode import AudioEncoder": HERE,
    # The whole matrix takes ~45 s per dump; the test dumps one target's cases twice and compares them.
    "python scripts/emit_matrix.py dump before/": "tests/test_emit_matrix.py::test_two_dumps_of_the_same_code_are_equal",
    "python scripts/emit_matrix.py dump after/": "tests/test_emit_matrix.py::test_two_dumps_of_the_same_code_are_equal",
    "python scripts/emit_matrix.py compare before/ after/": "tests/test_emit_matrix.py::test_two_dumps_of_the_same_code_are_equal",
    "gemma3n-iree diagnose --checkpoint DIR speech.wav [--target cuda] [--reference contract|transformers] "
    "[--json report.json] [--plot report.png]": "tests/test_diagnose.py::test_cli_exit_code_and_json",
    'gemma3n-iree prefill --checkpoint ~/models/gemma-3n-E4B-it --target cuda --prompt "Transcribe '
    '<audio_soft_token> and summarize <audio_soft_token>." talk.flac intro.mp3 -o prefill.npz': "tests/test_prefill.py::test_cli_prefill_writes_the_npz",
    "emit-gemma3n --stage prefill --target cuda --builtin e4b --capacity 512 --clips 2 -o prefill.vmfb": HERE,
    "emit-gemma3n --stage decoder --target cuda --checkpoint ~/models/gemma-3n-E4B-it --slots 8 --capacity 4096 "
    "--prompt 64 --prompt 256 --prompt 1024 --prompt 4096 --batch 1 --batch 8 -o decoder.vmfb": "tests/test_decoder_program.py::test_emit_gemma3n_stage_decoder",
    "from gemma3n_iree.runtime.text.decoder import DecoderSession, greedy": "tests/test_decoder_program.py::test_greedy_f32_reference_equals_generate",
    # transcribe's text and --json output, on transformers' own tiny checkpoint (llvm-cpu, its cached programs)
    "gemma3n-iree transcribe --checkpoint ~/models/gemma-3n-E4B-it --target cuda talk.flac interview.mp3": "tests/test_transcribe.py::test_cli_prints_the_text_and_json",
    "gemma3n-iree transcribe --checkpoint ~/models/gemma-3n-E4B-it --max-new-tokens 32 --json talk.flac": "tests/test_transcribe.py::test_cli_prints_the_text_and_json",
    # generate on transformers' own tiny checkpoint (1,024 positions): two files, ids equal to transformers-fp32's
    'gemma3n-iree generate --checkpoint ~/models/gemma-3n-E4B-it --target cuda --prompt "Compare <audio_soft_token> '
    'with <audio_soft_token>." talk.flac interview.mp3': "tests/test_generate_command.py::"
    "test_two_files_in_one_prompt_one_over_30_s_give_transformers_fp32_ids",
    # the same sampled command (temperature 1, seed 1234): each token the contract's draw from transformers' logits
    'gemma3n-iree generate --checkpoint ~/models/gemma-3n-E4B-it --target cuda --prompt "What is said?" '
    "--temperature 1.0 --seed 1234 talk.flac": "tests/test_generate_command.py::"
    "test_a_sampled_answer_is_the_contracts_draw_from_transformers_logits",
    # Transcriber on load_transcription_decoder's program (the module's `case` fixture) .transcribe_files
    "from gemma3n_iree.runtime.text.transcribe import Transcriber": "tests/test_transcribe.py::test_f32_reference_greedy_ids_equal_transformers_fp32",
    # the same form fields (file, model; stream=true) sent by aiohttp to the served tiny model, json and streamed
    "curl -s http://127.0.0.1:8080/v1/audio/transcriptions -F file=@talk.flac -F model=gemma-3n-E4B-it": "tests/test_transcribe.py::test_load_every_concurrent_result_equals_the_request_alone",
    "curl -sN http://127.0.0.1:8080/v1/audio/transcriptions -F file=@talk.flac -F model=gemma-3n-E4B-it "
    "-F stream=true": "tests/test_transcribe.py::test_load_every_concurrent_result_equals_the_request_alone",
    # the README's block itself, run against the served tiny model (its address, model name and file replaced)
    "from openai import OpenAI": "tests/test_chat_completions.py::test_the_readme_example_runs",
    "gemma3n-iree serve --checkpoint ~/models/gemma-3n-E4B-it --target cuda --port 8080": HERE,
    "curl -s -F audio=@talk.flac http://127.0.0.1:8080/v1/encode": HERE,
    "curl -s -F audio=@talk.flac -F prompt='Transcribe <audio_soft_token>' http://127.0.0.1:8080/v1/prefill": HERE,
    'curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:8080/v1/requests/$ID/result?wait=30" '
    "-o talk.npz": HERE,
}


# ---------------------------------------------------------------------------------------------- extraction


def _blocks(language: str) -> list[str]:
    """The README's fenced blocks of `language`, also those indented under a list item (dedented)."""
    blocks = re.findall(rf"^( *)```{language}\n(.*?)^\1```", README.read_text(), flags=re.S | re.M)
    return [textwrap.dedent(body) for _, body in blocks]


def _strip_comment(line: str) -> str:
    """`line` without its `# ...` comment (a `#` inside quotes is kept)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def readme_commands() -> list[str]:
    """The commands of the README's ```bash blocks, in order, each on one line."""
    commands = []
    for block in _blocks("bash"):
        joined = re.sub(r"\\\n\s*", "", block)
        for line in joined.splitlines():
            line = _strip_comment(line)
            commands += [" ".join(part.split()) for part in line.split(" && ") if part.strip()]
    return commands


def readme_python_blocks() -> dict[str, str]:
    """The README's ```python blocks by their first line (without its comment)."""
    blocks = {_strip_comment(block.splitlines()[0]): block for block in _blocks("python")}
    assert len(blocks) == len(_blocks("python")), "two python blocks start with the same line"
    return blocks


def test_every_readme_command_says_where_it_runs():
    shown = readme_commands() + list(readme_python_blocks())
    assert len(shown) > 15, shown  # the extraction found the blocks
    missing = [c for c in shown if c not in EXECUTED_BY]
    stale = [c for c in EXECUTED_BY if c not in shown]
    assert not missing, f"README commands no test executes (add them to EXECUTED_BY): {missing}"
    assert not stale, f"EXECUTED_BY lists commands the README no longer shows: {stale}"


def test_the_named_tests_exist():
    for command, where in EXECUTED_BY.items():
        if where == HERE:
            assert _runners_here().get(command), f"no test here runs {command!r}"
        elif where == CI:
            lines = {line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()}
            assert command in lines, f".ci/run does not run {command!r} as written"
        else:
            path, _, name = where.partition("::")
            tree = ast.parse((ROOT / path).read_text())
            names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
            assert name in names, f"{where} (for {command!r}) does not exist"


def _runners_here() -> dict[str, str]:
    """README command -> a test of this file that runs it (marked with `runs`)."""
    module = sys.modules[__name__]
    tests = [getattr(module, name) for name in dir(module) if name.startswith("test_")]
    return {command: test.__name__ for test in tests for command in getattr(test, "runs", ())}


def runs(*commands: str):
    """Mark a test as one running the README's `commands` (their text must be the README's)."""

    def mark(test):
        test.runs = commands
        return test

    return mark


# ---------------------------------------------------------------------------------------------- running

PLACEHOLDERS = {"~/models/gemma-3n-E4B-it": "gemma3n-demo/random-tiny"}


def tiny(command: str, *, run_on_cpu: bool) -> list[str]:
    """The README command as arguments, with the placeholders replaced (see the module docstring)."""
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    if run_on_cpu:
        command = command.replace("--target cuda", "--target llvm-cpu")
    return shlex.split(command)


def invoke(args: list[str]):
    """Run a `gemma3n-iree` / `emit-gemma3n` command line in process."""
    programs: dict[str, click.Command] = {"gemma3n-iree": iree_main, "emit-gemma3n": emit_main}
    result = CliRunner().invoke(programs[Path(args[0]).name], args[1:])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's commands run in one folder with its own artifact cache; the audio files they name
    are there: `talk.flac` (3 s) and `intro.mp3` (2 s), cut from the bundled speech sample."""
    directory = tmp_path_factory.mktemp("readme")
    speech, rate = sf.read(SPEECH, dtype="float32")
    sf.write(directory / "talk.flac", speech[: 3 * rate], rate, format="FLAC")
    sf.write(directory / "intro.mp3", speech[rate : 3 * rate], rate, format="MP3")
    return directory


@pytest.fixture
def in_workdir(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("GEMMA3N_IREE_CACHE", str(workdir / "cache"))
    return workdir


DEMO = ".venv/bin/gemma3n-iree demo"


@pytest.fixture
def demo(in_workdir: Path) -> Path:
    """The demo's checkpoint (the demo runs once; the commands below use its checkpoint and cache)."""
    if not (in_workdir / "gemma3n-demo" / "sample_speech.npz").exists():
        invoke([*tiny(DEMO, run_on_cpu=True), "--builtin", "tiny"])
    return in_workdir / "gemma3n-demo" / "random-tiny"


@runs(DEMO)
def test_demo(demo: Path, in_workdir: Path):
    with np.load(in_workdir / "gemma3n-demo" / "sample_speech.npz") as data:
        assert data.files == ENCODE_OUTPUTS
        assert data["audio_features"].shape == (1, 188, TINY.text_hidden_size)
        assert data["failed_source"].size == 0


ENCODE = "gemma3n-iree encode --checkpoint ~/models/gemma-3n-E4B-it --target cuda -o out.npz talk.flac intro.mp3"


@runs(ENCODE)
def test_encode(demo: Path, in_workdir: Path):
    invoke(tiny(ENCODE, run_on_cpu=True))
    with np.load(in_workdir / "out.npz") as data:
        assert data.files == ENCODE_OUTPUTS
        np.testing.assert_array_equal(data["clip_source"], [0, 1])
        assert data["audio_features"].shape == (2, 188, TINY.text_hidden_size)
        assert data["failed_source"].size == 0


PYTHON_ENCODE = "from gemma3n_iree.runtime.encoder.encode import AudioEncoder"


@runs(PYTHON_ENCODE)
def test_python_encode(demo: Path, in_workdir: Path):
    """The README's Python lines, run as written (checkpoint and target replaced), give what the
    command line wrote for the same file, bit for bit."""
    source = readme_python_blocks()[PYTHON_ENCODE]
    for placeholder, value in PLACEHOLDERS.items():
        source = source.replace(placeholder, value)
    namespace: dict = {}
    exec(compile(source.replace('target="cuda"', 'target="llvm-cpu"'), "README.md", "exec"), namespace)
    result = namespace["result"]
    invoke(tiny(ENCODE, run_on_cpu=True))
    with np.load(in_workdir / "out.npz") as data:
        for name in ("audio_features", "encoder_hidden"):
            assert_bits_equal(getattr(result, name), data[name][:1], name)


ENCODE_DEVICE_MEL = (
    "gemma3n-iree encode --checkpoint ~/models/gemma-3n-E4B-it --target cuda --mel device "
    "-o out.npz talk.flac intro.mp3"
)


@runs(ENCODE_DEVICE_MEL)
def test_encode_device_mel(demo: Path, in_workdir: Path):
    invoke(tiny(ENCODE_DEVICE_MEL, run_on_cpu=True))
    with np.load(in_workdir / "out.npz") as data:
        assert data.files == ENCODE_OUTPUTS
        np.testing.assert_array_equal(data["clip_source"], [0, 1])


EMIT_AUDIO = (
    "emit-gemma3n --stage audio --target cuda --checkpoint ~/models/gemma-3n-E4B-it -o audio.vmfb "
    "--emit-mlir audio.mlir"
)


@runs(EMIT_AUDIO)
def test_emit_audio_for_cuda(demo: Path, in_workdir: Path):
    invoke(tiny(EMIT_AUDIO, run_on_cpu=False))
    assert (in_workdir / "audio.vmfb").stat().st_size > 0
    assert 'gemma3n.stage = "encode"' in (in_workdir / "audio.mlir").read_text()


EMIT_PREFILL = "emit-gemma3n --stage prefill --target cuda --builtin e4b --capacity 512 --clips 2 -o prefill.vmfb"


@runs(EMIT_PREFILL)
def test_emit_prefill_for_cuda(in_workdir: Path):
    """As written: the E4B prefill stage compiles in seconds (no weights are read)."""
    result = invoke(tiny(EMIT_PREFILL, run_on_cpu=False))
    assert (in_workdir / "prefill.vmfb").stat().st_size > 0
    assert "prefill_c512_a2" in result.output


SERVE = "gemma3n-iree serve --checkpoint ~/models/gemma-3n-E4B-it --target cuda --port 8080"
CURL_ENCODE = "curl -s -F audio=@talk.flac http://127.0.0.1:8080/v1/encode"
CURL_PREFILL = "curl -s -F audio=@talk.flac -F prompt='Transcribe <audio_soft_token>' http://127.0.0.1:8080/v1/prefill"
CURL_RESULT = (
    'curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:8080/v1/requests/$ID/result?wait=30" -o talk.npz'
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(demo: Path, in_workdir: Path):
    """`serve` as written (llvm-cpu, a free port instead of 8080) on the demo's checkpoint plus random
    text tensors and a test tokenizer, so that /v1/prefill is served too; yields the port.  With
    `--max-batch-clips 1` it loads the encoder the demo compiled (one clip per call, as `encode`)
    instead of compiling calls of 2 and 4 clips as well (a minute on CI's CPU)."""
    from synthetic_text import add_random_text_tensors, write_test_tokenizer

    checkpoint = in_workdir / "served-checkpoint"
    if not checkpoint.exists():
        shutil.copytree(demo, checkpoint)
        add_random_text_tensors(checkpoint, builtin_text_config("tiny"), seed=1)
        write_test_tokenizer(checkpoint)
    port = _free_port()
    args = tiny(SERVE, run_on_cpu=True)
    args[args.index("gemma3n-demo/random-tiny")] = str(checkpoint)
    args[args.index("8080")] = str(port)
    args += ["--max-batch-clips", "1"]
    log = (in_workdir / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "gemma3n_iree", *args[1:]], stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy()
    )
    try:
        deadline = time.monotonic() + 300  # the first start compiles the encoder and prefill stages
        while True:
            assert server.poll() is None, (in_workdir / "serve.log").read_text()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
                break
            except OSError:
                assert time.monotonic() < deadline, (in_workdir / "serve.log").read_text()
                time.sleep(0.5)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


def curl(command: str, port: int, **env: str) -> str:
    """A README curl line, run by bash as written (its port replaced), with `env` set."""
    run = subprocess.run(
        ["bash", "-c", command.replace("8080", str(port))],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert run.returncode == 0, (command, run.stderr)
    return run.stdout


@runs(SERVE)
def test_serve(served: int):
    assert json.loads(urllib.request.urlopen(f"http://127.0.0.1:{served}/health").read())


@runs(CURL_ENCODE, CURL_RESULT)
def test_curl_encode(served: int, in_workdir: Path):
    """The three curl lines: submit, then fetch the result with the returned id and token; the server's
    rows for talk.flac equal the command line's, bit for bit."""
    submitted = json.loads(curl(CURL_ENCODE, served))
    assert set(submitted) >= {"id", "token"}, submitted
    curl(CURL_RESULT, served, TOKEN=submitted["token"], ID=submitted["id"])
    invoke(tiny(ENCODE, run_on_cpu=True))
    with np.load(in_workdir / "talk.npz") as served_rows, np.load(in_workdir / "out.npz") as data:
        for name in ("audio_features", "encoder_hidden"):
            assert_bits_equal(served_rows[name], data[name][:1], name)


@runs(CURL_PREFILL, CURL_RESULT)
def test_curl_prefill(served: int, in_workdir: Path):
    submitted = json.loads(curl(CURL_PREFILL, served))
    assert set(submitted) >= {"id", "token"}, submitted
    curl(CURL_RESULT, served, TOKEN=submitted["token"], ID=submitted["id"])
    with np.load(in_workdir / "talk.npz") as data:
        assert {"input_ids", "inputs_embeds", "per_layer_inputs"} <= set(data.files), data.files


# ---------------------------------------------------------------------------------------------- scripts


def _readme_scripts() -> list[str]:
    return sorted(set(re.findall(r"scripts/([a-z_]+\.(?:py|sh))", README.read_text())))


@pytest.mark.parametrize("script", _readme_scripts())
def test_readme_scripts_answer_help_or_parse(script: str):
    """GPU-only scripts cannot run here: each Python one answers --help, each shell one parses."""
    path = ROOT / "scripts" / script
    assert path.is_file(), f"README names scripts/{script}, which does not exist"
    if script.endswith(".py"):
        run = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stdout.startswith("usage:"), run.stdout + run.stderr
    else:
        run = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
