"""`gemma3n-iree generate`: a prompt about any number of audio files in, the model's answer out.

Built like `transcribe` around a decoder factory (`make_generate_command(factory)`): runtime/commands/cli.py
registers it with `transcribe_cli.compiled_decoder`, a decoder program sized for this one prompt (one slot, the
prompt's bucket, capacity for `--max-new-tokens`, the sampler with `--temperature`), built through the artifact
cache. Greedy decoding is the default; `--temperature` draws each token on the device
(`contracts/sampling.py`), reproducibly for a given `--seed`.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sys
import time
from pathlib import Path

import click

from ...contracts.sampling import GEMMA_TOP_K, GEMMA_TOP_P, MAX_TOP_K, SamplingParams
from ...model.checkpoint_config import CheckpointConfig
from ..programs.artifacts import ArtifactCache
from ..text.generate import TokenEvent, stop_token_ids
from .cli_options import (
    EXISTING_FILE,
    checkpoint_option,
    decoder_stage_options,
    errors_as_messages,
    max_new_tokens_option,
    prefill_stage,
    say,
)
from .transcribe_cli import DecoderFactory, DecoderNeeds

DEFAULT_MAX_NEW_TOKENS = 256
#: The options that only mean something when sampling.
SAMPLING_ONLY = ("top_k", "top_p", "seed")


def sampling_params(
    ctx: click.Context, temperature: float, top_k: int, top_p: float, seed: int | None
) -> SamplingParams | None:
    """The sampling the options ask for: None (greedy) at temperature 0, where giving --top-k, --top-p or
    --seed is refused rather than ignored; otherwise those, with a seed drawn here when none is given."""
    if temperature == 0:
        given = [n for n in SAMPLING_ONLY if ctx.get_parameter_source(n) is click.core.ParameterSource.COMMANDLINE]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise click.UsageError(f"{flags} apply only when sampling: give --temperature > 0 (0 decodes greedily)")
        return None
    return SamplingParams(temperature, top_k, top_p, secrets.randbits(32) if seed is None else seed)


def make_generate_command(decoder_factory: DecoderFactory) -> click.Command:
    """The `generate` command running its decoder from `decoder_factory`."""

    @click.command("generate")
    @checkpoint_option("Checkpoint directory (config.json, safetensors, tokenizer.json).")
    @click.option(
        "--prompt",
        required=True,
        help="What to ask about the audio (Gemma 3n's chat format): one <audio_soft_token> marker per FILE "
        "places each file's audio, in order; with none, the audio comes first.",
    )
    @click.option("--system", default=None, help="A system instruction (put before the prompt in the user turn).")
    @max_new_tokens_option(DEFAULT_MAX_NEW_TOKENS)
    @click.option(
        "--temperature",
        type=click.FloatRange(0),
        default=0.0,
        show_default=True,
        help="0 decodes greedily (exact, the default); above 0 each token is drawn on the device from the "
        "softmax of logits / temperature, limited by --top-k and --top-p.",
    )
    @click.option(
        "--top-k",
        type=click.IntRange(1, MAX_TOP_K),
        default=GEMMA_TOP_K,
        show_default=True,
        help="Sampling: draw from at most this many most likely tokens (Gemma 3n's generation_config.json).",
    )
    @click.option(
        "--top-p",
        type=click.FloatRange(0, 1, min_open=True),
        default=GEMMA_TOP_P,
        show_default=True,
        help="Sampling: keep the most likely tokens whose probabilities sum to this (Gemma 3n's "
        "generation_config.json).",
    )
    @click.option(
        "--seed",
        type=click.IntRange(0, 2**32 - 1),
        default=None,
        help="Sampling: the 32-bit seed (default: a random one, printed). The same seed, prompt and audio "
        "give the same tokens.",
    )
    @click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print one JSON document instead of streaming the text: the generated token ids, text, finish "
        "reason (stop or length), prompt tokens, clips per file, the sampling (null when greedy) and timings.",
    )
    @decoder_stage_options("the prompt")
    @click.argument("files", nargs=-1, type=EXISTING_FILE)
    @click.pass_context
    def generate(
        ctx: click.Context,
        checkpoint: Path,
        prompt: str,
        system: str | None,
        max_new_tokens: int,
        temperature: float,
        top_k: int,
        top_p: float,
        seed: int | None,
        as_json: bool,
        capacities: tuple[int, ...],
        prefill_artifact: Path | None,
        decoder_artifact: Path | None,
        kernels: str,
        files: tuple[Path, ...],
        **options,
    ) -> None:
        """Answer --prompt about audio FILES (greedy decoding, or sampled with --temperature), streaming the
        text to stdout as it is decided.

        Every file is used whole: a file longer than 30 s becomes several adjacent 30 s clips in the one
        prompt.  The prompt's length is checked against the model's context before anything is compiled.
        The encoder, prefill and decoder programs are compiled for --target on first use and cached (or given
        with --artifact, --prefill-artifact, --decoder-artifact).  Progress goes to stderr.
        """
        from ..text.ask import answer, prepare

        started = time.perf_counter()
        with errors_as_messages():
            sampling = sampling_params(ctx, temperature, top_k, top_p, seed)
            cache = ArtifactCache(options.get("cache_dir"))
            prefill = prefill_stage(checkpoint, options, capacities, prefill_artifact, cache)
            prepared = prepare(prefill, prompt, files, system, options.get("max_seconds"))
            say(
                f"prompt: {len(prepared.ids)} tokens ({sum(prepared.clips_per_file)} clip(s) of audio from "
                f"{len(files)} file(s))"
            )
            needs = DecoderNeeds(
                checkpoint,
                options["target"],
                options["contract"],
                1,
                len(prepared.ids),
                max_new_tokens,
                cache,
                options.get("cuda_arch"),
                kernels,
                decoder_artifact,
                say,
                sampling=sampling is not None,
            )
            decoder = decoder_factory(needs)
            stops = stop_token_ids(
                checkpoint, CheckpointConfig.read(checkpoint).decoder.eos_token_ids, prefill.tokenizer
            )
            say(f"stages ready in {time.perf_counter() - started:.1f} s")
            if sampling is not None:
                say(
                    f"sampling: temperature {sampling.temperature}, top-k {sampling.top_k}, top-p "
                    f"{sampling.top_p}, seed {sampling.seed}"
                )

            def stream(event: TokenEvent) -> None:
                sys.stdout.write(event.text)
                sys.stdout.flush()

            result = answer(prefill, decoder, stops, prepared, max_new_tokens, None if as_json else stream, sampling)
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "token_ids": result.token_ids,
                        "text": result.text,
                        "finish_reason": result.finish_reason,
                        "prompt_tokens": result.prompt_tokens,
                        "clips_per_file": list(result.clips_per_file),
                        "sampling": None if sampling is None else dataclasses.asdict(sampling),
                        "timings_s": result.timings,
                    },
                    indent=1,
                )
            )
        else:
            click.echo()
        say(
            f"{len(result.token_ids)} token(s) ({result.finish_reason}) in {result.timings['generate']:.2f} s, "
            f"first after {result.timings['first_token']:.2f} s"
        )

    return generate
