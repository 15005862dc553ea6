"""Tests for emitters/compile.py and emitters/targets.py (IREE 3.13, in process).

Compiles for llvm-cpu (and runs it), cuda sm_80 and cuda sm_90 (compile only;
no GPU needed).  Each test takes well under a few seconds.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gemma3n_iree.emitters.compile as ic

ml_dtypes = pytest.importorskip("ml_dtypes")

# A parameter-backed bf16 weight; x arrives as f32 and is rounded to bf16.
TINY = """\
module @tiny {
  util.global private @w = #flow.parameter.named<"model"::"w"> : tensor<4x4xbf16>
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = util.global.load @w : tensor<4x4xbf16>
    %xb = stablehlo.convert %x : (tensor<2x4xf32>) -> tensor<2x4xbf16>
    %y = stablehlo.dot_general %xb, %w, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}
"""

CPU = ic.parse_target("llvm-cpu")
SM80 = ic.parse_target("cuda", "sm_80")
SM90 = ic.parse_target("cuda", "sm_90")

#: This file tests the compile wrapper itself: every compile here runs the compiler (tests/conftest.py).
pytestmark = pytest.mark.uncached_compiles


def _ptx_targets(vmfb: bytes) -> set[str]:
    return {m.decode() for m in re.findall(rb"\.target\s+(sm_\w+)", vmfb)}


# ---------------------------------------------------------------------------
# Targets


def test_target_flags():
    assert CPU.flags() == (
        "--iree-input-type=stablehlo",
        "--iree-input-demote-f64-to-f32=false",
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=host",
        "--iree-global-opt-data-tiling",
    )
    assert "--iree-llvmcpu-target-cpu=generic" in ic.parse_target("llvm-cpu:generic").flags()
    assert SM80.flags() == (
        "--iree-input-type=stablehlo",
        "--iree-input-demote-f64-to-f32=false",
        "--iree-hal-target-device=cuda",
        "--iree-cuda-target=sm_80",
    )
    # Hopper: no --iree-cuda-target (IREE 3.13 has no sm_90 entry).
    assert SM90.flags() == (
        "--iree-input-type=stablehlo",
        "--iree-input-demote-f64-to-f32=false",
        "--iree-hal-target-device=cuda",
    )
    assert SM90.needs_module_target_attr and not SM80.needs_module_target_attr
    assert ic.parse_target("cuda") == SM90  # product default: H100/H200
    assert ic.parse_target("cuda:sm_80") == SM80
    assert ic.parse_target("cuda", "90") == SM90
    assert ic.Target("cuda").cuda_arch == ic.DEFAULT_CUDA_ARCH == "sm_90"
    assert "sm_90" in SM90.describe() and "llvm-cpu" in CPU.describe()


@pytest.mark.parametrize("name", ["tpu", "rocm", "vulkan", ""])
def test_unknown_target_kind(name):
    with pytest.raises(ValueError) as e:
        ic.parse_target(name)
    assert "llvm-cpu" in str(e.value) and "cuda" in str(e.value)


@pytest.mark.parametrize("arch", ["sm_100", "hopper", "h100", "sm_90x", "sm_53"])
def test_unknown_cuda_arch(arch):
    with pytest.raises(ValueError) as e:
        ic.parse_target("cuda", arch)
    msg = str(e.value)
    assert repr(arch) in msg and "sm_80" in msg and "sm_90" in msg


def test_target_misuse():
    with pytest.raises(ValueError, match="only applies to target 'cuda'"):
        ic.parse_target("llvm-cpu", "sm_80")
    with pytest.raises(ValueError, match="conflicting"):
        ic.parse_target("cuda:sm_80", "sm_90")
    with pytest.raises(ValueError, match="llvm-cpu"):
        ic.Target("cuda", "sm_80", cpu="znver4")
    with pytest.raises(ValueError, match="invalid llvm-cpu CPU name"):
        ic.Target("llvm-cpu", cpu="x; rm -rf")


# ---------------------------------------------------------------------------
# apply_target_to_module


def test_apply_target_plain_module():
    out = ic.apply_target_to_module(TINY, SM90)
    assert out.startswith('#iree_cuda_sm_90_executable_target = #hal.executable.target<"cuda"')
    assert 'arch = "sm_90"' in out
    assert '#iree_cuda_sm_90_device_target = #hal.device.target<"cuda"' in out
    assert "module @tiny attributes {hal.device.targets = [#iree_cuda_sm_90_device_target]} {" in out
    assert out.endswith(TINY[TINY.index("\n") + 1 :])  # body untouched
    assert ic.apply_target_to_module(out, SM90) == out  # idempotent
    ic.verify_mlir(out)


def test_apply_target_module_with_attributes():
    text = TINY.replace("module @tiny {", 'module @audio_encoder attributes {gemma.v = "a{b}", x.y = 1 : i64} {')
    out = ic.apply_target_to_module(text, SM90)
    assert (
        "module @audio_encoder attributes {hal.device.targets = [#iree_cuda_sm_90_device_target], "
        'gemma.v = "a{b}", x.y = 1 : i64} {'
    ) in out
    ic.verify_mlir(out)
    empty = ic.apply_target_to_module(TINY.replace("module @tiny {", "module attributes {} {"), SM90)
    assert "module attributes {hal.device.targets = [#iree_cuda_sm_90_device_target]} {" in empty


def test_apply_target_other_targets_unchanged_and_errors():
    assert ic.apply_target_to_module(TINY, SM80) == TINY
    assert ic.apply_target_to_module(TINY, CPU) == TINY
    no_module = TINY[TINY.index("\n") + 1 : TINY.rindex("}")]
    with pytest.raises(ValueError, match="no top-level 'module"):
        ic.apply_target_to_module(no_module, SM90)
    with pytest.raises(ValueError, match="already sets hal.device.targets"):
        ic.apply_target_to_module(
            TINY.replace("module @tiny {", "module @tiny attributes {hal.device.targets = []} {"), SM90
        )


def test_sm90a_keeps_its_arch():
    out = ic.apply_target_to_module(TINY, ic.parse_target("cuda", "sm_90a"))
    assert 'arch = "sm_90a"' in out


# ---------------------------------------------------------------------------
# Compile and run


def test_llvm_cpu_compile_and_run_with_in_memory_parameter():
    import iree.runtime as rt

    vmfb = ic.compile_mlir(TINY, CPU)
    assert b"IREE" in vmfb[:256]  # vmfb flatbuffer identifier (after a zip header)

    rng = np.random.default_rng(0)
    # bf16-exact values, so the expected result is exact in f32.
    w = (rng.integers(-8, 9, size=(4, 4)) / 4).astype(ml_dtypes.bfloat16)
    x = (rng.integers(-8, 9, size=(2, 4)) / 2).astype(np.float32)

    inst = rt.VmInstance()
    dev = rt.get_device("local-task")
    index = rt.ParameterIndex()
    index.add_buffer("w", w.tobytes())
    params = rt.create_io_parameters_module(inst, index.create_provider(scope="model"))
    mod = rt.VmModule.copy_buffer(inst, vmfb)
    ctx = rt.VmContext(inst, modules=[rt.create_hal_module(inst, dev), params, mod])
    fn = rt.FunctionInvoker(ctx, dev, mod.lookup_function("main"))
    y = np.asarray(fn(x).to_host())

    expected = x.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)
    assert y.dtype == np.float32 and y.shape == (2, 4)
    np.testing.assert_array_equal(y, expected)


def test_cuda_sm80_compiles():
    vmfb = ic.compile_mlir(TINY, SM80)
    assert len(vmfb) > 0
    assert _ptx_targets(vmfb) == {"sm_80"}


def test_cuda_sm90_compiles_with_explicit_target():
    vmfb = ic.compile_mlir(TINY, SM90)  # attribute added automatically
    assert len(vmfb) > 0
    assert _ptx_targets(vmfb) == {"sm_90"}
    # Same result when the caller applied the attribute already.
    assert ic.compile_mlir(ic.apply_target_to_module(TINY, SM90), SM90) == vmfb


def test_compiler_version():
    v = ic.compiler_version()
    assert "3.13" in v and "@" in v


# ---------------------------------------------------------------------------
# Errors


def _long_module(n_lines: int, bad_line: int) -> tuple[str, str]:
    """A module of ~n_lines; line `bad_line` adds an f32 and a bf16 value."""
    lines = [
        "module @long {",
        "  func.func @main(%a: tensor<8xf32>, %b: tensor<8xbf16>) -> tensor<8xf32> {",
        "    %v2 = stablehlo.add %a, %a : tensor<8xf32>",
    ]
    i = 2
    while len(lines) < n_lines - 3:
        i += 1
        if len(lines) + 1 == bad_line:
            lines.append(f"    %v{i} = stablehlo.add %v{i - 1}, %b : tensor<8xf32>")
        else:
            lines.append(f"    %v{i} = stablehlo.multiply %v{i - 1}, %a : tensor<8xf32>")
    lines += [f"    return %v{i} : tensor<8xf32>", "  }", "}"]
    return "\n".join(lines) + "\n", lines[bad_line - 1]


@pytest.mark.parametrize("target", [CPU, SM90], ids=str)
def test_type_error_message_is_short_and_points_at_the_line(target):
    text, bad = _long_module(500, bad_line=250)
    assert len(text.splitlines()) == 500
    with pytest.raises(ic.CompileError) as e:
        ic.compile_mlir(text, target)
    err = e.value
    assert isinstance(err, RuntimeError)
    msg = str(err)
    assert "input.mlir:250:" in msg
    assert f"> 250 | {bad}" in msg  # marker, line number, offending line
    assert "^" in msg and "flags: " + " ".join(target.flags()) in msg
    assert len(msg.splitlines()) < 40
    assert "stablehlo.multiply %v300" not in msg  # no IR dump
    assert err.diagnostics and err.diagnostics[0].severity == "error"
    assert err.errors[0].line == 250  # original line numbers, also for sm_90
    assert err.flags == target.flags() and err.target == target


def test_pass_failure_is_located_in_the_callers_text_for_sm90():
    # Legalization fails in a pass (not in the parser); for sm_90 the reported
    # line must still refer to the text we passed in, not the augmented one.
    text = TINY.replace(
        "    return %y",
        "    %c = stablehlo.custom_call @my_kernel(%y) : (tensor<2x4xf32>) -> tensor<2x4xf32>\n    return %c",
    )
    with pytest.raises(ic.CompileError) as e:
        ic.compile_mlir(text, SM90)
    msg = str(e.value)
    assert "input.mlir:7:" in msg and "custom_call @my_kernel" in msg
    assert re.search(r"^> +7 \| +%c = stablehlo.custom_call @my_kernel", msg, re.M)
    assert "see current operation" not in msg
    assert len(msg.splitlines()) < 40


def test_verify_mlir():
    ic.verify_mlir(TINY)
    bad = TINY.replace(
        "    return %y",
        "    %q = stablehlo.add %y, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x5xf32>\n    return %y",
    )
    with pytest.raises(ic.CompileError) as e:
        ic.verify_mlir(bad, source_name="tiny.mlir")
    msg = str(e.value)
    assert e.value.stage == "verify"
    assert "tiny.mlir:7:" in msg and "requires the same shape" in msg
    assert re.search(r"^> +7 \| +%q = stablehlo.add", msg, re.M)
    assert "see current operation" not in msg


def test_bad_flag_is_a_compile_error():
    with pytest.raises(ic.CompileError, match="rejected the compiler flags") as e:
        ic.compile_mlir(TINY, CPU, extra_flags=["--no-such-iree-flag=1"])
    assert e.value.stage == "flags"
    # Flags that fight the Target are refused before reaching the compiler
    # (cpu-features together with cpu=host aborts the process in 3.13).
    with pytest.raises(ic.CompileError, match="set by the Target"):
        ic.compile_mlir(TINY, CPU, extra_flags=["--iree-llvmcpu-target-cpu=generic"])
    with pytest.raises(ic.CompileError, match="cannot be combined with cpu='host'"):
        ic.compile_mlir(TINY, CPU, extra_flags=["--iree-llvmcpu-target-cpu-features=-fma"])


def test_many_compiles_in_one_process():
    text, _ = _long_module(40, bad_line=20)
    for _ in range(20):  # failures are fast; each uses and frees a Session
        with pytest.raises(ic.CompileError):
            ic.compile_mlir(text, CPU)
    for _ in range(3):
        assert ic.compile_mlir(TINY, SM80)
