#!/usr/bin/env python3
"""Files -> .npz, as a user runs it: this project's CLI and Python API against transformers' own pipeline.

    python scripts/pipeline_bench.py inputs --dir /tmp/bench-in --files 256 --seconds 30
    python scripts/pipeline_bench.py api   --checkpoint CKPT --target cuda --artifact A.vmfb --inputs /tmp/bench-in
    python scripts/pipeline_bench.py cli   --checkpoint CKPT --target cuda --artifact A.vmfb --inputs /tmp/bench-in
    python scripts/pipeline_bench.py torch --inputs /tmp/bench-in --device cuda --dtype bf16 --modes eager compile

A benchmark, not a test (scripts/gpu_pipeline.sh runs it on the H200 in one run; BENCHMARKS.md, "Files
to .npz", records the CPU run).  Every part prints one JSON line per case, with ``audio_s_per_s`` =
seconds of audio per wall-clock second from the first file read to the .npz written:

* ``inputs``: N files of speech-like audio (the bundled sample tiled at different offsets), as WAV
  16 kHz PCM16 (``wav``) and FLAC 44.1 kHz PCM16 (``flac``, resampled on the way in);
* ``api``: `AudioEncoder.encode_files` + `EncodeResult.save` in one loaded process (median of
  ``--repeats``, after a warm-up), plus the serial path before this pipeline
  (`encode_clips(clips_from_files(...))` + save) at ``--serial-count`` files;
* ``cli``: `gemma3n-iree encode` as a subprocess: the whole command (``total_s``: start-up, weights, the
  artifact's load) and the encode phase it reports (``encode_s``, ``written_s``);
* ``torch``: transformers' pipeline -- decode with soundfile, resample with soxr (librosa's default
  resampler), `Gemma3nAudioFeatureExtractor` on the batch, `Gemma3nAudioEncoder` + the audio
  `Gemma3nMultimodalEmbedder` in chunks of 32 clips (random weights of the same configuration: the
  time does not depend on their values), audio features and encoder output to float32, `np.savez`.
  ``--modes eager compile`` (torch.compile; compiled and warmed at the chunk shapes first).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RATE = 16_000
FORMATS = {"wav": ("wav16k", ".wav", 16_000, "WAV"), "flac": ("flac44k", ".flac", 44_100, "FLAC")}


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def input_files(directory: Path, fmt: str, count: int) -> list[Path]:
    folder, suffix, _, _ = FORMATS[fmt]
    files = sorted((directory / folder).glob(f"*{suffix}"))[:count]
    if len(files) < count:
        raise SystemExit(f"{directory / folder}: {len(files)} {fmt} files, {count} needed (run the inputs part)")
    return files


def audio_seconds(files: list[Path]) -> float:
    import soundfile as sf

    return sum(sf.info(str(f)).duration for f in files)


# ---------------------------------------------------------------------------------------------- inputs


def make_inputs(args: argparse.Namespace) -> None:
    import soundfile as sf

    from gemma3n_iree.runtime.audio.decode import resample
    from gemma3n_iree.runtime.audio.frontend import SAMPLE_SPEECH

    speech, rate = sf.read(SAMPLE_SPEECH, dtype="float64")
    for fmt in args.formats:
        folder, suffix, out_rate, container = FORMATS[fmt]
        source = speech if out_rate == rate else resample(speech, rate, out_rate)
        n = int(args.seconds * out_rate)
        tiled = np.tile(source, -(-(n + len(source)) // len(source)))
        (args.dir / folder).mkdir(parents=True, exist_ok=True)
        for i in range(args.files):
            start = (i * 7919) % len(source)
            sf.write(
                args.dir / folder / f"{i:04d}{suffix}",
                tiled[start : start + n],
                out_rate,
                format=container,
                subtype="PCM_16",
            )
    emit({"part": "inputs", "files": args.files, "seconds": args.seconds, "formats": args.formats})


# ---------------------------------------------------------------------------------------------- API


def run_api(args: argparse.Namespace) -> None:
    from gemma3n_iree.runtime.encoder.encode import AudioEncoder

    encoder = AudioEncoder(args.checkpoint, target=args.target, artifact=args.artifact, mel=args.mel)
    base = {
        "part": "api",
        "impl": "gemma3n-iree",
        "mel": encoder.session.mel.name,
        "artifact": Path(args.artifact).name if args.artifact else None,
        "entries": [list(e) for e in encoder.session.buckets],
    }
    out = args.scratch / "api.npz"
    warm = input_files(args.inputs, args.formats[0], min(max(args.counts), max(encoder.clips_per_call)))
    encoder.encode_files(warm).save(out)  # first calls of every width: allocations, caches
    for fmt in args.formats:
        for count in args.counts:
            files = input_files(args.inputs, fmt, count)
            seconds = audio_seconds(files)
            times = []
            for _ in range(1 if count > 64 else args.repeats):
                started = time.perf_counter()
                result = encoder.encode_files(files, workers=args.workers)
                encoded = time.perf_counter()
                result.save(out)
                times.append((time.perf_counter() - started, encoded - started))
            total, encode = statistics.median(t for t, _ in times), statistics.median(e for _, e in times)
            emit(
                {
                    **base,
                    "format": fmt,
                    "files": count,
                    "audio_s": round(seconds, 2),
                    "repeats": len(times),
                    "total_s": round(total, 4),
                    "encode_s": round(encode, 4),
                    "save_s": round(total - encode, 4),
                    "audio_s_per_s": round(seconds / total, 1),
                }
            )
    if args.serial_count:
        files = input_files(args.inputs, args.formats[0], args.serial_count)
        seconds = audio_seconds(files)
        started = time.perf_counter()
        encoder.encode_clips(encoder.clips_from_files(files)).save(out)
        total = time.perf_counter() - started
        emit(
            {
                **base,
                "impl": "gemma3n-iree serial (before the pipeline)",
                "format": args.formats[0],
                "files": args.serial_count,
                "audio_s": round(seconds, 2),
                "total_s": round(total, 4),
                "audio_s_per_s": round(seconds / total, 1),
            }
        )


# ---------------------------------------------------------------------------------------------- CLI

_SUMMARY = re.compile(r"([\d,.]+) audio-s in ([\d.]+) s \(([\d,]+) audio-s/s\); written in ([\d.]+) s")


def run_cli(args: argparse.Namespace) -> None:
    for fmt in args.formats:
        for count in args.counts:
            files = input_files(args.inputs, fmt, count)
            seconds = audio_seconds(files)
            command = [
                sys.executable,
                "-m",
                "gemma3n_iree",
                "encode",
                "--checkpoint",
                str(args.checkpoint),
                "--target",
                args.target,
                "-o",
                str(args.scratch / "cli.npz"),
                *map(str, files),
            ]
            if args.artifact:
                command[4:4] = ["--artifact", str(args.artifact)]
            if args.mel:
                command[4:4] = ["--mel", args.mel]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            total = time.perf_counter() - started
            match = _SUMMARY.search(done.stderr)
            record = {
                "part": "cli",
                "impl": "gemma3n-iree encode",
                "mel": args.mel or "default",
                "format": fmt,
                "files": count,
                "audio_s": round(seconds, 2),
                "exit": done.returncode,
                "total_s": round(total, 3),
                "audio_s_per_s_total": round(seconds / total, 1),
            }
            if match:
                encode, written = float(match.group(2)), float(match.group(4))
                record.update(
                    {"encode_s": encode, "written_s": written, "audio_s_per_s": round(seconds / (encode + written), 1)}
                )
            if done.returncode != 0 or not match:
                record["stderr"] = done.stderr[-2000:]
            emit(record)


# ---------------------------------------------------------------------------------------------- transformers


def run_torch(args: argparse.Namespace) -> None:
    import soundfile as sf
    import soxr
    import torch
    from transformers import Gemma3nAudioFeatureExtractor

    from gemma3n_iree.diagnostics.transformers_reference import build_modules
    from gemma3n_iree.model.audio_config import builtin_config

    torch.manual_seed(0)
    device = torch.device(args.device)
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    if args.threads:
        torch.set_num_threads(args.threads)
    tower, embedder = build_modules(builtin_config(args.config))
    tower, embedder = tower.to(device, dtype), embedder.to(device, dtype)
    extractor = Gemma3nAudioFeatureExtractor()

    def pipeline(files: list[Path], model, embed) -> None:
        arrays = []
        for path in files:
            data, rate = sf.read(str(path), dtype="float32", always_2d=True)
            mono = data.mean(axis=1)
            arrays.append(mono if rate == RATE else soxr.resample(mono, rate, RATE).astype(np.float32))
        batch = extractor(arrays, sampling_rate=RATE, return_tensors="np")
        features, hidden = [], []
        with torch.inference_mode():
            for start in range(0, len(files), args.chunk):
                mel = torch.from_numpy(batch["input_features"][start : start + args.chunk]).to(device, dtype)
                mask = torch.from_numpy(~batch["input_features_mask"][start : start + args.chunk]).to(device)
                res = model(mel, mask)
                encoded = res[0] if isinstance(res, tuple) else res.last_hidden_state
                features.append(embed(inputs_embeds=encoded).float().cpu().numpy())
                hidden.append(encoded.float().cpu().numpy())
        np.savez(
            args.scratch / "torch.npz", audio_features=np.concatenate(features), encoder_hidden=np.concatenate(hidden)
        )

    for mode in args.modes:
        model, embed = tower, embedder
        counts = args.counts if mode == "eager" else args.compile_counts
        if mode == "compile":
            model, embed = torch.compile(tower), torch.compile(embedder)
        for count in counts:
            for fmt in args.formats if mode == "eager" else args.formats[:1]:
                files = input_files(args.inputs, fmt, count)
                seconds = audio_seconds(files)
                started = time.perf_counter()
                pipeline(files[: min(count, args.chunk)], model, embed)  # warm-up (and compilation) at the shapes
                warm = time.perf_counter() - started
                times = []
                for _ in range(1 if count > 64 else args.repeats):
                    started = time.perf_counter()
                    pipeline(files, model, embed)
                    times.append(time.perf_counter() - started)
                total = statistics.median(times)
                emit(
                    {
                        "part": "torch",
                        "impl": f"transformers {mode}",
                        "dtype": args.dtype,
                        "device": args.device,
                        "format": fmt,
                        "files": count,
                        "audio_s": round(seconds, 2),
                        "repeats": len(times),
                        "warmup_s": round(warm, 2),
                        "total_s": round(total, 4),
                        "audio_s_per_s": round(seconds / total, 1),
                    }
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = parser.add_subparsers(dest="part", required=True)
    make = parts.add_parser("inputs")
    make.add_argument("--dir", type=Path, required=True)
    make.add_argument("--files", type=int, default=256)
    make.add_argument("--seconds", type=float, default=30.0)
    make.add_argument("--formats", nargs="+", default=["wav", "flac"], choices=sorted(FORMATS))
    for name in ("api", "cli", "torch"):
        part = parts.add_parser(name)
        part.add_argument("--inputs", type=Path, required=True)
        part.add_argument("--counts", type=int, nargs="+", default=[1, 8, 32, 256])
        part.add_argument("--formats", nargs="+", default=["wav", "flac"], choices=sorted(FORMATS))
        part.add_argument("--repeats", type=int, default=3)
        part.add_argument("--scratch", type=Path, default=Path("/tmp"))
        if name in ("api", "cli"):
            part.add_argument("--checkpoint", type=Path, required=True)
            part.add_argument("--target", default="cuda")
            part.add_argument("--artifact", type=Path, default=None)
            part.add_argument("--mel", default=None)
        if name == "api":
            part.add_argument("--workers", type=int, default=None)
            part.add_argument("--serial-count", type=int, default=32)
        if name == "cli":
            part.add_argument("--timeout", type=float, default=300)
        if name == "torch":
            part.add_argument("--device", default="cuda")
            part.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
            part.add_argument("--modes", nargs="+", default=["eager", "compile"], choices=["eager", "compile"])
            part.add_argument("--compile-counts", type=int, nargs="+", default=[32])
            part.add_argument("--chunk", type=int, default=32)
            part.add_argument("--threads", type=int, default=None)
            part.add_argument(
                "--config",
                default="e4b",
                choices=["e4b", "tiny"],
                help="the encoder's configuration (tiny: the tests' smoke run)",
            )
    args = parser.parse_args()
    {"inputs": make_inputs, "api": run_api, "cli": run_cli, "torch": run_torch}[args.part](args)


if __name__ == "__main__":
    main()
