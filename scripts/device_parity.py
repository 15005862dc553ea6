"""Run a compiled full-size audio artifact on a device and compare it with the contract emulation.

Used on the GPU machine (see ../shared/bench/README.md for how the runtime wheel travels):

    python scripts/device_parity.py --vmfb audio_stages.vmfb --device cuda --out $OUT

Makes the deterministic random checkpoint of the real shapes (seed 0) and a deterministic
speech-like 30 s mel, runs the artifact, runs the numpy emulation of the same contract, and prints
per-stage agreement (first divergence, max |diff|, BF16 ULPs).  Saves the final outputs to
`<out>/outputs_<device>.npz` so that two devices' results can be compared bit for bit.

To show that a change kept every output, stage tensors included, bit for bit: run the artifact built
before it with `--save-all before.npz`, then the one built after it with `--compare-with before.npz`
(two processes: IREE's CUDA driver refuses a second device context in one process).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from gemma3n_iree.contracts import encoder as emulated
from gemma3n_iree.contracts import get_contract
from gemma3n_iree.contracts.metrics import bf16_ulp_distance, relative_l2
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.audio_weights import audio_weight_specs
from gemma3n_iree.runtime.encoder.audio_session import AudioSession
from gemma3n_iree.runtime.synthetic import random_weights


def speechlike_mel(frames: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[:, None]
    return (rng.normal(-4.0, 2.0, (frames, 128)) + 3.0 * np.sin(t / 7.0)).astype(np.float32)


def _difference(ours: np.ndarray, base: np.ndarray) -> dict[str, object]:
    """How far one output moved: elements that differ, and by how many BF16 ULPs at most."""
    if ours.shape != base.shape or ours.dtype != base.dtype:
        return {"shape": list(ours.shape), "base_shape": list(base.shape)}
    if ours.dtype != np.float32:
        return {"differing": int((ours != base).sum()), "size": int(ours.size)}
    ulps = bf16_ulp_distance(ours, base)
    return {
        "differing": int((ours.view(np.uint32) != base.view(np.uint32)).sum()),
        "size": int(ours.size),
        "max_bf16_ulp": int(ulps.max(initial=0)),
        "over_one_bf16_ulp": int((ulps > 1).sum()),
        "max_abs": float(np.nanmax(np.abs(ours.astype(np.float64) - base), initial=0.0)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vmfb", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--contract", default="mlx-cuda-v1")
    parser.add_argument("--frames", type=int, default=2997)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--emulate", action="store_true", help="also run the numpy emulation and compare stages")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save-all", type=Path, help="also save every output (stage tensors included) here")
    parser.add_argument(
        "--compare-with",
        type=Path,
        help="every output of another run of the same module (--save-all): compare bit for bit",
    )
    args = parser.parse_args()
    cfg = builtin_config("e4b")
    started = time.perf_counter()
    weights = random_weights(cfg, seed=0)
    from safetensors.numpy import save_file

    ckpt = Path(tempfile.mkdtemp()) / "model.safetensors"
    save_file(weights, str(ckpt))
    print(f"weights {time.perf_counter() - started:.1f} s", flush=True)
    session = AudioSession(args.vmfb, [ckpt], device=args.device)
    mel = speechlike_mel(args.frames)[None]
    frames = np.array([args.frames], np.int32)
    t0 = time.perf_counter()
    got = session.run(mel, frames)
    print(f"first call {time.perf_counter() - t0:.2f} s", flush=True)
    times, identical = [], True
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        again = session.run(mel, frames)
        times.append(time.perf_counter() - t0)
        identical &= all(np.array_equal(again[k].view(np.uint8), got[k].view(np.uint8)) for k in got)
    print(f"call (incl. host transfer of all outputs) median {np.median(times) * 1e3:.1f} ms over {len(times)}")
    print(f"repeated calls bit-identical: {identical}")
    print(
        "non-finite values: "
        + ", ".join(
            f"{k}={int((~np.isfinite(v)).sum())}"
            for k, v in got.items()
            if v.dtype == np.float32 and not np.isfinite(v).all()
        )
        or "none"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez(
        args.out / f"outputs_{args.device.replace(':', '_')}.npz",
        audio_features=got["audio_features"],
        encoder_hidden=got["encoder_hidden"],
        valid_tokens=got["valid_tokens"],
    )
    if args.save_all is not None:
        np.savez(args.save_all, **got)
    if args.compare_with is not None:
        with np.load(args.compare_with) as base:
            differ = sorted(
                k for k in got if k not in base or not np.array_equal(got[k].view(np.uint8), base[k].view(np.uint8))
            )
            detail = {k: _difference(got[k], base[k]) for k in differ if k in base}
        print(
            json.dumps(
                {
                    "compared_with": args.compare_with.name,
                    "outputs": len(got),
                    "bit_identical": len(got) - len(differ),
                    "differ": differ,
                    "detail": detail,
                }
            )
        )
    if not args.emulate:
        return
    logical = {s.logical: weights[s.key].astype(np.float32) for s in audio_weight_specs(cfg)}
    t0 = time.perf_counter()
    want = emulated.encode(get_contract(args.contract), cfg, logical, mel, frames)
    print(f"emulation {time.perf_counter() - t0:.1f} s")
    rows = []
    for name, value in got.items():
        ref = want[name]
        if value.dtype != np.float32:
            rows.append({"stage": name, "equal": bool(np.array_equal(value, ref))})
            continue
        ulps = bf16_ulp_distance(value, ref)
        rows.append(
            {
                "stage": name,
                "bit_exact": bool(np.array_equal(value.view(np.uint32), ref.view(np.uint32))),
                "max_abs": float(np.abs(value.astype(np.float64) - ref).max()),
                "rel_l2": relative_l2(value, ref),
                "max_bf16_ulp": int(ulps.max()),
                "over_one_ulp": int((ulps > 1).sum()),
                "differing": int((ulps > 0).sum()),
                "size": int(ulps.size),
            }
        )
    (args.out / f"stages_{args.device.replace(':', '_')}.json").write_text(json.dumps(rows, indent=1))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
