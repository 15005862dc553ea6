"""Prompt expansion for audio prompts, and the host row map that places audio rows in the prompt.

Gemma 3n's chat format (the checkpoint's chat template, spec gemma3n-audio §5.1) renders a user turn as

    <bos><start_of_turn>user\\n{content}<end_of_turn>\\n<start_of_turn>model\\n

where an audio item of the content is one `<audio_soft_token>` and a text item is its text, trimmed.
transformers' processor then replaces every `<audio_soft_token>` by

    \\n\\n<start_of_audio> + 188 x <audio_soft_token> + <end_of_audio>\\n\\n

and tokenizes the whole string (here with the checkpoint's `tokenizer.json` through `tokenizers`).
An audio file longer than 30 s is several clips (the encoder never truncates): its marker becomes one
such block per clip, consecutively, so the placeholder runs follow the clips in prompt order.

The prompt text may place the audio itself with literal `<audio_soft_token>` markers (one per audio
file, in file order); without markers every audio file comes first, then the text (the order of the
transformers model card's examples: `[{"type": "audio"}, {"type": "text"}]`).

A conversation (`render_chat`: an optional system text, then user and model turns alternating, each turn a
sequence of text items and audio items) renders as the checkpoint's chat template renders it (transformers'
`convert_gemma3n_weights.py`, `_CHAT_TEMPLATE`): the system text, untrimmed, then a blank line, opens the
first turn; a turn's text items are trimmed and joined with nothing between them; an audio item is one
marker where it stands; every turn ends with `<end_of_turn>\n`, and the model's turn is opened last.

Explicit token ids (a caller with its own tokenizer) are validated the same way: every maximal run of
`<audio_soft_token>` ids must be exactly 188 long, and there must be exactly one run per clip.
Every violation is a typed `PromptError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP
from ...model.text_config import TextConfig

AUDIO_TOKEN = "<audio_soft_token>"
BOA_TOKEN = "<start_of_audio>"
EOA_TOKEN = "<end_of_audio>"
BOS_TOKEN = "<bos>"
START_OF_TURN = "<start_of_turn>"
END_OF_TURN = "<end_of_turn>"
TOKENIZER_FILE = "tokenizer.json"


class PromptError(ValueError):
    """The prompt, its token ids or its audio do not fit together (base class)."""


class TokenizerError(PromptError):
    """No usable `tokenizer.json`, or its special tokens disagree with the checkpoint's config."""


class AudioMarkerError(PromptError):
    """The prompt text has `<audio_soft_token>` markers, but not one per audio file."""


class PlaceholderRunError(PromptError):
    """A run of `<audio_soft_token>` ids is not exactly 188 long."""

    def __init__(self, message: str, start: int, length: int) -> None:
        super().__init__(message)
        self.start, self.length = start, length


class PlaceholderCountError(PromptError):
    """The number of placeholder runs differs from the number of audio clips."""

    def __init__(self, message: str, runs: int, clips: int) -> None:
        super().__init__(message)
        self.runs, self.clips = runs, clips


class TokenRangeError(PromptError):
    """A token id lies outside the text vocabulary [0, vocab_size)."""


class VisionTokenError(PromptError):
    """A vision-vocabulary id: this pipeline has no vision stage to embed it."""


class ContextCapacityError(PromptError):
    """The expanded prompt is longer than the largest context capacity."""


# ---------------------------------------------------------------------------------------------- text


def audio_block(clips: int) -> str:
    """What one audio file of `clips` clips becomes in the prompt text."""
    one = "\n\n" + BOA_TOKEN + AUDIO_TOKEN * AUDIO_SOFT_TOKENS_PER_CLIP + EOA_TOKEN + "\n\n"
    return one * clips


USER, MODEL = "user", "model"
#: One item of a turn's content: its text, or `AUDIO_ITEM` (an audio file, placed where it stands).
AUDIO_ITEM = None


def render_chat(turns: Sequence[tuple[str, Sequence[str | None]]], system: str | None = None) -> str:
    """A conversation in Gemma 3n's chat format, ending with the model's turn opened (module docstring).

    `turns`: (role, items) with roles `user` and `model` alternating, the first a user turn; an item is a text
    (trimmed here, as the template trims it) or `AUDIO_ITEM` (one `<audio_soft_token>` marker). `system`:
    Gemma 3n has no system turn; its template puts this text, as given, then a blank line, at the start of
    the first turn."""
    out = [BOS_TOKEN]
    for k, (role, items) in enumerate(turns):
        want = USER if k % 2 == 0 else MODEL
        if role != want:
            raise PromptError(f"turn {k} is a {role!r} turn: the turns must alternate user/model, starting with user")
        prefix = f"{system}\n\n" if system is not None and k == 0 else ""
        content = "".join(AUDIO_TOKEN if item is AUDIO_ITEM else item.strip() for item in items)
        out.append(f"{START_OF_TURN}{role}\n{prefix}{content}{END_OF_TURN}\n")
    out.append(f"{START_OF_TURN}{MODEL}\n")
    return "".join(out)


def chat_prompt(prompt: str, audio_files: int, chat: bool = True, system: str | None = None) -> str:
    """The prompt with one `<audio_soft_token>` marker per audio file, in Gemma 3n's chat format (one user
    turn, `render_chat`).

    `system`: Gemma 3n has no system turn; its chat template puts the system text, then a blank line, at the
    start of the first user turn (here trimmed first; an empty one is none)."""
    markers = prompt.count(AUDIO_TOKEN)
    if markers == 0:
        content = AUDIO_TOKEN * audio_files + prompt.strip()
    elif markers == audio_files:
        content = prompt.strip()
    else:
        raise AudioMarkerError(
            f"the prompt has {markers} {AUDIO_TOKEN} marker(s) but {audio_files} audio file(s) "
            f"were given: place one marker per audio file, or none (audio first)"
        )
    system = system.strip() if system is not None and system.strip() else None
    if not chat:
        if system is not None:
            raise PromptError("a system instruction needs the chat format")
        return content
    return render_chat([(USER, [content])], system)


def expand_audio(text: str, clips_per_file: Sequence[int]) -> str:
    """Replace the k-th `<audio_soft_token>` marker by the blocks of the k-th file's clips."""
    pieces = text.split(AUDIO_TOKEN)
    if len(pieces) - 1 != len(clips_per_file):
        raise AudioMarkerError(f"{len(pieces) - 1} {AUDIO_TOKEN} marker(s) for {len(clips_per_file)} audio file(s)")
    out = [pieces[0]]
    for clips, rest in zip(clips_per_file, pieces[1:]):
        if clips < 1:
            raise PromptError("every audio file must give at least one clip")
        out += [audio_block(clips), rest]
    return "".join(out)


# ---------------------------------------------------------------------------------------------- tokenizer


def load_tokenizer(checkpoint: str | Path, cfg: TextConfig):
    """The checkpoint's `tokenizer.json`, checked against the config's special-token ids."""
    try:
        from tokenizers import Tokenizer
    except ImportError:  # pragma: no cover - a declared dependency
        raise TokenizerError("prompt expansion needs the `tokenizers` package (pip install tokenizers)") from None
    path = Path(checkpoint) / TOKENIZER_FILE
    if not path.is_file():
        raise TokenizerError(f"{checkpoint}: no {TOKENIZER_FILE}; give explicit token ids instead of a prompt")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception subclasses
        raise TokenizerError(f"{path}: cannot load the tokenizer: {exc}") from None
    wrong = []
    for token, want in (
        (AUDIO_TOKEN, cfg.audio_token_id),
        (BOA_TOKEN, cfg.boa_token_id),
        (EOA_TOKEN, cfg.eoa_token_id),
    ):
        got = tokenizer.token_to_id(token)
        if got != want:
            wrong.append(f"{token} is {got} in the tokenizer, {want} in config.json")
    if wrong:
        raise TokenizerError(f"{path}: special tokens disagree with the checkpoint's config: " + "; ".join(wrong))
    return tokenizer


def tokenize(tokenizer, text: str) -> np.ndarray:
    """Token ids of `text` (the chat format already holds `<bos>`: no special tokens are added)."""
    return np.asarray(tokenizer.encode(text, add_special_tokens=False).ids, np.int32)


def expand_prompt(
    tokenizer,
    cfg: TextConfig,
    prompt: str,
    clips_per_file: Sequence[int],
    chat: bool = True,
    system: str | None = None,
) -> np.ndarray:
    """Prompt text (and a system instruction) + the clip count of each audio file -> validated token ids."""
    return expand_text(tokenizer, cfg, chat_prompt(prompt, len(clips_per_file), chat, system), clips_per_file)


def expand_text(tokenizer, cfg: TextConfig, text: str, clips_per_file: Sequence[int]) -> np.ndarray:
    """Prompt text already in its final form (e.g. `render_chat`'s) with one marker per audio file + the clip
    count of each -> validated token ids."""
    ids = tokenize(tokenizer, expand_audio(text, clips_per_file))
    audio_row_map(ids, cfg, sum(clips_per_file))  # the tokenizer must keep every placeholder one token
    return ids


# ---------------------------------------------------------------------------------------------- validation


def check_ids(ids: np.ndarray, cfg: TextConfig) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise TokenRangeError(f"token ids must be one sequence, got shape {ids.shape}")
    if not np.issubdtype(ids.dtype, np.integer):
        raise TokenRangeError(f"token ids must be integers, got {ids.dtype}")
    bad = np.flatnonzero((ids < 0) | (ids >= cfg.vocab_size))
    if bad.size:
        raise TokenRangeError(
            f"token id {int(ids[bad[0]])} at position {int(bad[0])} is outside the vocabulary "
            f"[0, {cfg.vocab_size}) ({bad.size} such id(s))"
        )
    vision = np.flatnonzero((ids >= cfg.vision_vocab_offset) & (ids < cfg.vision_vocab_offset + cfg.vision_vocab_size))
    if vision.size:
        raise VisionTokenError(
            f"token id {int(ids[vision[0]])} at position {int(vision[0])} is a vision-vocabulary id "
            f"[{cfg.vision_vocab_offset}, {cfg.vision_vocab_offset + cfg.vision_vocab_size}); "
            f"images are not supported by this pipeline"
        )
    return ids.astype(np.int32)


def placeholder_runs(ids: np.ndarray, audio_token_id: int) -> list[tuple[int, int]]:
    """(start, length) of every maximal run of the audio placeholder id."""
    is_audio = np.concatenate([[False], np.asarray(ids) == audio_token_id, [False]])
    edges = np.flatnonzero(is_audio[1:] != is_audio[:-1])
    return [(int(s), int(e - s)) for s, e in zip(edges[::2], edges[1::2])]


def audio_row_map(ids: np.ndarray, cfg: TextConfig, clips: int) -> np.ndarray:
    """int32 [len(ids)]: for the j-th placeholder of the k-th run, audio row k*188 + j; -1 elsewhere.

    Raises PlaceholderRunError (a run that is not exactly 188 long) and PlaceholderCountError (not one
    run per clip), after TokenRangeError / VisionTokenError for ids the stage cannot embed.
    """
    ids = check_ids(ids, cfg)
    per_clip = cfg.audio_soft_tokens_per_image
    runs = placeholder_runs(ids, cfg.audio_token_id)
    for start, length in runs:
        if length != per_clip:
            raise PlaceholderRunError(
                f"the run of {AUDIO_TOKEN} ids at position {start} has {length} tokens; every "
                f"audio clip takes exactly {per_clip}",
                start,
                length,
            )
    if len(runs) != clips:
        raise PlaceholderCountError(
            f"the prompt has {len(runs)} audio placeholder run(s) of {per_clip} tokens, but "
            f"{clips} audio clip(s) were given (a file longer than 30 s is several clips)",
            len(runs),
            clips,
        )
    row_map = np.full(len(ids), -1, np.int32)
    for k, (start, _) in enumerate(runs):
        row_map[start : start + per_clip] = np.arange(k * per_clip, (k + 1) * per_clip, dtype=np.int32)
    return row_map
