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
* Every successful compile of the session (`emitters.compile.compile_mlir` / `compile_mlir_to`, whoever calls
  them: these helpers, the artifact cache, the CLIs run in process) is kept in one on-disk cache shared by the
  session's xdist workers (`SessionCompileCache`), keyed by everything the output depends on, so a module that
  several tests, files or workers compile is compiled once per run.  It starts empty each run (it lives in the
  run's temporary directory) and `compile-log.tsv` there lists every compile: key, hit, miss or uncached,
  start, seconds, text size, target, phase, worker, test; `test-seconds.tsv` lists every test phase's seconds.
* Scheduling (`pytest -n auto --dist loadfile`, the README's command): the files known to take minutes go to
  the workers first, longest first (`HEAVY_FILES`), so no long file starts last and runs alone at the end; and
  the tests marked `real_size` (over 10 GiB each) never run at the same time on two workers (a lock in the
  run's directory), so two workers fit a 24 GiB machine.

Both are plain functions (importable by tests as fixtures of the same name) so the oracle tests in
`tests/oracles/` and `tests/test_oracles.py`, which use none of this, are unaffected.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# ---------------------------------------------------------------------------------------------- session cache


class SessionCompileCache:
    """The session's compiled outputs on disk, shared by its workers: `<key>.out` per distinct compile.

    The key hashes everything `emitters.compile._compile`'s output depends on: the compiler build, the MLIR text
    as given, the target (its cache key: the host CPU's fingerprint for cpu="host") and every flag, the source
    name and the phase.  Only successful compiles are kept (a failure is compiled, and reported, each time), and
    none whose flags write files on the side (`--iree-hal-dump-*`): a test reads those files.  A compile holds an
    exclusive lock on its key, so a second worker wanting the same module waits for the first and reads its
    result; outputs are published with `write_atomically`, so a reader never sees a partial file.
    """

    def __init__(self, root: Path, compile_fn: Callable[..., bytes]) -> None:
        self.root = root
        self.compile_fn = compile_fn
        self.enabled = True  # off while a test marked `uncached_compiles` runs (pytest_runtest_protocol below)
        root.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def cacheable(flags: Sequence[str]) -> bool:
        return not any("dump" in flag for flag in flags)

    def key(self, mlir_text: str, target: Any, extra_flags: Sequence[str], source_name: str, phase: str | None):
        from gemma3n_iree.emitters.compile import compiler_version

        head = json.dumps(
            [compiler_version(), target.cache_key(), list(target.flags()), list(extra_flags), source_name, phase]
        )
        return hashlib.sha256(f"{head}\n{mlir_text}".encode()).hexdigest()

    def __call__(
        self, mlir_text: str, target: Any, extra_flags: Sequence[str], source_name: str, phase: str | None
    ) -> bytes:
        from gemma3n_iree.emitters.targets import Target

        if not self.enabled or isinstance(extra_flags, str) or not isinstance(target, Target):
            return self.compile_fn(mlir_text, target, extra_flags, source_name, phase)
        if not self.cacheable(extra_flags):
            start, began = time.perf_counter(), time.time()
            out = self.compile_fn(mlir_text, target, extra_flags, source_name, phase)
            self.log("-" * 16, "uncached", began, time.perf_counter() - start, len(mlir_text), target, phase)
            return out
        key = self.key(mlir_text, target, extra_flags, source_name, phase)
        path = self.root / f"{key}.out"
        start, began = time.perf_counter(), time.time()
        with open(self.root / f"{key}.lock", "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                if path.exists():
                    out, how = path.read_bytes(), "hit"
                else:
                    out, how = self.compile_fn(mlir_text, target, extra_flags, source_name, phase), "miss"
                    from gemma3n_iree.files import write_atomically

                    write_atomically(path, out)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        self.log(key, how, began, time.perf_counter() - start, len(mlir_text), target, phase)
        return out

    def log(self, key: str, how: str, began: float, seconds: float, size: int, target: Any, phase: str | None) -> None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "-").rsplit(" (", 1)[0]
        fields = (key[:16], how, f"{began:.1f}", f"{seconds:.2f}", size, target, phase or "vmfb", _worker(), test)
        _append_line(self.root / "compile-log.tsv", "\t".join(map(str, fields)))


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _append_line(path: Path, line: str) -> None:
    """One short O_APPEND write: the lines of concurrent workers never interleave."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


_RUN_DIR: dict[str, Any] = {}


def _run_dir(config: pytest.Config) -> Path:
    """This run's directory, shared by its xdist workers: the parent of a worker's basetemp is the run's basetemp
    (a fresh `pytest-N` each run), without xdist the run's basetemp itself."""
    if "path" not in _RUN_DIR:
        basetemp = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
        _RUN_DIR["path"] = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    return _RUN_DIR["path"]


@pytest.hookimpl(trylast=True)  # after the tmpdir plugin's, which sets up the basetemp
def pytest_configure(config: pytest.Config) -> None:
    from gemma3n_iree.emitters import compile as compile_module

    _RUN_DIR["controller"] = config.pluginmanager.has_plugin("dsession")  # type: ignore[assignment]
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep pytest_collection_modifyitems' order (HEAVY_FILES first)
    if isinstance(compile_module._compile, SessionCompileCache):
        return
    compile_module._compile = SessionCompileCache(_run_dir(config) / "compile-cache", compile_module._compile)


#: Files measured to take 40 s or more on a 2-core CPU (seconds: setup + call + teardown of all their tests,
#: compiles included, with the other worker busy; test-seconds.tsv of full runs on 2026-12-07 with the real-size
#: audio tests sharing their references: test_generate_command measured with one decoder program fewer than it
#: compiles here, about 150 s more; also those over 40 s in a run at 9a37828 with another job loading the machine),
#: longest first.
#: They are handed to the workers first, in this order (greedy longest-first); every other file follows in
#: collection order.  A new file that takes minutes belongs here, or it may start last and run alone.
HEAVY_FILES = {
    "tests/test_generate_command.py": 560,
    "tests/test_transcribe.py": 458,
    "tests/test_real_speech_parity.py": 244,
    "tests/test_decoder_program.py": 222,
    "tests/test_row_kernels.py": 106,
    "tests/test_encode.py": 92,
    "tests/test_readme_commands.py": 88,
    "tests/test_decoder_conditioning.py": 76,
    "tests/test_cli.py": 73,
    "tests/test_end_to_end.py": 70,
    "tests/test_diagnose.py": 59,
    "tests/test_prefill.py": 51,
    "tests/test_fma_free.py": 44,
    "tests/test_decoder_templates.py": 41,
    "tests/test_decode_attention_kernel.py": 36,
    "tests/test_device_mel_cli.py": 33,
    "tests/test_command_buffers.py": 29,
    "tests/test_schedules_property.py": 21,
    "tests/test_device_mel.py": 18,
    "tests/test_decoder_numerics.py": 18,
    "tests/test_chat_completions.py": 18,
}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The heavy files first, longest first (a stable sort: each file's tests keep their order).  xdist's
    `loadfile` hands out files in this order (its own reordering, by number of tests, is turned off in
    `pytest_configure`): a worker takes the next file when it is nearly done with its last one."""
    order = {path: rank for rank, path in enumerate(HEAVY_FILES)}
    items.sort(key=lambda item: order.get(item.nodeid.split("::", 1)[0], len(order)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Tests of the compiler wrapper itself (`pytest.mark.uncached_compiles`, e.g. many compiles in one process)
    run every compile they ask for, fixtures included."""
    from gemma3n_iree.emitters import compile as compile_module

    cache = compile_module._compile
    off = isinstance(cache, SessionCompileCache) and item.get_closest_marker("uncached_compiles") is not None
    real_size = item.get_closest_marker("real_size") is not None
    lock = open(_run_dir(item.config) / "real-size.lock", "a+") if real_size else None  # noqa: SIM115
    if lock is not None:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released by close() below
    if off:
        cache.enabled = False
    try:
        yield
    finally:
        if off:
            cache.enabled = True
        if lock is not None:
            lock.close()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Every test phase's seconds in the run's `test-seconds.tsv` (worker side; the profile behind HEAVY_FILES)."""
    run = _RUN_DIR.get("path")
    if run is not None and not _RUN_DIR.get("controller"):  # xdist's controller only relays its workers' reports
        _append_line(run / "test-seconds.tsv", f"{report.duration:.2f}\t{report.when}\t{_worker()}\t{report.nodeid}")


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
