"""`--mel device` through the command lines, the Python API and the server (tiny configuration, llvm-cpu).

One tiny device-mel artifact (64-frame bucket, 1 or 2 clips per call) is compiled by `emit-gemma3n --mel
device`; `bench`, the Python API and a scheduler load it, and `encode --mel device` compiles its own
through the artifact cache (the README's form). `encode` writes what the API returns, bit for bit; a request through the scheduler equals the same file encoded alone; asking for the other
front end than the artifact's is one clear error. Also `emit-gemma3n --stage prefill`, which the README
shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import assert_bits_equal
from test_cli import FAILURE_OUTPUTS, OUTPUTS, assert_one_error, invoke

from gemma3n_iree.contracts.mel import samples_for_frames
from gemma3n_iree.emitters.cli import main as emit_main
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.runtime.commands.cli import main as iree_main
from gemma3n_iree.runtime.encoder.audio_session import AudioSession
from gemma3n_iree.runtime.encoder.clips import EncodeFailed
from gemma3n_iree.runtime.encoder.encode import AudioEncoder
from gemma3n_iree.runtime.programs.session import SessionError
from gemma3n_iree.runtime.synthetic import write_random_checkpoint
from gemma3n_iree.serve.admission import Limits
from gemma3n_iree.serve.launch import build_scheduler, server_info

CFG = builtin_config("tiny")
SPEECH = Path(__file__).resolve().parent / "data" / "speech_16k.wav"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("device-mel-cli")


@pytest.fixture(scope="module")
def checkpoint(workdir: Path) -> Path:
    return write_random_checkpoint(workdir / "checkpoint", CFG, seed=3)


@pytest.fixture(scope="module")
def clips(workdir: Path) -> list[Path]:
    """Three inputs that fit the 64-frame bucket: 0.5 s, 0.01 s and 0.3 s of speech."""
    speech, rate = sf.read(SPEECH, dtype="int16")
    paths = []
    for name, start, n in (("half", 16000, 8000), ("tiny", 0, 160), ("third", 30000, 4800)):
        path = workdir / f"{name}.wav"
        sf.write(path, speech[start : start + n], rate, subtype="PCM_16")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def emitted(workdir: Path):
    vmfb, mlir = workdir / "device.vmfb", workdir / "device.mlir"
    result = invoke(
        emit_main,
        [
            "--target",
            "llvm-cpu",
            "--builtin",
            "tiny",
            "--mel",
            "device",
            "--frames",
            64,
            "--clips",
            1,
            "--clips",
            2,
            "-o",
            vmfb,
            "--emit-mlir",
            mlir,
        ],
    )
    return result, vmfb, mlir


def test_emit_device_mel_module(emitted, checkpoint):
    result, vmfb, mlir = emitted
    assert result.exit_code == 0, result.output
    assert "log-mel: device-matmul" in result.output and "encode_f64_c2" in result.output
    assert 'gemma3n.mel = "device-matmul"' in mlir.read_text()
    session = AudioSession(vmfb, [checkpoint / "model.safetensors"])
    assert session.mel.name == "device-matmul" and session.input_shape(64) == (samples_for_frames(64),)
    out = session.run(np.zeros((2, samples_for_frames(64)), np.float32), np.array([8000, 0], np.int32))
    assert out["valid_tokens"].tolist() == [3, 0]  # 8000 samples: 48 valid frames
    with pytest.raises(SessionError, match="no entry takes device-matmul input"):
        session.run(np.zeros((1, 64, 128), np.float32)[0], np.array([64], np.int32))
    with pytest.raises(SessionError, match=r"sample counts must be within 0\.\.10752"):
        session.run(np.zeros((1, samples_for_frames(64)), np.float32), np.array([10753], np.int32))


def test_encode_with_the_device_mel_equals_the_api(workdir, checkpoint, clips):
    output, cache = workdir / "device.npz", workdir / "cache"
    result = invoke(
        iree_main,
        [
            "encode",
            "--checkpoint",
            checkpoint,
            "--mel",
            "device",
            "--frames",
            64,
            "--clips-per-call",
            2,
            "--cache-dir",
            cache,
            "-o",
            output,
            *clips,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "(log-mel: device-matmul)" in result.output
    (vmfb,) = cache.glob("*.vmfb")
    want = AudioEncoder(checkpoint, artifact=vmfb).encode_files(clips)
    with np.load(output) as data:
        assert sorted(data.files) == sorted(OUTPUTS + FAILURE_OUTPUTS)
        for name in OUTPUTS:
            assert_bits_equal(data[name].astype(np.float32), getattr(want, name).astype(np.float32), name)
    assert want.valid_tokens.tolist() == [3, 1, 2]


def test_asking_for_the_other_front_end_is_one_error(workdir, checkpoint, clips, emitted):
    _, vmfb, _ = emitted
    message = assert_one_error(
        invoke(
            iree_main,
            [
                "encode",
                "--checkpoint",
                checkpoint,
                "--artifact",
                vmfb,
                "--mel",
                "host",
                "-o",
                workdir / "never.npz",
                clips[0],
            ],
        ),
        1,
        str(vmfb),
        "device (device-matmul), not host as asked",
    )
    assert "Traceback" not in message and not (workdir / "never.npz").exists()


def test_bench_times_the_device_mel_entries(checkpoint, emitted):
    _, vmfb, _ = emitted
    result = invoke(iree_main, ["bench", "--checkpoint", checkpoint, "--artifact", vmfb, "--warmup", 0, "--repeats", 1])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert [(r["mel"], r["frames"], r["batch"]) for r in records] == [
        ("device-matmul", 64, 1),
        ("device-matmul", 64, 2),
    ]


def test_a_request_through_the_scheduler_equals_the_file_alone(workdir, checkpoint, clips, emitted):
    _, vmfb, _ = emitted
    scheduler = build_scheduler(
        checkpoint,
        artifact=vmfb,
        prefill=False,
        mel="device",
        limits=Limits(frontend_workers=2, max_wait_s=0.05, max_seconds=60.0),
    )
    assert server_info(scheduler)["mel"] == "device-matmul"
    alone = AudioEncoder(checkpoint, artifact=vmfb)
    with scheduler:
        jobs = [scheduler.submit("encode", path.read_bytes(), name=path.name)[0] for path in clips]
        for job, path in zip(jobs, clips):
            assert scheduler.wait(job, timeout=60), path
            assert job.error is None, job.error
            want = alone.encode_files([path])
            for name in ("audio_features", "encoder_hidden", "valid_tokens"):
                assert_bits_equal(job.result[name].astype(np.float32), getattr(want, name).astype(np.float32), name)


def test_emit_mel_option_errors(workdir):
    out = ["--target", "llvm-cpu", "-o", workdir / "never.vmfb"]
    assert_one_error(invoke(emit_main, [*out, "--builtin", "tiny", "--mel", "gpu"]), 2, "'--mel'", "gpu")
    assert_one_error(
        invoke(emit_main, [*out, "--builtin", "tiny", "--stage", "prefill", "--mel", "device"]),
        1,
        "--mel applies to --stage audio",
    )
    assert not (workdir / "never.vmfb").exists()


def test_emit_prefill_stage(workdir):
    vmfb = workdir / "prefill.vmfb"
    result = invoke(
        emit_main,
        [
            "--stage",
            "prefill",
            "--target",
            "llvm-cpu",
            "--builtin",
            "tiny",
            "--capacity",
            512,
            "--clips",
            2,
            "-o",
            vmfb,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "prefill_c512_a2" in result.output and vmfb.stat().st_size > 0


def test_the_pipeline_writes_the_serial_npz_with_the_device_mel(workdir, checkpoint, clips, emitted):
    """Samples straight into the calls (no host mel tasks): the serial path's .npz, bit for bit, on 1 and
    3 workers; the 3.2 s file, which no 64-frame bucket holds, fails alone."""
    _, vmfb, _ = emitted
    encoder = AudioEncoder(checkpoint, artifact=vmfb)
    speech, rate = sf.read(SPEECH, dtype="int16")
    more = []
    for i, n in enumerate((10000, 3000, 640, 9999)):
        path = workdir / f"more{i}.wav"
        sf.write(path, speech[n : 2 * n], rate, subtype="PCM_16")
        more.append(path)
    paths = [clips[0], more[0], clips[1], more[1], clips[2], more[2], more[3]]
    encoder.encode_clips(encoder.clips_from_files(paths)).save(workdir / "serial.npz")
    for workers in (1, 3):
        encoder.encode_files(paths, workers=workers).save(workdir / f"pipeline{workers}.npz")
        assert (workdir / f"pipeline{workers}.npz").read_bytes() == (workdir / "serial.npz").read_bytes()
    with pytest.raises(EncodeFailed, match="318 mel frames fits no frame bucket") as info:
        encoder.encode_files([SPEECH, *paths], workers=2)
    np.testing.assert_array_equal(info.value.result.clip_source, np.arange(1, 8))
    with np.load(workdir / "serial.npz") as data:
        assert_bits_equal(info.value.result.audio_features, data["audio_features"], "without the failed input")
