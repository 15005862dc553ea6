"""Streaming detokenization: token ids in one at a time, text out as soon as it is final.

The checkpoint's `tokenizer.json` decodes through a pipeline (Gemma's: `Replace("▁", " ")`, `ByteFallback`,
`Fuse`) whose output for a sequence is not the concatenation of its tokens' outputs: a character may be
spread over several byte-fallback tokens (`<0xE2><0x82><0xAC>` is "€"), `ByteFallback` decodes a whole run of
byte tokens at once (an invalid run becomes one U+FFFD per byte, valid bytes included), and some pipelines
strip a space at the start of the text.  `TextStream` therefore only ever emits text that
`tokenizer.decode(all ids)` will contain, in order, so that

    "".join(stream.push(t) for t in ids) + stream.finish() == tokenizer.decode(ids, skip_special_tokens=...)

for every id sequence (property-tested in tests/test_detokenize.py):

* text is held back while the last decoded token is a byte-fallback token (the run may go on) or the text
  ends with U+FFFD (a byte-level tokenizer's partial character), and emitted when the run is closed;
* new text is the difference between decoding a window `ids[prefix:]` and `ids[prefix:read]`, where `read`
  is where the last emitted text ended and `prefix` where the one before it began: both decodes see the same
  start, so a start-of-text effect cancels (the incremental detokenizer of vLLM and text-generation-
  inference; `tokenizers.decoders.DecodeStream` alone drops a held tail at the end and emits the valid bytes
  of a run that later turns invalid, so it breaks the equality above);
* `finish()` flushes what is held (an unfinished character decodes to U+FFFD, as in `decode`).

Skipped ids (special tokens with `skip_special_tokens`, ids outside the vocabulary) are transparent: a byte
run continues across them, exactly as `decode` drops them before its pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
_REPLACEMENT = "\ufffd"


class TextStream:
    """Incremental text of one generated sequence (see the module docstring)."""

    def __init__(self, tokenizer: Any, *, skip_special_tokens: bool = True) -> None:
        self.tokenizer = tokenizer
        self.skip_special_tokens = skip_special_tokens
        self.ids: list[int] = []
        self._prefix = 0  # window start: where the text before the last emitted piece began
        self._read = 0  # ids whose text has been emitted
        self._emitted: list[str] = []
        self._special = {i for i, t in tokenizer.get_added_tokens_decoder().items() if t.special}
        self._open_run = False  # the last decoded (not skipped) token is a byte-fallback token

    @property
    def text(self) -> str:
        """Everything emitted so far."""
        return "".join(self._emitted)

    def push(self, token: int) -> str:
        """Add one token; returns the text that became final ("" while held back)."""
        token = int(token)
        self.ids.append(token)
        piece = self.tokenizer.id_to_token(token)
        if piece is not None and not (self.skip_special_tokens and token in self._special):
            self._open_run = bool(_BYTE_TOKEN.fullmatch(piece))
        if self._open_run:
            return ""
        return self._advance(final=False)

    def extend(self, tokens: Iterable[int]) -> str:
        return "".join(self.push(t) for t in tokens)

    def finish(self) -> str:
        """The text still held back (the sequence has ended)."""
        self._open_run = False
        return self._advance(final=True)

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=self.skip_special_tokens)

    def _advance(self, final: bool) -> str:
        before = self._decode(self.ids[self._prefix : self._read])
        window = self._decode(self.ids[self._prefix :])
        if len(window) <= len(before) or (window.endswith(_REPLACEMENT) and not final):
            return ""
        if not window.startswith(before):
            if not final:
                return ""
            raise RuntimeError(
                f"the tokenizer's decoding of ids {self.ids[self._prefix :]} does not extend the "
                f"decoding of its first {self._read - self._prefix}: cannot stream it exactly"
            )
        new = window[len(before) :]
        self._prefix, self._read = self._read, len(self.ids)
        self._emitted.append(new)
        return new
