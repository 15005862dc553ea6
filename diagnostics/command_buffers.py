"""When a compiled entry's kernel launches are recorded: once, as the module loads, or again on every call.

    ir = compile_mlir_to(mlir, parse_target("cuda", "sm_90"), "hal")
    recording_per_entry(ir)["decoder_decode_c64_s4_x64_b1"]   # Recording(per_call=0, at_load=704)

IREE records an entry's launches into a HAL command buffer. Where every buffer the launches bind is a constant,
an immutable global or a slot of a binding table, IREE memoizes the recording: a `util.initializer` calls the
entry's `@__<entry>_memoize_apply` once, at load, and a call only submits that command buffer with its binding
table (`hal.device.queue.execute.indirect`; the entry loads the recorded buffer from the global
`@__<entry>_memoize_result...` the initializer stored). Where one binding is a value of the call itself (a transient buffer
bound by a kernel layout without the `Indirect` flag: `templates/_macros.mlir.j2`'s `extern`), the apply
function takes that value as an argument and runs on every call: the VM records every launch again, each call,
which costs a decode step microseconds per launch on the host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOP_LEVEL = re.compile(r"^  util\.(func (?:public|private) @(?P<name>[\w$.-]+)|initializer)\b")
_CALL = re.compile(r"util\.call @(?P<callee>[\w$.-]+)\(")
_MEMOIZED = re.compile(r"util\.global\.load immutable @(?P<prefix>[\w$.-]+)_memoize_result\w*")
_DISPATCH = "hal.command_buffer.dispatch"


@dataclass(frozen=True)
class Recording:
    """The launches an entry's command buffers record on each of its calls, and those recorded once at load."""

    per_call: int
    at_load: int


def _bodies(hal_ir: str) -> tuple[dict[str, str], list[str]]:
    """The module's functions' bodies by name, and its initializers' bodies (IREE prints each top-level op's
    closing brace at two spaces)."""
    functions: dict[str, str] = {}
    initializers: list[str] = []
    name: str | None = None
    lines: list[str] | None = None
    for line in hal_ir.splitlines():
        if lines is None:
            match = _TOP_LEVEL.match(line)
            if match:
                name, lines = match["name"], []
            continue
        if line.startswith("  }"):
            body = "\n".join(lines)
            if name is None:
                initializers.append(body)
            else:
                functions[name] = body
            name, lines = None, None
            continue
        lines.append(line)
    return functions, initializers


def _recorded(body: str, functions: dict[str, str], seen: frozenset[str] = frozenset()) -> int:
    """Launches recorded when `body` runs: its own and those of the functions it calls."""
    count = body.count(_DISPATCH)
    for callee in _CALL.findall(body):
        if callee in functions and callee not in seen:
            count += _recorded(functions[callee], functions, seen | {callee})
    return count


def recording_per_entry(hal_ir: str) -> dict[str, Recording]:
    """Per public function of a module at IREE's HAL level (`compile_mlir_to(..., "hal")`): the launches its
    calls record each time, and those its memoized command buffers recorded once at load."""
    functions, initializers = _bodies(hal_ir)
    run_at_load = {callee for body in initializers for callee in _CALL.findall(body)}
    public = {m["name"] for m in map(_TOP_LEVEL.match, hal_ir.splitlines()) if m and "public" in m[0]}
    result = {}
    for name in sorted(public):
        body = functions[name]
        applied = {f"{prefix}_memoize_apply" for prefix in _MEMOIZED.findall(body)} & run_at_load
        at_load = sum(_recorded(functions[apply], functions) for apply in applied)
        result[name] = Recording(per_call=_recorded(body, functions), at_load=at_load)
    return result
