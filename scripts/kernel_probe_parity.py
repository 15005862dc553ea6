"""One decoder op family with the committed kernels against the same family in IREE's own code, on the GPU.

    python scripts/kernel_probe_parity.py build                 # here: .gpu/probe/<case>_{kernels,iree}.vmfb
    python scripts/kernel_probe_parity.py run --out $OUT        # on the GPU machine (iree-base-runtime only)

`build` emits each case of `CASES` (E4B shapes) as a probe module twice, with `--kernels auto` and with IREE's
code alone, and compiles both for cuda sm_90. `run` calls both programs of a case on the same random BF16-valued
inputs and reports, per case, whether the outputs are bit-identical and otherwise how many differ and by how
much: where a kernel replaces a contraction, the differences are the accumulation order's (the contract's one
freedom), a few units in the last place of a few outputs; a wrong layout or mask would differ everywhere.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PROBES = ROOT / ".gpu" / "probe"
#: case -> (the op family's call on a DecoderOpEmitter, the query position); the inputs are q [1, 8, 256], k, v [1024, 2, 256]
CASES = {
    # a KV-shared layer's prefill: its prompt's last row over 1024 positions
    "prefill_row_full": (lambda o: o.attention_core("prefill", 1, 1024, False, 512), 1023),
    "prefill_row_sliding": (lambda o: o.attention_core("prefill", 1, 1024, True, 512), 1023),
    "prefill_row_sliding_early": (lambda o: o.attention_core("prefill", 1, 1024, True, 512), 700),
}


def build(_: argparse.Namespace) -> None:
    from gemma3n_iree.contracts import MLX_CUDA_V1
    from gemma3n_iree.emitters.compile import compile_mlir, parse_target
    from gemma3n_iree.emitters.kernels import IREE_CODEGEN, select_kernels
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.emitters.probe import decoder_probe_module
    from gemma3n_iree.files import write_atomically
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    cfg, sm90 = builtin_decoder_config("e4b"), parse_target("cuda", "sm_90")
    lowering = lowering_for(sm90, MLX_CUDA_V1)
    for case, (family, _) in CASES.items():
        for name, kernels in (("kernels", select_kernels("auto", sm90, MLX_CUDA_V1)), ("iree", IREE_CODEGEN)):
            text = decoder_probe_module(MLX_CUDA_V1, cfg, family, lowering=lowering, kernels=kernels)
            if (name == "kernels") != ("hal.dispatch.extern" in text):
                raise SystemExit(f"{case}: the {name} build {'lacks' if name == 'kernels' else 'has'} a kernel call")
            write_atomically(PROBES / f"{case}_{name}.vmfb", compile_mlir(text, sm90))
            print(f"{PROBES / case}_{name}.vmfb", flush=True)


def run(args: argparse.Namespace) -> None:
    import iree.runtime as rt
    import ml_dtypes

    rng = np.random.default_rng(0)

    def bf16_values(shape: tuple[int, ...], scale: float) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(ml_dtypes.bfloat16).astype(np.float32)

    q, k, v = bf16_values((1, 8, 256), 1.0), bf16_values((1024, 2, 256), 0.05), bf16_values((1024, 2, 256), 1.0)
    instance, device = rt.VmInstance(), rt.get_device("cuda")
    hal = rt.create_hal_module(instance, device)
    report = {}
    for case, (_, position) in CASES.items():
        outputs = []
        for name in ("kernels", "iree"):
            module = rt.VmModule.copy_buffer(instance, (PROBES / f"{case}_{name}.vmfb").read_bytes())
            context = rt.VmContext(instance, modules=[hal, module])
            main = rt.FunctionInvoker(context, device, module.lookup_function("main"))
            outputs.append(np.asarray(main(q, k, v, np.array([position], np.int32)).to_host()))
        ours, iree = outputs
        report[case] = {
            "bit_identical": bool(np.array_equal(ours.view(np.uint32), iree.view(np.uint32))),
            "differing": int((ours != iree).sum()),
            "of": int(ours.size),
            "max_abs_difference": float(np.abs(ours - iree).max()),
            "max_abs_output": float(np.abs(iree).max()),
            "nan": int(np.isnan(ours).sum()),
        }
    text = json.dumps(report, indent=1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kernel_probe_parity.json").write_text(text + "\n")
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="emit and compile every case twice (here, with iree-compile)")
    on_gpu = sub.add_parser("run", help="run both builds of every case on the GPU and compare them")
    on_gpu.add_argument("--out", type=Path, required=True, help="where kernel_probe_parity.json goes")
    args = parser.parse_args(argv)
    {"build": build, "run": run}[args.command](args)


if __name__ == "__main__":
    main()
