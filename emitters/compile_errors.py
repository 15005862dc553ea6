"""What a failed compilation says: the compiler's diagnostics (`Diagnostic`) and `CompileError`'s one readable
message -- the first error, the source lines around it, a one-line summary of a few further errors, and the
flags -- with line numbers mapped back to the caller's text where the target's attributes were added.

Why a module of its own: reading and phrasing diagnostics is independent of driving the compiler
(emitters/compile.py), which collects them and raises the error this module phrases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .targets import Target, TargetModuleEdit

# Limits that keep CompileError messages short.
_CONTEXT_LINES = 3
_MAX_LINE_CHARS = 160
_MAX_FIRST_MESSAGE_LINES = 6
_MAX_FURTHER = 4
_MAX_NOTES = 2


@dataclass(frozen=True)
class Diagnostic:
    """One compiler diagnostic.

    severity: "error", "warning", "note" or "remark".
    location: the MLIR location as printed, e.g. 'loc("input.mlir":12:5)' or
              'loc(callsite("input.mlir":4:8 at "input.mlir":2:1))'.
    message:  the message text (may span lines).
    notes:    attached notes (e.g. "prior use here", "see current operation").
    """

    severity: str
    location: str
    message: str
    notes: tuple[Diagnostic, ...] = ()

    @property
    def file_line_col(self) -> tuple[str, int, int] | None:
        """The first file:line:col in the location, or None."""
        return _parse_location(self.location)

    @property
    def line(self) -> int | None:
        flc = self.file_line_col
        return flc[1] if flc else None

    @property
    def column(self) -> int | None:
        flc = self.file_line_col
        return flc[2] if flc else None

    def __str__(self) -> str:
        return f"{self.severity}: {_short_location(self.location)}: {self.message}"


_LOC_RE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def _parse_location(location: str, prefer_file: str | None = None) -> tuple[str, int, int] | None:
    found = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _LOC_RE.finditer(location)]
    if not found:
        return None
    if prefer_file is not None:
        for f in found:
            if f[0] == prefer_file:
                return f
    return found[0]


def _short_location(location: str) -> str:
    flc = _parse_location(location)
    if flc:
        return f"{flc[0]}:{flc[1]}:{flc[2]}"
    return location


class CompileError(RuntimeError):
    """IREE compilation (or MLIR verification) failed.

    str(e) is a short, self-contained report.  Attributes:
      diagnostics: list[Diagnostic], everything the compiler reported;
      errors:      the error-severity subset;
      flags:       the compiler flags used (tuple of str);
      target:      the Target (None for verify_mlir);
      stage:       "compile", "verify", "flags" or "target" (module rewrite).
    """

    def __init__(
        self,
        message: str,
        diagnostics: Sequence[Diagnostic] = (),
        flags: Sequence[str] = (),
        target: Target | None = None,
        stage: str = "compile",
    ):
        super().__init__(message)
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.flags: tuple[str, ...] = tuple(flags)
        self.target = target
        self.stage = stage

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def _clip(line: str, limit: int = _MAX_LINE_CHARS) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _source_excerpt(lines: list[str], line: int, col: int | None, label: str) -> list[str]:
    """±_CONTEXT_LINES around 1-based `line`, numbered, '>' on the line, '^' under col."""
    if not (1 <= line <= len(lines)):
        return [f"  ({label} has no line {line}; it has {len(lines)} lines)"]
    lo = max(1, line - _CONTEXT_LINES)
    hi = min(len(lines), line + _CONTEXT_LINES)
    width = len(str(hi))
    out = []
    for n in range(lo, hi + 1):
        text = lines[n - 1].rstrip("\n").expandtabs(1)
        caret_col = col
        if n == line and col is not None and col - 1 > _MAX_LINE_CHARS - 20:
            # Long line: show a window around the column.
            start = max(0, col - 1 - _MAX_LINE_CHARS // 2)
            text = "…" + text[start:]
            caret_col = col - start + 1
        marker = ">" if n == line else " "
        out.append(f"{marker} {n:>{width}} | {_clip(text)}")
        if n == line and caret_col is not None and 1 <= caret_col <= _MAX_LINE_CHARS:
            out.append(f"  {' ' * width} | {' ' * (caret_col - 1)}^")
    return out


def _first_lines(message: str, max_lines: int) -> list[str]:
    msg_lines = [_clip(l) for l in message.strip().splitlines() if l.strip()] or ["(no message)"]
    if len(msg_lines) > max_lines:
        msg_lines = msg_lines[:max_lines] + [f"… ({len(msg_lines) - max_lines} more message lines)"]
    return msg_lines


def _is_ir_dump_note(note: Diagnostic) -> bool:
    return note.message.lstrip().startswith("see current operation")


def format_failure(
    header: str,
    diagnostics: Sequence[Diagnostic],
    source_text: str,
    source_name: str,
    flags: Sequence[str],
) -> str:
    """Build the one-message report (see CompileError)."""
    errors = [d for d in diagnostics if d.severity == "error"]
    if not errors:
        # Fall back to whatever was reported (e.g. only warnings).
        errors = list(diagnostics)
    src_lines = source_text.splitlines()
    out: list[str] = [header]

    def where(d: Diagnostic) -> str:
        flc = _parse_location(d.location, prefer_file=source_name)
        return f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else _short_location(d.location)

    if errors:
        first = errors[0]
        msg = _first_lines(first.message, _MAX_FIRST_MESSAGE_LINES)
        out.append(f"{first.severity} at {where(first)}: {msg[0]}")
        out.extend("    " + l for l in msg[1:])
        flc = _parse_location(first.location, prefer_file=source_name)
        if flc is not None and flc[0] == source_name:
            out.extend(_source_excerpt(src_lines, flc[1], flc[2], source_name))
        notes = [n for n in first.notes if not _is_ir_dump_note(n)][:_MAX_NOTES]
        for n in notes:
            out.append(f"  note at {where(n)}: {_first_lines(n.message, 1)[0]}")
        further = errors[1:]
        if further:
            out.append(f"{len(further)} further error(s):")
            for d in further[:_MAX_FURTHER]:
                out.append(f"  {where(d)}: {_first_lines(d.message, 1)[0]}")
            if len(further) > _MAX_FURTHER:
                out.append(f"  … and {len(further) - _MAX_FURTHER} more")
    else:
        out.append("(the compiler reported no diagnostics)")
    if flags:
        out.append("flags: " + " ".join(flags))
    return "\n".join(out)


_INSERTED_FILE = "<target attributes added by apply_target_to_module>"


def remap_diagnostic(d: Diagnostic, edit: TargetModuleEdit, source_name: str) -> Diagnostic:
    """Rewrite line numbers of the target-augmented text to the caller's text."""
    if not edit.inserted_lines:
        return d

    def sub(m: re.Match) -> str:
        fname, line, col = m.group(1), int(m.group(2)), m.group(3)
        if fname != source_name:
            return m.group(0)
        orig = edit.original_line(line)
        if orig is None:
            return f'"{_INSERTED_FILE}":{line - edit.inserted_before_line + 1}:{col}'
        return f'"{fname}":{orig}:{col}'

    return Diagnostic(
        d.severity,
        _LOC_RE.sub(sub, d.location),
        d.message,
        tuple(remap_diagnostic(n, edit, source_name) for n in d.notes),
    )
