"""A decoder program's decode step and prefill on the GPU, as a caller sees them and kernel by kernel (GPU machine).

    python scripts/decoder_profile.py --artifact step.vmfb --checkpoint /tmp/w/decoder-e4b \
        --widths 1 8 64 [--prompts 1024 4096] --out profile.json

Per decode width: the wall time of one step with the logits brought back (`DecoderSession.decode`, [B, V] F32 to
the host) and with the device's greedy selection (`decode_greedy`: token ids and log-probabilities only, what
`transcribe` and `serve` read), as the median and minimum of `--steps` steps after 3 warm-ups, each step at the
next position of the same sequences (slots 0..B-1); where a greedy step's wall time goes on the host
(`host_phases`: inputs made, i.e. the token rows, RoPE rows and checks, staged in, the entry run, results back, the
rest); then a CUPTI profile (torch.profiler: the GPU machine's torch, used only to read the
device's timeline) of 3 greedy steps: kernel launches and kernel time per step, the kernels that take the most, and
where the device idles (`device_timeline`: its span against the steps' wall time, and the gaps between kernels by
size, which tells the GPU's own launch latency from the host falling behind). With `--prompts`, each of those
prompt buckets of the program (one slot's prefill, `DecoderSession.prefill`) is timed the same way (with the digest
of every call's logits) and profiled once. A program with sampling entries also has each width's sampled step timed
(`sampled_on_device`: every row draws its token on the device; launches and kernel time per step). Writes one JSON
object to `--out` and prints each width's and prompt's line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WARMUPS, PROFILED_STEPS, TOP_KERNELS = 3, 3, 15


def timed(step, steps: int) -> dict[str, float]:
    """Median and minimum milliseconds of `step(i)` for i in 0..steps-1."""
    times = []
    for i in range(steps):
        started = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - started) * 1e3)
    return {"median_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3)}


def sha256_of(arrays: list) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(array.tobytes())
    return digest.hexdigest()


def kernel_profile(run_steps, steps: int = PROFILED_STEPS) -> dict[str, object]:
    """Launches, kernel time per step and the top kernels of the `steps` steps run by `run_steps()`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        started = time.perf_counter()
        run_steps()
        torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - started) * 1e3
    kernels: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    intervals = []
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            kernels[event.name][0] += 1
            kernels[event.name][1] += event.device_time_total / 1e3
            intervals.append((event.time_range.start, event.time_range.end))
    rows = sorted(kernels.items(), key=lambda item: -item[1][1])
    return {
        "launches_per_step": sum(c for c, _ in kernels.values()) / steps,
        "kernel_ms_per_step": round(sum(ms for _, ms in kernels.values()) / steps, 3),
        "top": [
            {"kernel": name[:120], "per_step": c / steps, "ms_per_step": round(ms / steps, 4)}
            for name, (c, ms) in rows[:TOP_KERNELS]
        ],
        "device_timeline": device_timeline(intervals, wall_ms, steps),
    }


#: a call's host phases, each the session method it times: the call's inputs made (token rows, RoPE rows, checks),
#: the inputs staged and copied in, the program's entry run (IREE's invocation; it returns when the device is done),
#: the results copied back; `copies` is the part of staging in and out that is the copy's submission and its wait
HOST_PHASES = (
    ("prepare", "session", "_decode_call"),  # a prefill's: `_prefill_call` (host_phases' `prepare`)
    ("upload", "staging", "upload"),
    ("call", "session", "_invoker"),
    ("download", "staging", "download"),
    ("copies", "staging", "_copy"),
)


@contextmanager
def host_phases(session, prepare: str = "_decode_call") -> Iterator[dict[str, float]]:
    """Seconds spent in each of `HOST_PHASES` while inside, summed over calls (`prepare`: the session method that
    makes the call's inputs): each method is wrapped on the instance (`call` wraps the invokers `_invoker` hands
    out) and the class's own is back on exit."""
    phases = [(phase, owner, prepare if phase == "prepare" else method) for phase, owner, method in HOST_PHASES]
    totals = dict.fromkeys((phase for phase, _, _ in phases), 0.0)
    owners = {"session": session, "staging": session._staging}  # noqa: SLF001

    def clocked(fn, phase: str):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                totals[phase] += time.perf_counter() - started

        return run

    for phase, owner, method in phases:
        original = getattr(owners[owner], method)
        if method == "_invoker":
            setattr(owners[owner], method, lambda name, original=original, phase=phase: clocked(original(name), phase))
        else:
            setattr(owners[owner], method, clocked(original, phase))
    try:
        yield totals
    finally:
        for _, owner, method in phases:
            delattr(owners[owner], method)


def phase_split(totals: dict[str, float], wall_s: float, steps: int) -> dict[str, float]:
    """Milliseconds per step of each phase, and `other`: the wall time outside prepare, upload, call and download
    (the hop to the program's device thread, the selection's unpacking, Python around it)."""
    per_step = {phase: round(seconds * 1e3 / steps, 3) for phase, seconds in totals.items()}
    outside = wall_s - sum(totals[p] for p in ("prepare", "upload", "call", "download"))
    return {**per_step, "other": round(outside * 1e3 / steps, 3), "wall": round(wall_s * 1e3 / steps, 3)}


#: the gaps between one kernel's end and the next one's start, in microseconds: up to a GPU's own latency between
#: dependent launches, a few of those, and longer (the host or a wait keeping the device idle)
GAP_CLASSES_US = ((0.0, 2.0), (2.0, 5.0), (5.0, 20.0), (20.0, float("inf")))


def device_timeline(intervals: list[tuple[float, float]], wall_ms: float, steps: int) -> dict[str, object]:
    """Per step: the wall time, the device's span from its first kernel's start to its last one's end, and the idle
    gaps between kernels by size (count and milliseconds); the time in kernels is `kernel_ms_per_step` beside it.
    Intervals are CUPTI's, in us."""
    if not intervals:
        return {}
    intervals = sorted(intervals)
    gaps = [max(0.0, b[0] - a[1]) for a, b in zip(intervals, intervals[1:])]
    per_class = {}
    for low, high in GAP_CLASSES_US:
        chosen = [g for g in gaps if low <= g < high]
        per_class[f"{low:g}-{high:g}us"] = {
            "per_step": len(chosen) / steps,
            "ms_per_step": round(sum(chosen) / steps / 1e3, 4),
        }
    return {
        "wall_ms_per_step": round(wall_ms / steps, 3),
        "span_ms_per_step": round((intervals[-1][1] - intervals[0][0]) / steps / 1e3, 3),
        "gaps": per_class,
    }


def sampled_steps(session, steps: int, device: str, slots: list[int], tokens: list[int], position: int):
    """Steps that draw every row's token (`decode_greedy(..., sample=...)`: the decode entry, then its width's
    sample entry on the logits where they lie; temperature 1, top-k 64, top-p 0.95, a seed per row): the median and
    minimum wall time, the drawn tokens' digest and, on cuda, launches and kernel time per step. Returns it and the
    next free position."""
    from gemma3n_iree.contracts.sampling import SampleRows, SamplingParams

    params = tuple(SamplingParams(1.0, 64, 0.95, seed=row) for row in range(len(slots)))
    drawn = []

    def step(i: int, at: int) -> None:
        sample = SampleRows(params, tuple([at + i] * len(slots)))
        drawn.append(session.decode_greedy(slots, [at + i] * len(slots), tokens, sample=sample).sampled)

    for i in range(WARMUPS):
        step(i, position)
    position += WARMUPS
    line = timed(lambda i, at=position: step(i, at), steps)
    position += steps
    line["outputs_sha256"] = sha256_of(drawn)
    if device == "cuda":
        profile = kernel_profile(lambda at=position: [step(i, at) for i in range(PROFILED_STEPS)])
        line.update({k: v for k, v in profile.items() if k in ("launches_per_step", "kernel_ms_per_step")})
        position += PROFILED_STEPS
    return line, position


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact", type=Path, required=True, help="a decoder program (.vmfb) built for cuda")
    parser.add_argument("--checkpoint", type=Path, required=True, help="its decoder checkpoint")
    parser.add_argument("--widths", type=int, nargs="+", default=[1, 8, 64], help="decode widths to time")
    parser.add_argument("--steps", type=int, default=12, help="timed steps per width and path")
    parser.add_argument("--prompts", type=int, nargs="*", default=[], help="prompt buckets to time and profile")
    parser.add_argument("--out", type=Path, required=True, help="where the JSON report goes")
    parser.add_argument(
        "--device", default="cuda", help="IREE device; the kernel profile is taken on cuda only (local-task: a dry run)"
    )
    args = parser.parse_args(argv)

    import numpy as np

    from gemma3n_iree.runtime.text.decoder import DecoderSession

    started = time.perf_counter()
    session = DecoderSession.from_checkpoint(args.artifact, args.checkpoint, device=args.device)
    report: dict[str, object] = {"artifact": args.artifact.name, "loaded_s": round(time.perf_counter() - started, 2)}
    position = 0
    widths = []
    for width in args.widths:
        if width > session.slots:
            raise SystemExit(f"--widths: {width} sequences need {width} slots; {args.artifact} has {session.slots}")
        slots, tokens = list(range(width)), [1000 + 37 * b for b in range(width)]

        outputs: list[np.ndarray] = []  # digested after the timing

        def step(path, i: int, slots=slots, tokens=tokens, width=width, outputs=outputs) -> None:
            result = path(slots, [position + i] * width, tokens)
            outputs.extend((result,) if isinstance(result, np.ndarray) else (result.token, result.logprob))

        for i in range(WARMUPS):
            step(session.decode_greedy, i)
        position += WARMUPS
        logits = timed(lambda i: step(session.decode, i), args.steps)
        position += args.steps
        greedy = timed(lambda i: step(session.decode_greedy, i), args.steps)
        position += args.steps
        with host_phases(session) as totals:
            started = time.perf_counter()
            for i in range(args.steps):
                step(session.decode_greedy, i)
            phases = phase_split(totals, time.perf_counter() - started, args.steps)
        position += args.steps

        def profiled(slots=slots, tokens=tokens, width=width, at=position) -> None:
            for i in range(PROFILED_STEPS):
                session.decode_greedy(slots, [at + i] * width, tokens)

        kernels = kernel_profile(profiled) if args.device == "cuda" else {}
        position += PROFILED_STEPS
        line = {
            "width": width,
            "logits_to_host": logits,
            "greedy_on_device": greedy,
            "tokens_per_s_greedy": round(width * 1e3 / greedy["median_ms"], 1),
            "host_phases_ms": phases,
            "outputs_sha256": sha256_of(outputs),
            **kernels,
        }
        if session.samples:
            line["sampled_on_device"], position = sampled_steps(
                session, args.steps, args.device, slots, tokens, position
            )
        widths.append(line)
        print(json.dumps({k: v for k, v in line.items() if k != "top"}), flush=True)
    report["widths"] = widths
    prompts = []
    for tokens in args.prompts:
        if tokens not in session.info.prompts:
            raise SystemExit(
                f"--prompts: {args.artifact} has prompt buckets {list(session.info.prompts)}, not {tokens}"
            )
        rng = np.random.default_rng(tokens)
        cfg = session.cfg
        embeddings = (0.05 * rng.standard_normal((tokens, cfg.hidden_size))).astype(np.float32)
        per_layer = 0.05 * rng.standard_normal((tokens, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input))
        per_layer = per_layer.astype(np.float32)
        logits = [session.prefill(0, embeddings, per_layer)]  # warm-up
        timing = timed(lambda i: logits.append(session.prefill(0, embeddings, per_layer)), 5)
        with host_phases(session, "_prefill_call") as totals:
            started = time.perf_counter()
            for _ in range(3):
                session.prefill(0, embeddings, per_layer)
            phases = phase_split(totals, time.perf_counter() - started, 3)
        line = {
            "prompt": tokens,
            "prefill": timing,
            "host_phases_ms": phases,
            "outputs_sha256": sha256_of(logits),
            **(kernel_profile(lambda: session.prefill(0, embeddings, per_layer), 1) if args.device == "cuda" else {}),
        }
        prompts.append(line)
        print(json.dumps({k: v for k, v in line.items() if k != "top"}), flush=True)
    report["prompts"] = prompts
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
