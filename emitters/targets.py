"""Compile targets for IREE 3.13: flags, validation, and the Hopper workaround.

A :class:`Target` names one IREE HAL backend configuration ("llvm-cpu" or
"cuda") and knows the ``iree-compile`` flags that select it.

Hopper (sm_90 / sm_90a) needs special handling.  IREE 3.13's table of known
NVIDIA GPUs has no Hopper row, so ``--iree-cuda-target=sm_90`` fails with
"missing GPU target in #hal.executable.target".  The fix is to put a complete
``#hal.executable.target`` (with an ``#iree_gpu.target`` describing the
GPU) into the module's ``hal.device.targets``; the module attribute takes
precedence over the command-line device flags.  :func:`apply_target_to_module`
does that text rewrite (see shared/notes/iree.md, section B.3).

This module has no dependency on the IREE packages; it only builds strings.
"""

from __future__ import annotations

import hashlib
import platform
import re
from dataclasses import dataclass

__all__ = [
    "CPU_CONTRACTION_FLAGS",
    "CPU_TARGET_KIND",
    "CUDA_TARGET_KIND",
    "DEFAULT_CUDA_ARCH",
    "EXPLICIT_CUDA_ARCHS",
    "FLAG_CUDA_ARCHS",
    "SUPPORTED_CUDA_ARCHS",
    "TARGET_KINDS",
    "Target",
    "TargetModuleEdit",
    "apply_target_to_module",
    "parse_target",
]

CPU_TARGET_KIND = "llvm-cpu"
CUDA_TARGET_KIND = "cuda"
TARGET_KINDS: tuple[str, ...] = (CPU_TARGET_KIND, CUDA_TARGET_KIND)

# Accepted spellings of the target kind in parse_target().
_KIND_ALIASES = {
    "llvm-cpu": CPU_TARGET_KIND,
    "cpu": CPU_TARGET_KIND,
    "cuda": CUDA_TARGET_KIND,
}

#: H100 / H200 are the product's GPUs.
DEFAULT_CUDA_ARCH = "sm_90"

#: CUDA archs IREE 3.13 knows by name (``--iree-cuda-target=<arch>``).  Each
#: was checked to compile a bf16 dot with iree-base-compiler 3.13.0; the PTX
#: targets that arch.  Anything else must never be passed to the flag: an
#: unknown *name* (e.g. "hopper", "h100") segfaults the in-process compiler,
#: and an unknown sm_XX fails with "missing GPU target".
FLAG_CUDA_ARCHS: tuple[str, ...] = (
    "sm_60",
    "sm_61",
    "sm_70",
    "sm_72",
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_87",
    "sm_89",
    "sm_120",
    "sm_121",
)

#: Archs with no IREE 3.13 entry that we support through an explicit
#: ``#hal.executable.target`` in the module (apply_target_to_module).
EXPLICIT_CUDA_ARCHS: tuple[str, ...] = ("sm_90", "sm_90a")

SUPPORTED_CUDA_ARCHS: tuple[str, ...] = tuple(
    sorted(FLAG_CUDA_ARCHS + EXPLICIT_CUDA_ARCHS, key=lambda a: (int(re.sub(r"\D", "", a)), a))
)

#: How llvm-cpu compiles the contractions (BENCHMARKS.md, "The CPU path"): data tiling packs every
#: matmul's operands into the tiles of the CPU's dot-product instructions (the BF16 ones, `vdpbf16ps`, on a
#: CPU with AVX512-BF16), where IREE 3.13's default ran the encoder's BF16 GEMMs at about 75 GFLOP/s on a
#: 2-core Zen 5, and at about 500 with it. Only the order in which a dot product's F32 sum accumulates
#: changes (inside the accumulation envelope, contracts/envelope.py); the elementwise ops and the pinned
#: reduction schedules compile as before. The path that starts in global optimization: the one
#: `--iree-opt-data-tiling` picks in 3.13 (from dispatch creation) fails to compile three of this project's
#: patterns (a masked attention operand: a pack of i1; a rounded linear result leaving its dispatch three
#: ways: 49 KiB of stack; a linear result reshaped into lanes: vectors over 32 KiB) and is slower. (The SSCP
#: convolutions are written as matmuls for llvm-cpu so that they are data-tiled too: emitters/lowering.py.)
CPU_CONTRACTION_FLAGS: tuple[str, ...] = ("--iree-global-opt-data-tiling",)

_CPU_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@dataclass(frozen=True)
class Target:
    """One IREE compile target.

    kind:      "llvm-cpu" or "cuda".
    cuda_arch: "sm_80", "sm_90", ... for cuda (defaults to DEFAULT_CUDA_ARCH);
               must be None for llvm-cpu.
    cpu:       llvm-cpu only: "host" (default; the binary is tied to this
               machine's CPU), "generic", or an LLVM CPU name ("znver4",
               "sapphirerapids", ...).  Must stay "host" for cuda (ignored).
    """

    kind: str = CPU_TARGET_KIND
    cuda_arch: str | None = None
    cpu: str = "host"

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ValueError(f"unknown target kind {self.kind!r}; allowed: {', '.join(TARGET_KINDS)}")
        if self.kind == CUDA_TARGET_KIND:
            arch = DEFAULT_CUDA_ARCH if self.cuda_arch is None else _normalize_arch(self.cuda_arch)
            object.__setattr__(self, "cuda_arch", arch)
            if self.cpu != "host":
                raise ValueError(f"cpu={self.cpu!r} only applies to the llvm-cpu target, not to cuda")
        else:
            if self.cuda_arch is not None:
                raise ValueError(
                    f"cuda_arch={self.cuda_arch!r} given for the llvm-cpu target; "
                    "cuda_arch only applies to target 'cuda'"
                )
            if not isinstance(self.cpu, str) or not _CPU_NAME_RE.match(self.cpu):
                raise ValueError(
                    f"invalid llvm-cpu CPU name {self.cpu!r}; use 'host', 'generic' "
                    "or an LLVM CPU name such as 'znver4' or 'sapphirerapids'"
                )

    # -- queries ---------------------------------------------------------

    @property
    def is_cuda(self) -> bool:
        return self.kind == CUDA_TARGET_KIND

    @property
    def is_cpu(self) -> bool:
        return self.kind == CPU_TARGET_KIND

    @property
    def needs_module_target_attr(self) -> bool:
        """True when the target must be spelled out in the module
        (IREE 3.13 has no table entry for it; see apply_target_to_module)."""
        return self.is_cuda and self.cuda_arch in EXPLICIT_CUDA_ARCHS

    def flags(self) -> tuple[str, ...]:
        """The iree-compile flags that select this target."""
        # F64 must stay F64: the norms take their square root in F64 to get a correctly rounded
        # result on every backend (IREE demotes F64 to F32 by default, and its CUDA F32 sqrt is
        # `sqrt.approx`).
        flags = ["--iree-input-type=stablehlo", "--iree-input-demote-f64-to-f32=false"]
        if self.is_cpu:
            flags += [
                "--iree-hal-target-device=local",
                "--iree-hal-local-target-device-backends=llvm-cpu",
                f"--iree-llvmcpu-target-cpu={self.cpu}",
                *CPU_CONTRACTION_FLAGS,
            ]
        else:
            flags.append("--iree-hal-target-device=cuda")
            if not self.needs_module_target_attr:
                flags.append(f"--iree-cuda-target={self.cuda_arch}")
            # For sm_90/sm_90a the module's hal.device.targets carries the
            # target; it overrides the device flag (checked with 3.13.0).
        return tuple(flags)

    def describe(self) -> str:
        """A short human-readable description."""
        if self.is_cpu:
            if self.cpu == "host":
                return "llvm-cpu (CPU: host, i.e. this machine's CPU; not portable)"
            return f"llvm-cpu (CPU: {self.cpu})"
        how = (
            "explicit #hal.executable.target in the module (IREE 3.13 has no Hopper entry)"
            if self.needs_module_target_attr
            else f"--iree-cuda-target={self.cuda_arch}"
        )
        return f"cuda {self.cuda_arch} (PTX, JIT-compiled by the driver at load; via {how})"

    def cache_key(self) -> str:
        """A string identifying the produced code, for artifact caches.

        Combine with compile.compiler_version().  For cpu="host" it includes a
        fingerprint of this machine's CPU, since the code is specialised to it.
        """
        parts = [self.kind]
        if self.is_cuda:
            parts.append(str(self.cuda_arch))
            if self.needs_module_target_attr:
                parts.append(hashlib.sha256(_cuda_target_attr_block(self).encode()).hexdigest()[:12])
        else:
            parts.append(self.cpu)
            if self.cpu == "host":
                parts.append(_host_cpu_fingerprint())
        return ":".join(parts)

    def __str__(self) -> str:
        return f"{self.kind}:{self.cuda_arch}" if self.is_cuda else f"{self.kind}:{self.cpu}"


def _normalize_arch(arch: str) -> str:
    if not isinstance(arch, str):
        raise ValueError(f"cuda_arch must be a string like 'sm_90', got {arch!r}")
    a = arch.strip().lower()
    if re.fullmatch(r"\d+a?", a):  # "90" / "90a" -> "sm_90" / "sm_90a"
        a = "sm_" + a
    if a not in SUPPORTED_CUDA_ARCHS:
        raise ValueError(
            f"unsupported CUDA arch {arch!r} for IREE 3.13; allowed: "
            f"{', '.join(SUPPORTED_CUDA_ARCHS)} "
            f"(default {DEFAULT_CUDA_ARCH}; sm_90/sm_90a use an explicit target attribute)"
        )
    return a


def parse_target(name: str, cuda_arch: str | None = None) -> Target:
    """Build a Target from user input.

    name: "llvm-cpu" (alias "cpu"), optionally with a CPU: "llvm-cpu:generic",
          or "cuda", optionally with an arch: "cuda:sm_80".
    cuda_arch: the CUDA arch for "cuda" (default DEFAULT_CUDA_ARCH).  Giving
          it for llvm-cpu is an error.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            f"empty target name; allowed: {', '.join(TARGET_KINDS)} (optionally 'llvm-cpu:<cpu>' or 'cuda:<arch>')"
        )
    raw = name.strip()
    kind_s, sep, detail = raw.partition(":")
    kind = _KIND_ALIASES.get(kind_s.strip().lower())
    if kind is None:
        raise ValueError(
            f"unknown target {name!r}; allowed: {', '.join(TARGET_KINDS)} "
            "(optionally 'llvm-cpu:<cpu>' or 'cuda:<arch>'; CUDA archs: "
            f"{', '.join(SUPPORTED_CUDA_ARCHS)})"
        )
    detail = detail.strip()
    if sep and not detail:
        raise ValueError(f"target {name!r} has an empty part after ':'")
    if kind == CPU_TARGET_KIND:
        if cuda_arch is not None:
            raise ValueError(
                f"cuda_arch={cuda_arch!r} given for target {name!r}; cuda_arch only applies to target 'cuda'"
            )
        return Target(kind=kind, cpu=detail or "host")
    if detail and cuda_arch is not None and _normalize_arch(detail) != _normalize_arch(cuda_arch):
        raise ValueError(f"conflicting CUDA archs: target {name!r} vs cuda_arch={cuda_arch!r}")
    return Target(kind=kind, cuda_arch=detail or cuda_arch)


# ---------------------------------------------------------------------------
# Explicit target attribute for archs IREE 3.13 does not know (Hopper).


def _alias_names(target: Target) -> tuple[str, str]:
    arch = target.cuda_arch
    return f"#iree_cuda_{arch}_executable_target", f"#iree_cuda_{arch}_device_target"


def _cuda_target_attr_block(target: Target) -> str:
    """The attribute alias definitions (one per line group, ends with newline).

    The WGP block is IREE's Ampere model (mma.sync; IREE 3.13 has no
    wgmma/TMA path) with Hopper's opt-in shared memory per block, 227 KiB =
    232448 bytes.  PTX ISA 8.0 is the first with sm_90/sm_90a.  This exact
    attribute was seen running on an H200 (notes B.3, B.6).
    """
    exe, dev = _alias_names(target)
    return (
        f'{exe} = #hal.executable.target<"cuda", "cuda-nvptx-fb", {{iree_codegen.target_info =\n'
        f'  #iree_gpu.target<arch = "{target.cuda_arch}", features = "+ptx80", '
        "wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8,\n"
        "    storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32,\n"
        "    mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, "
        "<NV_MMA_SYNC_F32_16x8x16_BF16>,\n"
        "           <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>],\n"
        "    subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], "
        "max_thread_count_per_workgroup = 1024,\n"
        "    max_workgroup_memory_bytes = 232448, "
        "max_workgroup_counts = [2147483647, 65535, 65535]>>}>\n"
        f'{dev} = #hal.device.target<"cuda", [{exe}]> : !hal.device\n'
    )


@dataclass(frozen=True)
class TargetModuleEdit:
    """Result of the module rewrite, with what is needed to map line numbers
    of the rewritten text back to the caller's text."""

    text: str
    #: 1-based line (in the original text) before which lines were inserted.
    inserted_before_line: int = 0
    #: how many lines were inserted there (0: text unchanged).
    inserted_lines: int = 0

    def original_line(self, line: int) -> int | None:
        """Map a 1-based line of ``text`` to the original text; None if the
        line is one of the inserted ones."""
        if self.inserted_lines == 0 or line < self.inserted_before_line:
            return line
        if line < self.inserted_before_line + self.inserted_lines:
            return None
        return line - self.inserted_lines


# `module`, optional symbol name, then either `attributes {` or `{`.
_MODULE_HEAD_RE = re.compile(
    r'^[ \t]*(?:builtin\.)?module(?P<name>[ \t]+@(?:[A-Za-z_$.][\w$.-]*|"(?:[^"\\]|\\.)*"))?'
    r"[ \t]*(?P<open>attributes[ \t]*\{|\{)",
    re.M,
)


def _find_matching_brace(text: str, open_pos: int) -> int:
    """Index of the '}' matching the '{' at open_pos (skips string literals)."""
    depth = 0
    i = open_pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced '{' in the module's attribute dictionary")


def _edit_module_for_target(mlir_text: str, target: Target) -> TargetModuleEdit:
    if not target.needs_module_target_attr:
        return TargetModuleEdit(mlir_text)
    block = _cuda_target_attr_block(target)
    if block in mlir_text:  # already applied: idempotent
        return TargetModuleEdit(mlir_text)
    if "hal.device.targets" in mlir_text:
        raise ValueError(
            f"cannot add the {target.cuda_arch} target: the module already sets "
            "hal.device.targets (remove it or compile it as is)"
        )
    m = _MODULE_HEAD_RE.search(mlir_text)
    if m is None:
        first = "\n".join(mlir_text.lstrip().splitlines()[:3])
        raise ValueError(
            f"cannot add the {target.cuda_arch} target attribute: no top-level "
            "'module @name {' or 'module @name attributes {...} {' found "
            f"(the text starts with:\n{first})"
        )
    _, dev_alias = _alias_names(target)
    entry = f"hal.device.targets = [{dev_alias}]"
    open_tok = m.group("open")
    if open_tok.startswith("attributes"):
        brace = m.end() - 1
        close = _find_matching_brace(mlir_text, brace)
        inner = mlir_text[brace + 1 : close]
        # Keep the inner text (and its newlines) as is so line numbers hold.
        new_inner = f"{entry}{inner}" if not inner.strip() else f"{entry}, {inner}"
        head_end = close + 1
        new_head = mlir_text[m.start() : brace + 1] + new_inner + "}"
        edited = mlir_text[: m.start()] + new_head + mlir_text[head_end:]
    else:
        brace = m.end() - 1
        new_head = mlir_text[m.start() : brace].rstrip(" \t") + f" attributes {{{entry}}} {{"
        edited = mlir_text[: m.start()] + new_head + mlir_text[brace + 1 :]
    # Insert the aliases right before the module line.
    line_start = m.start()
    edited = edited[:line_start] + block + edited[line_start:]
    module_line = mlir_text.count("\n", 0, m.start()) + 1
    return TargetModuleEdit(edited, inserted_before_line=module_line, inserted_lines=block.count("\n"))


def apply_target_to_module(mlir_text: str, target: Target) -> str:
    """Make the module carry the target when flags cannot express it.

    For cuda sm_90/sm_90a: insert the ``#hal.executable.target`` /
    ``#hal.device.target`` aliases before the top-level module and add
    ``hal.device.targets = [...]`` to its attributes.  Idempotent.  For any
    other target the text is returned unchanged.

    Raises ValueError if no top-level ``module [@name] [attributes {...}] {``
    is found, or the module already has a different ``hal.device.targets``.
    """
    return _edit_module_for_target(mlir_text, target).text


def _host_cpu_fingerprint() -> str:
    """Identify this machine's CPU (model + feature flags) for cache keys."""
    info = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = flags = ""
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "CPU part", "cpu model") and not model:
                    model = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = " ".join(sorted(value.split()))
                if model and flags:
                    break
        info += "|" + model + "|" + flags
    except OSError:
        info += "|" + platform.processor()
    return hashlib.sha256(info.encode()).hexdigest()[:12]
