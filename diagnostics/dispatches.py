"""What one call of a compiled entry launches, read from IREE's stream level (no device needed).

    profile = stream_profile(lambda: emit_decoder_module(spec), parse_target("cuda", "sm_90"))
    profile.entries["decoder_decode_c64_s4_x64_b4"].by_call()   # {"layer 0": 41, ..., "head": 9, ...}

At the stream level every kernel launch of an entry is one `stream.cmd.dispatch` in the entry's public function
(IREE turns each into one command-buffer dispatch; a committed kernel linked through `hal.dispatch.extern` is
one as well), so counting them counts a call's launches, before any code generation.

**Attribution to the entry's calls.** The emitters assemble a module from fragments (one function per op
specialisation, the entries in one fragment) and inline it before IREE sees it. `emit_with_locations` builds the
same fragments with every op's location kept (`ModuleBuilder.build(locations=True)`): an op inlined from a call
carries `callsite(<its line> at <the call's line>)`, nested out to the call in the entry's fragment, and IREE
keeps locations through dispatch formation (a dispatch formed from several ops carries a `fused[...]` of their
locations). Each location of a dispatch is followed out to the outermost call in the entry's fragment
(IREE's own ABI wrapper adds the entry's `func.func` line, which is no call): that call names the dispatch's
origin (`Call.label`: "layer 3" for a decoder layer, else the call's result, e.g. "inputs" for the decoder's
embedding); a location that reaches no call is the entry's own op ("entry": a slice or reshape between calls).
A dispatch formed from ops of several calls gets all their labels joined by "+". Locations are the only
difference between the text compiled here and the production text: no pass reads them to form dispatches
(`tests/test_dispatch_counts.py` checks that both give the same dispatches).

**Bytes written.** `Dispatch.written` gives, per bound resource, the bytes the dispatch's executable stores
into it: a `dispatch.tensor.store` of a scatter's result writes the scatter's updates (the scatter iterates over
them, its destination is the bound resource, updated in place), any other store writes the `sizes` it names.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..emitters.compile import compile_mlir_to
from ..emitters.render import ModuleBuilder, fragment_source
from ..emitters.targets import Target

#: Bytes per element of the element types a dispatch stores.
_ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i1": 1}


# ---------------------------------------------------------------------------------------------- emitting
@dataclass(frozen=True)
class Call:
    """A call in an entry's fragment: the line it stands on (in `fragment_source` of that fragment)."""

    entry: str  # the public function it is in
    line: int
    result: str  # its first result's name, without '%' (e.g. "layer3", "streams12", "logits")
    callee: str
    template: str  # the callee's template (e.g. "decoder_layer.mlir.j2")

    @property
    def label(self) -> str:
        """ "layer N" for a decoder layer (its result is %layerN, or %streams<N+1> for a KV-shared layer),
        else the result's name."""
        if self.template == "decoder_layer.mlir.j2":
            found = re.fullmatch(r"layer(\d+)|streams(\d+)", self.result)
            if found:
                return f"layer {int(found.group(1)) if found.group(1) else int(found.group(2)) - 1}"
        return self.result


@dataclass(frozen=True)
class Emitted:
    """A module's text with locations, and the calls of its entries by line."""

    text: str
    calls: dict[int, Call]


@contextlib.contextmanager
def _captured_builder() -> Iterator[dict[str, ModuleBuilder]]:
    """Record the ModuleBuilder whose `build` an emitter calls (the emitters build one module each)."""
    captured: dict[str, ModuleBuilder] = {}
    original = ModuleBuilder.build

    def build(self: ModuleBuilder, inline: bool = True, locations: bool = False) -> str:
        captured["builder"] = self
        return original(self, inline=inline, locations=locations)

    ModuleBuilder.build = build  # type: ignore[method-assign]
    try:
        yield captured
    finally:
        ModuleBuilder.build = original  # type: ignore[method-assign]


_CALL = re.compile(r"^\s*%([\w]+)(?::\d+)? = func\.call @([\w$.]+)\(")
_PUBLIC = re.compile(r"^\s*func\.func @([\w$.]+)\(", re.M)


def emit_with_locations(emit: Callable[[], str]) -> Emitted:
    """Run an emitter (e.g. `lambda: emit_decoder_module(spec)`) and build its module again with locations."""
    with _captured_builder() as captured:
        emit()
    builder = captured["builder"]
    templates = {symbol: f.template for symbol, f in builder.fragments.items()}
    calls: dict[int, Call] = {}
    entries = [f for f in builder.fragments.values() if _PUBLIC.search(f.text)]
    if len(entries) != 1:
        raise ValueError(f"expected one fragment with the entries, found {len(entries)}")
    entry = ""
    for number, line in enumerate(fragment_source(entries[0]).splitlines(), start=1):
        public = _PUBLIC.match(line)
        if public:
            entry = public.group(1)
        call = _CALL.match(line)
        if call and entry:
            callee = call.group(2)
            calls[number] = Call(entry, number, call.group(1), callee, templates.get(callee, ""))
    return Emitted(builder.build(locations=True), calls)


# ---------------------------------------------------------------------------------------------- locations
@dataclass(frozen=True)
class _File:
    line: int


@dataclass(frozen=True)
class _CallSite:
    callee: object
    caller: object


@dataclass(frozen=True)
class _Fused:
    parts: tuple[object, ...]


@dataclass(frozen=True)
class _Ref:
    name: str


_UNKNOWN = None


class _LocationParser:
    """MLIR location syntax: "file":L:C [to ...], callsite(A at B), fused[<...>][A, ...], "name"(A), unknown, #locN."""

    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0

    def _skip(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \n\t":
            self.i += 1

    def _eat(self, token: str) -> bool:
        self._skip()
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def _string(self) -> str:
        assert self.s[self.i] == '"'
        j = self.i + 1
        while self.s[j] != '"':
            j += 2 if self.s[j] == "\\" else 1
        value, self.i = self.s[self.i + 1 : j], j + 1
        return value

    def parse(self) -> object:
        self._skip()
        if self._eat("callsite("):
            callee = self.parse()
            if not self._eat("at"):
                raise ValueError(f"callsite without 'at' at {self.i}: {self.s[:200]}")
            caller = self.parse()
            self._eat(")")
            return _CallSite(callee, caller)
        if self._eat("fused"):
            if self._eat("<"):  # fused<metadata>[...]
                depth = 1
                while depth:
                    depth += {"<": 1, ">": -1}.get(self.s[self.i], 0)
                    self.i += 1
            self._eat("[")
            parts = [self.parse()]
            while self._eat(","):
                parts.append(self.parse())
            self._eat("]")
            return _Fused(tuple(parts))
        if self._eat("unknown"):
            return _UNKNOWN
        if self.s.startswith("#", self.i):
            found = re.compile(r"#[\w$.-]+").match(self.s, self.i)
            assert found is not None
            self.i = found.end()
            return _Ref(found.group(0))
        if self.s.startswith('"', self.i):
            self._string()
            found = re.compile(r":(\d+):(\d+)(?: to (?::?\d+)+)?").match(self.s, self.i)
            if found:  # a file location
                self.i = found.end()
                return _File(int(found.group(1)))
            if self._eat("("):  # a name location around a child
                child = self.parse()
                self._eat(")")
                return child
            return _UNKNOWN  # a bare name
        raise ValueError(f"cannot read a location at {self.i}: {self.s[self.i : self.i + 80]!r}")


def _closing(text: str, start: int, opening: str, closing: str) -> int:
    """The index after the `closing` bracket that matches an `opening` one just before `start` (nesting
    counted, quoted strings skipped)."""
    depth, i = 1, start
    while depth:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
        i += 1
    return i


def _location_text(text: str, start: int) -> tuple[str, int]:
    """The text inside `loc(...)` that starts at `start` (just after 'loc('), and the index after its ')'."""
    end = _closing(text, start, "(", ")")
    return text[start : end - 1], end


class _Locations:
    """A printed module's location aliases (`#locN = loc(...)`), and the line chains of a location."""

    def __init__(self, text: str) -> None:
        self.aliases: dict[str, object] = {}
        for found in re.finditer(r"^(#loc\d*) = loc\(", text, re.M):
            inner, _ = _location_text(text, found.end())
            self.aliases[found.group(1)] = _LocationParser(inner).parse()

    def chains(self, loc: object) -> list[tuple[int, ...]]:
        """Every path of lines from a leaf location out to its outermost caller (innermost first)."""
        if loc is _UNKNOWN:
            return []
        if isinstance(loc, _Ref):
            return self.chains(self.aliases.get(loc.name, _UNKNOWN))
        if isinstance(loc, _File):
            return [(loc.line,)]
        if isinstance(loc, _Fused):
            return [c for part in loc.parts for c in self.chains(part)]
        assert isinstance(loc, _CallSite)
        callers = self.chains(loc.caller) or [()]
        return [a + b for a in self.chains(loc.callee) for b in callers]


# ---------------------------------------------------------------------------------------------- the stream level
@dataclass(frozen=True)
class Binding:
    mode: str  # ro, rw, wo
    lifetime: str  # the stream resource's lifetime: variable (a global), transient, external, constant
    length: int  # bytes of the bound range
    written: int  # bytes the executable stores into it (0 for a read-only binding, or an extern kernel's unknown)


@dataclass(frozen=True)
class Dispatch:
    symbol: str  # @executable::@export (an extern kernel: @executable::@variant::@entry)
    origins: tuple[str, ...]  # the labels of the calls its ops come from (sorted), or ("entry",)
    bindings: tuple[Binding, ...]

    @property
    def origin(self) -> str:
        return "+".join(self.origins)

    @property
    def extern(self) -> bool:
        return self.symbol.count("::") == 2


@dataclass
class EntryProfile:
    name: str
    dispatches: list[Dispatch] = field(default_factory=list)
    #: the static sizes of the transient allocations of one call (`stream.resource.alloca` of transient
    #: resources, after IREE packed each execution's temporaries into one allocation), in program order
    transient_allocations: list[int] = field(default_factory=list)
    #: the most transient bytes allocated and not yet released at any point of the entry, in program order
    #: (IREE orders allocations on the device's queue; a release the program states before an allocation may
    #: land after it, so this is what the program asks for, not a measured peak)
    transient_peak: int = 0
    #: the points where one call's host waits for the device before it can go on (`stream.timepoint.await`):
    #: each ends an execution region, so the device idles while the host records and submits the next one
    #: (a value that must leave the stream, such as an optimization barrier's operand, makes one)
    host_waits: int = 0

    def by_call(self) -> Counter[str]:
        return Counter(d.origin for d in self.dispatches)

    def written(self, lifetime: str, length: int | None = None) -> int:
        """Bytes one call stores into bound resources of `lifetime` (and range `length`, e.g. one global)."""
        return sum(
            b.written
            for d in self.dispatches
            for b in d.bindings
            if b.lifetime == lifetime and (length is None or b.length == length)
        )


@dataclass
class StreamProfile:
    text: str  # the module at the stream level
    entries: dict[str, EntryProfile]


def _body(text: str, start: int) -> tuple[str, int]:
    """The text of the `{...}` block opened by the '{' that ends the line of `start` (an op's region: its
    attributes and argument attributes come before), from after that '{' (nesting counted, strings skipped),
    and the index after its '}'."""
    i = text.index("\n", start)
    if text[i - 1] != "{":
        raise ValueError(f"no region opens at the end of: {text[start:i][:200]}")
    end = _closing(text, i, "{", "}")
    return text[i : end - 1], end


def _element_bytes(tensor: str) -> int:
    """Bytes of a `tensor<AxBxT>` type."""
    dims = tensor[len("tensor<") : -1].split("x")
    return math.prod(int(d) for d in dims[:-1]) * _ELEMENT_BYTES[dims[-1]]


_SUBSPAN = re.compile(r"(%\w+) = stream\.binding\.subspan (%arg\d+)\[")
_STORE = re.compile(r"iree_tensor_ext\.dispatch\.tensor\.store (%[\w#]+), (%\w+), [^:]*: (tensor<[^>]*>)")
_SCATTER = re.compile(r"(%\w+) = iree_linalg_ext\.scatter [^\n]*?ins\((%\w+), (%\w+) : (tensor<[^>]*>)")
_FUNC = re.compile(r"^\s*func\.func @([\w$.]+)\((.*)$", re.M)


def _executable_writes(text: str) -> dict[str, list[int]]:
    """Per `@executable::@export` of the module's stream executables: bytes stored into each binding argument."""
    writes: dict[str, list[int]] = {}
    for executable in re.finditer(r"^  stream\.executable (?:private |public )?@([\w$.]+) \{", text, re.M):
        body, _ = _body(text, executable.start())
        for func in _FUNC.finditer(body):
            code, _ = _body(body, func.end())
            arguments = re.findall(r"(%arg\d+): ([!\w.<>]+)", func.group(2))
            bindings = [name for name, kind in arguments if kind.startswith("!stream.binding")]
            subspans = {value: argument for value, argument in _SUBSPAN.findall(code)}
            scatters = {result: updates_type for result, _, _, updates_type in _SCATTER.findall(code)}
            stored = [0] * len(bindings)
            for value, target, tensor in _STORE.findall(code):
                argument = subspans.get(target)
                if argument not in bindings:
                    continue
                stored[bindings.index(argument)] += _element_bytes(scatters.get(value, tensor))
            writes[f"@{executable.group(1)}::@{func.group(1)}"] = stored
    return writes


_DISPATCH = re.compile(r"stream\.cmd\.dispatch (@[\w$.]+(?:::@[\w$.]+)+)")
_BINDING = re.compile(r"(ro|rw|wo) %\w+\[%[\w]+ for (%[\w]+)\] : !stream\.resource<(\w+)>")
_AWAIT = re.compile(r"= stream\.timepoint\.await ")
_CONSTANT = re.compile(r"(%c[\w]*) = arith\.constant (\d+) : index")
_ALLOCA = re.compile(
    r"(%\w+), %\w+ = stream\.resource\.alloca uninitialized[^\n]*!stream\.resource<transient>\{(%\w+)\}"
    r"|stream\.resource\.dealloca [^\n]*=> (%\w+) : !stream\.resource<transient>"
)


def read_stream(text: str, calls: dict[int, Call]) -> StreamProfile:
    """The dispatches of every public function of a stream-level module, attributed by `calls` (line -> call of
    the entries' fragment, from `emit_with_locations`)."""
    locations = _Locations(text)
    writes = _executable_writes(text)
    entries: dict[str, EntryProfile] = {}
    for func in re.finditer(r"^  util\.func public @([\w$.]+)\(", text, re.M):
        body, _ = _body(text, func.end())
        constants = {name: int(value) for name, value in _CONSTANT.findall(body)}
        profile = EntryProfile(func.group(1))
        for found in _DISPATCH.finditer(body):
            block, end = _body(body, found.end())
            loc_start = body.index("loc(", end) + len("loc(")
            location, _ = _location_text(body, loc_start)
            origins = set()
            for chain in locations.chains(_LocationParser(location).parse()):
                call = next((calls[line] for line in reversed(chain) if line in calls), None)
                origins.add(call.label if call is not None else "entry")
            if len(origins) > 1:
                origins.discard("entry")
            stored = writes.get(found.group(1), [])
            bindings = []
            for k, (mode, length, lifetime) in enumerate(_BINDING.findall(block)):
                written = stored[k] if k < len(stored) and mode != "ro" else 0
                bindings.append(Binding(mode, lifetime, constants[length], written))
            profile.dispatches.append(Dispatch(found.group(1), tuple(sorted(origins)), tuple(bindings)))
        profile.host_waits = len(_AWAIT.findall(body))
        live: dict[str, int] = {}
        for allocated, size, released in _ALLOCA.findall(body):
            if allocated:
                live[allocated] = constants[size]
                profile.transient_allocations.append(constants[size])
                profile.transient_peak = max(profile.transient_peak, sum(live.values()))
            else:
                live.pop(released, None)
        entries[profile.name] = profile
    return StreamProfile(text, entries)


def stream_profile(emit: Callable[[], str], target: Target, extra_flags: tuple[str, ...] = ()) -> StreamProfile:
    """Emit a module (with locations), compile it for `target` to the stream level, and read its dispatches."""
    emitted = emit_with_locations(emit)
    return read_stream(compile_mlir_to(emitted.text, target, "stream", extra_flags), emitted.calls)


# ---------------------------------------------------------------------------------------------- the decoder
#: The decoder entry's calls other than its layers, by the name of their result (`decoder_entry.mlir.j2`).
DECODER_CALLS = {
    "inputs": "embedding",
    "streams0": "altup_init",
    "logits": "head",
    "logits_raw": "head",
    "selection": "token_select",
    "entry": "entry",
}


def decode_step_counts(profile: StreamProfile, spec) -> dict[str, dict]:
    """Per decode entry of a decoder program (`DecoderModuleSpec`): the dispatches of one call in total, per layer
    (owning its K/V or sharing them) and per other call (the embedding, AltUp init, the head, and the entry's own
    ops: the step's cache indices), the host's waits for the device within the call, and the bytes it writes into
    the KV cache global."""
    cfg, out = spec.cfg, {}
    cache_bytes = (spec.slots + 1) * spec.slot_rows * spec.kv_layout.row_bytes
    for e in spec.decode_entries:
        entry = profile.entries[e.symbol]
        by = entry.by_call()
        layers = [by.pop(f"layer {i}", 0) for i in range(cfg.num_hidden_layers)]
        out[e.symbol] = {
            "batch": e.batch,
            "context": e.context,
            "total": len(entry.dispatches),
            "layers": layers,
            "own_layers": [n for i, n in enumerate(layers) if cfg.owns_kv(i)],
            "shared_layers": [n for i, n in enumerate(layers) if not cfg.owns_kv(i)],
            "other": {DECODER_CALLS.get(k, k): v for k, v in sorted(by.items())},
            "extern": sum(d.extern for d in entry.dispatches),
            "host_waits": entry.host_waits,
            "cache_bytes_written": entry.written("variable", cache_bytes),
        }
    return out
