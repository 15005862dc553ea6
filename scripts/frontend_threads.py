#!/usr/bin/env python3
"""Why front-end threads fought: the host front end on N workers, threads or processes, with NumPy's BLAS
pool as it comes or pinned to one thread (what `runtime/encoder/pipeline.py` does).

    python scripts/frontend_threads.py                        # every core count up to this machine's
    python scripts/frontend_threads.py --workers 1 16 --stages mel

A measurement, not a test.  For each work item -- ``mel``: the host log-mel of one 30 s clip
(`frontend.log_mel`); ``wav16k``: decode a 30 s 16 kHz WAV and its log-mel; ``flac44k``: decode a 30 s
44.1 kHz FLAC, resample and log-mel -- and each configuration, it prints one JSON line:

* ``audio_s_per_s``: audio seconds through the front end per wall-clock second;
* ``cores_busy``: CPU seconds spent per wall second by the process (threads) or by the worker processes
  (their /proc/PID/stat, so busy-waiting BLAS threads count), and ``audio_s_per_core_s``, the two
  divided: the work's efficiency (the issue's 47 vs 1,000 audio-s per core-second);
* ``blas``: the BLAS libraries threadpoolctl sees and their thread counts during the run.

``thread/default`` is the server's front end before the fix (a thread pool calling NumPy with its
OpenBLAS pool at one thread per core), ``thread/pinned`` after it (`FrontEndPool`), and
``process/pinned`` what worker processes would give: if threads/pinned scales like process/pinned,
the GIL is not what limits the threads.  A last line (``"verdict"``) puts the ratios side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np

CLIP_S = 30.0
_INPUTS: dict[str, object] = {}


def _make_inputs(directory: Path) -> dict[str, object]:
    import soundfile as sf

    from gemma3n_iree.runtime.audio.frontend import SAMPLE_SPEECH

    speech, rate = sf.read(SAMPLE_SPEECH, dtype="float32")
    signal = np.tile(speech, int(CLIP_S * 44_100 // len(speech)) + 2)
    wav, flac = directory / "clip16k.wav", directory / "clip44k.flac"
    sf.write(wav, signal[: int(CLIP_S * 16_000)], 16_000, subtype="PCM_16")
    sf.write(flac, signal[: int(CLIP_S * 44_100)], 44_100, subtype="PCM_16")  # tiled speech played faster
    return {"mel": signal[: int(CLIP_S * 16_000)].copy(), "wav16k": str(wav), "flac44k": str(flac)}


def _init(inputs: dict[str, object], pin: bool) -> None:
    """Per worker process: the inputs, and BLAS pinned (process-local there) when asked."""
    _INPUTS.update(inputs)
    if pin:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")


def _item(stage: str) -> float:
    """One work item of `stage`; returns the audio seconds it covered."""
    from gemma3n_iree.runtime.audio.decode import decode_audio
    from gemma3n_iree.runtime.audio.frontend import clip_features, log_mel

    if stage == "mel":
        log_mel(_INPUTS["mel"])  # type: ignore[arg-type]
        return CLIP_S
    samples = decode_audio(_INPUTS[stage]).samples  # type: ignore[arg-type]
    clip_features(samples)
    return len(samples) / 16_000


def _warm(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _proc_cpu(pids) -> float:
    """CPU seconds (user + system, every thread) of the given processes so far."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def _blas_info() -> list[dict]:
    from threadpoolctl import threadpool_info

    return [
        {"api": p["internal_api"], "threads": p["num_threads"], "version": p.get("version")}
        for p in threadpool_info()
        if p["user_api"] == "blas"
    ]


def measure(stage: str, executor: str, workers: int, pinned: bool, items: int, inputs: dict) -> dict:
    from threadpoolctl import threadpool_limits

    if executor == "thread":
        _INPUTS.update(inputs)
        limiter = threadpool_limits(limits=1, user_api="blas") if pinned else None
        try:
            blas = _blas_info()
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(_item, [stage] * workers))  # warm-up: imports, first calls, BLAS threads
                cpu0, t0 = _proc_cpu([os.getpid()]), time.perf_counter()
                audio = sum(pool.map(_item, [stage] * items))
                wall, cpu = time.perf_counter() - t0, _proc_cpu([os.getpid()]) - cpu0
        finally:
            if limiter is not None:
                limiter.restore_original_limits()
    else:
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # never fork a process holding a CUDA context
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_init, initargs=(inputs, pinned)) as pool:
            pids = set(pool.map(_warm, [0.3] * (2 * workers)))
            list(pool.map(_item, [stage] * (2 * workers)))
            blas = [{"note": "per worker process", "pinned": pinned}]
            cpu0, t0 = _proc_cpu(pids), time.perf_counter()
            audio = sum(pool.map(_item, [stage] * items))
            wall, cpu = time.perf_counter() - t0, _proc_cpu(pids) - cpu0
    return {
        "stage": stage,
        "executor": executor,
        "blas_pool": "pinned" if pinned else "default",
        "workers": workers,
        "items": items,
        "wall_s": round(wall, 3),
        "audio_s_per_s": round(audio / wall, 1),
        "cores_busy": round(cpu / wall, 2),
        "audio_s_per_core_s": round(audio / cpu, 1) if cpu > 0 else None,
        "blas": blas,
    }


def main() -> None:
    cores = len(os.sched_getaffinity(0))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stages", nargs="+", default=["mel", "flac44k"], choices=["mel", "wav16k", "flac44k"])
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=sorted({1, min(4, cores), cores}),
        help="worker counts (default 1, 4 and every core)",
    )
    parser.add_argument("--items-per-worker", type=int, default=4)
    parser.add_argument("--no-processes", action="store_true", help="threads only")
    args = parser.parse_args()

    print(
        json.dumps(
            {
                "machine": {
                    "cores": cores,
                    "numpy": np.__version__,
                    "python": sys.version.split()[0],
                    "blas": _blas_info(),
                }
            }
        ),
        flush=True,
    )
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        inputs = _make_inputs(Path(tmp))
        for stage in args.stages:
            for workers in args.workers:
                configs = [("thread", False), ("thread", True)]
                if not args.no_processes and workers in (1, max(args.workers)):
                    configs.append(("process", True))
                for executor, pinned in configs:
                    record = measure(stage, executor, workers, pinned, args.items_per_worker * workers, inputs)
                    records.append(record)
                    print(json.dumps(record), flush=True)
    top = max(args.workers)
    verdict = {}
    for stage in args.stages:
        at = {(r["executor"], r["blas_pool"], r["workers"]): r for r in records if r["stage"] == stage}
        one = at.get(("thread", "pinned", 1))
        row = {f"{k[0]}/{k[1]} x{top}": at[k]["audio_s_per_s"] for k in at if k[2] == top}
        if one:
            row["thread/pinned x1"] = one["audio_s_per_s"]
            row[f"scaling thread/pinned x{top}"] = round(
                at[("thread", "pinned", top)]["audio_s_per_s"] / one["audio_s_per_s"], 2
            )
        if ("thread", "default", top) in at:
            row[f"pinned / default x{top}"] = round(
                at[("thread", "pinned", top)]["audio_s_per_s"] / at[("thread", "default", top)]["audio_s_per_s"], 2
            )
        if ("process", "pinned", top) in at:
            row[f"threads / processes x{top}"] = round(
                at[("thread", "pinned", top)]["audio_s_per_s"] / at[("process", "pinned", top)]["audio_s_per_s"], 2
            )
        verdict[stage] = row
    print(json.dumps({"verdict": verdict}), flush=True)


if __name__ == "__main__":
    main()
