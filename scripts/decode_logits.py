"""The logits of a fixed run of decode steps, to hold two builds of a decoder program to each other bit for bit.

    python scripts/decode_logits.py run --artifact A.vmfb --checkpoint DIR --out a.npz [--widths 1 8] [--steps 8]
    python scripts/decode_logits.py reference --checkpoint DIR --out t_{dtype}.npz [--dtype fp32 bf16] [--widths 1 8]
    python scripts/decode_logits.py compare a.npz b.npz

`run` feeds each width's sequences (slots 0..w-1, fresh) one token per step from position 0, so the steps fill
the cache as a prompt would, and saves every step's logits (`w<width>`: [steps, w, V] F32). One program per
process: IREE's CUDA driver refuses a second device context in a process. `reference` computes the same run's
logits with transformers' `Gemma3nForCausalLM` on the checkpoint (fp32, then bf16 as `from_pretrained` loads it:
one file per `--dtype`, `{dtype}` in `--out` naming it; each width's sequences in one forward pass, on the GPU when
torch has one). `compare` prints, per width, whether
the two runs are bit-identical and otherwise how many logits differ (NaNs whose bits differ counted apart), by
how much where both are finite, and the relative L2 distance of the first from the second, and exits 1 on any
differing bit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def tokens(width: int, step: int) -> list[int]:
    """A deterministic token per sequence and step, distinct across sequences."""
    return [(1000 + 37 * b + 11 * step) % 30000 for b in range(width)]


def run(args: argparse.Namespace) -> None:
    from gemma3n_iree.runtime.text.decoder import DecoderSession

    session = DecoderSession.from_checkpoint(args.artifact, args.checkpoint, device=args.device)
    saved = {}
    for width in args.widths:
        if width > session.slots:
            raise SystemExit(f"--widths: {width} sequences need {width} slots; {args.artifact} has {session.slots}")
        slots = list(range(width))
        saved[f"w{width}"] = np.stack(
            [session.decode(slots, [step] * width, tokens(width, step)) for step in range(args.steps)]
        ).astype(np.float32)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, **saved)
    print(json.dumps({"artifact": str(args.artifact), "out": str(args.out), "widths": args.widths}))


def reference(args: argparse.Namespace) -> None:
    import torch
    from oracles import hf_decoder as H

    from gemma3n_iree.model.checkpoint_config import CheckpointConfig
    from gemma3n_iree.model.decoder_weights import decoder_weight_specs, read_decoder_weights

    cfg = CheckpointConfig.read(args.checkpoint).decoder
    specs = decoder_weight_specs(cfg)
    mapped = read_decoder_weights(args.checkpoint, cfg)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = H.model_from_tensors(cfg, {specs[k].key: v for k, v in mapped.items()}, device)
    for dtype in sorted(set(args.dtype), key=["fp32", "bf16"].index):  # fp32 first: the cast is one way
        if dtype == "bf16":
            model = H.to_bf16_as_loaded(model)
        saved = {}
        with torch.no_grad():
            for width in args.widths:
                ids = torch.tensor([tokens(width, step) for step in range(args.steps)], device=device).T  # [w, steps]
                logits = model(input_ids=ids, use_cache=False).logits  # [w, steps, V]
                saved[f"w{width}"] = logits.float().permute(1, 0, 2).cpu().numpy()
        out = Path(str(args.out).format(dtype=dtype))
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(out, **saved)
        print(json.dumps({"reference": f"transformers {dtype} on {device}", "out": str(out)}))


def compare(args: argparse.Namespace) -> None:
    a, b = np.load(args.a), np.load(args.b)
    if sorted(a.files) != sorted(b.files):
        raise SystemExit(f"{args.a} holds {sorted(a.files)}, {args.b} holds {sorted(b.files)}")
    report, same = {}, True
    for key in sorted(a.files):
        x, y = a[key], b[key]
        if x.shape != y.shape:
            raise SystemExit(f"{key}: shapes {x.shape} and {y.shape}")
        differ = x.view(np.uint32) != y.view(np.uint32)
        both_nan = np.isnan(x) & np.isnan(y)
        finite = np.isfinite(x) & np.isfinite(y)
        report[key] = {
            "bit_identical": not differ.any(),
            "differing": int(differ.sum()),
            "of": int(x.size),
            # NaNs in both at the same place whose bits (sign, payload) differ
            "differing_nan_bits": int((differ & both_nan).sum()),
            "nan": [int(np.isnan(x).sum()), int(np.isnan(y).sum())],
            "nan_rows_by_step": [int(r) for r in np.isnan(x).any(axis=-1).sum(axis=-1)],
            "max_abs_difference_finite": float(np.abs(x.astype(np.float64) - y)[finite].max(initial=0.0)),
            "relative_l2_finite": float(
                np.linalg.norm((x.astype(np.float64) - y)[finite]) / max(np.linalg.norm(y[finite]), 1e-30)
            ),
        }
        same &= not differ.any()
    print(json.dumps(report, indent=1))
    sys.exit(0 if same else 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="decode a fixed run and save its logits")
    r.add_argument("--artifact", type=Path, required=True)
    r.add_argument("--checkpoint", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--widths", type=int, nargs="+", default=[1])
    r.add_argument("--steps", type=int, default=8)
    r.add_argument("--device", default="cuda", help="IREE device (cuda, local-task)")
    t = sub.add_parser("reference", help="the same run's logits from transformers")
    t.add_argument("--checkpoint", type=Path, required=True)
    t.add_argument("--out", required=True, help="the file to write, {dtype} standing for each dtype's name")
    t.add_argument("--widths", type=int, nargs="+", default=[1])
    t.add_argument("--steps", type=int, default=8)
    t.add_argument("--dtype", choices=("fp32", "bf16"), nargs="+", default=["fp32"])
    c = sub.add_parser("compare", help="hold two saved runs to each other bit for bit")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    {"run": run, "reference": reference, "compare": compare}[args.command](args)


if __name__ == "__main__":
    main()
