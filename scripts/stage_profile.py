"""Per-stage profile: each op family of the encoder compiled alone at full size and timed.

IREE 3.13 has no CUDA HAL profiler, so the profile is built from the stages themselves: every
module family (SSCP blocks, input projection, feed-forward, attention, light conv, embedder) is
emitted as a single-op probe at the real shapes, compiled for the target, and timed with
`iree-benchmark-module` (splat inputs: GEMM timing does not depend on the values, and none is 0).
A probe takes its weights as arguments, so where the compiler re-lays weights out (llvm-cpu's data
tiling) that packing is timed in every call, where the real module does it once at load.

    python scripts/stage_profile.py build --clips 8 --out .gpu/stages   # here (needs the compiler)
    python scripts/stage_profile.py run --dir .gpu/stages --out $OUT     # on the GPU machine
    python scripts/stage_profile.py build --target llvm-cpu --clips 1 --out /tmp/stages  # the CPU path:
    python scripts/stage_profile.py run --dir /tmp/stages --out /tmp/stages            # built and run here
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from gemma3n_iree.model.audio_config import builtin_config

CFG = builtin_config("e4b")
T, T0, T1, TOUT = 2997, 1499, 750, 188
D, H, FF, TH = CFG.hidden_size, CFG.conf_num_attention_heads, CFG.ffw_hidden, CFG.text_hidden_size


def stages(b: int) -> list[dict]:
    """(name, how many per encode call, FLOPs per instance, builder) for every module family."""
    gemm = lambda m, k, n: 2 * m * k * n  # noqa: E731
    rows = b * T1
    blocks = -(-T1 // 12)
    attn_core = 2 * b * blocks * H * 12 * 24 * (D // H) * 2 + 2 * b * blocks * H * 12 * 13 * (D // H)
    return [
        {
            "name": "sscp_block_0",
            "count": 1,
            "flops": 2 * b * T0 * 64 * 128 * 9,
            "build": lambda e: e.sscp_block(
                e.sscp_conv(b, T, 128, 1, 128, (3, 3), (2, 2), "oihw"),
                e.cumulative_group_norm(b, T0, 64, 128, 1e-3),
                e.mask_frames([b, T0, 64, 128]),
                b,
                T,
                128,
                1,
                T0,
                64,
                128,
            ),
        },
        {
            "name": "sscp_block_1",
            "count": 1,
            "flops": 2 * b * T1 * 32 * 32 * 9 * 128,
            "build": lambda e: e.sscp_block(
                e.sscp_conv(b, T0, 64, 128, 32, (3, 3), (2, 2), "oihw"),
                e.cumulative_group_norm(b, T1, 32, 32, 1e-3),
                e.mask_frames([b, T1, 32, 32]),
                b,
                T0,
                64,
                128,
                T1,
                32,
                32,
            ),
        },
        {
            "name": "input_projection",
            "count": 1,
            "flops": gemm(rows, 1024, D),
            "build": lambda e: e.linear([b, T1], 1024, D),
        },
        {
            "name": "feed_forward",
            "count": 2 * CFG.conf_num_hidden_layers,
            "flops": 2 * gemm(rows, D, FF),
            "build": lambda e: e.feed_forward(b, T1, D, 1e-6, 1e10, 0.5),
        },
        {
            "name": "attention",
            "count": CFG.conf_num_hidden_layers,
            "flops": 4 * gemm(rows, D, D) + attn_core,
            "build": lambda e: e.attention(b, T1, D, H, 12, 12, 50.0, 1e-6, 1e10),
        },
        {
            "name": "light_conv",
            "count": CFG.conf_num_hidden_layers,
            "flops": gemm(rows, D, 2 * D) + gemm(rows, D, D),
            "build": lambda e: e.light_conv(b, T1, D, 5, 1e-6, 1e10, "d1k"),
        },
        {
            "name": "block_norm",
            "count": CFG.conf_num_hidden_layers,
            "flops": 0,
            "build": lambda e: e.rms_norm([b, T1], D, 1e-6),
        },
        {
            "name": "embedder",
            "count": 1,
            "flops": gemm(b * TOUT, D, TH),
            "build": lambda e: e.embedder([b, TOUT], D, TH, 1e-6),
        },
    ]


def build(args: argparse.Namespace) -> None:
    from cpu_bench import cpu_codegen  # scripts/, beside this file

    from gemma3n_iree.emitters.compile import compile_mlir
    from gemma3n_iree.emitters.lowering import DEFAULT_LOWERING, lowering_for
    from gemma3n_iree.emitters.probe import probe_module

    target, contract, linked = probe_setup(args)
    lowering = DEFAULT_LOWERING if args.cpu_baseline else lowering_for(target, contract)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for stage in stages(args.clips):
        text = probe_module(contract, stage["build"], kernels=linked, lowering=lowering)
        signature = re.search(r"func\.func @main\((.*?)\) ->", text).group(1)
        inputs = [m.group(1) for m in re.finditer(r"tensor<([^>]*)>", signature)]
        with cpu_codegen(tuned=not args.cpu_baseline):
            (out / f"{stage['name']}.vmfb").write_bytes(compile_mlir(text, target))
        manifest.append({"name": stage["name"], "count": stage["count"], "flops": stage["flops"], "inputs": inputs})
        print(stage["name"], inputs, flush=True)
    (out / "manifest.json").write_text(json.dumps({**manifest_header(args, target), "stages": manifest}, indent=1))


def probe_setup(args: argparse.Namespace):
    """The target, contract and linked kernels a profile's probes are compiled with (from `build`'s options)."""
    from gemma3n_iree.contracts import get_contract
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.kernels import select_kernels

    target = parse_target(args.target, None)
    contract = get_contract(args.contract)
    return target, contract, select_kernels(args.kernels if target.is_cuda else "iree", target, contract)


def manifest_header(args: argparse.Namespace, target) -> dict:
    """What a profile's `run` needs to know of its build: shapes, kernels and the runtime device."""
    from gemma3n_iree.runtime.programs.session import DEVICE_FOR_TARGET

    return {
        "clips": args.clips,
        "kernels": args.kernels if target.is_cuda else "iree",
        "contract": args.contract,
        "target": str(target),
        "device": DEVICE_FOR_TARGET[target.kind],
    }


def default_tool() -> str:
    """The iree-benchmark-module of the installed runtime (the GPU machine's is under /tmp/site)."""
    import iree._runtime_libs

    return str(Path(iree._runtime_libs.__path__[0]) / "iree-benchmark-module")


def splat(spec: str, workdir: Path) -> str:
    """`8x750x1536xf32` -> an iree-benchmark-module input of one non-zero value everywhere.

    Masks (i1) go through a .npy file of True: the tool's text form does not parse an i1 splat."""
    if spec.endswith("xi1"):
        import numpy as np

        path = workdir / f"ones_{spec}.npy"
        np.save(path, np.ones([int(d) for d in spec.split("x")[:-1]], dtype=bool))
        return f"--input=@{path}"
    return f"--input={spec}={'2997' if spec.endswith('i32') else '0.03125'}"


# One line per benchmarked function: `BM_<name>/process_time/real_time_median   75.3 us ...` (the unit varies).
_MEDIAN = re.compile(r"BM_(\S+?)/process_time/real_time_median\s+([\d.]+) (ns|us|ms)")
_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0}


def median_ms(benchmark_output: str) -> dict[str, float]:
    """iree-benchmark-module's median per benchmarked function, in ms."""
    return {name: float(value) * _TO_MS[unit] for name, value, unit in _MEDIAN.findall(benchmark_output)}


def command_line(doc: str, build_options: Callable[[argparse.ArgumentParser], None]) -> argparse.Namespace:
    """`build` (here, needs the compiler) and `run` (on the GPU machine) subcommands of a profile script."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--clips", type=int, default=8)
    b.add_argument("--kernels", default="auto", help="committed GPU kernels: auto (the Hopper kernels) or iree")
    b.add_argument("--target", default="cuda", help="cuda (the H200) or llvm-cpu (this machine's CPU)")
    b.add_argument("--contract", default="mlx-cuda-v1", help="numeric contract of the probes")
    b.add_argument(
        "--cpu-baseline",
        action="store_true",
        help="llvm-cpu as compiled before the CPU path was tuned (no data tiling, convolutions as convolutions)",
    )
    b.add_argument("--out", type=Path, required=True)
    build_options(b)
    r = sub.add_parser("run")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--tool", default=None, help="iree-benchmark-module (default: the installed runtime's)")
    return parser.parse_args()


def run(directory: Path, out: Path, tool: str | None) -> None:
    manifest = json.loads((directory / "manifest.json").read_text())
    rows = []
    for stage in manifest["stages"]:
        cmd = [
            tool or default_tool(),
            f"--device={manifest.get('device', 'cuda')}",
            f"--module={directory / (stage['name'] + '.vmfb')}",
            "--function=main",
            "--benchmark_repetitions=5",
            "--benchmark_min_warmup_time=0.5",
        ] + [splat(s, Path(tempfile.gettempdir())) for s in stage["inputs"]]
        done = subprocess.run(cmd, capture_output=True, text=True)
        medians = median_ms(done.stdout)
        if not medians:
            print(f"{stage['name']}: no timing; the tool said: {(done.stderr or done.stdout)[-600:]}", flush=True)
        ms = next(iter(medians.values()), float("nan"))
        total = ms * stage["count"]
        rows.append(
            {
                **{k: stage[k] for k in ("name", "count")},
                "ms_each": ms,
                "ms_total": round(total, 3),
                "tflops": round(stage["flops"] / (ms / 1e3) / 1e12, 3) if stage["flops"] else None,
            }
        )
    whole = sum(r["ms_total"] for r in rows)
    for r in rows:
        r["share"] = round(r["ms_total"] / whole, 3)
        print(json.dumps(r))
    print(
        json.dumps(
            {
                **{k: manifest.get(k) for k in ("clips", "kernels", "contract", "target")},
                "sum_of_stages_ms": round(whole, 2),
            }
        )
    )
    (out / "stage_profile.json").write_text(json.dumps(rows, indent=1))


def main() -> None:
    args = command_line(__doc__, lambda _build: None)
    if args.command == "build":
        build(args)
    else:
        run(args.dir, args.out, args.tool)


if __name__ == "__main__":
    main()
