"""The dispatches one decode step of a decoder program launches, from IREE's stream level (no GPU needed).

    python scripts/dispatch_counts.py --variant tiny --slots 4 --capacity 64 --batch 1 --batch 4
    python scripts/dispatch_counts.py --variant e4b --slots 1 --capacity 64 --batch 1     # E4B shapes

Compiles the program's decode entries (no prefill entries) for cuda sm_90 with `--kernels auto` (by default) to
IREE's stream level and prints, per decode entry, JSON with the dispatch count of one call in total, per decoder
layer (owning K/V or sharing them) and per other call, and the bytes it writes into the KV cache against
`KVCacheLayout.decode_write_bytes` (`diagnostics/dispatches.py` says how dispatches are attributed).
`tests/test_dispatch_counts.py` pins the tiny program's numbers: re-pin them there after a change that
reduces them.
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv: list[str] | None = None) -> None:
    from gemma3n_iree.contracts import get_contract
    from gemma3n_iree.diagnostics.dispatches import decode_step_counts, stream_profile
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.decoder import DecoderModuleSpec, emit_decoder_module
    from gemma3n_iree.emitters.kernels import KERNEL_CHOICES, select_kernels
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="tiny", choices=("tiny", "e2b", "e4b"))
    parser.add_argument("--contract", default="mlx-cuda-v1")
    parser.add_argument("--target", default="cuda", choices=("cuda", "llvm-cpu"))
    parser.add_argument("--kernels", default="auto", choices=KERNEL_CHOICES)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--capacity", type=int, default=64)
    parser.add_argument("--batch", type=int, action="append", help="decode batch (repeatable; default 1)")
    parser.add_argument("--context", type=int, action="append", help="decode context bucket (default: capacity)")
    args = parser.parse_args(argv)
    target = parse_target(args.target, "sm_90" if args.target == "cuda" else None)
    contract = get_contract(args.contract)
    spec = DecoderModuleSpec(
        builtin_decoder_config(args.variant),
        contract,
        args.slots,
        args.capacity,
        prompts=(),
        batches=tuple(args.batch or (1,)),
        contexts=tuple(args.context or ()),
        kernels=select_kernels(args.kernels, target, contract),
        lowering=lowering_for(target, contract),
    )
    started = time.perf_counter()
    profile = stream_profile(lambda: emit_decoder_module(spec), target)
    seconds = time.perf_counter() - started
    counts = decode_step_counts(profile, spec)
    for e in spec.decode_entries:
        counts[e.symbol]["cache_bytes_expected"] = spec.kv_layout.decode_write_bytes(e.batch)
    report = {
        "variant": args.variant,
        "target": target.describe(),
        "kernels": spec.kernels.identity,
        "slots": args.slots,
        "capacity": args.capacity,
        "emit_and_compile_to_stream_s": round(seconds, 1),
        "entries": counts,
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
