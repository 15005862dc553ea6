"""The compiled decoder program a transcription needs: its buckets from the window strategy, built or loaded.

Every window is one sequence: its prompt (the chat turn with one 30 s clip: 188 audio tokens plus the
instruction, ~208 tokens) is prefilled into a slot, then it decodes at most `max_new_tokens` tokens.  So:

* one prompt bucket, the prompt's length rounded up to `PROMPT_ROUND` (a server's requests differ only in
  their instruction: the headroom takes a longer one without a second entry);
* capacity = prompt bucket + `max_new_tokens` (every window fits; nothing more is reserved per slot);
* one decode context, the capacity: a window's positions run from ~208 to the capacity, so a smaller bucket
  would save a small share of the full-attention layers' reads for one more compiled entry per batch width;
* decode widths by target (`decode_widths`): a GPU is filled by wide calls, a CPU gains little past 4 rows;
* prompt batches by target (`prompt_batches`): on a GPU, windows arriving together are prefilled 8 to a call
  (a call's cost is mostly per launch there, not per row: one call of 8 prompts replaces 8 calls); a CPU's
  prefill costs per row, so it gains nothing from them and compiles none.

The server's chats share this program (`serve.launch.build_transcription_service`): by default a chat fits
where a window does (one 30 s clip and a short conversation); `chat_tokens` adds a prompt bucket and a decode
context for longer ones (several clips), the cache growing to `slots` x `chat_tokens` positions.

`load_transcription_decoder` compiles that program through the artifact cache (content-addressed, written
atomically, reused when the identity matches) or loads a prebuilt one (`--decoder-artifact`), checks it
against the request (contract, slots, capacity, prompt bucket) and returns the `DecoderSession`, which is a
`runtime.text.generate.DecoderBackend`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...contracts.policy import get_contract
from ...emitters.compile import parse_target
from ...emitters.decoder import DecoderModuleSpec
from ...emitters.kernels import select_kernels
from ...emitters.lowering import lowering_for
from ...model.checkpoint_config import CheckpointConfig
from ..programs.artifacts import ArtifactCache
from .decoder import DecoderSession, build_decoder_artifact
from .emulated_decoder import text_layout
from .generate import GenerationError

#: Prompt buckets are multiples of this many tokens.
PROMPT_ROUND = 64
#: Decode batch widths a target's program is compiled with (clipped to the slots, see `decode_widths`).
TARGET_WIDTHS = {"cuda": (1, 8, 32, 64), "llvm-cpu": (1, 4)}
#: Numbers of prompts a target's batched prefill entries take (clipped to the slots, see `prompt_batches`).
TARGET_PROMPT_BATCHES: dict[str, tuple[int, ...]] = {"cuda": (8,), "llvm-cpu": ()}


def prompt_bucket(prompt_tokens: int) -> int:
    """The prefill entry's length for prompts of up to `prompt_tokens` tokens."""
    if prompt_tokens < 1:
        raise ValueError(f"a prompt has at least one token, got {prompt_tokens}")
    return -(-prompt_tokens // PROMPT_ROUND) * PROMPT_ROUND


def decode_widths(target: str, slots: int) -> tuple[int, ...]:
    """The decode entries' batch widths: the target's widths below `slots`, then `slots` itself unless it is
    wider than the target's widest (a call never needs to be wider than the slots)."""
    if slots < 1:
        raise ValueError(f"slots must be at least 1, got {slots}")
    base = TARGET_WIDTHS[target]
    return tuple(sorted({w for w in base if w < slots} | {min(slots, base[-1])}))


def prompt_batches(target: str, slots: int) -> tuple[int, ...]:
    """The batched prefill entries' numbers of prompts: the target's, at most `slots` (a call never prefills more
    windows than there are slots), none below 2."""
    return tuple(sorted({min(p, slots) for p in TARGET_PROMPT_BATCHES[target]} - {1}))


@dataclass(frozen=True)
class TranscriptionBuckets:
    """A transcription decoder program's shape (module docstring)."""

    slots: int
    capacity: int
    prompts: tuple[int, ...]
    batches: tuple[int, ...]
    contexts: tuple[int, ...]
    prompt_batches: tuple[int, ...] = ()


def transcription_buckets(
    prompt_tokens: int, max_new_tokens: int, positions: int, target: str, slots: int, chat_tokens: int = 0
) -> TranscriptionBuckets:
    """The program for windows of at most `prompt_tokens` prompt tokens and `max_new_tokens` new ones, in a
    model of `positions` positions (max_position_embeddings): the prompt bucket rounded up to `PROMPT_ROUND`
    where the context allows it, else the prompt itself; refused when a window cannot fit the model.

    `chat_tokens` beyond the windows' capacity also holds a chat of that many positions (prompt and answer:
    a prompt of up to `chat_tokens` tokens): a second prompt bucket and a second decode context of that size,
    the cache that long (the windows keep their own context: their decode steps read no more rows)."""
    if max_new_tokens < 1:
        raise GenerationError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    if prompt_tokens + max_new_tokens - 1 > positions:
        raise GenerationError(
            f"a prompt of {prompt_tokens} tokens and {max_new_tokens} new tokens need "
            f"{prompt_tokens + max_new_tokens - 1} positions, more than the model's context of "
            f"{positions} (max_position_embeddings)"
        )
    bucket = prompt_bucket(prompt_tokens)
    if bucket + max_new_tokens > positions:  # the headroom is optional; the window itself must fit
        bucket = prompt_tokens
    capacity = min(bucket + max_new_tokens, positions)
    if chat_tokens > positions:
        raise GenerationError(
            f"a chat of {chat_tokens} positions is more than the model's context of {positions} "
            "(max_position_embeddings)"
        )
    prompts, contexts = (bucket,), (capacity,)
    if chat_tokens > capacity:
        prompts, contexts = (bucket, chat_tokens), (capacity, chat_tokens)
    return TranscriptionBuckets(
        slots, contexts[-1], prompts, decode_widths(target, slots), contexts, prompt_batches(target, slots)
    )


def transcription_spec(
    checkpoint: str | Path,
    target: str,
    contract: str,
    *,
    prompt_tokens: int,
    max_new_tokens: int,
    slots: int,
    cuda_arch: str | None = None,
    kernels: str = "auto",
    sampling: bool = False,
    top_logprobs: int = 0,
    chat_tokens: int = 0,
) -> DecoderModuleSpec:
    """The decoder program for windows whose prompts have at most `prompt_tokens` tokens (module docstring);
    with `sampling`, its calls can also draw sampled tokens (`decoder_sample_b{B}`), and with `top_logprobs`
    report that many most likely tokens (`decoder_top_k_b{B}`; a transcription asks for none); `chat_tokens`
    as in `transcription_buckets`."""
    cfg = CheckpointConfig.read(checkpoint).decoder
    b = transcription_buckets(prompt_tokens, max_new_tokens, cfg.max_position_embeddings, target, slots, chat_tokens)
    c = get_contract(contract)
    compile_target = parse_target(target, cuda_arch)
    linked = select_kernels(kernels, compile_target, c)
    return DecoderModuleSpec(
        cfg,
        c,
        b.slots,
        b.capacity,
        prompts=b.prompts,
        batches=b.batches,
        contexts=b.contexts,
        layout=text_layout(checkpoint),
        kernels=linked,
        lowering=lowering_for(compile_target, c),
        top_k=top_logprobs,
        prompt_batches=b.prompt_batches,
        sampling=sampling,
    )


def load_transcription_decoder(
    checkpoint: str | Path,
    target: str,
    contract: str,
    *,
    prompt_tokens: int,
    max_new_tokens: int,
    slots: int,
    cache: ArtifactCache | None = None,
    cuda_arch: str | None = None,
    kernels: str = "auto",
    artifact: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    sampling: bool = False,
    top_logprobs: int = 0,
    chat_tokens: int = 0,
) -> DecoderSession:
    """The loaded decoder program for these windows (with `sampling`, `top_logprobs` and `chat_tokens` as in
    `transcription_spec`): `artifact` if given (checked to fit), else built or reused from the artifact cache."""
    device = "cuda" if target == "cuda" else "local-task"
    layout = text_layout(checkpoint)
    if artifact is None:
        spec = transcription_spec(
            checkpoint,
            target,
            contract,
            prompt_tokens=prompt_tokens,
            max_new_tokens=max_new_tokens,
            slots=slots,
            cuda_arch=cuda_arch,
            kernels=kernels,
            sampling=sampling,
            top_logprobs=top_logprobs,
            chat_tokens=chat_tokens,
        )
        built = build_decoder_artifact(cache or ArtifactCache(), spec, parse_target(target, cuda_arch), progress)
        return DecoderSession.from_checkpoint(built.path, checkpoint, spec.cfg, device=device, layout=layout)
    session = DecoderSession.from_checkpoint(artifact, checkpoint, device=device, layout=layout)
    check_fits(session, str(artifact), contract, prompt_tokens, max_new_tokens, sampling, chat_tokens)
    return session


def check_fits(
    session: DecoderSession,
    name: str,
    contract: str,
    prompt_tokens: int,
    max_new_tokens: int,
    sampling: bool = False,
    chat_tokens: int = 0,
) -> None:
    """Refuse a prebuilt program that cannot serve these windows (and chats of `chat_tokens` positions),
    saying what it has and what is needed."""
    info = session.info
    problems = []
    if session.contract.name != contract:
        problems.append(f"it was built under contract {session.contract.name}, not {contract}")
    if not info.prompts or max(info.prompts) < prompt_tokens:
        problems.append(f"its prompt buckets {list(info.prompts)} do not hold a window's {prompt_tokens} tokens")
    if prompt_tokens + max_new_tokens - 1 > info.capacity:
        problems.append(
            f"its capacity of {info.capacity} positions is less than a window's {prompt_tokens} prompt "
            f"tokens + {max_new_tokens} new tokens - 1"
        )
    if not info.batches:
        problems.append("it has no decode entries")
    if chat_tokens > info.capacity or chat_tokens > max(info.prompts, default=0):
        problems.append(
            f"its capacity of {info.capacity} positions and prompt buckets {list(info.prompts)} do not hold a "
            f"chat of {chat_tokens} positions"
        )
    if sampling and not session.samples:
        problems.append("it has no sampler (emit-gemma3n --stage decoder --sampling builds one)")
    if problems:
        raise GenerationError(f"{name}: this decoder program cannot transcribe these windows: " + "; ".join(problems))
