"""What a decoder program keeps on the GPU: its resident weights and KV cache, and optionally each entry's transients.

    python scripts/decoder_memory.py --variant e4b --slots 64 --capacity 4096
    python scripts/decoder_memory.py --variant e4b --slots 64 --capacity 4096 --batch 64 --transients

Prints JSON: `emitters/decoder_memory.decoder_memory` of the program (weights, host-only tables, the KV cache in
total, per slot and per position; no compiler needed), next to the audio stages' resident weights (the encoder:
audio tower and embedder; the prefill stage), and the sum a device holding all of them keeps between calls. With
`--transients` the program's entries (decode entries of the given batches, prefill entries of the given
`--prompt` buckets) are compiled for cuda sm_90 to IREE's stream level, which states the transient allocations
of one call of each entry (static sizes).
"""

from __future__ import annotations

import argparse
import json
import math
import time

#: The H200's memory as NVIDIA states it (141 GB).
H200_BYTES = 141 * 10**9


def main(argv: list[str] | None = None) -> None:
    from gemma3n_iree.contracts import get_contract
    from gemma3n_iree.emitters.compile import parse_target
    from gemma3n_iree.emitters.decoder import DecoderModuleSpec, emit_decoder_module
    from gemma3n_iree.emitters.decoder_memory import WEIGHT_BYTES, decoder_memory
    from gemma3n_iree.emitters.kernels import select_kernels
    from gemma3n_iree.emitters.lowering import lowering_for
    from gemma3n_iree.emitters.prefill import resident_weight_specs
    from gemma3n_iree.model.audio_config import builtin_config
    from gemma3n_iree.model.audio_weights import audio_weight_specs
    from gemma3n_iree.model.decoder_config import builtin_decoder_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="e4b", choices=("tiny", "e2b", "e4b"))
    parser.add_argument("--contract", default="mlx-cuda-v1")
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--capacity", type=int, default=4096)
    parser.add_argument("--batch", type=int, action="append", help="decode batch (repeatable; default 1)")
    parser.add_argument("--prompt", type=int, action="append", default=[], help="prefill bucket (repeatable)")
    parser.add_argument("--transients", action="store_true", help="compile to IREE's stream level (slow at E4B)")
    args = parser.parse_args(argv)
    contract = get_contract(args.contract)
    target = parse_target("cuda", "sm_90")
    cfg = builtin_decoder_config(args.variant)
    spec = DecoderModuleSpec(
        cfg,
        contract,
        args.slots,
        args.capacity,
        prompts=tuple(args.prompt),
        batches=tuple(args.batch or (1,)),
        kernels=select_kernels("auto", target, contract),
        lowering=lowering_for(target, contract),
    )
    memory = decoder_memory(spec)
    compile_s = None
    if args.transients:
        from gemma3n_iree.diagnostics.dispatches import stream_profile

        started = time.perf_counter()
        memory = memory.with_transients(stream_profile(lambda: emit_decoder_module(spec), target))
        compile_s = round(time.perf_counter() - started, 1)
    audio = builtin_config(args.variant)
    encoder = sum(math.prod(s.shape) * WEIGHT_BYTES for s in audio_weight_specs(audio))
    prefill = sum(math.prod(s.shape) * WEIGHT_BYTES for s in resident_weight_specs(audio, cfg))
    report = {
        "variant": args.variant,
        "contract": contract.name,
        "decoder": memory.as_json(),
        "encoder_weights": encoder,
        "prefill_weights": prefill,
        "resident_total": memory.resident + encoder + prefill,
        "h200_bytes": H200_BYTES,
    }
    report["h200_left"] = H200_BYTES - report["resident_total"] - memory.as_json().get("largest_transient_peak", 0)
    if compile_s is not None:
        report["compile_to_stream_s"] = compile_s
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
