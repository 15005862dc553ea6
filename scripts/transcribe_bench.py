"""Speech in, text out on the H200: our transcription against transformers', and the server under load.

Run by scripts/gpu_transcribe.sh (one GPU call, JSON lines to $OUT); every part also runs on the CPU with the
tiny configuration (tests/test_transcribe.py::test_gpu_benchmark_runs_on_the_cpu_with_the_tiny_model), so
nothing here is first run on the GPU.

    python scripts/transcribe_bench.py checkpoint --dir /tmp/ckpt17 --variant e4b
    python scripts/transcribe_bench.py ours --checkpoint /tmp/ckpt17 --target cuda --encoder-artifact E \
        --prefill-artifact P --decoder-artifact D --counts 1 8 64 --new-tokens 64
    python scripts/transcribe_bench.py torch --checkpoint /tmp/ckpt17 --variant e4b --mode eager --counts 1 8 64
    python scripts/transcribe_bench.py server --url http://127.0.0.1:8080 --model ckpt17 --concurrency 1 16 64

* `checkpoint`: a deterministic random checkpoint of the variant's real shapes (the audio tower,
  `runtime/synthetic.py`; every decoder tensor, `tests/synthetic_text.py: add_random_decoder_tensors`, streamed:
  13.7 GB for E4B) with the test tokenizer (Gemma 3n's special tokens at their real ids; random weights
  produce ids it has no text for, which decode to nothing: the text is meaningless, the token counts are real).
* `ours`: `runtime.text.transcribe.Transcriber` (log-mel -> encoder -> prefill stage -> compiled decoder) on N
  clips of 30 s (the bundled speech tiled), each its own window, exactly `--new-tokens` tokens each (stop ids
  off: random weights emit EOS at any time).  Per N: wall time (median of --repeats after a warm-up), the
  real-time factor (wall / audio seconds) and tokens/s (N x new tokens / wall), and the stages' split with the
  time to the first token (`stages_s.first_token`: from the call's start).
* `torch`: transformers' `Gemma3nForConditionalGeneration` (the tests' no-vision subclass: timm is not
  needed, everything else transformers' own) with random weights of the same shapes (its own init, on the
  GPU, bf16, SDPA), the same N clips through its feature extractor and `generate(do_sample=False,
  max_new_tokens=min_new_tokens=64)` with the same prompt ids, batched N at once; `--mode compile` wraps the
  model's forward in `torch.compile(dynamic=True)` (run it in its own process with a time limit).
* `server`: N concurrent clients (each sending its share of `--requests` 30 s clips, one at a time) against
  `gemma3n-iree serve`'s `/v1/audio/transcriptions`; per concurrency: requests/s, audio seconds per second,
  output tokens/s (from each answer's usage) and latency percentiles.  The server keeps its stop ids (an API
  user's behaviour): tokens are counted, not fixed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
SPEECH = ROOT / "tests" / "data" / "speech_16k.wav"
RATE = 16000
CLIP_S = 30.0


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def clip_samples(seconds: float = CLIP_S) -> np.ndarray:
    """The bundled speech with short pauses, tiled to `seconds` (float32, 16 kHz)."""
    import soundfile as sf

    speech, rate = sf.read(SPEECH, dtype="float32")
    assert rate == RATE and speech.ndim == 1
    one = np.concatenate([speech, np.zeros(RATE // 5, np.float32)])
    n = int(seconds * RATE)
    return np.tile(one, n // len(one) + 1)[:n]


# ---------------------------------------------------------------------------------------------- checkpoint
def make_checkpoint(args: argparse.Namespace) -> None:
    from synthetic_text import add_random_decoder_tensors, write_test_tokenizer

    from gemma3n_iree.model.audio_config import builtin_config
    from gemma3n_iree.model.decoder_config import builtin_decoder_config
    from gemma3n_iree.runtime.synthetic import write_random_checkpoint

    started = time.perf_counter()
    directory = Path(args.dir)
    write_random_checkpoint(directory, builtin_config(args.variant), seed=0)
    add_random_decoder_tensors(directory, builtin_decoder_config(args.variant), seed=0)
    write_test_tokenizer(directory)
    size = sum(p.stat().st_size for p in directory.iterdir())
    emit(
        {
            "part": "checkpoint",
            "variant": args.variant,
            "dir": str(directory),
            "bytes": size,
            "seconds": round(time.perf_counter() - started, 1),
        }
    )


# ---------------------------------------------------------------------------------------------- ours
def bench_ours(args: argparse.Namespace) -> None:
    from gemma3n_iree.runtime.programs.artifacts import ArtifactCache
    from gemma3n_iree.runtime.text.prefill import AudioPrefill
    from gemma3n_iree.runtime.text.transcribe import DEFAULT_PROMPT, Transcriber
    from gemma3n_iree.runtime.text.transcribe_decoder import load_transcription_decoder

    started = time.perf_counter()

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    cache = ArtifactCache(Path(args.cache_dir) if args.cache_dir else None)
    widths = tuple(sorted({min(c, args.max_clips_per_call) for c in (1, 8, 32, 64)}))
    prefill = AudioPrefill(
        args.checkpoint,
        target=args.target,
        contract=args.contract,
        cache=cache,
        capacities=(256,),
        artifact=args.prefill_artifact,
        progress=say,
        encoder_options={"frame_buckets": (2997,), "clips_per_call": widths, "artifact": args.encoder_artifact},
    )
    prompt_tokens = len(prefill.expand(DEFAULT_PROMPT, [1]))
    decoder = load_transcription_decoder(
        args.checkpoint,
        args.target,
        args.contract,
        prompt_tokens=prompt_tokens,
        max_new_tokens=args.new_tokens,
        slots=max(args.counts),
        cache=cache,
        artifact=args.decoder_artifact,
        progress=say,
    )
    transcriber = Transcriber(args.checkpoint, decoder, prefill=prefill)
    transcriber.stop_ids = frozenset()  # a fixed output length: random weights emit EOS at any time
    samples = clip_samples()
    emit(
        {
            "part": "ours",
            "event": "loaded",
            "seconds": round(time.perf_counter() - started, 2),
            "prompt_tokens": prompt_tokens,
            "decoder": {
                "slots": decoder.slots,
                "capacity": decoder.capacity,
                "decode_widths": list(decoder.decode_widths),
            },
        }
    )
    for count in args.counts:
        items = [(f"clip{i}", samples) for i in range(count)]
        transcriber.transcribe_audio(items[: min(count, 8)], DEFAULT_PROMPT, args.new_tokens)  # warm-up
        runs = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            run = transcriber.transcribe_audio(items, DEFAULT_PROMPT, args.new_tokens)
            runs.append((time.perf_counter() - t, run))
        wall, run = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        tokens = sum(f.tokens for f in run.files)
        assert tokens == count * args.new_tokens, (tokens, count)
        emit(
            {
                "part": "ours",
                "target": args.target,
                "contract": args.contract,
                "clips": count,
                "audio_s": count * CLIP_S,
                "new_tokens": args.new_tokens,
                "wall_s": round(wall, 4),
                "real_time_factor": round(wall / (count * CLIP_S), 6),
                "tokens_per_s": round(tokens / wall, 1),
                "stages_s": {k: round(v, 4) for k, v in run.timings.items()},
                "all_wall_s": [round(r[0], 4) for r in runs],
            }
        )


# ---------------------------------------------------------------------------------------------- transformers
def bench_torch(args: argparse.Namespace) -> None:
    import torch
    from oracles import configs
    from oracles import hf_audio_model as A

    from gemma3n_iree.model.checkpoint_config import CheckpointConfig
    from gemma3n_iree.model.decoder_config import builtin_decoder_config
    from gemma3n_iree.runtime.text.tokens import expand_prompt, load_tokenizer
    from gemma3n_iree.runtime.text.transcribe import DEFAULT_PROMPT

    started = time.perf_counter()
    device = torch.device(args.device)
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    audio = configs.REAL if args.variant != "tiny" else configs.TINY
    config = A.hf_config(audio, builtin_decoder_config(args.variant))
    config._attn_implementation = config.text_config._attn_implementation = args.attention
    torch.manual_seed(0)
    with device:
        model = A.NoVisionGemma3nForConditionalGeneration(config).to(dtype).eval()
    model.generation_config.eos_token_id = None
    forward = model.forward
    if args.mode == "compile":
        model.forward = torch.compile(forward, dynamic=True)
    text = CheckpointConfig.read(args.checkpoint).text
    ids = expand_prompt(load_tokenizer(args.checkpoint, text), text, DEFAULT_PROMPT, [1], True)
    samples = clip_samples()

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    emit(
        {
            "part": "torch",
            "event": "loaded",
            "mode": args.mode,
            "seconds": round(time.perf_counter() - started, 2),
            "prompt_tokens": len(ids),
        }
    )

    @torch.no_grad()
    def transcribe(count: int) -> int:
        feats = [A.features(samples) for _ in range(count)]  # the feature extractor per clip, as a pipeline does
        features = torch.cat([f["input_features"] for f in feats]).to(device, dtype)
        mask = torch.cat([f["input_features_mask"] for f in feats]).to(device)
        input_ids = torch.tensor([list(map(int, ids))] * count, device=device)
        out = model.generate(
            input_ids=input_ids,
            input_features=features,
            input_features_mask=mask,
            do_sample=False,
            max_new_tokens=args.new_tokens,
            min_new_tokens=args.new_tokens,
            pad_token_id=0,
        )
        sync()
        return int(out.shape[1] - input_ids.shape[1]) * count

    for count in args.counts:
        try:
            transcribe(min(count, 8))  # warm-up (and, compiled, the compilation)
            runs = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                tokens = transcribe(count)
                runs.append(time.perf_counter() - t)
        except torch.OutOfMemoryError as exc:
            emit({"part": "torch", "mode": args.mode, "clips": count, "error": f"out of memory: {exc}"[:300]})
            torch.cuda.empty_cache()
            continue
        wall = statistics.median(runs)
        assert tokens == count * args.new_tokens, (tokens, count)
        emit(
            {
                "part": "torch",
                "mode": args.mode,
                "dtype": args.dtype,
                "attention": args.attention,
                "clips": count,
                "audio_s": count * CLIP_S,
                "new_tokens": args.new_tokens,
                "wall_s": round(wall, 4),
                "real_time_factor": round(wall / (count * CLIP_S), 6),
                "tokens_per_s": round(tokens / wall, 1),
                "all_wall_s": [round(r, 4) for r in runs],
            }
        )


# ---------------------------------------------------------------------------------------------- the server
def bench_server(args: argparse.Namespace) -> None:
    import io

    import aiohttp
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, clip_samples(), RATE, format="WAV", subtype="PCM_16")
    audio = buf.getvalue()

    retries = [0]

    async def one(session: aiohttp.ClientSession) -> tuple[float, int]:
        """One request, retried as told when the server says 429/503 + Retry-After (counted)."""
        t = time.perf_counter()
        while True:
            form = aiohttp.FormData()
            form.add_field("file", audio, filename="clip.wav", content_type="audio/wav")
            form.add_field("model", args.model)
            async with session.post(f"{args.url}/v1/audio/transcriptions", data=form) as response:
                body = await response.json()
                if response.status in (429, 503) and "Retry-After" in response.headers:
                    retries[0] += 1
                    await asyncio.sleep(float(response.headers["Retry-After"]))
                    continue
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}: {body}")
            return time.perf_counter() - t, int(body["usage"]["output_tokens"])

    async def decoder_counts(session: aiohttp.ClientSession) -> dict[str, int]:
        async with session.get(f"{args.url}/metrics") as response:
            report = (await response.json())["transcription"]
        keys = ("decode_steps", "decode_rows", "prefill_steps", "prefill_rows", "prefill_stage_calls")
        return {k: int(report[k]) for k in keys}

    async def level(concurrency: int) -> dict:
        total = max(args.requests, concurrency)
        timeout = aiohttp.ClientTimeout(total=args.timeout)
        async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            await one(session)  # warm-up
            before = await decoder_counts(session)
            queue = list(range(total))
            results: list[tuple[float, int]] = []

            async def client() -> None:
                while queue:
                    queue.pop()
                    results.append(await one(session))

            t = time.perf_counter()
            await asyncio.gather(*(client() for _ in range(concurrency)))
            wall = time.perf_counter() - t
            after = await decoder_counts(session)
        calls = {k: after[k] - before[k] for k in after}
        latencies = sorted(r[0] for r in results)
        tokens = sum(r[1] for r in results)

        def pct(q: float) -> float:
            return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 4)

        return {
            "part": "server",
            "concurrency": concurrency,
            "requests": total,
            "retries": retries[0],
            "wall_s": round(wall, 3),
            "requests_per_s": round(total / wall, 3),
            "audio_s_per_s": round(total * CLIP_S / wall, 2),
            "output_tokens": tokens,
            "tokens_per_s": round(tokens / wall, 1),
            "latency_s": {"p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "max": latencies[-1]},
            # this level's decoder calls alone (the server's /metrics count from its start)
            "decode_calls": calls["decode_steps"],
            "mean_decode_width": round(calls["decode_rows"] / calls["decode_steps"], 2)
            if calls["decode_steps"]
            else None,
            "prefill_calls": calls["prefill_steps"],
            "mean_prefill_width": (
                round(calls["prefill_rows"] / calls["prefill_steps"], 2) if calls["prefill_steps"] else None
            ),
            "prefill_stage_calls": calls["prefill_stage_calls"],
        }

    for concurrency in args.concurrency:
        retries[0] = 0
        emit(asyncio.run(level(concurrency)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("checkpoint", help="write the random checkpoint of a variant's real shapes")
    p.add_argument("--dir", required=True)
    p.add_argument("--variant", choices=["e2b", "e4b", "tiny"], default="e4b")
    p = sub.add_parser("ours", help="our transcription of N 30 s clips")
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--target", choices=["cuda", "llvm-cpu"], default="cuda")
    p.add_argument("--contract", default="mlx-cuda-v1")
    p.add_argument("--encoder-artifact", type=Path, default=None)
    p.add_argument("--prefill-artifact", type=Path, default=None)
    p.add_argument("--decoder-artifact", type=Path, default=None)
    p.add_argument("--cache-dir", default=None, help="artifact cache for what is not given (compiles: CPU only)")
    p.add_argument("--max-clips-per-call", type=int, default=32)
    p = sub.add_parser("torch", help="transformers' generate on N 30 s clips")
    p.add_argument("--checkpoint", type=Path, required=True, help="for the tokenizer and text configuration")
    p.add_argument("--variant", choices=["e2b", "e4b", "tiny"], default="e4b")
    p.add_argument("--mode", choices=["eager", "compile"], default="eager")
    p.add_argument("--device", default="cuda")
    p.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    p.add_argument("--attention", choices=["sdpa", "eager"], default="sdpa")
    for name in ("ours", "torch"):
        p = sub.choices[name]
        p.add_argument("--counts", type=int, nargs="+", default=[1, 8, 64])
        p.add_argument("--new-tokens", type=int, default=64)
        p.add_argument("--repeats", type=int, default=3)
    p = sub.add_parser("server", help="the server's throughput and latency at several concurrencies")
    p.add_argument("--url", required=True)
    p.add_argument("--model", required=True, help="the served model name (the checkpoint directory's name)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    p.add_argument("--requests", type=int, default=64, help="requests per level (at least the concurrency)")
    p.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    parts = {"checkpoint": make_checkpoint, "ours": bench_ours, "torch": bench_torch, "server": bench_server}
    parts[args.command](args)


if __name__ == "__main__":
    main()
