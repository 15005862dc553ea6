"""In-process compilation of StableHLO MLIR text with IREE 3.13.

    vmfb = compile_mlir(text, parse_target("cuda", "sm_90"))

* One compiler ``Session`` per call (cheap: a few ms), closed when done, so
  compiling many modules in one process does not accumulate state; the vmfb
  is copied out of the compiler's memory buffer and the buffer is freed.
  Calls from several threads are fine (the GIL is released while compiling).
* Diagnostics are collected in-process through an MLIR C-API diagnostic
  handler on the session's context.  (The Python-level
  ``Session().context.attach_diagnostic_handler`` aborts the interpreter here:
  the ctypes call into the compiler releases the GIL and the nanobind
  callback then runs without it.  A ctypes callback re-acquires the GIL.)
* On failure :class:`CompileError` carries one readable message: the first
  error, the source lines around it, a one-line summary of a few further
  errors, and the flags.  It never dumps the IR; the full list of structured
  diagnostics is on ``.diagnostics``.
* cuda sm_90/sm_90a: the explicit target attribute is added to the module
  automatically (targets.apply_target_to_module); reported line numbers refer
  to the text passed in.
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
from collections.abc import Sequence

from .compile_errors import CompileError, Diagnostic, format_failure, remap_diagnostic
from .targets import (
    DEFAULT_CUDA_ARCH,
    SUPPORTED_CUDA_ARCHS,
    TARGET_KINDS,
    Target,
    _edit_module_for_target,
    apply_target_to_module,
    parse_target,
)

__all__ = [
    "DEFAULT_CUDA_ARCH",
    "SUPPORTED_CUDA_ARCHS",
    "TARGET_KINDS",
    "Target",
    "apply_target_to_module",
    "IR_PHASES",
    "compile_mlir",
    "compile_mlir_to",
    "compiler_version",
    "cpu_features",
    "parse_target",
    "verify_mlir",
]

DEFAULT_SOURCE_NAME = "input.mlir"

# ---------------------------------------------------------------------------
# The compiler library (ctypes) and the diagnostic handler


class _Lib:
    """The functions of libIREECompiler used here, with their signatures.

    A private ctypes.CDLL of the same shared library that
    iree.compiler.api uses (dlopen returns the same handle), so setting
    argtypes here does not touch iree.compiler.api's function objects.
    """

    _instance: _Lib | None = None
    _lock = threading.Lock()

    # MLIR C API: MlirLogicalResult (*)(MlirDiagnostic, void *).  Both
    # structs wrap one scalar, which the C ABIs pass/return like the scalar.
    HANDLER = ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p, ctypes.c_void_p)
    # MlirStringCallback: void (*)(MlirStringRef{const char*, size_t}, void *)
    STRING_CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)

    def __init__(self) -> None:
        from iree.compiler.api import ctypes_dl

        dl = ctypes.CDLL(ctypes_dl._probe_iree_compiler_dylib())
        vp, u64 = ctypes.c_void_p, ctypes.c_uint64

        def sig(name, restype, argtypes):
            f = getattr(dl, name)
            f.restype, f.argtypes = restype, argtypes
            return f

        self.borrow_context = sig("ireeCompilerSessionBorrowContext", vp, [vp])
        self.attach = sig("mlirContextAttachDiagnosticHandler", u64, [vp, self.HANDLER, vp, vp])
        self.detach = sig("mlirContextDetachDiagnosticHandler", None, [vp, u64])
        self.diag_location = sig("mlirDiagnosticGetLocation", vp, [vp])
        self.diag_severity = sig("mlirDiagnosticGetSeverity", ctypes.c_int, [vp])
        self.diag_num_notes = sig("mlirDiagnosticGetNumNotes", ctypes.c_ssize_t, [vp])
        self.diag_note = sig("mlirDiagnosticGetNote", vp, [vp, ctypes.c_ssize_t])
        self.diag_print = sig("mlirDiagnosticPrint", None, [vp, self.STRING_CB, vp])
        self.loc_print = sig("mlirLocationPrint", None, [vp, self.STRING_CB, vp])
        self.set_compile_to = sig("ireeCompilerInvocationSetCompileToPhase", None, [vp, ctypes.c_char_p])
        self.revision = sig("ireeCompilerGetRevision", ctypes.c_char_p, [])
        self.api_version = sig("ireeCompilerGetAPIVersion", ctypes.c_int, [])

    @classmethod
    def get(cls) -> _Lib:
        with cls._lock:
            if cls._instance is None:
                cls._instance = _Lib()
            return cls._instance

    # MlirDiagnosticSeverity
    _SEVERITY = {0: "error", 1: "warning", 2: "note", 3: "remark"}

    def _print(self, fn, obj) -> str:
        parts: list[bytes] = []

        @self.STRING_CB
        def cb(data, size, _user):
            parts.append(ctypes.string_at(data, size))

        fn(obj, cb, None)
        return b"".join(parts).decode("utf-8", errors="replace")

    def convert(self, diag) -> Diagnostic:
        notes = tuple(self.convert(self.diag_note(diag, i)) for i in range(self.diag_num_notes(diag)))
        return Diagnostic(
            severity=self._SEVERITY.get(self.diag_severity(diag), "error"),
            location=self._print(self.loc_print, self.diag_location(diag)),
            message=self._print(self.diag_print, diag),
            notes=notes,
        )


class _DiagnosticCollector:
    """Collects the diagnostics of one session's MLIR context.

    The handler returns success, so nothing is printed to stderr.  It may run
    on compiler worker threads; ctypes takes the GIL for it.
    """

    def __init__(self, lib: _Lib, session) -> None:
        self.lib = lib
        self.diagnostics: list[Diagnostic] = []
        self._callback = lib.HANDLER(self._on_diagnostic)  # keep alive
        self._context = lib.borrow_context(session._session_p)
        self._id = lib.attach(self._context, self._callback, None, None)

    def _on_diagnostic(self, diag, _user) -> int:
        try:
            self.diagnostics.append(self.lib.convert(diag))
        except Exception as e:  # never let an exception cross into C++
            self.diagnostics.append(Diagnostic("error", "loc(unknown)", f"<diagnostic lost: {e}>"))
        return 1

    def close(self) -> None:
        if self._context:
            self.lib.detach(self._context, self._id)
            self._context = None


# ---------------------------------------------------------------------------
# Public API


def _check_extra_flags(target: Target, extra: tuple[str, ...]) -> str | None:
    """Reject extra flags that fight the Target (some abort the process)."""
    owned = {f.split("=", 1)[0] for f in target.flags()} | {"--iree-cuda-target"}
    for f in extra:
        if not isinstance(f, str) or not f.startswith("-"):
            return f"{f!r} is not a flag"
        name = f.split("=", 1)[0]
        if name in owned:
            return f"{name} is set by the Target; choose it through Target/parse_target instead"
        if name == "--iree-llvmcpu-target-cpu-features" and target.is_cpu and target.cpu == "host":
            # IREE 3.13: "If either CPU or CPU-features is `host`, the other
            # must be either also `host` or the default"; otherwise LLVM
            # aborts the whole process ("64-bit code requested on a subtarget
            # that doesn't support it").
            return (
                f"{name} cannot be combined with cpu='host' (LLVM aborts the process); "
                "use a named CPU, e.g. parse_target('llvm-cpu:x86-64-v3')"
            )
    return None


def compile_mlir(
    mlir_text: str,
    target: Target,
    extra_flags: Sequence[str] = (),
    *,
    source_name: str = DEFAULT_SOURCE_NAME,
) -> bytes:
    """Compile StableHLO MLIR text to a vmfb, in process.

    For cuda sm_90/sm_90a the explicit target attribute is added to the module
    first (unless already present).  extra_flags are appended to
    target.flags().  Raises CompileError on failure.
    """
    return _compile(mlir_text, target, extra_flags, source_name, None)


#: The phases `compile_mlir_to` stops after (iree-compile's --compile-to values that print IR).
IR_PHASES = (
    "input",
    "abi",
    "preprocessing",
    "global-optimization",
    "dispatch-creation",
    "flow",
    "stream",
    "executable-sources",
    "executable-configurations",
    "executable-targets",
    "hal",
)


def compile_mlir_to(
    mlir_text: str,
    target: Target,
    phase: str,
    extra_flags: Sequence[str] = (),
    *,
    source_name: str = DEFAULT_SOURCE_NAME,
) -> str:
    """Compile StableHLO MLIR text in process up to `phase` (`--compile-to`, e.g. "flow" or "stream") and
    return the module IR IREE holds there, with locations (`compile_mlir`'s target handling and errors)."""
    if phase not in IR_PHASES:
        raise ValueError(f"phase must be one of {', '.join(IR_PHASES)}, got {phase!r}")
    return _compile(mlir_text, target, extra_flags, source_name, phase).decode("utf-8")


def _compile(mlir_text: str, target: Target, extra_flags: Sequence[str], source_name: str, phase: str | None) -> bytes:
    """compile_mlir (phase None: the vmfb) and compile_mlir_to (the IR after `phase`)."""
    from iree.compiler.api import Output, Session, Source

    if not isinstance(target, Target):
        raise TypeError(f"target must be a Target, got {type(target).__name__}")
    if isinstance(extra_flags, str):
        raise TypeError("extra_flags must be a sequence of flags, not one string")
    flags = target.flags() + tuple(extra_flags)
    problem = _check_extra_flags(target, tuple(extra_flags))
    if problem:
        raise CompileError(
            f"bad extra_flags for target {target}: {problem}\nflags: {' '.join(flags)}",
            flags=flags,
            target=target,
            stage="flags",
        )
    try:
        edit = _edit_module_for_target(mlir_text, target)
    except ValueError as e:
        raise CompileError(
            f"IREE compile for {target} not started: {e}", target=target, flags=flags, stage="target"
        ) from None

    lib = _Lib.get()
    session = Session()
    collector = None
    inv = None
    output = None
    try:
        try:
            session.set_flags(*flags)
        except ValueError as e:
            raise CompileError(
                f"IREE rejected the compiler flags: {e}\nflags: {' '.join(flags)}",
                flags=flags,
                target=target,
                stage="flags",
            ) from None
        collector = _DiagnosticCollector(lib, session)
        inv = session.invocation()
        if phase is not None:
            lib.set_compile_to(inv._inv_p, phase.encode())
        data = edit.text.encode("utf-8")
        source = Source.wrap_buffer(session, data, buffer_name=source_name)
        ok = inv.parse_source(source) and inv.execute()
        vmfb = None
        if ok:
            try:
                if phase is None:
                    output = Output.open_membuffer()
                    inv.output_vm_bytecode(output)
                    mapped = output.map_memory()
                    vmfb = bytes(mapped)
                    del mapped
                else:  # printed here, with every op's location (the C API's IR output has none)
                    vmfb = inv.export_module().get_asm(binary=True, enable_debug_info=True, assume_verified=True)
            except ValueError as e:
                what = "the vmfb" if phase is None else f"the IR after {phase}"
                collector.diagnostics.append(Diagnostic("error", "loc(unknown)", f"writing {what} failed: {e}"))
                ok = False
        diagnostics = [remap_diagnostic(d, edit, source_name) for d in collector.diagnostics]
    finally:
        if output is not None:
            output.close()
        if inv is not None:
            inv.close()
        if collector is not None:
            collector.close()
        session.close()

    if not ok or not vmfb:
        n_err = sum(d.severity == "error" for d in diagnostics)
        header = f"IREE compile failed for target {target}: {n_err} error(s)"
        raise CompileError(
            format_failure(header, diagnostics, mlir_text, source_name, flags),
            diagnostics=diagnostics,
            flags=flags,
            target=target,
            stage="compile",
        )
    return vmfb


def verify_mlir(mlir_text: str, *, source_name: str = DEFAULT_SOURCE_NAME) -> None:
    """Parse and verify the text with the compiler's dialects; no codegen.

    Raises CompileError (stage "verify") with the same numbered-line report.
    Takes a few milliseconds for small modules.

    This parses through a compiler Invocation (whose parser runs the op
    verifiers) on a fresh Session, not through ``iree.compiler.ir`` with
    ``Session().context``: in 3.13 every context taken that way is never
    freed (ir.Context._get_live_count() only grows; about 0.65 MB per call
    after one parse), while a Session that keeps its context is freed fully.
    """
    from iree.compiler.api import Session, Source

    lib = _Lib.get()
    session = Session()
    collector = None
    inv = None
    try:
        collector = _DiagnosticCollector(lib, session)
        inv = session.invocation()
        ok = inv.parse_source(Source.wrap_buffer(session, mlir_text.encode("utf-8"), buffer_name=source_name))
        diagnostics = list(collector.diagnostics)
    finally:
        if inv is not None:
            inv.close()
        if collector is not None:
            collector.close()
        session.close()
    if not ok:
        n_err = sum(d.severity == "error" for d in diagnostics)
        raise CompileError(
            format_failure(f"MLIR verification failed: {n_err} error(s)", diagnostics, mlir_text, source_name, ()),
            diagnostics=diagnostics,
            stage="verify",
        )


_version_cache: str | None = None


def compiler_version() -> str:
    """Identify the compiler build, for cache keys.

    E.g. "iree-base-compiler 3.13.0 (build 3.13.0rc20261016 @ 89ece87b…, C API 1.4)".
    """
    global _version_cache
    if _version_cache is None:
        import importlib.metadata as md

        dist_version = "unknown"
        for dist in ("iree-base-compiler", "iree-compiler"):
            try:
                dist_version = f"{dist} {md.version(dist)}"
                break
            except md.PackageNotFoundError:
                continue
        lib = _Lib.get()
        revision = (lib.revision() or b"").decode("utf-8", errors="replace")
        api = lib.api_version()
        _version_cache = f"{dist_version} (build {revision}, C API {api >> 16}.{api & 0xFFFF})"
    return _version_cache


_FEATURE_PROBE = """module @features {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = stablehlo.add %x, %x : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
"""


@functools.cache
def cpu_features(target: Target) -> frozenset[str]:
    """The CPU features llvm-cpu code for `target` is generated for (`+avx512bf16`, `-amx-bf16`, ...), as LLVM
    resolves the target's CPU name ("host": this machine's): read from the executable IREE writes when it
    compiles a one-op module for `target`, so they are the compiler's own facts, never a table here."""
    import tempfile
    from pathlib import Path

    if not target.is_cpu:
        raise ValueError(f"cpu_features applies to the llvm-cpu target, not {target}")
    with tempfile.TemporaryDirectory(prefix="gemma3n-cpu-features-") as dump:
        compile_mlir(_FEATURE_PROBE, target, [f"--iree-hal-dump-executable-sources-to={dump}"])
        text = "".join(p.read_text() for p in Path(dump).glob("*.mlir"))
    found = re.search(r'cpu_features = "([^"]*)"', text)
    if found is None:
        raise CompileError(f"IREE's executable for {target} names no cpu_features")
    return frozenset(f for f in found.group(1).split(",") if f)
