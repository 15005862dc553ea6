"""A two-clip audio prompt through encoder + prefill at the real E2B/E4B shapes (random weights).

    python scripts/prefill_real_shapes.py --variant e4b --target cuda --workdir /tmp/w --out $OUT \\
        --encoder-artifact .gpu/prefill/audio_e4b_sm90.vmfb --prefill-artifact .gpu/prefill/prefill_e4b_sm90.vmfb

Writes a deterministic random checkpoint of the variant (audio tower + the four language-model tensors in
their own shard, streamed; a test tokenizer with the real special-token ids) unless it exists, encodes
two speech-like clips of different lengths with `AudioEncoder`, expands a chat prompt with both, runs the
prefill stage (diagnostics build: it also returns the hard table and the projection output), and checks:

* the merge against the contract emulation, bit for bit (given the module's hard table);
* the `per_layer_model_projection` output: equal elements, max BF16 ULPs, and whether every differing
  element lies inside the F32 accumulation envelope;
* the dense per-layer inputs against the emulation fed the module's own projection, bit for bit;
* both outputs against a float64 evaluation of the spec formulas (transformers' math, no rounding).

Prints one JSON object and saves it, with the outputs, under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # synthetic_text (test helpers)

from synthetic_text import add_random_text_tensors, write_test_tokenizer

from gemma3n_iree.contracts import get_contract
from gemma3n_iree.contracts import prefill as emulated
from gemma3n_iree.contracts.metrics import bf16_ulp, bf16_ulp_distance, f32_accumulation_bound, relative_l2
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.text_config import builtin_text_config
from gemma3n_iree.runtime.encoder.clips import Clip
from gemma3n_iree.runtime.encoder.encode import AudioEncoder
from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
from gemma3n_iree.runtime.synthetic import write_random_checkpoint
from gemma3n_iree.runtime.text.prefill import AudioPrefill

PROMPT = "Transcribe the following speech segment in English: <audio_soft_token> and then <audio_soft_token>."


def speechlike_mel(frames: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[:, None]
    return (rng.normal(-4.0, 2.0, (frames, 128)) + 3.0 * np.sin(t / 7.0)).astype(np.float32)


def reference_f64(
    text, ids, text_rows, hard, features, row_map, ple_rows, w_proj, w_norm
) -> tuple[np.ndarray, np.ndarray]:
    """transformers' formulas in float64 (exact constants, no rounding) on the same inputs."""
    f = np.float64
    e = text_rows.astype(f) * np.sqrt(f(text.hidden_size))
    is_audio = ids >= text.audio_vocab_offset
    e = np.where(is_audio[:, None], hard.astype(f)[np.where(is_audio, ids - text.audio_vocab_offset, 127)], e)
    e = np.where((row_map >= 0)[:, None], features.astype(f)[np.maximum(row_map, 0)], e)
    tok = ple_rows.astype(f).reshape(len(ids), text.num_hidden_layers, -1) * 16.0
    proj = (e @ w_proj.astype(f).T) * text.hidden_size**-0.5
    proj = proj.reshape(tok.shape)
    normed = proj / np.sqrt((proj**2).mean(-1, keepdims=True) + text.rms_norm_eps) * w_norm.astype(f)
    return e, (normed + tok) * 2.0**-0.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=["e2b", "e4b"], default="e4b")
    ap.add_argument("--target", choices=["llvm-cpu", "cuda"], default="llvm-cpu")
    ap.add_argument("--contract", default="mlx-cuda-v1")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--frames", type=int, default=256, help="the encoder's frame bucket")
    ap.add_argument("--capacity", type=int, default=512)
    ap.add_argument("--encoder-artifact", type=Path)
    ap.add_argument("--prefill-artifact", type=Path)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    audio_cfg, text_cfg = builtin_config(args.variant), builtin_text_config(args.variant)
    report: dict[str, object] = {"variant": args.variant, "target": args.target, "contract": args.contract}
    started = time.perf_counter()
    checkpoint = args.workdir / f"random-{args.variant}"
    if not (checkpoint / "tokenizer.json").is_file():
        write_random_checkpoint(checkpoint, audio_cfg, seed=0)
        add_random_text_tensors(checkpoint, text_cfg, seed=0)
        write_test_tokenizer(checkpoint)
    report["checkpoint_s"] = round(time.perf_counter() - started, 1)
    cache = ArtifactCache(args.workdir / "cache")
    t0 = time.perf_counter()
    encoder = AudioEncoder(
        checkpoint,
        target=args.target,
        contract=args.contract,
        frame_buckets=(args.frames,),
        cache=cache,
        artifact=args.encoder_artifact,
    )
    frames = (args.frames - 37, args.frames)  # two clips of different lengths
    clips = [Clip(i, 0.0, speechlike_mel(n, seed=i), n) for i, n in enumerate(frames)]
    features = encoder.encode_clips(clips).audio_features
    report["encoder_s"] = round(time.perf_counter() - t0, 1)

    c = get_contract(args.contract)
    prefill = AudioPrefill(
        checkpoint,
        target=args.target,
        contract=args.contract,
        capacities=(args.capacity,),
        cache=cache,
        artifact=args.prefill_artifact,
        encoder=encoder,
        stages=True,
    )
    ids = prefill.expand(PROMPT, [1, 1])
    result = prefill.run(ids, features)  # first call: loads the artifact and its weights
    times = []
    for _ in range(args.repeats):
        t1 = time.perf_counter()
        again = prefill.run(ids, features)
        times.append(time.perf_counter() - t1)
    deterministic = bool(
        np.array_equal(again.inputs_embeds, result.inputs_embeds)
        and np.array_equal(again.per_layer_inputs, result.per_layer_inputs)
    )
    length = len(ids)
    text_rows = prefill.tables.text_rows(ids, length).astype(np.float32)
    ple_rows = prefill.tables.ple_rows(ids, length).astype(np.float32)
    w_proj = np.asarray(prefill.tables.read("text.per_layer_model_projection"), np.float32)
    w_norm = np.asarray(prefill.tables.read("text.per_layer_projection_norm"), np.float32)
    flat = features.reshape(-1, text_cfg.hidden_size)
    hard = result.stages["hard_table"]
    merged = emulated.merge(c, text_cfg, ids, text_rows, hard, flat, result.audio_rows, length)
    linear = result.stages["ple_projection_linear"][:length]
    exact = emulated.dense_ple(c, text_cfg, merged, ple_rows, w_proj, w_norm, length)
    chained = emulated.dense_ple(c, text_cfg, merged, ple_rows, w_proj, w_norm, length, projection_linear=linear)
    differ = linear != exact["ple_projection_linear"]
    bound = f32_accumulation_bound(merged, w_proj) + (bf16_ulp(exact["ple_projection_linear"]) if c.round_bf16 else 0)
    inside = np.abs(linear.astype(np.float64) - exact["ple_projection_linear"]) <= bound
    ref_e, ref_ple = reference_f64(text_cfg, ids, text_rows, hard, flat, result.audio_rows, ple_rows, w_proj, w_norm)
    report.update(
        {
            "tokens": length,
            "audio_rows": int((result.audio_rows >= 0).sum()),
            "capacity": result.capacity,
            "valid_tokens_per_clip": [encoder.config.output_tokens(n) for n in frames],
            "prefill_ms_median": round(1e3 * float(np.median(times)), 2),
            "deterministic": deterministic,
            "merge_bit_exact_vs_emulation": bool(np.array_equal(result.inputs_embeds, merged)),
            "soft_rows_unchanged": bool(
                np.array_equal(
                    result.inputs_embeds[result.audio_rows >= 0], flat[result.audio_rows[result.audio_rows >= 0]]
                )
            ),
            "projection_elements_differing": int(differ.sum()),
            "projection_elements": int(differ.size),
            "projection_max_bf16_ulp": int(bf16_ulp_distance(linear, exact["ple_projection_linear"]).max()),
            "projection_all_inside_envelope": bool(inside.all()),
            "ple_bit_exact_vs_chained_emulation": bool(
                np.array_equal(result.per_layer_inputs, chained["per_layer_inputs"])
            ),
            "ple_max_bf16_ulp_vs_exact_emulation": int(
                bf16_ulp_distance(result.per_layer_inputs, exact["per_layer_inputs"]).max()
            ),
            "rel_l2_inputs_embeds_vs_f64_spec": relative_l2(result.inputs_embeds, ref_e),
            "rel_l2_per_layer_inputs_vs_f64_spec": relative_l2(result.per_layer_inputs, ref_ple),
            "total_s": round(time.perf_counter() - started, 1),
        }
    )
    bad = np.argwhere(result.per_layer_inputs != chained["per_layer_inputs"])
    report["ple_elements_differing_vs_chained"] = int(len(bad))
    report["ple_first_differences"] = [
        {
            "index": [int(v) for v in i],
            "got": float(result.per_layer_inputs[tuple(i)]),
            "want": float(chained["per_layer_inputs"][tuple(i)]),
            "normed": float(chained["ple_normed"][tuple(i)]),
            "token": float(chained["ple_token"].reshape(chained["ple_normed"].shape)[tuple(i)]),
            "row_elements_differing": int(
                (result.per_layer_inputs[i[0], i[1]] != chained["per_layer_inputs"][i[0], i[1]]).sum()
            ),
        }
        for i in bad[:6]
    ]
    tag = f"{args.variant}_{args.target}_{args.contract}"
    result.save(args.out / f"prefill_{tag}.npz")
    (args.out / f"report_{tag}.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
