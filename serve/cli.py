"""`gemma3n-iree serve`: its options, the limits they become, and the server built from them (serve/launch.py);
registered on the `gemma3n-iree` group by runtime/commands/cli.py."""

from __future__ import annotations

from pathlib import Path

import click

from ..runtime.commands.cli_options import (
    PREFILL_ARTIFACT_HELP,
    artifact_option,
    capacity_option,
    checkpoint_option,
    encoder_options,
    errors_as_messages,
    say,
)
from ..runtime.encoder.batching import DEFAULT_MAX_BATCH_CLIPS, power_of_two_widths


@click.command()
@checkpoint_option("A Gemma 3n checkpoint directory (prefill also needs its text tensors and tokenizer.json).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option(
    "--max-queue",
    type=click.IntRange(1),
    default=256,
    show_default=True,
    help="Unfinished requests admitted at once; beyond it submissions get 429 + Retry-After.",
)
@click.option(
    "--max-batch-clips",
    type=click.IntRange(1, 256),
    default=None,
    help="Widest encoder call used; without --clips-per-call, widths 1, 2, 4 ... up to it are compiled "
    "(default: "
    + ", ".join(f"{t} {n}" for t, n in DEFAULT_MAX_BATCH_CLIPS.items())
    + ": a GPU is filled only by wide calls).",
)
@click.option(
    "--max-memory-mb",
    type=click.IntRange(1),
    default=4096,
    show_default=True,
    help="Host memory budget of uploads, admitted requests and held results; beyond it 503 + Retry-After "
    "(a request that could never fit it: 413).",
)
@click.option(
    "--max-upload-mb",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    help="Largest audio upload; beyond it 413 (a form may add the prompt and 64 KiB of fields).",
)
@click.option(
    "--max-concurrent-uploads",
    type=click.IntRange(1),
    default=None,
    help="Bodies received at once; each reserves its Content-Length (a body without one: --max-upload-mb) "
    "of the memory budget before it is read. Beyond it 503 + Retry-After (default: --max-queue, the "
    "requests they could become).",
)
@click.option(
    "--max-client-uploads",
    type=click.IntRange(1),
    default=None,
    help="Bodies one client (connection address) sends at once, so clients that stall mid-body cannot "
    "keep others out; beyond it 429 + Retry-After (default: half of --max-concurrent-uploads).",
)
@click.option(
    "--upload-timeout",
    type=click.FloatRange(0.1),
    default=30.0,
    show_default=True,
    help="Seconds an upload may pause between two pieces (and ten times that in all); beyond it 408.",
)
@click.option(
    "--max-client-held-mb",
    type=click.IntRange(1),
    default=None,
    help="Finished results one client (connection address) may leave unfetched; beyond it its new "
    "submissions get 429 (default: a quarter of --max-memory-mb).",
)
@click.option(
    "--max-wait-ms",
    type=click.FloatRange(0),
    default=5.0,
    show_default=True,
    help="How long a partly filled call may wait for more clips while front-end work is pending.",
)
@click.option(
    "--result-ttl",
    type=click.FloatRange(0.1),
    default=600.0,
    show_default=True,
    help="Seconds a finished result (or error) is kept when nobody fetches it.",
)
@click.option(
    "--frontend-workers",
    type=click.IntRange(1),
    default=None,
    help="Threads decoding audio and computing log-mel features, BLAS pinned to one thread each "
    "(default: this machine's cores).",
)
@click.option(
    "--prefill/--no-prefill",
    default=True,
    show_default=True,
    help="Offer /v1/prefill (needs the checkpoint's text tensors and tokenizer.json; else 501).",
)
@capacity_option("Prefill context capacities (repeatable; default 256 ... 8192, compiled on first use).")
@artifact_option("--prefill-artifact", PREFILL_ARTIFACT_HELP)
@click.option(
    "--decoder-slots",
    type=click.IntRange(0, 256),
    default=None,
    help="Sequences decoded at once: the windows of /v1/audio/transcriptions and /translations and the "
    "chats of /v1/chat/completions (the decoder program's KV-cache slots; default 64 on cuda, 4 on "
    "llvm-cpu); 0 turns them off (501).",
)
@click.option(
    "--max-new-tokens",
    type=click.IntRange(1),
    default=256,
    show_default=True,
    help="Most tokens generated per 30 s window of a transcription (sizes the decoder program).",
)
@click.option(
    "--chat-tokens",
    type=click.IntRange(0),
    default=0,
    help="Positions a /v1/chat/completions conversation may span (prompt and answer). Default: what a "
    "transcription window holds (one 30 s clip and a short conversation); more adds a prompt bucket and a "
    "decode context of that size (each 30 s clip is 188 positions) and grows the decoder's KV cache to "
    "--decoder-slots x this many positions.",
)
@artifact_option(
    "--decoder-artifact",
    "A decoder .vmfb from `emit-gemma3n --stage decoder --sampling` instead of compiling one for the windows "
    "and chats.",
)
@encoder_options
def serve(
    checkpoint: Path,
    host: str,
    port: int,
    max_queue: int,
    max_batch_clips: int | None,
    max_memory_mb: int,
    max_upload_mb: int,
    max_concurrent_uploads: int | None,
    max_client_uploads: int | None,
    upload_timeout: float,
    max_client_held_mb: int | None,
    max_wait_ms: float,
    result_ttl: float,
    frontend_workers: int | None,
    prefill: bool,
    capacities: tuple[int, ...],
    prefill_artifact: Path | None,
    decoder_slots: int | None,
    max_new_tokens: int,
    chat_tokens: int,
    decoder_artifact: Path | None,
    **options,
) -> None:
    """Serve encode, prefill, OpenAI-style transcription and chat completion requests over HTTP with continuous
    batching (see serve/server.py, serve/openai_routes.py and serve/chat_routes.py).

    One resident copy of the weights; uploads are decoded and featurized on worker threads while one
    device thread packs clips from all requests into the compiled (frame bucket, clips) entries; one
    decode thread batches the decode steps of every transcription's 30 s windows and every chat.  The model
    name of /v1/audio/* and /v1/chat/completions requests is the checkpoint directory's name.  Audio over
    --max-seconds (default 600 here) is refused with 413.
    """
    from ..emitters.compile_errors import CompileError
    from ..runtime.encoder.pipeline import default_workers
    from ..runtime.programs.session import SessionError
    from .admission import MIB, Limits, limits_contradiction
    from .launch import build_scheduler, run_server, server_info

    if max_batch_clips is None:
        max_batch_clips = max(options["clips_per_call"] or (DEFAULT_MAX_BATCH_CLIPS[options["target"]],))
    widths = options["clips_per_call"] or power_of_two_widths(max_batch_clips)
    limits = Limits(
        max_queue=max_queue,
        max_memory_bytes=max_memory_mb * MIB,
        max_upload_bytes=max_upload_mb * MIB,
        max_concurrent_uploads=max_concurrent_uploads,
        max_client_uploads=max_client_uploads,
        upload_idle_s=upload_timeout,
        upload_total_s=10 * upload_timeout,
        max_client_held_bytes=max_client_held_mb * MIB if max_client_held_mb else None,
        max_seconds=options["max_seconds"] or 600.0,
        max_batch_clips=max_batch_clips,
        max_wait_s=max_wait_ms / 1000.0,
        result_ttl_s=result_ttl,
        frontend_workers=frontend_workers or default_workers(),
    )
    contradiction = limits_contradiction(limits)
    if contradiction is not None:
        raise click.UsageError(contradiction)
    with errors_as_messages():
        scheduler = build_scheduler(
            checkpoint,
            target=options["target"],
            contract=options["contract"],
            cuda_arch=options["cuda_arch"],
            frame_buckets=options["frame_buckets"] or None,
            clips_per_call=widths,
            artifact=options["artifact"],
            cache_dir=options["cache_dir"],
            prefill=prefill,
            capacities=capacities or None,
            prefill_artifact=prefill_artifact,
            limits=limits,
            progress=say,
            mel=options["mel"],
        )
    from ..runtime.programs.artifacts import ArtifactCache
    from .chat_routes import add_decoder_routes
    from .launch import build_transcription_service

    service, why = None, "turned off (--decoder-slots 0)"
    slots = decoder_slots if decoder_slots is not None else (64 if options["target"] == "cuda" else 4)
    if slots and scheduler.prefill is None:
        why = f"the prefill stage is unavailable: {scheduler.prefill_unavailable}"
    elif slots:
        try:
            service = build_transcription_service(
                scheduler,
                checkpoint,
                target=options["target"],
                contract=options["contract"],
                slots=slots,
                max_new_tokens=max_new_tokens,
                cache=ArtifactCache(options["cache_dir"]),
                cuda_arch=options["cuda_arch"],
                artifact=decoder_artifact,
                progress=say,
                chat_tokens=chat_tokens,
            )
        except (ValueError, SessionError) as exc:
            why = str(exc)
        except CompileError as exc:
            why = f"the decoder program failed to compile: {exc}"
    if service is None:
        say(f"transcription unavailable: {why}")
    else:
        d = service.decoder
        say(
            f"decoder: {d.slots} slots; a chat takes up to {d.capacity} positions with prompts of up to "
            f"{d.max_prompt_tokens} tokens (--chat-tokens for longer ones)"
        )
    info = server_info(scheduler, options["target"])
    say(
        f"entries {' '.join(f'{f}x{c}' for f, c in scheduler.session.buckets)} (log-mel: "
        f"{scheduler.session.mel.name}); calls up to {scheduler.max_width} "
        f"clips; prefill {'on' if scheduler.prefill is not None else 'off: ' + str(scheduler.prefill_unavailable)}"
    )
    try:
        run_server(
            scheduler,
            host=host,
            port=port,
            info=info,
            print_fn=say,
            extensions=[lambda app: add_decoder_routes(app, service, why)],
        )
    finally:  # the programs go now, not at interpreter exit (aiohttp keeps the app, and so them, to the end)
        if service is not None:
            service.close()
        scheduler.close()
