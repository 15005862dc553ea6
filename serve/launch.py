"""Building and running the server: the encoder and the prefill stage loaded for a scheduler
(`build_scheduler`), the decoder program for its transcriptions and chats (`build_transcription_service`),
what `/health` reports of them (`server_info`), and the app served until a signal (`run_server`) or on a
background thread (`BackgroundServer`: tests, benchmarks, embedding).

Why a module of its own: loading the programs and owning the event loop are the server's setup, apart from
the routes it serves (serve/server.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from ..runtime.audio.decode import MIN_SAMPLE_RATE
from .admission import Limits
from .scheduler import Scheduler
from .server import Extension, create_app
from .transcription import TranscriptionService


def build_scheduler(
    checkpoint: str | Path,
    *,
    target: str = "llvm-cpu",
    contract: str | None = None,
    cuda_arch: str | None = None,
    frame_buckets: Sequence[int] | None = None,
    clips_per_call: Sequence[int] | None = None,
    artifact: str | Path | None = None,
    cache_dir: str | Path | None = None,
    prefill: bool = True,
    capacities: Sequence[int] | None = None,
    prefill_artifact: str | Path | None = None,
    limits: Limits | None = None,
    progress: Callable[[str], None] | None = None,
    mel: str | None = None,
) -> Scheduler:
    """Load (compiling on a cache miss) the encoder and, when the checkpoint has what it needs, the
    prefill stage; returns a scheduler that is not started yet."""
    from ..contracts.policy import DEFAULT_CONTRACT
    from ..model.audio_config import DEFAULT_FRAME_BUCKETS
    from ..runtime.encoder.encode import AudioEncoder
    from ..runtime.programs.artifacts import ArtifactCache

    say = progress or (lambda _msg: None)
    cache = ArtifactCache(Path(cache_dir) if cache_dir is not None else None)
    limits = limits or Limits()
    encoder = AudioEncoder(
        checkpoint,
        target=target,
        contract=contract or DEFAULT_CONTRACT,
        frame_buckets=tuple(frame_buckets or DEFAULT_FRAME_BUCKETS),
        clips_per_call=tuple(clips_per_call or (1,)),
        cuda_arch=cuda_arch,
        cache=cache,
        progress=say,
        artifact=artifact,
        mel=mel,
    )
    runner, why = None, None
    if not prefill:
        why = "disabled (--no-prefill)"
    else:
        try:
            from ..emitters.prefill import DEFAULT_CAPACITIES
            from ..runtime.text.prefill import AudioPrefill

            runner = AudioPrefill(
                checkpoint,
                target=target,
                contract=contract or DEFAULT_CONTRACT,
                capacities=tuple(capacities or DEFAULT_CAPACITIES),
                cuda_arch=cuda_arch,
                cache=cache,
                progress=say,
                artifact=prefill_artifact,
                encoder=encoder,
            )
            runner.tokenizer  # noqa: B018 - fail now (no tokenizer.json) rather than on the first request
        except ImportError as exc:
            why = f"this installation has no prefill stage ({exc})"
        except (ValueError, OSError) as exc:  # CheckpointSchemaError, ConfigError, TokenizerError, ...
            why = f"the checkpoint cannot be used for prefill: {exc}"
        if why is not None:
            runner = None
            say(f"prefill unavailable: {why}")
    return Scheduler(
        encoder, runner, limits, prefill_unavailable=why, prefill_from_artifact=prefill_artifact is not None
    )


#: Tokens a server's decoder holds beyond a window with the default instruction: a language's name or a
#: client's prompt (a longer one is refused with 400, naming the limit).
PROMPT_HEADROOM = 48


def build_transcription_service(
    scheduler: Any,
    checkpoint: Any,
    *,
    target: str,
    contract: str,
    slots: int,
    max_new_tokens: int,
    cache: Any,
    cuda_arch: str | None = None,
    kernels: str = "auto",
    artifact: Any = None,
    model: str | None = None,
    progress: Callable[[str], None] | None = None,
    chat_tokens: int = 0,
) -> TranscriptionService:
    """The service over the scheduler's prefill stage and a decoder program sized for its windows (built or
    reused through the artifact cache, or `artifact`), holding chats of `chat_tokens` positions too when that is
    more than a window's (`transcription_buckets`).  Raises ValueError (e.g. GenerationError) or
    SessionError / CompileError when that cannot be."""
    from ..model.checkpoint_config import CheckpointConfig
    from ..runtime.text.generate import stop_token_ids
    from ..runtime.text.transcribe import DEFAULT_PROMPT
    from ..runtime.text.transcribe_decoder import load_transcription_decoder
    from .openai_chat import MAX_TOP_LOGPROBS

    prefill = scheduler.prefill
    if prefill is None:
        raise ValueError(f"transcription needs the prefill stage: {scheduler.prefill_unavailable}")
    # the headroom where the model's context allows it (the tiny test model has 256 positions)
    positions = CheckpointConfig.read(checkpoint).decoder.max_position_embeddings
    default = len(prefill.expand(DEFAULT_PROMPT, [1]))
    prompt_tokens = max(default, min(default + PROMPT_HEADROOM, positions + 1 - max_new_tokens))
    decoder = load_transcription_decoder(
        checkpoint,
        target,
        contract,
        prompt_tokens=prompt_tokens,
        max_new_tokens=max_new_tokens,
        slots=slots,
        cache=cache,
        cuda_arch=cuda_arch,
        kernels=kernels,
        artifact=artifact,
        progress=progress,
        sampling=True,  # a chat completion samples unless its temperature is 0 (OpenAI's default is 1)
        top_logprobs=MAX_TOP_LOGPROBS,
        chat_tokens=chat_tokens,
    )
    stops = stop_token_ids(checkpoint, decoder.cfg.eos_token_ids, prefill.tokenizer)
    return TranscriptionService(
        decoder,
        prefill,
        model=model or Path(checkpoint).name,
        max_new_tokens=max_new_tokens,
        stop_ids=stops,
        prefill_lock=scheduler.prefill_lock,
    )


def server_info(scheduler: Scheduler, target: str | None = None) -> dict[str, Any]:
    encoder = scheduler.encoder
    return {
        "target": target,
        "artifact": str(encoder.artifact),
        "entries": [list(e) for e in scheduler.session.buckets],
        "mel": scheduler.session.mel.name,
        "frame_buckets": list(scheduler.frame_buckets),
        "max_batch_clips": scheduler.max_width,
        "max_queue": scheduler.limits.max_queue,
        "max_upload_bytes": scheduler.limits.max_upload_bytes,
        "max_concurrent_uploads": scheduler.limits.concurrent_uploads,
        "max_client_uploads": scheduler.limits.client_uploads,
        "max_client_held_bytes": scheduler.limits.client_held_bytes,
        "max_seconds": scheduler.limits.max_seconds,
        "min_sample_rate": MIN_SAMPLE_RATE,
        "result_ttl_s": scheduler.limits.result_ttl_s,
    }


def run_server(
    scheduler: Scheduler,
    host: str = "127.0.0.1",
    port: int = 8080,
    info: dict | None = None,
    print_fn: Callable[..., None] | None = print,
    extensions: Sequence[Extension] = (),
) -> None:
    """Serve until SIGINT/SIGTERM (blocking); starts and stops the scheduler."""
    with scheduler:
        web.run_app(
            create_app(scheduler, info, extensions),
            host=host,
            port=port,
            print=print_fn,
            access_log=None,
            shutdown_timeout=5.0,
            handler_cancellation=True,
        )


class BackgroundServer:
    """The server on its own event loop in a daemon thread (tests, benchmarks, embedding)::

        with BackgroundServer(scheduler) as url:   # port 0: an ephemeral port
            ...
    The scheduler is started and stopped with it.
    """

    def __init__(
        self,
        scheduler: Scheduler,
        host: str = "127.0.0.1",
        port: int = 0,
        info: dict | None = None,
        extensions: Sequence[Extension] = (),
    ) -> None:
        self.scheduler, self.host, self.port, self.extensions = scheduler, host, port, tuple(extensions)
        self.info = info if info is not None else server_info(scheduler)
        self.url: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        self.scheduler.start()
        ready = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                runner = web.AppRunner(
                    create_app(self.scheduler, self.info, self.extensions),
                    access_log=None,
                    shutdown_timeout=2.0,
                    handler_cancellation=True,
                )
                loop.run_until_complete(runner.setup())
                site = web.TCPSite(runner, self.host, self.port)
                loop.run_until_complete(site.start())
                self._runner = runner
                host, port = runner.addresses[0][:2]
                self.port = port
                self.url = f"http://{host}:{port}"
            except BaseException as exc:  # pragma: no cover - e.g. the port is taken
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=main, name="gemma3n-http", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self.scheduler.stop()
            raise failure[0]
        assert self.url is not None
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        self._thread = self._loop = None
        self.scheduler.stop()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
