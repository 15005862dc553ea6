"""`gemma3n-iree generate`: a prompt about any number of audio files in, the model's answer out.

Built like `transcribe` around a decoder factory (`make_generate_command(factory)`): runtime/commands/cli.py
registers it with `transcribe_cli.compiled_decoder`, a decoder program sized for this one prompt (one slot, the
prompt's bucket, capacity for `--max-new-tokens`), built through the artifact cache.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

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
        "--json",
        "as_json",
        is_flag=True,
        help="Print one JSON document instead of streaming the text: the generated token ids, text, finish "
        "reason (stop or length), prompt tokens, clips per file and timings.",
    )
    @decoder_stage_options("the prompt")
    @click.argument("files", nargs=-1, type=EXISTING_FILE)
    def generate(
        checkpoint: Path,
        prompt: str,
        system: str | None,
        max_new_tokens: int,
        as_json: bool,
        capacities: tuple[int, ...],
        prefill_artifact: Path | None,
        decoder_artifact: Path | None,
        kernels: str,
        files: tuple[Path, ...],
        **options,
    ) -> None:
        """Answer --prompt about audio FILES (greedy decoding), streaming the text to stdout as it is decided.

        Every file is used whole: a file longer than 30 s becomes several adjacent 30 s clips in the one
        prompt.  The prompt's length is checked against the model's context before anything is compiled.
        The encoder, prefill and decoder programs are compiled for --target on first use and cached (or given
        with --artifact, --prefill-artifact, --decoder-artifact).  Progress goes to stderr.
        """
        from ..text.ask import answer, prepare

        started = time.perf_counter()
        with errors_as_messages():
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
            )
            decoder = decoder_factory(needs)
            stops = stop_token_ids(
                checkpoint, CheckpointConfig.read(checkpoint).decoder.eos_token_ids, prefill.tokenizer
            )
            say(f"stages ready in {time.perf_counter() - started:.1f} s")

            def stream(event: TokenEvent) -> None:
                sys.stdout.write(event.text)
                sys.stdout.flush()

            result = answer(prefill, decoder, stops, prepared, max_new_tokens, None if as_json else stream)
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "token_ids": result.token_ids,
                        "text": result.text,
                        "finish_reason": result.finish_reason,
                        "prompt_tokens": result.prompt_tokens,
                        "clips_per_file": list(result.clips_per_file),
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
