"""The CPU path against transformers on the same CPU, in one run: one 30 s clip per call, same weights, same mel.

Times, one after the other in this process (median of `--repeats` calls after one warm-up):

* transformers' `Gemma3nAudioEncoder` + audio `Gemma3nMultimodalEmbedder` in fp32 eager (torch's threads:
  one per core this process may use), before and after ours, so a drift of the machine shows;
* this project's llvm-cpu artifact under each contract, called as `gemma3n-iree bench` calls it
  (`AudioSession.run`: features in, `audio_features` and `encoder_hidden` out);
* with `--baseline`, the same artifact compiled as before the CPU path was tuned (no data tiling, the SSCP
  convolutions as convolutions): the "before" column;
* with `--cpus`, compiled for other CPUs this one runs too (`x86-64-v3`, `skylake-avx512`: no BF16 dot
  instruction, so the BF16 contractions read F32: emitters/lowering.py).

    python scripts/cpu_bench.py --checkpoint /tmp/ckpt-e4b            # a checkpoint of the real shapes
    python scripts/cpu_bench.py --config tiny --repeats 1 --baseline   # the smoke test (tests/test_cpu_bench.py)

Prints one JSON line per measurement, then one with the ratios to transformers fp32 (the first and second
torch runs' mean).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np


def emit(record: dict) -> dict:
    print(json.dumps(record), flush=True)
    return record


def median_s(call: Callable[[], object], repeats: int) -> float:
    call()  # warm-up: first-call allocations, weight packing
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@contextlib.contextmanager
def cpu_codegen(tuned: bool) -> Iterator[None]:
    """Compiles inside get llvm-cpu's code generation of the product (`tuned`), or the one before it was
    tuned: no data tiling (scripts/stage_profile.py's --cpu-baseline uses it too)."""
    from gemma3n_iree.emitters import targets

    saved = targets.CPU_CONTRACTION_FLAGS
    if not tuned:
        targets.CPU_CONTRACTION_FLAGS = ()
    try:
        yield
    finally:
        targets.CPU_CONTRACTION_FLAGS = saved


def ours(checkpoint: Path, contract: str, frames: int, repeats: int, baseline: bool, cache: Path, cpu: str) -> dict:
    """One clip per call of the artifact for `llvm-cpu:<cpu>` (in the product's forms and flags, or with
    `baseline` as compiled before tuning), built as `AudioEncoder` builds it and loaded through it."""
    from gemma3n_iree.contracts import get_contract
    from gemma3n_iree.diagnostics.bench import bench_inputs
    from gemma3n_iree.emitters.audio import AudioModuleSpec
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.lowering import DEFAULT_LOWERING, lowering_for
    from gemma3n_iree.runtime.checkpoint import open_checkpoint
    from gemma3n_iree.runtime.encoder.encode import AudioEncoder
    from gemma3n_iree.runtime.programs.artifacts import ArtifactCache

    target, policy, ckpt = parse_target(f"llvm-cpu:{cpu}"), get_contract(contract), open_checkpoint(checkpoint)
    spec = AudioModuleSpec(
        ckpt.config,
        policy,
        (frames,),
        (1,),
        ckpt.layout,
        quantization=ckpt.quantization,
        quantized=frozenset(ckpt.quantized_names()),
        lowering=DEFAULT_LOWERING if baseline else lowering_for(target, policy),
    )
    started = time.perf_counter()
    with cpu_codegen(tuned=not baseline):
        built = ArtifactCache(cache).get_or_build(spec, target, ckpt.schema_digest())
    session = AudioEncoder(checkpoint, target="llvm-cpu", contract=contract, artifact=built.path).session
    ready_s = time.perf_counter() - started
    inputs, counts = bench_inputs(session, frames, 1)
    seconds = median_s(lambda: session.run(inputs, counts), repeats)
    return emit(
        {
            "impl": "gemma3n-iree" + (" before tuning" if baseline else ""),
            "cpu": cpu,
            "contract": contract,
            "dots": spec.lowering.dot_dtype(policy),
            "frames": frames,
            "compile_and_load_s": round(ready_s, 2),
            "median_s": round(seconds, 4),
            "repeats": repeats,
        }
    )


def transformers_fp32(cfg, weights, frames: int, repeats: int, run: int) -> dict:
    import torch

    from gemma3n_iree.diagnostics.bench import speechlike_mel
    from gemma3n_iree.diagnostics.transformers_reference import build_modules, load_weights

    torch.set_num_threads(len(os.sched_getaffinity(0)))
    encoder, embedder = build_modules(cfg)
    load_weights(encoder, embedder, weights)
    mel = torch.from_numpy(speechlike_mel(1, frames))
    mask = torch.zeros(1, frames, dtype=torch.bool)

    def call() -> None:
        with torch.inference_mode():
            out = encoder(mel, mask)
            embedder(inputs_embeds=out[0] if isinstance(out, tuple) else out.last_hidden_state)

    seconds = median_s(call, repeats)
    return emit(
        {
            "impl": "transformers eager fp32",
            "run": run,
            "threads": torch.get_num_threads(),
            "frames": frames,
            "median_s": round(seconds, 4),
            "repeats": repeats,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, help="checkpoint directory (default: random weights of --config)")
    parser.add_argument("--config", default="e4b", help="built-in configuration for the random checkpoint")
    parser.add_argument("--frames", type=int, default=2997, help="mel frames per clip (2997: 30 s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per measurement (median)")
    parser.add_argument("--contracts", nargs="+", default=["mlx-cuda-v1", "f32-reference"])
    parser.add_argument("--baseline", action="store_true", help="also time the code generation before tuning")
    parser.add_argument(
        "--cpus",
        nargs="+",
        default=["host"],
        help="LLVM CPU names to compile for (host: this machine's; e.g. x86-64-v3 for a CPU without a BF16 dot)",
    )
    parser.add_argument("--cache-dir", type=Path, help="artifact cache (default: a temporary folder)")
    args = parser.parse_args()

    from gemma3n_iree.model.audio_config import builtin_config
    from gemma3n_iree.runtime.checkpoint import open_checkpoint
    from gemma3n_iree.runtime.synthetic import random_weights, write_random_checkpoint

    with tempfile.TemporaryDirectory(prefix="gemma3n-cpu-bench-") as scratch:
        if args.checkpoint is None:
            cfg = builtin_config(args.config)
            checkpoint, weights = write_random_checkpoint(Path(scratch) / "ckpt", cfg, seed=0), random_weights(cfg, 0)
        else:
            checkpoint = args.checkpoint
            cfg, weights = open_checkpoint(checkpoint).config, _read_weights(checkpoint)
        cache = args.cache_dir or Path(scratch) / "cache"
        torch_runs = [transformers_fp32(cfg, weights, args.frames, args.repeats, run=1)["median_s"]]
        records = [
            ours(checkpoint, c, args.frames, args.repeats, baseline, cache, cpu)
            for cpu in args.cpus
            for baseline in ((False, True) if args.baseline else (False,))
            for c in args.contracts
        ]
        torch_runs.append(transformers_fp32(cfg, weights, args.frames, args.repeats, run=2)["median_s"])
    reference = float(np.mean(torch_runs))
    emit(
        {
            "ratios_to_transformers_fp32": {
                f"{r['impl']} {r['cpu']} {r['contract']}": round(r["median_s"] / reference, 3) for r in records
            },
            "transformers_fp32_s": round(reference, 4),
        }
    )


def _read_weights(checkpoint: Path) -> dict[str, np.ndarray]:
    """The checkpoint's audio weights under transformers' names and layouts (what `diagnose` gives it)."""
    from gemma3n_iree.diagnostics.diagnose_run import hf_named, logical_weights
    from gemma3n_iree.runtime.checkpoint import open_checkpoint

    ckpt = open_checkpoint(checkpoint)
    return hf_named(ckpt, logical_weights(ckpt))


if __name__ == "__main__":
    main()
