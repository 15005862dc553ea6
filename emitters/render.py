"""Rendering of the Jinja2 StableHLO templates and their assembly into one verified module.

Each template renders one self-contained fragment (type aliases + one `func.func private`, or the
public entry with its parameter globals).  Fragments are parsed and verified one by one in an MLIR
context, so a mistake is reported against the fragment's own rendered text with line numbers, and are
then moved into one module.  Functions a fragment calls are declared for it automatically from their
signatures, so templates never repeat another template's types.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates"


class TemplateRenderError(RuntimeError):
    """A template could not be rendered (undefined variable, syntax error)."""


class FragmentParseError(RuntimeError):
    """A rendered fragment is not valid MLIR; the message carries its numbered text."""


def _template_dir() -> Path:
    """Templates live in the `templates/` folder (installed as the gemma3n_iree.templates package)."""
    try:
        from .. import templates as package  # installed layout: gemma3n_iree.templates

        return Path(package.__file__).resolve().parent
    except ImportError:  # pragma: no cover - running from a bare checkout
        return TEMPLATE_DIR


def f32_hex(value: float) -> str:
    """Bit-exact MLIR spelling of an f32 constant (Python's `1e-06` is not a valid MLIR float)."""
    bits = struct.unpack("<I", struct.pack("<f", np.float32(value)))[0]
    return f"0x{bits:08X}"


def tensor_type(shape: Sequence[int], dtype: str) -> str:
    dims = "x".join(str(int(d)) for d in shape)
    return f"tensor<{dims}x{dtype}>" if dims else f"tensor<{dtype}>"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_template_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["f32"] = f32_hex
    env.globals["tensor"] = tensor_type
    return env


_ENV = _environment()


def numbered(text: str, mark: int | None = None, around: int | None = None) -> str:
    """The text with line numbers; `mark` gets a `>>` marker, `around` limits to ±around lines."""
    lines = text.splitlines()
    lo, hi = 1, len(lines)
    if mark is not None and around is not None:
        lo, hi = max(1, mark - around), min(len(lines), mark + around)
    width = len(str(hi))
    out = []
    for n in range(lo, hi + 1):
        prefix = ">>" if n == mark else "  "
        out.append(f"{prefix}{n:>{width}} | {lines[n - 1]}")
    return "\n".join(out)


def render(template: str, **params: Any) -> str:
    """Render one template; undefined variables are errors that name the template and line."""
    try:
        return _ENV.get_template(template).render(**params)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateRenderError(f"{template}:{exc.lineno}: template syntax error: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise TemplateRenderError(
            f"{template}:{_template_line(exc)}: {exc.message} (every template variable must be passed)"
        ) from None
    except Exception as exc:  # errors raised by expressions inside the template
        raise TemplateRenderError(f"{template}:{_template_line(exc)}: {type(exc).__name__}: {exc}") from None


def _template_line(exc: BaseException) -> str:
    """The template line where a rendering error happened (Jinja rewrites tracebacks to point there)."""
    line = "?"
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(".j2"):
            line = str(tb.tb_lineno)
        tb = tb.tb_next
    return line


@dataclass(frozen=True)
class Func:
    """A rendered function: its symbol and the types a caller needs to call it."""

    symbol: str
    arg_types: tuple[str, ...]
    result_types: tuple[str, ...]

    @property
    def signature(self) -> str:
        """`(args) -> (results)`, the trailing type of a `func.call`."""
        return f"({', '.join(self.arg_types)}) -> ({', '.join(self.result_types)})"

    def declaration(self) -> str:
        return f"func.func private @{self.symbol}{self.signature}"


@dataclass
class Fragment:
    template: str
    text: str
    calls: tuple[Func, ...]


@dataclass
class ModuleBuilder:
    """Collects fragments by symbol (each specialisation is rendered once) and assembles the module."""

    name: str
    fragments: dict[str, Fragment] = field(default_factory=dict)

    def add(self, template: str, func: Func, calls: Iterable[Func] = (), **params: Any) -> Func:
        if func.symbol in self.fragments:
            return func
        text = render(template, symbol=func.symbol, **params)
        self.fragments[func.symbol] = Fragment(template, text, tuple(calls))
        return func

    def add_raw(self, key: str, template: str, calls: Iterable[Func] = (), **params: Any) -> None:
        """A fragment that is not a callable function (the public entry points with their globals)."""
        if key not in self.fragments:
            self.fragments[key] = Fragment(template, render(template, **params), tuple(calls))

    def build(self, inline: bool = True, locations: bool = False) -> str:
        """Parse + verify every fragment, merge them, and return the module text.

        With `inline` every private function is inlined into the entry points and removed: IREE
        3.13's StableHLO input conversion fails ("unresolved source materialization") on some
        functions that stay un-inlined with several callers, and codegen wants one flat graph anyway.
        With `locations` the text carries every op's location: `"-":line:col` of its fragment's source
        (`fragment_source`), and for an inlined op `callsite(<that> at <the call's location>)`, out to the
        call in an entry's fragment (what `diagnostics/dispatches.py` attributes dispatches by).
        """
        from iree.compiler import ir
        from iree.compiler.api import Session

        session = Session()  # owns the context; must outlive everything parsed below
        context = session.context
        with context, ir.Location.unknown():
            module = ir.Module.parse(f"module @{self.name} {{}}")
            for fragment in self.fragments.values():
                parsed = parse_fragment(fragment_source(fragment), fragment.template, context)
                for op in list(parsed.body.operations):
                    if _is_declaration(op):
                        continue
                    op.detach_from_parent()
                    module.body.append(op)
            try:
                module.operation.verify()
                if inline:
                    _inline_all(module)
            except ir.MLIRError as exc:  # pragma: no cover - fragments verify individually
                raise FragmentParseError(f"assembled module @{self.name} does not verify: {exc}") from None
            text = module.operation.get_asm(enable_debug_info=True) if locations else str(module)
        del session
        return text


def _inline_all(module: Any) -> None:
    """MLIR's inliner (without its default canonicalization, so no op is rewritten) + symbol DCE."""
    from iree.compiler.passmanager import PassManager

    PassManager.parse("builtin.module(inline{default-pipeline=''}, symbol-dce)").run(module.operation)


def fragment_source(fragment: Fragment) -> str:
    """The fragment's text with declarations of the functions it calls (deduplicated)."""
    seen: dict[str, Func] = {f.symbol: f for f in fragment.calls}
    decls = "".join(f.declaration() + "\n" for f in seen.values())
    return decls + fragment.text


def _is_declaration(op: Any) -> bool:
    return op.operation.name == "func.func" and len(op.regions[0].blocks) == 0


_LOCATION = re.compile(r'"[^"]*":(\d+):(\d+)')


def parse_fragment(text: str, template: str, context: Any) -> Any:
    """Parse and verify one fragment; on failure show the numbered text around the error."""
    from iree.compiler import ir

    try:
        with context:
            return ir.Module.parse(text)
    except ir.MLIRError as exc:
        diags = list(getattr(exc, "error_diagnostics", []))
        first = diags[0] if diags else None
        message = first.message if first else str(exc)
        line = None
        if first is not None:
            m = _LOCATION.search(str(first.location))
            if m:
                line = int(m.group(1))
        shown = numbered(text, mark=line, around=6 if line else None)
        raise FragmentParseError(
            f"{template}: rendered MLIR does not parse/verify"
            + (f" (line {line})" if line else "")
            + f": {message}\n{shown}"
        ) from None
