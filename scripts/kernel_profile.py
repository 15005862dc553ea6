"""In-situ GPU profile of encode calls: every kernel the IREE runtime launches, timed on the GPU.

IREE 3.13's CUDA runtime has no profiler of its own, and per-dispatch benchmarks
(`dispatch_profile.py`) time each dispatch alone, with its inputs warm in L2 and constant data.
This runs real encode calls of an artifact on a random checkpoint and records every kernel with
CUPTI through torch.profiler (the GPU machine's torch; nothing of torch touches the computation),
so the times are the ones inside the module: per kernel name (the runtime's copies and fills
included), calls and GPU time per encode call, and the totals by family. The profiler slows the
host side down, so the wall and span figures it prints are not the call's time.

    python scripts/kernel_profile.py --artifact audio_bench.vmfb --checkpoint /tmp/ckpt --clips 8
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

#: The committed kernels by entry name; every other kernel is one of IREE's dispatches.
FAMILIES = {
    "gemm_bf16_nt": "GEMM",
    "attention_core": "attention core",
    "glu_depthwise": "GLU + depthwise",
    "rms_norm": "RMS norms",
    "rms_norm_residual": "RMS norms",
    "lane_xor_sum": "lane sums",
    "silu_bf16": "SiLU",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifact", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, required=True, help="directory with model.safetensors")
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--frames", type=int, default=2997)
    parser.add_argument("--calls", type=int, default=5, help="profiled calls (after 3 warm-up calls)")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    from gemma3n_iree.diagnostics.bench import speechlike_mel
    from gemma3n_iree.runtime.checkpoint import open_checkpoint
    from gemma3n_iree.runtime.encoder.audio_session import AudioSession

    session = AudioSession(args.artifact, open_checkpoint(args.checkpoint).files, device="cuda")
    mel = speechlike_mel(args.clips, args.frames)
    lengths = np.full(args.clips, args.frames, np.int32)
    for _ in range(3):
        session.run(mel, lengths)
    started = time.perf_counter()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(args.calls):
            session.run(mel, lengths)
        torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - started) * 1e3 / args.calls
    kernels: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    first, last = float("inf"), 0.0
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        kernels[event.name][0] += 1
        kernels[event.name][1] += event.device_time_total / 1e3
        first = min(first, event.time_range.start)
        last = max(last, event.time_range.end)
    busy = sum(ms for _, ms in kernels.values()) / args.calls
    rows = sorted(((name, n / args.calls, ms / args.calls) for name, (n, ms) in kernels.items()), key=lambda r: -r[2])
    print(
        json.dumps(
            {
                "artifact": args.artifact.name,
                "clips": args.clips,
                "wall_ms_per_call": round(wall_ms, 2),
                "kernel_ms_per_call": round(busy, 2),
                "kernels_per_call": round(sum(r[1] for r in rows), 1),
                "span_ms_per_call": round((last - first) / 1e3 / args.calls, 2),
            }
        )
    )
    families: dict[str, float] = defaultdict(float)
    for name, _, ms in rows:
        family = "copies and fills" if name.startswith(("Memcpy", "Memset")) else "IREE's own dispatches"
        families[FAMILIES.get(name.split("(")[0], family)] += ms
    print(
        json.dumps(
            {"families_ms_per_call": {k: round(v, 2) for k, v in sorted(families.items(), key=lambda kv: -kv[1])}}
        )
    )
    for name, count, ms in rows[: args.top]:
        print(
            json.dumps(
                {
                    "kernel": name[:90],
                    "per_call": round(count, 1),
                    "ms_per_call": round(ms, 3),
                    "share": round(ms / busy, 4),
                }
            )
        )


if __name__ == "__main__":
    main()
