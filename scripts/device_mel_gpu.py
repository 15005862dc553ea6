"""The device log-mel on a GPU, measured in one run: the front end against the host mel, the emulation
and its error bound; encoders with the device mel against transformers and float64; and the time of the
host mel and the device mel for 30 s clips in calls of 1, 8 and 32.

Build on the CPU machine (needs iree-base-compiler; about 25 MB into .gpu/mel-cuda/, a few minutes):

    .venv/bin/python scripts/device_mel_gpu.py build [--arch sm_90]

Run on the GPU machine (scripts/gpu_device_mel.sh installs the carried wheels, writes the random E4B
checkpoint, then calls):

    python3 scripts/device_mel_gpu.py run --out $OUT

The same on this CPU (`build --target llvm-cpu --batches 1`, `run --target llvm-cpu`) gives the llvm-cpu
figures of every measurement.

Every measurement runs in its own process (one IREE CUDA context each) and prints one JSON line; `run`
collects them into $OUT/device_mel.jsonl and prints a summary. Measurements ("part"):

* `front`: the front end alone (tables passed as arguments) on the tiny cases and the two speech files
  (tests/oracles/mel_cases.py, the inputs of tests/test_device_mel.py): how many result bits differ from
  the emulation with CUDA's arithmetic (`serial`: IREE's PTX rounds every product, expected 0) and with
  llvm-cpu's (`serial-fma`), values outside `contracts.mel.error_bound`, distances to the host mel;
* `front-time`: the front end alone on 30 s clips, device-side median ms per call, and the host mel
  (NumPy, one core, as `encode` computes it) for the same clips;
* `tiny-parity`: the tiny configuration (tests/oracles/configs.py, seed 11) with the host or device mel
  under mlx-cuda-v1 and f32-reference, on speech and a chirp: distances to transformers fp32 (and
  transformers bf16's own) and to the float64 evaluation (float64 extractor + reference_f64.py);
* `e4b-time`: the random E4B checkpoint, 30 s clips in calls of 1, 8 and 32: end-to-end and device-side
  ms of the host-mel artifact plus the host mel, and of the device-mel artifact; the 8-clip outputs are
  saved so `run` can report how far the two front ends' encoder outputs are apart.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # oracles/ (no pytest needed)

BATCHES = (1, 8, 32)
DEVICES = {"cuda": "cuda", "llvm-cpu": "local-task"}
FRAMES_30S = 2997
FRONT_CASES = ("tiny", "speech_16k", "sample_speech")


# ---------------------------------------------------------------------------------------------- build
def artifacts(target: str) -> Path:
    return ROOT / ".gpu" / f"mel-{target}"


def jobs(target: str, batches: tuple[int, ...], repeats: int) -> list[dict]:
    """Every artifact the run needs, with what its measurement is told."""
    from gemma3n_iree.contracts.mel import DFT_METHODS

    out = []
    for dft in DFT_METHODS:
        out += [{"part": "front", "dft": dft, "case": case, "vmfb": f"front_{dft}_{case}.vmfb"} for case in FRONT_CASES]
        out += [
            {"part": "front-time", "dft": dft, "batch": b, "vmfb": f"front_{dft}_f{FRAMES_30S}_c{b}.vmfb"}
            for b in batches
        ]
    for contract in ("mlx-cuda-v1", "f32-reference"):
        for mel in ("host", "device-matmul"):
            out.append({"part": "tiny-parity", "contract": contract, "mel": mel, "vmfb": f"tiny_{contract}_{mel}.vmfb"})
    for mel in ("host", "device-matmul"):
        out.append({"part": "e4b-time", "mel": mel, "batches": list(batches), "vmfb": f"e4b_{mel}.vmfb"})
    return [{**job, "target": target, "repeats": repeats} for job in out]


def tiny_bucket() -> int:
    from oracles.mel_cases import chirp, speech

    from gemma3n_iree.runtime.audio.frontend import num_frames

    return max(num_frames(len(clip))[0] for clip in (speech("speech_16k"), chirp()))


def build(target_name: str, arch: str | None, batches: tuple[int, ...], repeats: int) -> None:
    from oracles.configs import TINY
    from oracles.mel_cases import case

    from gemma3n_iree.contracts.mel import MelFrontEnd, resolve_mel
    from gemma3n_iree.contracts.policy import MLX_CUDA_V1, get_contract
    from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
    from gemma3n_iree.emitters.compile import compile_mlir, parse_target
    from gemma3n_iree.emitters.kernels import select_kernels
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.emitters.mel import MelEmitter
    from gemma3n_iree.emitters.probe import probe_module
    from gemma3n_iree.model.audio_config import AudioConfig, builtin_config

    target = parse_target(target_name, arch)
    directory = artifacts(target_name)
    directory.mkdir(parents=True, exist_ok=True)
    listed = jobs(target_name, batches, repeats)
    for job in listed:
        path = directory / job["vmfb"]
        started = time.perf_counter()
        if job["part"] in ("front", "front-time"):
            if job["part"] == "front":
                inputs, frames = case(job["case"])
                clips = len(inputs)
            else:
                clips, frames = job["batch"], FRAMES_30S
            front = MelFrontEnd(job["dft"])
            mlir = probe_module(MLX_CUDA_V1, lambda o: MelEmitter(o).front(clips, frames, front))
        else:
            contract = get_contract(job.get("contract", "mlx-cuda-v1"))
            if job["part"] == "tiny-parity":
                cfg, buckets, widths = AudioConfig.from_mapping(TINY, source="TINY"), (tiny_bucket(),), (1,)
            else:
                cfg, buckets, widths = builtin_config("e4b"), (FRAMES_30S,), batches
            spec = AudioModuleSpec(
                cfg,
                contract,
                buckets,
                widths,
                kernels=select_kernels("auto", target, contract),
                mel=resolve_mel(job["mel"], target_name),
                lowering=lowering_for(target, contract),
            )
            mlir = emit_audio_module(spec)
        path.write_bytes(compile_mlir(mlir, target))
        print(
            f"{path.relative_to(ROOT)}: {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    (directory / "jobs.json").write_text(json.dumps(listed, indent=1))


# ---------------------------------------------------------------------------------------------- parts
def _vmfb(job: dict) -> Path:
    return artifacts(job["target"]) / job["vmfb"]


def _program(job: dict):
    from gemma3n_iree.runtime.programs.session import LoadedProgram

    return LoadedProgram(_vmfb(job), [], device=DEVICES[job["target"]])


def part_front(job: dict) -> dict:
    from oracles.mel_cases import case, distances, padded_batch

    from gemma3n_iree.contracts import mel as M
    from gemma3n_iree.emitters.mel import mel_tables
    from gemma3n_iree.runtime.audio.frontend import log_mel

    clips, frames = case(job["case"])
    samples, counts = padded_batch(clips, frames)
    tables = [t.values for t in mel_tables(M.MelFrontEnd(job["dft"]))]
    out = _program(job).invoke("main", ("mel", "frames"), samples, counts, *tables)
    got, valid = out["mel"], out["frames"]
    record: dict = {"frames_equal": bool(np.array_equal(valid, M.frame_counts(counts)))}
    for arithmetic in ("serial", "serial-fma"):
        want, _ = M.device_log_mel(samples, counts, frames, job["dft"], arithmetic)
        record[f"bits_differ_vs_{arithmetic}"] = int((got.view(np.uint32) != want.view(np.uint32)).sum())
    y = M.windowed_frames(samples, counts, frames)
    excess = np.abs(got - M.float64_log_mel(y)) - M.error_bound(y, job["dft"])
    rows = [(i, int(v)) for i, v in enumerate(valid) if v > 0]
    record["outside_bound"] = int(sum((excess[i, :v] > 0).sum() for i, v in rows))
    device = np.concatenate([got[i, :v] for i, v in rows])
    host = np.concatenate([log_mel(clips[i])[0][:v] for i, v in rows])
    record["vs_host"] = distances(device, host)
    return record


def thirty_second_clips(count: int) -> list[np.ndarray]:
    """`count` different 30 s windows of the two bundled speech files, tiled."""
    from oracles.mel_cases import speech

    base = np.concatenate([speech("speech_16k"), speech("sample_speech")])
    signal = np.tile(base, -(-(count + 1) * 480_000 // len(base)))
    return [signal[i * 480_000 + i * 7919 : (i + 1) * 480_000 + i * 7919] for i in range(count)]


def _host_mel_ms(clips: list[np.ndarray], repeats: int = 3) -> float:
    from gemma3n_iree.runtime.audio.frontend import clip_features

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for clip in clips:
            clip_features(clip)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def part_front_time(job: dict) -> dict:
    from oracles.mel_cases import padded_batch

    from gemma3n_iree.contracts.mel import MelFrontEnd
    from gemma3n_iree.emitters.mel import mel_tables

    clips = thirty_second_clips(job["batch"])
    samples, counts = padded_batch(clips, FRAMES_30S, garbage_seed=None)
    tables = [t.values for t in mel_tables(MelFrontEnd(job["dft"]))]
    times = _program(job).time_execution("main", (samples, counts, *tables), warmup=3, repeats=job["repeats"])
    device_ms = statistics.median(times) * 1e3
    host_ms = _host_mel_ms(clips)
    return {
        "device_ms": round(device_ms, 3),
        "device_ms_per_clip": round(device_ms / job["batch"], 3),
        "host_numpy_ms": round(host_ms, 1),
        "host_numpy_ms_per_clip": round(host_ms / job["batch"], 2),
    }


def part_tiny_parity(job: dict) -> dict:
    import ml_dtypes
    import torch
    from oracles.configs import TINY
    from oracles.hf_oracle import make_hf_modules, run_hf, state_dict_hf_names
    from oracles.mel_cases import chirp, padded_batch, speech
    from oracles.reference_f64 import forward_f64, log_mel_f64
    from safetensors.numpy import save_file

    from gemma3n_iree.contracts.metrics import relative_l2
    from gemma3n_iree.runtime.audio.frontend import log_mel
    from gemma3n_iree.runtime.encoder.audio_session import AudioSession

    encoder, embedder = make_hf_modules(TINY, seed=11)
    with torch.no_grad():
        for module in (encoder, embedder):
            for p in module.parameters():
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
    weights = {k: v.astype(ml_dtypes.bfloat16) for k, v in state_dict_hf_names(encoder, embedder).items()}
    directory = Path(tempfile.mkdtemp(prefix="tiny-parity-"))
    save_file(weights, str(directory / "model.safetensors"))
    session = AudioSession(_vmfb(job), [directory / "model.safetensors"], device=DEVICES[job["target"]])
    bucket = tiny_bucket()
    record = {}
    for name, clip in (("speech", speech("speech_16k")), ("chirp", chirp())):
        features, valid = log_mel(clip)
        if session.mel.on_device:
            out = session.run(*padded_batch([clip], bucket, garbage_seed=None))
        else:
            mel = np.zeros((1, bucket, 128), np.float32)
            mel[0, :valid] = features[:valid]
            out = session.run(mel, np.array([valid], np.int32))
        tokens = int(out["valid_tokens"][0])
        ours = {"encoded": out["encoder_hidden"][0, :tokens], "soft_post_norm": out["audio_features"][0, :tokens]}
        fp32 = run_hf(encoder, embedder, features[:valid])
        bf16 = run_hf(encoder, embedder, features[:valid], dtype=torch.bfloat16)
        exact_mel, _ = log_mel_f64(clip)
        exact = forward_f64({k: np.asarray(v, np.float32) for k, v in weights.items()}, exact_mel[:valid], TINY)
        for key, exact_key in (("encoded", "encoded_reduced"), ("soft_post_norm", "soft_post_norm")):
            record[f"{name}.{key}"] = {
                "ours_vs_hf_fp32": relative_l2(ours[key], fp32[key]),
                "hf_bf16_vs_hf_fp32": relative_l2(bf16[key], fp32[key]),
                "ours_vs_f64": relative_l2(ours[key], exact[exact_key]),
                "hf_fp32_vs_f64": relative_l2(fp32[key], exact[exact_key]),
            }
    return record


def part_e4b_time(job: dict, out_dir: Path, checkpoint: Path) -> dict:
    from gemma3n_iree.runtime.audio.frontend import clip_features
    from gemma3n_iree.runtime.encoder.audio_session import AudioSession

    if not (checkpoint / "model.safetensors").is_file():
        from gemma3n_iree.model.audio_config import builtin_config
        from gemma3n_iree.runtime.synthetic import write_random_checkpoint

        write_random_checkpoint(checkpoint, builtin_config("e4b"), seed=0)
    session = AudioSession(_vmfb(job), [checkpoint / "model.safetensors"], device=DEVICES[job["target"]])
    record = {}
    for batch in job["batches"]:
        clips = thirty_second_clips(batch)
        counts = np.array([len(c) for c in clips], np.int32)
        if session.mel.on_device:
            inputs, host_ms = np.stack(clips), 0.0
        else:
            host_ms = _host_mel_ms(clips)
            features = [clip_features(c)[0] for c in clips]
            inputs = np.stack([f.features for f in features])
            counts = np.array([f.valid_frames for f in features], np.int32)
        for _ in range(min(3, job["repeats"])):
            out = session.run(inputs, counts)
        times = []
        for _ in range(job["repeats"]):
            started = time.perf_counter()
            out = session.run(inputs, counts)
            times.append((time.perf_counter() - started) * 1e3)
        name = session.entries[(FRAMES_30S, batch)].name
        execute = (
            statistics.median(session.time_execution(name, (inputs, counts), warmup=1, repeats=job["repeats"])) * 1e3
        )
        run_ms = statistics.median(times)
        record[f"batch{batch}"] = {
            "host_mel_ms": round(host_ms, 1),
            "run_ms": round(run_ms, 2),
            "execute_ms": round(execute, 2),
            "audio_s_per_s": round(batch * 30.0 / ((host_ms + run_ms) / 1e3), 1),
        }
        if batch == min(job["batches"], key=lambda b: abs(b - 8)):
            np.savez(out_dir / f"e4b_{job['mel']}_b{batch}.npz", **out)
    return record


# ---------------------------------------------------------------------------------------------- run
def run(target: str, out_dir: Path, timeout: int, checkpoint: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    listed = json.loads((artifacts(target) / "jobs.json").read_text())
    records = []
    with open(out_dir / "device_mel.jsonl", "w") as log:
        for job in listed:
            started = time.perf_counter()
            try:
                proc = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "part",
                        json.dumps(job),
                        "--out",
                        str(out_dir),
                        "--checkpoint",
                        str(checkpoint),
                    ],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                proc = subprocess.CompletedProcess([], 124, "", f"timed out after {timeout} s")
            lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
            record = (
                json.loads(lines[-1])
                if proc.returncode == 0 and lines
                else {**job, "error": (proc.stderr or proc.stdout)[-2000:]}
            )
            record["seconds"] = round(time.perf_counter() - started, 1)
            print(json.dumps(record), flush=True)
            log.write(json.dumps(record) + "\n")
            records.append(record)
    summary(records, out_dir)


def summary(records: list[dict], out_dir: Path) -> None:
    from gemma3n_iree.contracts.metrics import relative_l2

    print(
        f"\n== front end ({records[0]['target'] if records else '?'}): bits differing from the emulation, values outside the bound, vs host"
    )
    for r in (r for r in records if r["part"] == "front" and "error" not in r):
        h = r["vs_host"]
        print(
            f"  {r['dft']:7s} {r['case']:14s} serial {r['bits_differ_vs_serial']:7d}  serial-fma "
            f"{r['bits_differ_vs_serial-fma']:7d}  outside {r['outside_bound']}  max abs {h['max_abs']:.3g}  "
            f"max ulp {h['max_ulp']}  bf16 {h['bf16_differ']}/{h['values']}"
        )
    print("== front end time, 30 s clips (device ms per call; NumPy host mel ms for the same clips)")
    for r in (r for r in records if r["part"] == "front-time" and "error" not in r):
        print(
            f"  {r['dft']:7s} batch {r['batch']:2d}: device {r['device_ms']:8.3f} ms ({r['device_ms_per_clip']:.3f}/clip)"
            f"  host NumPy {r['host_numpy_ms']:8.1f} ms ({r['host_numpy_ms_per_clip']:.1f}/clip)"
        )
    print("== tiny configuration: relative L2 (ours vs transformers fp32 | transformers bf16 vs fp32 | ours vs f64)")
    for r in (r for r in records if r["part"] == "tiny-parity" and "error" not in r):
        for key in (k for k in r if "." in k):
            v = r[key]
            print(
                f"  {r['contract']:13s} {r['mel']:13s} {key:22s} {v['ours_vs_hf_fp32']:.2e} | "
                f"{v['hf_bf16_vs_hf_fp32']:.2e} | {v['ours_vs_f64']:.2e} (transformers fp32 vs f64 "
                f"{v['hf_fp32_vs_f64']:.2e})"
            )
    print("== E4B, 30 s clips: host mel + run, device mel run (ms), audio-s/s")
    for r in (r for r in records if r["part"] == "e4b-time" and "error" not in r):
        for batch in r["batches"]:
            v = r[f"batch{batch}"]
            print(
                f"  {r['mel']:13s} batch {batch:2d}: host mel {v['host_mel_ms']:8.1f}  run {v['run_ms']:8.2f}  "
                f"device {v['execute_ms']:8.2f}  -> {v['audio_s_per_s']:8.1f} audio-s/s"
            )
    for host_path in sorted(out_dir.glob("e4b_host_b*.npz")):
        device_path = host_path.with_name(host_path.name.replace("host", "device-matmul"))
        if device_path.is_file():
            with np.load(host_path) as host, np.load(device_path) as device:
                for name in ("audio_features", "encoder_hidden"):
                    print(
                        f"  E4B {host_path.stem.split('_b')[-1]} x 30 s, device vs host mel: {name} relative L2 "
                        f"{relative_l2(device[name], host[name]):.2e}"
                    )
    failures = [r for r in records if "error" in r]
    print(f"== {len(records) - len(failures)} measurements, {len(failures)} failed")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile every artifact into .gpu/mel-<target>/ (CPU machine)")
    b.add_argument("--target", choices=sorted(DEVICES), default="cuda")
    b.add_argument("--arch", default=None, help="CUDA architecture (default sm_90)")
    b.add_argument("--batches", type=int, nargs="+", default=list(BATCHES), help="clips per call of the 30 s timings")
    b.add_argument("--repeats", type=int, default=20, help="timed calls per measurement (the median is reported)")
    r = sub.add_parser("run", help="run every measurement (GPU machine, or this CPU with --target llvm-cpu)")
    r.add_argument("--target", choices=sorted(DEVICES), default="cuda")
    r.add_argument("--out", type=Path, default=Path("/tmp/out"))
    r.add_argument("--timeout", type=int, default=300, help="seconds per measurement")
    p = sub.add_parser("part", help="one measurement (what `run` starts per artifact)")
    p.add_argument("job")
    p.add_argument("--out", type=Path, default=Path("/tmp/out"))
    for command in (r, p):
        command.add_argument(
            "--checkpoint",
            type=Path,
            default=Path("/tmp/ckpt"),
            help="the random E4B checkpoint (written there, seed 0, when missing)",
        )
    args = parser.parse_args()
    if args.command == "build":
        build(args.target, args.arch, tuple(args.batches), args.repeats)
    elif args.command == "run":
        run(args.target, args.out, args.timeout, args.checkpoint)
    else:
        job = json.loads(args.job)
        args.out.mkdir(parents=True, exist_ok=True)
        parts = {
            "front": part_front,
            "front-time": part_front_time,
            "tiny-parity": part_tiny_parity,
            "e4b-time": lambda j: part_e4b_time(j, args.out, args.checkpoint),
        }
        print(json.dumps({**job, **parts[job["part"]](job)}), flush=True)


if __name__ == "__main__":
    main()
