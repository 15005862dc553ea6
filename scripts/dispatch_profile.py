"""Per-dispatch profile of the encoder's module families (IREE 3.13 has no CUDA HAL profiler).

Each module family of scripts/stage_profile.py is compiled alone at full size with
`--iree-hal-dump-executable-benchmarks-to`, which writes one standalone benchmark module per dispatch
(its own buffers, no inputs). Those are compiled here and timed on the GPU one by one with
`iree-benchmark-module`, so every dispatch gets its own time without a profiler.

    python scripts/dispatch_profile.py build --clips 8 --out .gpu/dispatches   # here (needs the compiler)
    python scripts/dispatch_profile.py run --dir .gpu/dispatches --out $OUT     # on the GPU machine
    python scripts/dispatch_profile.py build --target llvm-cpu --clips 1 --out /tmp/dispatches  # the CPU path
    python scripts/dispatch_profile.py run --dir /tmp/dispatches --out /tmp/dispatches
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stage_profile import (  # noqa: E402  (the same families, shapes and options)
    command_line,
    default_tool,
    manifest_header,
    median_ms,
    probe_setup,
    stages,
)


def build(args) -> None:
    from iree.compiler import compile_str
    from iree.compiler.tools.binaries import CompilerToolError

    from gemma3n_iree.emitters.compile import compile_mlir
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.emitters.probe import probe_module

    target, contract, linked = probe_setup(args)
    out = args.out
    for stage in (s for s in stages(args.clips) if not args.family or s["name"] in args.family):
        with tempfile.TemporaryDirectory() as dump:
            compile_mlir(
                probe_module(contract, stage["build"], kernels=linked, lowering=lowering_for(target, contract)),
                target,
                extra_flags=[f"--iree-hal-dump-executable-benchmarks-to={dump}"],
            )
            sources = sorted(Path(dump).glob("*.mlir"))
            (out / stage["name"]).mkdir(parents=True, exist_ok=True)

            def compile_one(source: Path) -> None:
                try:
                    vmfb = compile_str(source.read_text(), extra_args=["--iree-input-demote-f64-to-f32=false"])
                except CompilerToolError as exc:  # a dispatch IREE cannot rebuild alone: named, not fatal
                    print(f"{stage['name']}/{source.name}: not rebuilt alone ({str(exc).splitlines()[0]})", flush=True)
                    return
                (out / stage["name"] / source.with_suffix(".vmfb").name).write_bytes(vmfb)

            with ThreadPoolExecutor(2) as pool:
                list(pool.map(compile_one, sources))
        print(stage["name"], len(sources), "dispatches", flush=True)
    (out / "manifest.json").write_text(
        json.dumps({**manifest_header(args, target), "counts": {s["name"]: s["count"] for s in stages(args.clips)}})
    )


def run(directory: Path, out: Path, tool: str | None) -> None:
    manifest = json.loads((directory / "manifest.json").read_text())
    rows = []
    for family in sorted(p for p in directory.iterdir() if p.is_dir()):
        for vmfb in sorted(family.glob("*.vmfb")):
            device = manifest.get("device", "cuda")
            base = [tool or default_tool(), f"--device={device}", f"--module={vmfb}", "--benchmark_repetitions=3"]
            text = subprocess.run(
                base + ["--benchmark_min_time=0.05s", "--benchmark_min_warmup_time=0.05"],
                capture_output=True,
                text=True,
            ).stdout
            medians = median_ms(text)
            if not medians:
                print(f"{vmfb.name}: no timing; the tool said: {text[-400:]}", flush=True)
            for name, ms in medians.items():
                rows.append(
                    {"family": family.name, "dispatch": name, "ms": ms, "per_encode": manifest["counts"][family.name]}
                )
    rows.sort(key=lambda r: -r["ms"] * r["per_encode"])
    for r in rows:
        print(json.dumps(r))
    (out / "dispatch_profile.json").write_text(json.dumps(rows, indent=1))


def main() -> None:
    args = command_line(
        __doc__,
        lambda build_parser: build_parser.add_argument(
            "--family", action="append", default=[], help="only these module families (repeatable)"
        ),
    )
    if args.command == "build":
        build(args)
    else:
        run(args.dir, args.out, args.tool)


if __name__ == "__main__":
    main()
