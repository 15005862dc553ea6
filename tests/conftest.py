"""Shared test helpers: compile emitted StableHLO for llvm-cpu once per session and run it with IREE.

* `compile_cpu(text) -> vmfb` compiles with `emitters.compile.compile_mlir` for llvm-cpu (host CPU).
  Results are cached for the whole session, keyed by the MLIR text, so a module that several tests
  (or every hypothesis example) use is compiled exactly once.
* `run_vmfb(vmfb, *args, function="main") -> list[np.ndarray]` runs one function of a vmfb on the
  `local-task` driver; the loaded context is cached per vmfb too.  bf16 arguments may be passed as
  `ml_dtypes.bfloat16` arrays; bf16 results come back as such.
* `probe(contract, build) -> (text, run)` emits a single-op probe module (`emitters.probe`),
  compiles it (cached) and returns a runner.
* `--update-golden` (or env GEMMA3N_UPDATE_GOLDEN=1) makes the golden-snapshot tests rewrite
  `tests/golden/*.mlir` instead of comparing.

Both are plain functions (importable by tests as fixtures of the same name) so the oracle tests in
`tests/oracles/` and `tests/test_oracles.py`, which use none of this, are unaffected.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

# ---------------------------------------------------------------------------------------------- compile

_COMPILED: dict[str, bytes] = {}
_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


def _compile_llvm_cpu(text: str, cpu: str) -> bytes:
    """The one place that calls the compiler (switch backends / flags here)."""
    from gemma3n_iree.emitters.compile import compile_mlir, parse_target

    return compile_mlir(text, parse_target(f"llvm-cpu:{cpu}"))


def compile_cpu(text: str, cpu: str = "host") -> bytes:
    """Compile MLIR text for llvm-cpu (`cpu`: an LLVM CPU name, default this machine's), once per session per
    distinct text and CPU."""
    key = hashlib.sha256(f"{cpu}\n{text}".encode()).hexdigest()
    with _LOCK:
        vmfb = _COMPILED.get(key)
    if vmfb is None:
        vmfb = _compile_llvm_cpu(text, cpu)
        with _LOCK:
            _COMPILED[key] = vmfb
    return vmfb


# ---------------------------------------------------------------------------------------------- run


def _invoker(vmfb: bytes, function: str) -> Any:
    import iree.runtime as rt

    key = hashlib.sha256(vmfb).hexdigest() + ":" + function
    with _LOCK:
        fn = _LOADED.get(key)
    if fn is None:
        inst = rt.VmInstance()
        dev = rt.get_device("local-task")
        mod = rt.VmModule.copy_buffer(inst, vmfb)
        ctx = rt.VmContext(inst, modules=[rt.create_hal_module(inst, dev), mod])
        fn = rt.FunctionInvoker(ctx, dev, mod.lookup_function(function))
        with _LOCK:
            _LOADED[key] = fn
    return fn


def run_vmfb(vmfb: bytes, *args: np.ndarray, function: str = "main") -> list[np.ndarray]:
    """Run `function` of the vmfb on local-task; returns every result as a host numpy array."""
    fn = _invoker(vmfb, function)
    out = fn(*[np.ascontiguousarray(a) for a in args])
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return [np.asarray(o.to_host() if hasattr(o, "to_host") else o) for o in out]


def probe(contract: Any, build: Callable[[Any], Any]) -> tuple[str, Callable[..., list[np.ndarray]]]:
    """Emit a one-op probe module, compile it once (cached) and return (text, run(*args))."""
    from gemma3n_iree.emitters.probe import probe_module

    text = probe_module(contract, build)
    vmfb = compile_cpu(text)

    def run(*args: np.ndarray) -> list[np.ndarray]:
        return run_vmfb(vmfb, *args)

    return text, run


# ---------------------------------------------------------------------------------------------- bits


def bits(a: np.ndarray) -> np.ndarray:
    """The F32 bit patterns of an F32 or BF16 array (BF16 -> F32 is exact, NaN payloads included)."""
    a = np.asarray(a)
    if a.dtype != np.float32:
        a = a.astype(np.float32)
    return a.view(np.uint32)


def assert_bits_equal(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Bit-for-bit equality, with a short report of the first differing elements."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    gb, wb = bits(got), bits(want)
    diff = np.argwhere(gb != wb)
    if diff.size:
        lines = []
        for idx in diff[:8]:
            i = tuple(int(v) for v in idx)
            g, w = got.astype(np.float32)[i], want.astype(np.float32)[i]
            lines.append(f"  at {i}: got {g!r} (0x{int(gb[i]):08X}) want {w!r} (0x{int(wb[i]):08X})")
        raise AssertionError(f"{what}: {len(diff)} of {gb.size} elements differ in bits\n" + "\n".join(lines))


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session", name="compile_cpu")
def _compile_cpu_fixture() -> Callable[[str], bytes]:
    return compile_cpu


@pytest.fixture(scope="session", name="run_vmfb")
def _run_vmfb_fixture() -> Callable[..., list[np.ndarray]]:
    return run_vmfb


@pytest.fixture(scope="session", name="probe")
def _probe_fixture() -> Callable[..., tuple[str, Callable[..., list[np.ndarray]]]]:
    return probe


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.mlir from the current templates instead of comparing",
    )


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden")) or os.environ.get("GEMMA3N_UPDATE_GOLDEN") == "1"


__all__: Sequence[str] = ("compile_cpu", "run_vmfb", "probe", "bits", "assert_bits_equal")
