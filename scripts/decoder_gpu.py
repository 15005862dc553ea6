"""The decoder program at the real E2B/E4B shapes on the H200: parity outputs and speed against transformers.

Three steps; the first runs on the CPU machine (IREE's compiler is too large to carry), the others on the GPU
machine with the artifacts carried in `.gpu/decoder/` (git-ignored):

    python scripts/decoder_gpu.py build --variant e4b --contract mlx-cuda-v1        # here: .gpu/decoder/*.vmfb
    python scripts/decoder_gpu.py parity --variant e4b --contract mlx-cuda-v1 --workdir /tmp/w --out $OUT
    python scripts/decoder_gpu.py bench --variant e4b --workdir /tmp/w --out $OUT [--torch eager,compile]

* `build` emits and compiles the program for cuda sm_90 (with `--kernels auto`, the default, the committed
  Hopper row-sum kernels and, under mlx-cuda-v1, the wgmma GEMM for prompt-sized linears): BENCH_SPEC below
  (32 slots, 4096 + 64 positions, prompt buckets 256/1024/4096, decode batches 1/8/32 over contexts 512 and
  the capacity) for mlx-cuda-v1, PARITY_SPEC (decoder_real_shapes.py's run) for f32-reference and for every
  contract under `--vocab N` (the layers at their real shapes, the vocabulary shrunk as the references a CPU
  machine can compute), and prints its size (the carry limit is 64 MiB per call, the runtime wheel ~17 MiB).
* `parity` loads the program with the deterministic random checkpoint `scripts/decoder_real_shapes.py`
  reads (written if it is not there; the same seed, prompt and forced tokens), runs the prompt and the forced
  decode steps, and saves `program_<contract>.npz` (`logits` [1 + steps, V], `keys_<l>` / `values_<l>` of
  slot 0, the rows the run wrote), which `decoder_real_shapes.py --compare` judges against the emulation and
  the float64 oracle.
* `bench` times, in one run, the program's prefill for 256/1024/4096-token prompts and its decode step at
  batch 1/8/32 (each sequence after a 256-token prompt), and transformers' `Gemma3nForCausalLM` on the same
  checkpoint (bf16, SDPA attention, DynamicCache) eager and, with `--torch eager,compile`,
  `torch.compile(model, dynamic=True)` in a subprocess that is given up after `--compile-timeout` seconds.
  It reports medians (CUDA-synchronous wall time per call, warm-up excluded) and the decode step against the
  weight-bandwidth floor: the bytes a step must read (spec gemma3n-text §11.4: 8.97 GB E4B, 4.84 GB E2B) at
  4.8 TB/s. Writes `bench_<variant>.json` under --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))

from decoder_real_shapes import CAPACITY, PROMPT_LENGTH, STEPS, checkpoint_dir  # noqa: E402

ARTIFACTS = ROOT / ".gpu" / "decoder"
#: weight bytes read per decode step (spec gemma3n-text §11.4) and the H200's bandwidth
STEP_BYTES = {"e2b": 4.84e9, "e4b": 8.97e9, "tiny": 0.0}
BANDWIDTH = 4.8e12
PROMPTS = (256, 1024, 4096)
BATCHES = (1, 8, 32)
BENCH_PROMPT = 256
#: The programs `build` compiles: (slots, capacity, prompt buckets, decode batches, decode contexts): the
#: mlx-cuda-v1 program `bench` times (and `parity` runs), and the smallest program holding decoder_real_shapes.py's
#: run, which f32-reference gets, and every contract with a shrunk vocabulary (the layers' parity against
#: references a CPU machine computed: `--vocab`).
BENCH_SPEC = (32, 4096 + 64, PROMPTS, BATCHES, (512, 4096 + 64))
PARITY_SPEC = (1, CAPACITY, (PROMPT_LENGTH,), (1,), (CAPACITY,))
CONTRACTS = ("f32-reference", "mlx-cuda-v1")


def program_spec(contract: str, vocab: int) -> tuple:
    return BENCH_SPEC if contract == "mlx-cuda-v1" and not vocab else PARITY_SPEC


def artifact_path(variant: str, contract: str, target: str, vocab: int = 0) -> Path:
    shrunk = f"_vocab{vocab}" if vocab else ""
    return ARTIFACTS / f"decoder_{variant}{shrunk}_{contract}_{target.replace('-', '')}.vmfb"


#: `build --step`: the decode-step programs `scripts/gpu_decode_step.sh` times (decode entries only, context =
#: capacity): (slots, capacity, batches) per variant.
STEP_SPEC = {"e4b": (64, 4096, (1, 8, 64)), "e2b": (8, 4096, (1, 8)), "tiny": (4, 64, (1, 4))}
STEP_ARTIFACTS = ROOT / ".gpu" / "step"


def step_artifact(variant: str, contract: str, target: str, cpu: str = "host") -> Path:
    """A decode-step program's path: the GPU's in .gpu/step/<variant>/ (every one there is profiled), a CPU
    reference in its `cpu/` folder (`scripts/gpu_same_logits.sh` runs those on the GPU machine's CPU)."""
    if target == "cuda":
        return STEP_ARTIFACTS / variant / f"step_{contract}_cuda.vmfb"
    return STEP_ARTIFACTS / variant / "cpu" / f"step_{contract}_llvmcpu_{cpu}.vmfb"


def module_spec(
    variant: str, contract: str, target: str, kernels: str, step: bool = False, vocab: int = 0, sampling: bool = False
):
    from synthetic_text import with_vocabulary

    from gemma3n_iree.contracts import get_contract
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.decoder import DecoderModuleSpec
    from gemma3n_iree.emitters.kernels import select_kernels
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    cfg, c = with_vocabulary(builtin_decoder_config(variant), vocab), get_contract(contract)
    slots, capacity, prompts, batches, contexts = program_spec(contract, vocab)
    if variant == "tiny":  # the smoke run on the CPU machine: the tiny model's 256 positions
        slots, capacity, prompts, batches, contexts = 2, 64, (32,), (1, 2), (64,)
    if step:
        (slots, capacity, batches), prompts, contexts = STEP_SPEC[variant], (), ()
    compile_target = parse_target(target, "sm_90" if target == "cuda" else None)
    linked = select_kernels(kernels, compile_target, c)
    lowering = lowering_for(compile_target, c)
    return DecoderModuleSpec(
        cfg, c, slots, capacity, prompts, batches, contexts, kernels=linked, lowering=lowering, sampling=sampling
    )


def build(args: argparse.Namespace) -> None:
    from gemma3n_iree.emitters.compile import compile_mlir, parse_target
    from gemma3n_iree.emitters.decoder import emit_decoder_module
    from gemma3n_iree.files import write_atomically

    spec = module_spec(args.variant, args.contract, args.target, args.kernels, args.step, args.vocab, args.sampling)
    target = parse_target("cuda", "sm_90") if args.target == "cuda" else parse_target(f"llvm-cpu:{args.cpu}")
    started = time.perf_counter()
    mlir = emit_decoder_module(spec)
    emitted = time.perf_counter()
    print(
        f"emitted {len(mlir) / 1e6:.1f} MB of StableHLO in {emitted - started:.0f} s; compiling "
        f"{len(spec.entry_points)} entries for {target.describe()} ...",
        file=sys.stderr,
        flush=True,
    )
    vmfb = compile_mlir(mlir, target)
    path = (
        step_artifact(args.variant, args.contract, args.target, args.cpu)
        if args.step
        else artifact_path(args.variant, args.contract, args.target, args.vocab)
    )
    write_atomically(path, vmfb)
    print(
        json.dumps(
            {
                "artifact": str(path.relative_to(ROOT)),
                "bytes": len(vmfb),
                "kernels": spec.kernels.identity,
                "compile_s": round(time.perf_counter() - emitted, 1),
                "entries": [e.symbol for e in spec.entry_points],
            },
            indent=1,
        )
    )


def load_session(args: argparse.Namespace, contract: str, vocab: int = 0):
    """The program of `contract` on decoder_real_shapes.py's random checkpoint (written here if it is not there)."""
    from synthetic_text import ensure_random_decoder, with_vocabulary

    from gemma3n_iree.model.decoder_config import builtin_decoder_config
    from gemma3n_iree.runtime.text.decoder import DecoderSession

    checkpoint = checkpoint_dir(args.workdir, args.variant, vocab)
    ensure_random_decoder(checkpoint, with_vocabulary(builtin_decoder_config(args.variant), vocab), seed=0)
    device = "cuda" if args.target == "cuda" else "local-task"
    started = time.perf_counter()
    session = DecoderSession.from_checkpoint(
        artifact_path(args.variant, contract, args.target, vocab), checkpoint, device=device
    )
    return session, checkpoint, time.perf_counter() - started


def parity(args: argparse.Namespace) -> None:
    from decoder_real_shapes import prompt_ids

    from gemma3n_iree.contracts import decoder as DEC

    session, checkpoint, load_s = load_session(args, args.contract, args.vocab)
    cfg = session.cfg
    prompt, forced = prompt_ids(cfg, args.prompt_length, args.steps)
    c = session.contract
    weights = {k: session.tables[k] for k in ("embed_tokens", "embed_tokens_per_layer")}
    from gemma3n_iree.model.decoder_weights import read_decoder_weights

    mapped = read_decoder_weights(checkpoint, cfg)
    projection = {
        k: np.asarray(mapped[k], np.float32) for k in ("per_layer_model_projection", "per_layer_projection_norm")
    }
    embeds, pli = DEC.embed_rows(c, cfg, projection, *DEC.token_rows(cfg, weights, prompt))
    started = time.perf_counter()
    logits = [session.prefill(0, embeds, pli)]
    for i, token in enumerate(forced):
        logits.append(session.decode([0], [len(prompt) + i], [token])[0])
    written = len(prompt) + len(forced)  # the cache rows this run wrote (what --compare reads)
    out = {"logits": np.stack(logits), **{k: v[:written] for k, v in session.cache(0).items()}}
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"program_{args.contract}.npz"
    np.savez_compressed(path, **out)
    print(
        json.dumps(
            {
                "program": str(path),
                "load_s": round(load_s, 1),
                "run_s": round(time.perf_counter() - started, 2),
                "prompt": prompt,
                "forced": forced,
            }
        )
    )


# ---------------------------------------------------------------------------------------------- speed
def median_ms(fn, warmup: int, repeats: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def bench_program(args: argparse.Namespace) -> dict:
    """The program's prefill latency per prompt bucket and decode-step time per batch (inputs already on the
    device: `LoadedProgram.time_execution`, one synchronous call each)."""
    session, _, load_s = load_session(args, "mlx-cuda-v1")
    cfg = session.cfg
    rng = np.random.default_rng(0)
    out: dict = {"load_s": round(load_s, 1), "prefill_ms": {}, "decode_ms": {}}
    for t in session.info.prompts:
        args_ = [
            np.array(0, np.int32),
            np.array(t, np.int32),
            (0.05 * rng.standard_normal((t, cfg.hidden_size))).astype(np.float32),
            (0.05 * rng.standard_normal((t, cfg.num_hidden_layers, cfg.hidden_size_per_layer_input))).astype(
                np.float32
            ),
            *session.rope_tables(np.arange(t)),
        ]
        times = session.time_execution(session.prefills[t], args_, warmup=1, repeats=args.repeats)
        out["prefill_ms"][t] = round(statistics.median(times) * 1e3, 3)
    for (context, batch), name in sorted(session.decodes.items()):
        if context != min(session.info.contexts):
            continue
        positions = np.full(batch, BENCH_PROMPT, np.int32)
        text, ple = session.token_rows([4368] * batch)
        args_ = [np.arange(batch, dtype=np.int32), positions, text, ple, *session.rope_tables(positions)]
        times = session.time_execution(name, args_, warmup=3, repeats=args.repeats)
        step = statistics.median(times) * 1e3
        floor = STEP_BYTES[args.variant] / BANDWIDTH * 1e3
        out["decode_ms"][batch] = {
            "step_ms": round(step, 3),
            "floor_ms": round(floor, 3),
            "floor_ratio": round(step / floor, 2) if floor else None,
            "tokens_per_s": round(batch / step * 1e3, 1),
            "context": context,
        }
    return out


def bench_torch(args: argparse.Namespace, mode: str) -> dict:
    """transformers on the same checkpoint: bf16, SDPA, DynamicCache; `mode` eager or compile."""
    import torch
    from oracles import hf_decoder as H
    from transformers import DynamicCache

    from gemma3n_iree.model.decoder_config import builtin_decoder_config
    from gemma3n_iree.model.decoder_weights import decoder_weight_specs, read_decoder_weights

    cfg = builtin_decoder_config(args.variant)
    checkpoint = checkpoint_dir(args.workdir, args.variant)
    mapped = read_decoder_weights(checkpoint, cfg)
    specs = decoder_weight_specs(cfg)
    model = H.to_bf16_as_loaded(H.model_from_tensors(cfg, {specs[k].key: v for k, v in mapped.items()}, "cuda"))
    model.config._attn_implementation = "sdpa"
    run = torch.compile(model, dynamic=True) if mode == "compile" else model
    gen = torch.Generator(device="cuda").manual_seed(0)

    def sync_ms(fn, warmup: int, repeats: int) -> float:
        def timed() -> None:
            fn()
            torch.cuda.synchronize()

        return median_ms(timed, warmup, repeats)

    out: dict = {"mode": mode, "prefill_ms": {}, "decode_ms": {}}
    with torch.no_grad():
        for t in PROMPTS:
            ids = torch.randint(3, 262144, (1, t), device="cuda", generator=gen)
            out["prefill_ms"][t] = round(
                sync_ms(
                    lambda: run(input_ids=ids, use_cache=True, past_key_values=DynamicCache(config=model.config)),
                    1,
                    args.repeats,
                ),
                3,
            )
        for batch in BATCHES:
            ids = torch.randint(3, 262144, (batch, BENCH_PROMPT), device="cuda", generator=gen)
            cache = DynamicCache(config=model.config)
            run(input_ids=ids, use_cache=True, past_key_values=cache)
            position = [BENCH_PROMPT]

            def step() -> None:
                token = torch.full((batch, 1), 4368, device="cuda")
                where = torch.full((batch, 1), position[0], device="cuda")
                run(input_ids=token, position_ids=where, use_cache=True, past_key_values=cache)
                position[0] += 1

            step_ms = sync_ms(step, 3, args.repeats)
            out["decode_ms"][batch] = {"step_ms": round(step_ms, 3), "tokens_per_s": round(batch / step_ms * 1e3, 1)}
    return out


def bench(args: argparse.Namespace) -> None:
    report: dict = {"variant": args.variant, "program": bench_program(args)}
    for mode in [m for m in args.torch.split(",") if m]:
        if mode == "eager":
            report["transformers_eager"] = bench_torch(args, "eager")
            continue
        cmd = [
            sys.executable,
            __file__,
            "torch",
            "--mode",
            mode,
            "--variant",
            args.variant,
            "--workdir",
            str(args.workdir),
            "--repeats",
            str(args.repeats),
        ]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.compile_timeout)
            report[f"transformers_{mode}"] = (
                json.loads(done.stdout.strip().splitlines()[-1])
                if done.returncode == 0
                else {"error": done.stderr[-2000:]}
            )
        except subprocess.TimeoutExpired:
            report[f"transformers_{mode}"] = {"error": f"did not finish within {args.compile_timeout} s"}
    best = {}
    for batch in BATCHES:
        theirs = [
            r["decode_ms"][batch]["step_ms"]
            for k, r in report.items()
            if k.startswith("transformers_") and "decode_ms" in r and batch in r["decode_ms"]
        ]
        ours = report["program"]["decode_ms"].get(batch, {}).get("step_ms")
        if theirs and ours:
            best[batch] = {
                "program_ms": ours,
                "transformers_best_ms": min(theirs),
                "speedup": round(min(theirs) / ours, 2),
            }
    report["decode_vs_transformers_best"] = best
    args.out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=1, default=str)
    (args.out / f"bench_{args.variant}.json").write_text(text + "\n")
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("build", "parity", "bench", "torch"):
        p = sub.add_parser(name)
        p.add_argument("--variant", choices=["e2b", "e4b", "tiny"], default="e4b")
        p.add_argument("--target", choices=["cuda", "llvm-cpu"], default="cuda")
        if name in ("build", "parity"):
            p.add_argument("--contract", choices=CONTRACTS, default="mlx-cuda-v1")
            p.add_argument(
                "--vocab", type=int, default=0, help="as decoder_real_shapes.py's (a PARITY_SPEC program of it)"
            )
        if name == "build":
            p.add_argument(
                "--kernels",
                choices=["auto", "iree"],
                default="auto",
                help="auto: the committed Hopper kernels (row sums; the GEMM for prompt-sized linears)",
            )
            p.add_argument(
                "--step",
                action="store_true",
                help="the decode-step program of STEP_SPEC (no prompt entries) into .gpu/step/<variant>/, "
                "for scripts/gpu_decode_step.sh (llvm-cpu: into its cpu/ folder, for scripts/gpu_same_logits.sh)",
            )
            p.add_argument(
                "--sampling",
                action="store_true",
                help="with each decode width's sample entry too (scripts/decoder_profile.py then times sampled steps)",
            )
            p.add_argument(
                "--cpu",
                default="host",
                help="llvm-cpu only: the LLVM CPU to compile for (x86-64-v3 runs on the GPU machine's CPU too)",
            )
        if name != "build":
            p.add_argument("--workdir", type=Path, required=True, help="where the random checkpoint is (or is written)")
            p.add_argument("--repeats", type=int, default=10)
        if name in ("parity", "bench"):
            p.add_argument("--out", type=Path, required=True)
        if name == "parity":
            p.add_argument("--prompt-length", type=int, default=PROMPT_LENGTH, help="as decoder_real_shapes.py's")
            p.add_argument("--steps", type=int, default=STEPS, help="as decoder_real_shapes.py's")
        if name == "bench":
            p.add_argument("--torch", default="eager,compile", help="transformers modes to time (eager, compile)")
            p.add_argument("--compile-timeout", type=int, default=280)
        if name == "torch":
            p.add_argument("--mode", choices=["eager", "compile"], required=True)
    args = ap.parse_args()
    if args.command == "torch":
        print(json.dumps(bench_torch(args, args.mode), default=str))
        return
    {"build": build, "parity": parity, "bench": bench}[args.command](args)


if __name__ == "__main__":
    main()
