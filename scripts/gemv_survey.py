"""Tile survey of the decode-step linear kernel (kernels/gemv_triton.py) on the GPU, against cuBLAS.

    python scripts/gemv_survey.py --out $OUT/gemv_survey.json      # on the GPU machine (torch + triton)

with this package importable there (`scripts/gpu_decoder_env.sh` installs it into /tmp/pkg), e.g.
    python scripts/gemv_survey.py --out $OUT/down.json --shape 2048,16384 --width 1 --tile 16,512 --stages 4

For each decode linear shape of E4B (N outputs, K inputs) and batch width M, every candidate tiling
(BN, BK, pipeline stages, warps) and K split is JIT-compiled with the Triton on that machine and timed with
CUDA events over enough distinct copies of the weight (>= 512 MB in all) that no call finds its weight in
the 60 MB L2, as in a real step where each weight is read once. cuBLAS (torch.matmul, bf16 in, bf16 out)
is timed the same way beside it. Prints and writes JSON: per shape, the best tiling, its GB/s and its time
against cuBLAS's, and each candidate's time, so the committed tiling is chosen from measurements.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

#: E4B's decode linears (N, K): q/o, k/v, gate/up, down, PLE gate, PLE projection, per-layer model
#: projection, the tied head.
SHAPES = (
    (2048, 2048),
    (512, 2048),
    (16384, 2048),
    (2048, 16384),
    (256, 2048),
    (2048, 256),
    (8960, 2048),
    (262400, 2048),
)
WIDTHS = (1, 8, 64)
TILES = ((16, 128), (16, 256), (32, 128), (32, 256), (64, 128))
STAGES = (3, 4)
WARPS = (4,)
PROGRAM_TARGETS = (132, 264, 528, 1056)


def load_kernel():
    """The kernel's Triton source, from this package (its shared numerics import through it)."""
    from gemma3n_iree.kernels.gemv_triton import gemv_bf16_nt_splitk

    return gemv_bf16_nt_splitk


def split_for(n: int, k: int, m: int, bn: int, bk: int, bm: int, target: int) -> int | None:
    """The smallest K split giving at least `target` programs (None when the tiling does not fit)."""
    if n % bn or k % bk:
        return None
    tiles = (n // bn) * -(-m // bm)
    s = 1
    while tiles * s < target and k % (2 * s * bk) == 0:
        s *= 2
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shape", action="append", help="N,K of one linear (repeatable; default: E4B's decode shapes)")
    ap.add_argument("--width", type=int, action="append", help="batch width M (repeatable; default 1, 8, 64)")
    ap.add_argument("--tile", action="append", help="BN,BK (repeatable; default: the five surveyed tilings)")
    ap.add_argument("--stages", type=int, action="append", help="pipeline stages (repeatable; default 3, 4)")
    ap.add_argument("--programs", type=int, action="append", help="program-count target for the K split (repeatable)")
    args = ap.parse_args()
    shapes = tuple(tuple(int(v) for v in s.split(",")) for s in args.shape) if args.shape else SHAPES
    widths = tuple(args.width or WIDTHS)
    tiles = tuple(tuple(int(v) for v in t.split(",")) for t in args.tile) if args.tile else TILES
    stage_counts = tuple(args.stages or STAGES)
    targets = tuple(args.programs or PROGRAM_TARGETS)
    import torch

    kernel = load_kernel()
    dev = "cuda"
    torch.manual_seed(0)
    report: dict = {"device": torch.cuda.get_device_name(), "shapes": []}

    def timed(fn, calls: int) -> float:
        """Median over repeats of the mean device time of one call (ms): `calls` calls captured in one CUDA
        graph, so the host's launch cost (tens of microseconds through Python) is not what is measured."""
        fn(0)
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn(0)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(calls):
                fn(i)
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(args.repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / calls)
        return sorted(times)[len(times) // 2]

    for (n, k), m in itertools.product(shapes, widths):
        nbytes = n * k * 2
        copies = max(2, min(64, -(-512 * 2**20 // nbytes)))
        weights = [torch.randn(n, k, device=dev, dtype=torch.bfloat16) * 0.02 for _ in range(copies)]
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        reference = (x.double() @ weights[0].double().T).float()
        cublas_ms = timed(lambda i: torch.matmul(x, weights[i % copies].T), copies)
        row = {"n": n, "k": k, "m": m, "cublas_ms": round(cublas_ms, 4), "candidates": []}
        for (bn, bk), stages, warps, target, bm in itertools.product(tiles, stage_counts, WARPS, targets, (16, 64)):
            if bm > 16 and m <= 16:
                continue
            s = split_for(n, k, m, bn, bk, bm, target)
            if s is None:
                continue
            if any(
                (c["bn"], c["bk"], c["stages"], c["s"], c["bm"]) == (bn, bk, stages, s, bm) for c in row["candidates"]
            ):
                continue
            partial = torch.empty(s, m, n, device=dev, dtype=torch.float32)
            grid = ((n // bn) * s * -(-m // bm),)

            def call(i, bn=bn, bk=bk, bm=bm, s=s, stages=stages, warps=warps, partial=partial, grid=grid):
                kernel[grid](
                    x,
                    weights[i % copies],
                    partial,
                    m,
                    n,
                    k,
                    s,
                    BM=bm,
                    BN=bn,
                    BK=bk,
                    NARROW=False,
                    num_warps=warps,
                    num_stages=stages,
                )

            try:
                ms = timed(call, copies)
                call(0)
                err = ((partial.sum(0) - reference).abs().max() / reference.abs().max()).item()
            except Exception as e:  # a tiling the compiler refuses (shared memory) is reported, not fatal
                row["candidates"].append(
                    {"bn": bn, "bk": bk, "bm": bm, "stages": stages, "s": s, "error": str(e)[:200]}
                )
                continue
            row["candidates"].append(
                {
                    "bn": bn,
                    "bk": bk,
                    "bm": bm,
                    "stages": stages,
                    "warps": warps,
                    "s": s,
                    "ms": round(ms, 4),
                    "gbps": round(nbytes / ms / 1e6, 1),
                    "rel_err": err,
                }
            )
        ok = [c for c in row["candidates"] if "ms" in c]
        best = min(ok, key=lambda c: c["ms"])
        row["best"] = best
        row["best_vs_cublas"] = round(cublas_ms / best["ms"], 2)
        row["cublas_gbps"] = round(nbytes / cublas_ms / 1e6, 1)
        print(json.dumps({k_: v for k_, v in row.items() if k_ != "candidates"}), flush=True)
        report["shapes"].append(row)
        weights.clear()
        torch.cuda.empty_cache()
    # the one 16-row tiling that is best summed over the shapes (the committed kernel serves every shape)
    totals: dict = {}
    for row in report["shapes"]:
        for c in row["candidates"]:
            if "ms" in c and c["bm"] == 16:
                key = (c["bn"], c["bk"], c["stages"])
                totals.setdefault(key, {}).setdefault((row["n"], row["k"], row["m"]), []).append(c["ms"])
    complete = {key: v for key, v in totals.items() if len(v) == len(report["shapes"])}
    ranked = sorted(complete, key=lambda key: sum(min(t) for t in complete[key].values()))
    report["tilings_ranked"] = [
        {
            "bn": bn,
            "bk": bk,
            "stages": st,
            "sum_best_split_ms": round(sum(min(t) for t in complete[(bn, bk, st)].values()), 4),
        }
        for bn, bk, st in ranked
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["tilings_ranked"][:8], indent=1))


if __name__ == "__main__":
    sys.exit(main())
