"""How often greedy decoding of a random Gemma 3n meets near-ties, and where our contracts leave transformers.

For each seed (a new random tiny model with audio, tests/oracles/hf_audio_model.py, written as one checkpoint)
and each audio input, this runs speech -> tokens for `--tokens` steps (stop ids off) five ways:

* ours under f32-reference and under mlx-cuda-v1: the product's compiled encoder and prefill stages (llvm-cpu)
  and the contract's emulation of the decoder (runtime/text/transcribe.py, runtime/text/emulated_decoder.py), or with
  `--decoder compiled` the compiled decoder program (llvm-cpu, runtime/text/transcribe_decoder.py; one program per
  contract serves every seed: weights are parameters), whose mlx-cuda-v1 ids are also compared with the
  emulation's (`mlx_compiled_equals_emulated`);
* transformers `generate(do_sample=False)` in fp32 and as `from_pretrained(dtype=bf16)` gives it.

and reports, per case:

* whether f32-reference's ids equal transformers-fp32's (the exactness tests/test_transcribe.py pins);
* the first step where mlx-cuda-v1 and transformers-bf16 pick different tokens, and whether that is inside
  the envelope: at that step (both have the same prefix), transformers-fp32's logit gap between the two
  picked tokens against how far each bf16-level run's logits are from fp32's there (max |diff| over the
  vocabulary): a divergence is "inside" when the fp32 gap is at most the sum of the two runs' errors;
* near-ties along fp32's own trajectory: the fraction of steps whose fp32 top-2 gap is below the median
  |bf16 - fp32| logit error (teacher-forced on fp32's tokens), i.e. steps where BF16-size noise can flip
  the greedy choice.

    python scripts/greedy_near_ties.py --seeds 10 --out near_ties.json      # CPU, about 30 s per case
    python scripts/greedy_near_ties.py --seeds 3 --decoder compiled --out near_ties_compiled.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

SPEECH = ROOT / "tests" / "data" / "speech_16k.wav"


def audio_inputs() -> dict[str, np.ndarray]:
    from gemma3n_iree.runtime.audio.frontend import load_audio

    speech = load_audio(SPEECH)[0]
    return {"speech": speech, "speech-reversed": np.ascontiguousarray(speech[::-1])}


def first_difference(a: list[int], b: list[int]) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def run_case(
    seed: int, audio: dict[str, np.ndarray], tokens: int, cache, workdir: Path, decoder_kind: str = "emulated"
) -> list[dict]:
    from oracles import hf_audio_model as A
    from oracles.configs import TINY

    from gemma3n_iree.model.decoder_config import builtin_decoder_config
    from gemma3n_iree.runtime.text.emulated_decoder import EmulatedDecoder
    from gemma3n_iree.runtime.text.transcribe import DEFAULT_PROMPT, Transcriber
    from gemma3n_iree.runtime.text.transcribe_decoder import load_transcription_decoder

    cfg = builtin_decoder_config("tiny")
    model = A.make_model(TINY, cfg, seed=seed)
    directory = A.write_checkpoint(model, workdir / f"seed{seed}")
    model16 = A.load_bf16(model)
    transcribers = {}
    for contract in ("f32-reference", "mlx-cuda-v1"):
        decoder = EmulatedDecoder(directory, contract, slots=1, capacity=256)
        t = Transcriber(
            directory,
            decoder,
            contract=contract,
            cache=cache,
            capacities=(256,),
            encoder_options={"frame_buckets": (2997,)},
        )
        t.stop_ids = frozenset()
        transcribers[contract] = t
    ids = transcribers["f32-reference"].prefill.expand(DEFAULT_PROMPT, [1])
    emulated_mlx = transcribers["mlx-cuda-v1"]
    if decoder_kind == "compiled":
        for contract, t in list(transcribers.items()):
            program = load_transcription_decoder(
                directory, "llvm-cpu", contract, prompt_tokens=len(ids), max_new_tokens=tokens, slots=1, cache=cache
            )
            compiled = Transcriber(directory, program, prefill=t.prefill)
            compiled.stop_ids = frozenset()
            transcribers[contract] = compiled
    out = []
    for name, samples in audio.items():
        ours = {
            c: t.transcribe_audio([(name, samples)], DEFAULT_PROMPT, tokens, logprobs=False).files[0].windows[0]
            for c, t in transcribers.items()
        }
        hf32 = A.generate_ids(model, ids, samples, tokens)
        hf16 = A.generate_ids(model16, ids, samples, tokens)
        mlx = ours["mlx-cuda-v1"].tokens
        case = {
            "seed": seed,
            "audio": name,
            "decoder": decoder_kind,
            "f32_reference_equals_fp32": ours["f32-reference"].tokens == hf32,
            "f32_reference_first_difference": first_difference(ours["f32-reference"].tokens, hf32),
            "bf16_first_difference_from_fp32": first_difference(hf16, hf32),
            "mlx_first_difference_from_fp32": first_difference(mlx, hf32),
        }
        if decoder_kind == "compiled":
            emulated = emulated_mlx.transcribe_audio([(name, samples)], DEFAULT_PROMPT, tokens).files[0].windows[0]
            case["mlx_compiled_equals_emulated"] = emulated.tokens == mlx
            case["mlx_compiled_first_difference_from_emulated"] = first_difference(mlx, emulated.tokens)
        k = first_difference(mlx, hf16)
        case["mlx_first_difference_from_bf16"] = k
        if k is not None:
            prefix = mlx[: k + 1]
            fp32_logits = A.step_logits(model, ids, samples, prefix)[k]
            bf16_logits = A.step_logits(model16, ids, samples, hf16[: k + 1])[k]
            ours_logits = _our_logits(transcribers["mlx-cuda-v1"], ids, samples, prefix)
            a, b = mlx[k], hf16[k]
            gap = abs(float(fp32_logits[a] - fp32_logits[b]))
            err_ours = float(np.abs(ours_logits - fp32_logits).max())
            err_bf16 = float(np.abs(bf16_logits - fp32_logits).max())
            case.update(
                contested=[int(a), int(b)],
                fp32_gap=gap,
                mlx_logit_error=err_ours,
                bf16_logit_error=err_bf16,
                inside_envelope=gap <= err_ours + err_bf16,
                fp32_top2_gap=_top2_gap(fp32_logits),
            )
        # near-ties along fp32's trajectory (teacher-forced)
        fp32_steps = A.step_logits(model, ids, samples, hf32)
        bf16_steps = A.step_logits(model16, ids, samples, hf32)
        gaps = np.array([_top2_gap(row) for row in fp32_steps])
        noise = float(np.median(np.abs(bf16_steps - fp32_steps).max(axis=1)))
        case.update(
            median_bf16_logit_error=noise,
            near_tie_steps=int((gaps < noise).sum()),
            steps=len(gaps),
            min_fp32_top2_gap=float(gaps.min()),
            median_fp32_top2_gap=float(np.median(gaps)),
        )
        out.append(case)
        print(json.dumps(case), flush=True)
    return out


def _top2_gap(row: np.ndarray) -> float:
    top = np.partition(np.asarray(row, np.float64), -2)[-2:]
    return float(top[1] - top[0])


def _our_logits(transcriber, ids, samples, prefix: list[int]) -> np.ndarray:
    """mlx-cuda-v1's logits at the last step of `prefix` (prefill, then the prefix's tokens but the last)."""

    encoder = transcriber.prefill.encoder
    features = encoder.encode_clips(encoder.clips_from_samples(samples, 0)).audio_features
    inputs = transcriber.prefill.run(ids, features)
    decoder = transcriber.decoder
    logits = decoder.prefill(0, inputs.inputs_embeds, inputs.per_layer_inputs)
    for i, token in enumerate(prefix[:-1]):
        logits = decoder.decode([0], [len(ids) + i], [token])[0]
    return np.asarray(logits, np.float64)


def summarize(cases: list[dict]) -> dict:
    diverged = [c for c in cases if c["mlx_first_difference_from_bf16"] is not None]
    steps = sum(c["steps"] for c in cases)
    return {
        "cases": len(cases),
        "f32_reference_exact": sum(c["f32_reference_equals_fp32"] for c in cases),
        "mlx_vs_bf16_diverged": len(diverged),
        "mlx_vs_bf16_first_difference_steps": sorted(c["mlx_first_difference_from_bf16"] for c in diverged),
        "divergences_inside_envelope": sum(c["inside_envelope"] for c in diverged),
        "bf16_vs_fp32_diverged": sum(c["bf16_first_difference_from_fp32"] is not None for c in cases),
        "mlx_vs_fp32_diverged": sum(c["mlx_first_difference_from_fp32"] is not None for c in cases),
        "near_tie_steps": sum(c["near_tie_steps"] for c in cases),
        "steps": steps,
        "near_tie_fraction": sum(c["near_tie_steps"] for c in cases) / steps if steps else None,
        **(
            {"mlx_compiled_equals_emulated": sum(c["mlx_compiled_equals_emulated"] for c in cases)}
            if any("mlx_compiled_equals_emulated" in c for c in cases)
            else {}
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="random models (seeds 0 .. N-1)")
    ap.add_argument("--tokens", type=int, default=32, help="greedy steps per case")
    ap.add_argument("--out", type=Path, default=None, help="write every case and the summary as JSON")
    ap.add_argument(
        "--decoder",
        choices=["emulated", "compiled"],
        default="emulated",
        help="the decoder under our stages: the contract's emulation or the compiled program (llvm-cpu)",
    )
    args = ap.parse_args()
    from gemma3n_iree.runtime.programs.artifacts import ArtifactCache

    started = time.perf_counter()
    cases: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = ArtifactCache(Path(tmp) / "cache")
        for seed in range(args.seeds):
            cases += run_case(seed, audio_inputs(), args.tokens, cache, Path(tmp), args.decoder)
    summary = summarize(cases)
    summary["seconds"] = time.perf_counter() - started
    print(json.dumps(summary, indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps({"summary": summary, "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
