"""How chaotic a random decoder is: transformers' bf16 run against its own fp32 run, at a variant's real layer shapes.

    python scripts/decoder_conditioning.py --variant e4b --scales well-conditioned --vocab 4096
    python scripts/decoder_conditioning.py --variant e2b --scales chaotic --prompt-length 64 --steps 4

Parity bounds at the real shapes mean something only on a model whose bf16 run stays near its fp32 run (issue 26
item 6): on a chaotic one (every sub-layer adding a vector as large as the residual stream, one-hot softmaxes,
AltUp's mixing growing some streams), rounding anywhere moves the logits as far as they can go.  This script
builds `Gemma3nForCausalLM` with `tests/synthetic_text.py`'s random values under a `DecoderScales` choice, runs
a random prompt and forced decode steps (spec §11.2's manual loop) in fp32, casts the model to bf16 as
`from_pretrained` loads it, runs them again, and prints the relative L2 distance of the logits after the prefill
and after every step.

`--vocab N` shrinks the text vocabulary to N ids (the layers keep their real shapes): the distance is a property
of the layer stack, and the real E4B's 3.2 GB of tables in fp32 do not fit a 24 GB CPU machine beside its layers.
Each tensor is drawn from its own seed (this script's, not the checkpoint writer's stream), so a run is the
scales' behaviour, not one checkpoint's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from synthetic_text import (  # noqa: E402
    CHAOTIC,
    WELL_CONDITIONED,
    DecoderScales,
    _decoder_value_maker,
    with_vocabulary,
)

from gemma3n_iree.contracts.metrics import relative_l2  # noqa: E402
from gemma3n_iree.model.decoder_config import DecoderConfig, builtin_decoder_config  # noqa: E402
from gemma3n_iree.model.decoder_weights import decoder_weight_specs  # noqa: E402

SCALES = {"chaotic": CHAOTIC, "well-conditioned": WELL_CONDITIONED}


class RandomTensors(Mapping):
    """Checkpoint name -> random BF16 tensor of the scales' plan, drawn when asked for (never all in memory)."""

    def __init__(self, cfg: DecoderConfig, scales: DecoderScales, seed: int) -> None:
        self.specs = {spec.key: (logical, spec.shape) for logical, spec in decoder_weight_specs(cfg).items()}
        self.scales, self.seed = scales, seed

    def __getitem__(self, key: str) -> np.ndarray:
        logical, shape = self.specs[key]
        rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
        return _decoder_value_maker(logical, shape, self.scales)(rng, shape)

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


def parse_scales(text: str) -> DecoderScales:
    """A named choice, or `field=value,...` over the chaotic defaults."""
    if text in SCALES:
        return SCALES[text]
    fields = {f.name for f in dataclasses.fields(DecoderScales)}
    values = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name not in fields:
            raise SystemExit(f"--scales: {name!r} is not one of {sorted(SCALES)} nor a field of {sorted(fields)}")
        values[name] = float(value)
    return DecoderScales(**values)


def measure(variant: str, scales: DecoderScales, vocab: int, prompt_length: int, steps: int, seed: int = 0) -> dict:
    """The report: transformers-bf16's relative L2 distance from its fp32 run, in all and per call."""
    import torch
    from oracles import hf_decoder as H

    cfg = with_vocabulary(builtin_decoder_config(variant), vocab)
    rng = np.random.default_rng(1)
    top = cfg.vocab_size_per_layer_input
    prompt = [cfg.bos_token_id] + [int(i) for i in rng.integers(3, top, prompt_length - 1)]
    forced = [int(i) for i in rng.integers(3, top, steps)]
    t0 = time.perf_counter()
    model = H.model_from_tensors(cfg, RandomTensors(cfg, scales, seed))
    built = time.perf_counter()
    with torch.no_grad():
        fp32 = H.run_cached(model, prompt, forced)["logits"]
        ran32 = time.perf_counter()
        bf16 = H.run_cached(H.to_bf16_as_loaded(model), prompt, forced)["logits"]
    ran16 = time.perf_counter()
    fp32, bf16 = np.float64(fp32), np.float64(bf16)
    return {
        "variant": variant,
        "vocab": cfg.vocab_size,
        "scales": dataclasses.asdict(scales),
        "prompt_length": prompt_length,
        "steps": steps,
        "bf16_vs_fp32_relative_l2": relative_l2(bf16, fp32),
        "bf16_vs_fp32_per_call": [round(relative_l2(b, a), 5) for a, b in zip(fp32, bf16)],
        "same_argmax": float(np.mean(fp32.argmax(-1) == bf16.argmax(-1))),
        "seconds": {"build": round(built - t0, 1), "fp32": round(ran32 - built, 1), "bf16": round(ran16 - ran32, 1)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=["e2b", "e4b", "tiny"], default="e4b")
    ap.add_argument("--scales", default="well-conditioned", help=f"{sorted(SCALES)} or field=value,...")
    ap.add_argument("--vocab", type=int, default=4096, help="text ids of the vocabulary (0: the variant's own)")
    ap.add_argument("--prompt-length", type=int, default=256)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="also write the report here (JSON)")
    args = ap.parse_args()
    report = measure(args.variant, parse_scales(args.scales), args.vocab, args.prompt_length, args.steps, args.seed)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
