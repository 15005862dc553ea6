"""A progress line on a terminal: the commands' (`encode`, `transcribe`) state redrawn in place."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO


class ProgressLine:
    """`render(state)` redrawn in place on `stream` (at most 10 times a second, and the last state, whose
    `files_done` reaches its `files`, always); nothing when not `enabled` (not a terminal, or quiet)."""

    def __init__(self, stream: TextIO, enabled: bool, render: Callable[[Any], str]) -> None:
        self.stream, self.enabled, self.render = stream, enabled, render
        self._last, self._width, self._shown = 0.0, 0, False
        self.last: Any = None  # the latest state, drawn or not

    def __call__(self, state: Any) -> None:
        self.last = state
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and state.files_done < state.files):
            return
        self._last = now
        line = self.render(state)
        self.stream.write("\r" + line + " " * max(0, self._width - len(line)))
        self.stream.flush()
        self._width, self._shown = len(line), True

    def close(self) -> None:
        """End the line (a newline after the last drawn state)."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
