#!/usr/bin/env python3
"""Benchmark a running `gemma3n-iree serve`: throughput and latency at several concurrency levels.

    gemma3n-iree serve --checkpoint DIR --target cuda --port 8080 &
    python scripts/bench_server.py --url http://127.0.0.1:8080 --concurrency 1 4 16 64 --verify

A benchmark, not a test.  For each concurrency level C, C closed-loop clients each submit a request,
long-poll its result and download the .npz, then send the next, until the level's requests are done.
Printed as one JSON line per level:

* ``throughput_audio_s_per_s``: seconds of audio completed per wall-clock second;
* ``latency_ms``: submit -> result fully downloaded, p50 / p90 / p99 / mean / max;
* ``batches``: the server's encoder calls during the level (from /metrics): calls, clips, the share of
  slots holding a real clip (``occupancy``) and the mean clips per call;
* ``rejected``: 429/503 answers (retried after Retry-After); ``errors``: anything else;
* with ``--verify``: ``mismatches`` -- results whose arrays differ (SHA-256 of the npz arrays) from the
  same audio's result at the first level (run it with concurrency 1 first: each request then runs
  alone), i.e. a check that batching never changes a result on this device;
* ``device_busy`` (the server's device seconds per wall second), ``time_to_device_p50_ms`` and, with
  ``--server-pid``, ``server_cores_busy`` (the server process's CPU seconds per wall second).

With ``--processes P`` each level's clients are split over P load-generating processes (spawned), so
that one Python process parsing responses is never what limits the throughput.

Audio: ``--lengths`` seconds (default a mix of 1-45 s), cut from the bundled speech sample tiled (or
``--audio`` files), a pool of ``--distinct`` different clips sent round-robin as PCM16 WAV.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import sys
import time
from pathlib import Path

import aiohttp
import numpy as np
import soundfile as sf

RATE = 16_000


def make_pool(lengths: list[float], distinct: int, audio: list[Path] | None) -> list[tuple[bytes, float]]:
    if audio:
        signals = []
        for path in audio:
            data, rate = sf.read(path, dtype="int16", always_2d=True)
            signals.append((data.mean(axis=1).astype(np.int16), rate))
    else:
        from gemma3n_iree.runtime.audio.frontend import SAMPLE_SPEECH

        data, rate = sf.read(SAMPLE_SPEECH, dtype="int16")
        signals = [(data, rate)]
    pool = []
    for i in range(distinct):
        seconds = lengths[i % len(lengths)]
        signal, rate = signals[i % len(signals)]
        n = int(seconds * rate)
        tiled = np.tile(signal, -(-(n + len(signal)) // len(signal)))
        start = (i * 7919) % len(signal)
        buf = io.BytesIO()
        sf.write(buf, tiled[start : start + n], rate, format="WAV", subtype="PCM_16")
        pool.append((buf.getvalue(), n / rate))
    return pool


def digest(npz: bytes) -> str:
    h = hashlib.sha256()
    with np.load(io.BytesIO(npz)) as z:
        for name in sorted(z.files):
            h.update(name.encode())
            h.update(np.ascontiguousarray(z[name]).tobytes())
    return h.hexdigest()


async def metrics(session: aiohttp.ClientSession, url: str) -> dict:
    async with session.get(f"{url}/metrics") as resp:
        return await resp.json()


async def one_request(session, url, kind, data, prompt, counters) -> bytes:
    params = {"prompt": prompt} if kind == "prefill" else {}
    while True:
        async with session.post(
            f"{url}/v1/{kind}", data=data, params=params, headers={"Content-Type": "audio/wav"}
        ) as resp:
            if resp.status in (429, 503):
                counters["rejected"] += 1
                await asyncio.sleep(float(resp.headers.get("Retry-After", "1")))
                continue
            body = await resp.json()
            if resp.status != 202:
                raise RuntimeError(f"submit: {resp.status} {body}")
            break
    headers = {"Authorization": f"Bearer {body['token']}"}
    while True:
        async with session.get(
            f"{url}/v1/requests/{body['id']}/result", params={"wait": "30"}, headers=headers
        ) as resp:
            if resp.status == 200:
                return await resp.read()
            if resp.status != 202:
                raise RuntimeError(f"result: {resp.status} {await resp.text()}")


async def run_clients(url: str, clients: int, indices: list[int], pool, kind: str, prompt: str, verify: bool) -> dict:
    """`clients` closed-loop clients sharing the requests `indices` (pool entries round-robin)."""
    counters = {"rejected": 0, "errors": 0}
    latencies: list[float] = []
    audio_done = 0.0
    todo = list(indices)
    digests: dict[int, list[str]] = {}
    timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as session:

        async def client() -> None:
            nonlocal audio_done
            while todo:
                i = todo.pop(0)
                data, seconds = pool[i % len(pool)]
                started = time.perf_counter()
                try:
                    npz = await one_request(session, url, kind, data, prompt, counters)
                except Exception as exc:  # report and go on
                    counters["errors"] += 1
                    print(f"request {i}: {exc}", file=sys.stderr)
                    continue
                latencies.append(time.perf_counter() - started)
                audio_done += seconds
                if verify:
                    digests.setdefault(i % len(pool), []).append(digest(npz))

        await asyncio.gather(*(client() for _ in range(clients)))
    return {"latencies": latencies, "audio": audio_done, "counters": counters, "digests": digests}


def _client_process(args: tuple) -> dict:
    return asyncio.run(run_clients(*args))


def _started(_: int) -> int:
    """A warm-up task: every load process spawned and its imports done before the level is timed."""
    time.sleep(0.2)
    import os

    return os.getpid()


def server_cpu_s(pid: int | None) -> float | None:
    """CPU seconds (all threads) the server process has used so far, from /proc."""
    if pid is None:
        return None
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _metrics(url: str) -> dict:
    async with aiohttp.ClientSession() as session:
        return await metrics(session, url)


def level(
    url: str,
    concurrency: int,
    count: int,
    pool,
    kind: str,
    prompt: str,
    reference: dict[int, str] | None,
    processes: int = 1,
    server_pid: int | None = None,
) -> dict:
    """One concurrency level: `concurrency` clients split over `processes` load-generating processes."""
    processes = max(1, min(processes, concurrency))
    before = asyncio.run(_metrics(url))
    cpu0 = server_cpu_s(server_pid)
    jobs = [
        (
            url,
            concurrency // processes + (k < concurrency % processes),
            list(range(k, count, processes)),
            pool,
            kind,
            prompt,
            reference is not None,
        )
        for k in range(processes)
    ]
    if processes == 1:
        started = time.perf_counter()
        parts = [_client_process(jobs[0])]
        wall = time.perf_counter() - started
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as executor:
            list(executor.map(_started, range(2 * processes)))  # spawned and imported: not timed
            started = time.perf_counter()
            parts = list(executor.map(_client_process, jobs))
            wall = time.perf_counter() - started
    cpu1 = server_cpu_s(server_pid)
    after = asyncio.run(_metrics(url))
    latencies = [t for part in parts for t in part["latencies"]]
    audio_done = sum(part["audio"] for part in parts)
    counters = {k: sum(part["counters"][k] for part in parts) for k in ("rejected", "errors")}
    b0, b1 = before["batches"], after["batches"]
    calls, clips, slots = b1["calls"] - b0["calls"], b1["clips"] - b0["clips"], b1["slots"] - b0["slots"]
    device_s = after["device_seconds"] - before["device_seconds"]
    lat = np.asarray(latencies) * 1000.0 if latencies else np.zeros(1)
    record = {
        "concurrency": concurrency,
        "processes": processes,
        "kind": kind,
        "requests": len(latencies),
        "audio_seconds": round(audio_done, 3),
        "wall_s": round(wall, 3),
        "throughput_audio_s_per_s": round(audio_done / wall, 3) if wall else None,
        "requests_per_s": round(len(latencies) / wall, 3) if wall else None,
        "latency_ms": {
            "p50": round(float(np.percentile(lat, 50)), 2),
            "p90": round(float(np.percentile(lat, 90)), 2),
            "p99": round(float(np.percentile(lat, 99)), 2),
            "mean": round(float(lat.mean()), 2),
            "max": round(float(lat.max()), 2),
        },
        "batches": {
            "calls": calls,
            "clips": clips,
            "occupancy": round(clips / slots, 4) if slots else None,
            "mean_clips_per_call": round(clips / calls, 3) if calls else None,
            "max_width": b1["max_width"],
        },
        "device_busy": round(device_s / wall, 3) if wall else None,
        "time_to_device_p50_ms": after["time_to_device"].get("p50_ms"),
        "rejected": counters["rejected"],
        "errors": counters["errors"],
    }
    if cpu0 is not None and cpu1 is not None and wall:
        record["server_cores_busy"] = round((cpu1 - cpu0) / wall, 2)
    if reference is not None:
        verified = mismatches = 0
        for part in parts:
            for key, found in part["digests"].items():
                for d in found:
                    if key in reference:
                        verified += 1
                        mismatches += int(reference[key] != d)
                reference.setdefault(key, found[0])
        record["verified"] = verified
        record["mismatches"] = mismatches
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument(
        "--requests", type=int, default=None, help="requests per level (default max(32, 4 x concurrency))"
    )
    parser.add_argument(
        "--lengths",
        type=float,
        nargs="+",
        default=[1.0, 3.0, 7.7, 15.0, 30.0, 45.0],
        help="audio lengths in seconds, cycled",
    )
    parser.add_argument("--distinct", type=int, default=24, help="different audio clips in the pool")
    parser.add_argument("--audio", type=Path, nargs="*", help="source audio files (default the bundled sample)")
    parser.add_argument("--kind", choices=["encode", "prefill"], default="encode")
    parser.add_argument("--prompt", default="Transcribe this audio.")
    parser.add_argument("--warmup", type=int, default=4, help="requests sent first, not measured")
    parser.add_argument(
        "--verify", action="store_true", help="compare every result with the same audio's result at the first level"
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="load-generating processes per level (the clients are split between them), so that "
        "the load generator is never the limit",
    )
    parser.add_argument(
        "--server-pid",
        type=int,
        default=None,
        help="the server's process id: report the cores it kept busy per level (/proc)",
    )
    args = parser.parse_args()

    pool = make_pool(args.lengths, args.distinct, args.audio)
    reference: dict[int, str] | None = {} if args.verify else None
    if args.warmup:
        level(args.url, min(args.warmup, 4), args.warmup, pool, args.kind, args.prompt, None)
    for c in args.concurrency:
        count = args.requests or max(32, 4 * c)
        record = level(args.url, c, count, pool, args.kind, args.prompt, reference, args.processes, args.server_pid)
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
