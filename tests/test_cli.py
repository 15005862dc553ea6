"""The command lines `gemma3n-iree` (encode, demo) and `emit-gemma3n`, through click's CliRunner.

Two tiny one-bucket (64 frames = 0.64 s) compiles: `emit-gemma3n` writing a .vmfb and its MLIR, and
`gemma3n-iree encode` compiling through its cache; the other encode runs load the emitted .vmfb
(`--artifact`) or fail before anything is compiled.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner
from conftest import assert_bits_equal
from test_checkpoint import write_dir

from gemma3n_iree.emitters.cli import main as emit_main
from gemma3n_iree.model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, builtin_config
from gemma3n_iree.runtime.audio.frontend import num_frames
from gemma3n_iree.runtime.commands.cli import main as iree_main
from gemma3n_iree.runtime.encoder.audio_session import AudioSession
from gemma3n_iree.runtime.encoder.encode import AudioEncoder
from gemma3n_iree.runtime.synthetic import hf_config_json, random_weights, write_random_checkpoint

CFG = builtin_config("tiny")
SPEECH = Path(__file__).resolve().parent / "data" / "speech_16k.wav"
OUTPUTS = ("audio_features", "encoder_hidden", "valid_tokens", "clip_source", "clip_start_s")
FAILURE_OUTPUTS = ("failed_source", "failed_error")  # empty when every input was encoded


def invoke(command: click.Command, args: list[str]):
    return CliRunner().invoke(command, [str(a) for a in args])


def assert_one_error(result, exit_code: int, *needles: str) -> str:
    """A non-zero exit with exactly one `Error:` message (no traceback) containing every needle."""
    output = result.output
    assert result.exit_code == exit_code, (result.exit_code, output, result.exception)
    assert isinstance(result.exception, SystemExit), f"uncaught {result.exception!r}"
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    message = output[output.index("Error:") :]
    for needle in needles:
        assert needle in message, (needle, message)
    return message


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def checkpoint(workdir: Path) -> Path:
    return write_random_checkpoint(workdir / "checkpoint", CFG, seed=3)


@pytest.fixture(scope="module")
def clips(workdir: Path) -> list[Path]:
    """Three inputs that fit the 64-frame bucket: 0.5 s, 0.01 s and 0.3 s of speech (in that order)."""
    speech, rate = sf.read(SPEECH, dtype="int16")
    paths = []
    for name, start, n in (("half", 16000, 8000), ("tiny", 0, 160), ("third", 30000, 4800)):
        path = workdir / f"{name}.wav"
        sf.write(path, speech[start : start + n], rate, subtype="PCM_16")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def emitted(workdir: Path):
    vmfb, mlir = workdir / "emitted" / "tiny.vmfb", workdir / "emitted" / "tiny.mlir"
    result = invoke(
        emit_main, ["--target", "llvm-cpu", "--builtin", "tiny", "--frames", 64, "-o", vmfb, "--emit-mlir", mlir]
    )
    return result, vmfb, mlir


# ---------------------------------------------------------------------------------------------- emit-gemma3n


def test_emit_compiles_a_tiny_module_and_writes_its_mlir(emitted, checkpoint):
    result, vmfb, mlir = emitted
    assert result.exit_code == 0, result.output
    assert "encode_f64_c1" in result.output and f"wrote {vmfb}" in result.output
    text = mlir.read_text()
    assert "func.func @encode_f64_c1(" in text and re.search(r"#flow\.parameter\.named<\"model\"::", text)
    assert "model.audio_tower.subsample_conv_projection.conv_0.conv.weight" in text
    session = AudioSession(vmfb, [checkpoint / "model.safetensors"])
    assert session.buckets == [(64, 1)]
    out = session.run(np.zeros((1, 64, 128), np.float32), np.array([64], np.int32))
    assert out["audio_features"].shape == (1, AUDIO_SOFT_TOKENS_PER_CLIP, CFG.text_hidden_size)
    assert not list(vmfb.parent.glob(".*.tmp"))


# ---------------------------------------------------------------------------------------------- encode


def test_encode_writes_the_five_arrays_in_input_order(workdir, checkpoint, clips):
    output = workdir / "out" / "encoded.npz"
    cache = workdir / "cache"
    options = ["--checkpoint", checkpoint, "--frames", 64, "--clips-per-call", 2, "--cache-dir", cache]
    result = invoke(iree_main, ["encode", *options, "-o", output, *clips])
    assert result.exit_code == 0, result.output
    assert "3 input(s) -> 3 clip(s)" in result.output and f"wrote {output}" in result.output
    assert len(list(cache.glob("*.vmfb"))) == 1
    with np.load(output) as data:
        assert sorted(data.files) == sorted(OUTPUTS + FAILURE_OUTPUTS)
        assert data["failed_source"].shape == data["failed_error"].shape == (0,)
        arrays = {name: data[name] for name in OUTPUTS}
    frames = [num_frames(n)[1] for n in (8000, 160, 4800)]
    assert frames == [48, 1, 28]
    assert arrays["audio_features"].shape == (3, AUDIO_SOFT_TOKENS_PER_CLIP, CFG.text_hidden_size)
    assert arrays["encoder_hidden"].shape == (3, AUDIO_SOFT_TOKENS_PER_CLIP, CFG.hidden_size)
    assert arrays["audio_features"].dtype == arrays["encoder_hidden"].dtype == np.float32
    np.testing.assert_array_equal(arrays["valid_tokens"], [-(-f // 16) for f in frames])
    np.testing.assert_array_equal(arrays["clip_source"], [0, 1, 2])
    np.testing.assert_array_equal(arrays["clip_start_s"], [0.0, 0.0, 0.0])
    assert arrays["valid_tokens"].dtype == arrays["clip_source"].dtype == np.int32
    assert arrays["clip_start_s"].dtype == np.float32
    # the same rows as the Python API on the same artifact, and the order follows the arguments
    api = AudioEncoder(checkpoint, artifact=next(cache.glob("*.vmfb")))
    assert (api.frame_buckets, api.clips_per_call) == ((64,), (2,))  # 3 clips: a full call and a padded one
    want = api.encode_files(clips)
    for name in OUTPUTS:
        if arrays[name].dtype == np.float32:
            assert_bits_equal(arrays[name], getattr(want, name), name)
        else:
            np.testing.assert_array_equal(arrays[name], getattr(want, name), err_msg=name)
    reversed_out = workdir / "out" / "reversed.npz"
    assert invoke(iree_main, ["encode", *options, "-o", reversed_out, *clips[::-1]]).exit_code == 0
    with np.load(reversed_out) as data:
        assert_bits_equal(data["audio_features"], arrays["audio_features"][::-1], "reversed inputs")


def test_encode_with_an_emitted_artifact(workdir, checkpoint, clips, emitted):
    _, vmfb, _ = emitted
    output = workdir / "from-artifact.npz"
    result = invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, "-o", output, *clips])
    assert result.exit_code == 0, result.output
    with np.load(output) as data:
        assert sorted(data.files) == sorted(OUTPUTS + FAILURE_OUTPUTS)
        np.testing.assert_array_equal(data["clip_source"], [0, 1, 2])
        want = AudioEncoder(checkpoint, artifact=vmfb).encode_files(clips)
        assert_bits_equal(data["audio_features"], want.audio_features, "audio_features")


# ---------------------------------------------------------------------------------------------- help

COMMANDS = {"gemma3n-iree": (iree_main, []), "emit-gemma3n": (emit_main, [])}
COMMANDS.update({f"gemma3n-iree {name}": (iree_main, [name]) for name in sorted(iree_main.commands)})
# The commands the README documents: every one of their options explains itself.
DOCUMENTED = ("gemma3n-iree encode", "gemma3n-iree demo", "emit-gemma3n")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help(name):
    command, args = COMMANDS[name]
    result = invoke(command, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage:")
    target = command.commands[args[0]] if args else command
    text = " ".join(result.output.split())
    first_line = " ".join((target.help or "").strip().splitlines()[0].split()) if target.help else ""
    assert first_line and first_line in text, f"{name}: no description in --help"
    for param in target.params:
        if isinstance(param, click.Option):
            assert param.opts[-1] in result.output
            if name in DOCUMENTED:
                assert param.help and param.help.strip(), f"{name} {param.opts[-1]} has no help text"
    assert invoke(command, [*args, "-h"]).output == result.output
    if not args and isinstance(command, click.Group):
        for sub in command.commands:
            assert sub in result.output


# ---------------------------------------------------------------------------------------------- bad inputs


@pytest.fixture(scope="module")
def bad_config(workdir: Path) -> Path:
    directory = workdir / "bad-config"
    directory.mkdir()
    config = hf_config_json(CFG)
    config["audio_config"]["hidden_size"] = 63
    (directory / "config.json").write_text(json.dumps(config))
    return directory


def test_emit_bad_inputs(workdir, bad_config):
    out = ["--target", "llvm-cpu", "-o", workdir / "never.vmfb"]
    assert_one_error(
        invoke(emit_main, [*out, "--builtin", "tiny", "--contract", "nope"]),
        2,
        "Invalid value for '--contract'",
        "nope",
    )
    assert_one_error(
        invoke(emit_main, [*out, "--builtin", "tiny", "--frames", 3000]),
        2,
        "Invalid value for '--frames'",
        "3000",
        "2997",
    )
    assert_one_error(invoke(emit_main, [*out, "--builtin", "tiny", "--frames", 0]), 2, "'--frames'")
    assert_one_error(invoke(emit_main, [*out, "--builtin", "tiny", "--clips", 0]), 2, "'--clips'")
    assert_one_error(
        invoke(emit_main, [*out, "--checkpoint", workdir / "no-such-dir"]), 2, "'--checkpoint'", "does not exist"
    )
    assert_one_error(
        invoke(emit_main, [*out, "--checkpoint", bad_config]), 1, str(bad_config / "config.json"), "hidden_size 63"
    )
    bad_json = workdir / "flat.json"
    bad_json.write_text(json.dumps({"hidden_size": 64, "conf_num_attention_heads": 3}))
    assert_one_error(invoke(emit_main, [*out, "--config", bad_json]), 1, str(bad_json), "not divisible")
    assert_one_error(invoke(emit_main, [*out, "--builtin", "tiny", "--checkpoint", bad_config]), 2, "at most one of")
    assert_one_error(invoke(emit_main, ["-o", workdir / "never.vmfb", "--builtin", "tiny"]), 2, "'--target'")
    assert_one_error(
        invoke(emit_main, [*out, "--builtin", "tiny", "--kernels", "triton-sm90"]),
        1,
        "--kernels triton-sm90 is not available",
        "Hopper",
        "llvm-cpu",
    )
    assert_one_error(invoke(emit_main, [*out, "--builtin", "tiny", "--kernels", "cublas"]), 2, "'--kernels'")
    assert_one_error(
        invoke(emit_main, [*out, "--builtin", "tiny", "--stage", "prefill", "--kernels", "triton-sm90"]),
        1,
        "--kernels triton-sm90 applies to --stage audio",
    )
    assert_one_error(
        invoke(emit_main, [*out, "--builtin", "tiny", "--sampling"]), 1, "--sampling applies to --stage decoder"
    )
    assert not (workdir / "never.vmfb").exists()


def test_encode_bad_inputs(workdir, checkpoint, clips, bad_config, emitted):
    _, vmfb, _ = emitted
    out = ["-o", workdir / "never.npz"]
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--contract", "nope", *out, clips[0]]),
        2,
        "'--contract'",
        "nope",
    )
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--frames", 3000, *out, clips[0]]),
        2,
        "'--frames'",
        "3000",
    )
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", workdir / "no-such-dir", *out, clips[0]]),
        2,
        "'--checkpoint'",
        "does not exist",
    )
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, *out, workdir / "missing.wav"]),
        2,
        "missing.wav",
        "does not exist",
    )
    assert_one_error(invoke(iree_main, ["encode", "--checkpoint", checkpoint, *out]), 2, "AUDIO")
    # errors found after parsing: one message, exit status 1, nothing compiled or written
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", bad_config, *out, clips[0]]),
        1,
        str(bad_config / "config.json"),
        "hidden_size 63",
    )
    for field, value, words in (
        ("hidden_size", None, "audio_config.hidden_size is missing"),
        ("hidden_size", "64", 'audio_config.hidden_size must be an integer, got str "64"'),
    ):
        config = hf_config_json(CFG)
        if value is None:
            del config["audio_config"][field]
        else:
            config["audio_config"][field] = value
        directory = workdir / f"config-{field}-{value}"
        directory.mkdir()
        (directory / "config.json").write_text(json.dumps(config))
        assert_one_error(
            invoke(iree_main, ["encode", "--checkpoint", directory, *out, clips[0]]),
            1,
            str(directory / "config.json"),
            words,
        )
    weights = random_weights(CFG, 0)
    del weights["model.embed_audio.embedding.weight"]
    schema = write_dir(workdir / "schema-error", weights)
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", schema, *out, clips[0]]),
        1,
        "model.embed_audio.embedding.weight",
        "missing",
    )
    # every input failing: each named, nothing written
    not_audio = workdir / "notes.wav"
    not_audio.write_text("not audio\n" * 50)
    message = assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, *out, not_audio]),
        1,
        f"Error: {not_audio}: not a readable audio file",
    )
    assert "could not be encoded" not in message  # one input: its own message
    (workdir / "zero.wav").write_bytes(b"")
    assert_one_error(
        invoke(
            iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, *out, not_audio, workdir / "zero.wav"]
        ),
        1,
        "2 of 2 input(s) could not be encoded",
        str(not_audio),
        "nothing was written",
    )
    assert_one_error(
        invoke(
            iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, "--max-seconds", 0.4, *out, clips[0]]
        ),
        1,
        str(clips[0]),
        "0.5 s",
        "--max-seconds 0.4",
    )
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, *out, SPEECH]),
        1,
        str(SPEECH),
        "318 mel frames fits no frame bucket (64)",
    )
    assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, "--workers", 0, *out, clips[0]]),
        2,
        "'--workers'",
    )
    assert not (workdir / "never.npz").exists()


def test_a_failed_input_fails_alone(workdir, checkpoint, clips, emitted):
    """A corrupt, an over-long and a too-long-for-the-bucket input among good ones: each is named, the good
    ones are written (clip_source indexes the arguments as given), and the exit status is 1."""
    _, vmfb, _ = emitted
    corrupt = workdir / "corrupt.wav"
    corrupt.write_bytes(clips[0].read_bytes()[:60])  # a WAV header that declares more than is present
    inputs = [clips[0], corrupt, clips[1], SPEECH, clips[2]]
    output = workdir / "partial.npz"
    message = assert_one_error(
        invoke(iree_main, ["encode", "--checkpoint", checkpoint, "--artifact", vmfb, "-o", output, *inputs]),
        1,
        "2 of 5 input(s) could not be encoded",
        f"{corrupt}: truncated RIFF/WAVE file",
        f"{SPEECH}: a clip of 318 mel frames fits no frame bucket (64)",
        f"the other 3 input(s) were written to {output}",
    )
    assert str(clips[0]) + ":" not in message  # only the failures are named
    want = AudioEncoder(checkpoint, artifact=vmfb).encode_files([clips[0], clips[1], clips[2]])
    with np.load(output) as data:
        np.testing.assert_array_equal(data["clip_source"], [0, 2, 4])
        np.testing.assert_array_equal(data["failed_source"], [1, 3])
        errors = data["failed_error"].tolist()
        assert errors[0].startswith(f"{corrupt}: truncated RIFF/WAVE file") and "318 mel frames" in errors[1]
        for name in ("audio_features", "encoder_hidden", "valid_tokens", "clip_start_s"):
            assert_bits_equal(data[name], getattr(want, name), name)


def _encode_on_a_terminal(args: list, quiet: bool) -> str:
    """Run `gemma3n-iree encode` in a subprocess whose stderr is a pseudo-terminal; returns what it showed."""
    import os
    import pty
    import subprocess
    import sys

    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "gemma3n_iree", "encode", *map(str, args)] + (["--quiet"] if quiet else [])
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=terminal, timeout=300)
    finally:
        os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 1 << 16)
        except OSError:  # the terminal's other end is closed: everything was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert done.returncode == 0, shown.decode()
    return shown.decode()


def test_progress_on_a_terminal_only(workdir, checkpoint, clips, emitted):
    _, vmfb, _ = emitted
    args = ["--checkpoint", checkpoint, "--artifact", vmfb, "-o", workdir / "tty.npz", *clips]
    shown = _encode_on_a_terminal(args, quiet=False)
    assert "\rencoding: 3/3 files, 3 clips, 0.8 audio-s, " in shown, shown
    assert "audio-s/s" in shown and "3 input(s) -> 3 clip(s)" in shown
    assert _encode_on_a_terminal(args, quiet=True) == ""  # --quiet: errors only
    plain = invoke(iree_main, ["encode", *args])  # not a terminal: the status lines, no progress line
    assert plain.exit_code == 0, plain.output
    assert "encoding:" not in plain.output and "3 input(s) -> 3 clip(s)" in plain.output


# ---------------------------------------------------------------------------------------------- benchmark scripts

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _script(*args) -> list[dict]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_the_pipeline_benchmark_runs(workdir, checkpoint, emitted):
    """scripts/pipeline_bench.py (inputs, api, cli), as scripts/gpu_pipeline.sh runs it, on the tiny artifact."""
    _, vmfb, _ = emitted
    inputs = workdir / "bench-in"
    _script(SCRIPTS / "pipeline_bench.py", "inputs", "--dir", inputs, "--files", 2, "--seconds", 0.5)
    common = [
        "--checkpoint",
        checkpoint,
        "--target",
        "llvm-cpu",
        "--artifact",
        vmfb,
        "--inputs",
        inputs,
        "--scratch",
        workdir,
    ]
    api = _script(SCRIPTS / "pipeline_bench.py", "api", *common, "--counts", 1, 2, "--repeats", 1, "--serial-count", 2)
    assert {(r["format"], r["files"]) for r in api if "serial" not in r["impl"]} == {
        (f, n) for f in ("wav", "flac") for n in (1, 2)
    }
    assert all(r["audio_s"] == pytest.approx(0.5 * r["files"]) and r["audio_s_per_s"] > 0 for r in api)
    (cli,) = _script(SCRIPTS / "pipeline_bench.py", "cli", *common, "--counts", 2, "--formats", "wav")
    assert cli["exit"] == 0 and cli["audio_s"] == 1.0 and cli["encode_s"] > 0 and "stderr" not in cli
    torch = _script(
        SCRIPTS / "pipeline_bench.py",
        "torch",
        "--inputs",
        inputs,
        "--device",
        "cpu",
        "--dtype",
        "fp32",
        "--modes",
        "eager",
        "--config",
        "tiny",
        "--counts",
        2,
        "--repeats",
        1,
        "--scratch",
        workdir,
    )
    assert [(r["impl"], r["format"], r["files"]) for r in torch] == [
        ("transformers eager", "wav", 2),
        ("transformers eager", "flac", 2),
    ]
    with np.load(workdir / "torch.npz") as data:
        assert data["audio_features"].shape[::2] == (2, CFG.text_hidden_size)


def test_the_cpu_benchmark_runs(tmp_path):
    """scripts/cpu_bench.py as BENCHMARKS.md runs it ("The CPU path"), on the tiny configuration: transformers
    before and after ours, both contracts as built now and as built before the CPU path was tuned."""
    records = _script(
        SCRIPTS / "cpu_bench.py",
        "--config",
        "tiny",
        "--frames",
        100,
        "--repeats",
        1,
        "--baseline",
        "--cache-dir",
        tmp_path,
    )
    *timed, summary = records
    assert [(r["impl"], r.get("contract", r.get("run"))) for r in timed] == [
        ("transformers eager fp32", 1),
        ("gemma3n-iree", "mlx-cuda-v1"),
        ("gemma3n-iree", "f32-reference"),
        ("gemma3n-iree before tuning", "mlx-cuda-v1"),
        ("gemma3n-iree before tuning", "f32-reference"),
        ("transformers eager fp32", 2),
    ]
    assert all(r["median_s"] > 0 for r in timed)
    assert len(summary["ratios_to_transformers_fp32"]) == 4 and summary["transformers_fp32_s"] > 0
    assert len(list(tmp_path.glob("audio-*.vmfb"))) == 4  # the tuned and the baseline builds are different artifacts


def test_the_thread_fight_script_runs():
    records = _script(
        SCRIPTS / "frontend_threads.py", "--stages", "mel", "--workers", 1, "--items-per-worker", 1, "--no-processes"
    )
    assert records[0]["machine"]["cores"] >= 1
    runs = {r["blas_pool"]: r for r in records[1:-1]}
    assert runs["pinned"]["blas"][0]["threads"] == 1 and runs["default"]["audio_s_per_s"] > 0
    assert "mel" in records[-1]["verdict"]
