"""The committed Hopper GEMM kernel (kernels/) and how the emitters link it into CUDA modules.

No GPU is needed here: these tests pin the kernel file (content hash, rebuild from its Triton
source, the PTX parameter list IREE's custom dispatch passes) and the emitted and compiled module
(every eligible linear layer is an extern dispatch with the right launch, nothing else changes).
Its numerics on the H200 are checked by `gemma3n-iree diagnose` (BENCHMARKS.md).
"""

from __future__ import annotations

import re
import shutil

import pytest

from gemma3n_iree.config import builtin_config
from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import compile_mlir, parse_target
from gemma3n_iree.emitters.gemm import GemmChoiceError, select_gemm
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.kernels import GEMM_SM90, KernelFileError
from gemma3n_iree.kernels import registry
from gemma3n_iree.kernels.build import build_gemm, strip_scratch_params

SM90 = parse_target("cuda", "sm_90")
PTX = GEMM_SM90.ptx_path().read_text()


def test_committed_ptx_matches_its_manifest():
    assert len(GEMM_SM90.ptx_sha256()) == 64


def test_a_damaged_kernel_file_is_refused(tmp_path, monkeypatch):
    for name in (GEMM_SM90.ptx_file, GEMM_SM90.manifest_file):
        shutil.copy(registry.KERNEL_DIR / name, tmp_path / name)
    monkeypatch.setattr(registry, "KERNEL_DIR", tmp_path)
    (tmp_path / GEMM_SM90.ptx_file).write_text(PTX.replace("wgmma", "wgmmb", 1))
    with pytest.raises(KernelFileError, match="does not match"):
        GEMM_SM90.ptx_sha256()
    (tmp_path / GEMM_SM90.ptx_file).unlink()
    with pytest.raises(KernelFileError, match="cannot read"):
        GEMM_SM90.ptx_sha256()


def test_rebuilding_from_the_triton_source_gives_the_committed_bytes(tmp_path):
    pytest.importorskip("triton", reason="the `kernels` extra (triton) rebuilds the PTX")
    build_gemm(GEMM_SM90, tmp_path)
    assert (tmp_path / GEMM_SM90.ptx_file).read_bytes() == GEMM_SM90.ptx_path().read_bytes()
    assert (tmp_path / GEMM_SM90.manifest_file).read_text() == (registry.KERNEL_DIR / GEMM_SM90.manifest_file).read_text()


def test_ptx_parameters_are_the_bindings_then_the_push_constants():
    entry = re.search(r"\.visible \.entry (\w+)\((.*?)\n\)", PTX, re.S)
    assert entry is not None and entry.group(1) == GEMM_SM90.entry
    params = [p.strip().split()[1] for p in entry.group(2).strip().split(",")]
    assert params == [".u64"] * 3 + [".u32"] * 3  # A, B, C pointers; M, N, K
    assert f".reqntid {GEMM_SM90.threads}" in PTX
    assert ".target sm_90a" in PTX
    version = re.search(r"^\.version (\d+)\.(\d+)", PTX, re.M)
    assert (int(version.group(1)), int(version.group(2))) <= (9, 0)  # the H200's driver (CUDA 13.0) JIT limit
    assert "wgmma.mma_async.sync.aligned" in PTX and "f32.bf16.bf16" in PTX
    assert "cvt.rn.bf16x2.f32" in PTX  # the contract's rounding point: round to nearest even


def test_scratch_parameters_are_removed_only_when_unused():
    head = ".visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_param_0,\n\t.param .u32 k_param_1"
    tail = (",\n\t.param .u64 .ptr .global .align 1 k_param_6,\n\t.param .u64 .ptr .global .align 1 k_param_7\n)\n"
            "{\n\tld.param.u64 %rd1, [k_param_0];\n}\n")
    assert "k_param_6" not in strip_scratch_params(head + tail, "k")
    with pytest.raises(RuntimeError, match="reads a Triton scratch pointer"):
        strip_scratch_params(head + tail.replace("[k_param_0]", "[k_param_6]"), "k")
    with pytest.raises(RuntimeError, match="found 0"):
        strip_scratch_params(head + "\n)\n", "k")


@pytest.mark.parametrize("target,contract,choice,linked", [
    (SM90, MLX_CUDA_V1, "auto", True),
    (parse_target("cuda", "sm_90a"), MLX_CUDA_V1, "auto", True),
    (SM90, MLX_CUDA_V1, "iree", False),
    (parse_target("cuda", "sm_80"), MLX_CUDA_V1, "auto", False),
    (parse_target("llvm-cpu"), MLX_CUDA_V1, "auto", False),
    (SM90, F32_REFERENCE, "auto", False),
])
def test_auto_links_the_kernel_only_on_hopper_under_a_bf16_contract(target, contract, choice, linked):
    assert (select_gemm(choice, target, contract) is not None) is linked


def test_requiring_the_kernel_where_it_cannot_run_is_an_error():
    with pytest.raises(GemmChoiceError, match="Hopper .* target is llvm-cpu"):
        select_gemm("triton-sm90", parse_target("llvm-cpu"), MLX_CUDA_V1)
    with pytest.raises(GemmChoiceError, match="f32-reference does not use BF16 operands"):
        select_gemm("triton-sm90", SM90, F32_REFERENCE)
    with pytest.raises(GemmChoiceError, match="unknown GEMM implementation 'cublas'"):
        select_gemm("cublas", SM90, MLX_CUDA_V1)


def test_a_linear_layer_becomes_one_extern_dispatch_with_its_launch():
    linked = select_gemm("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.linear([2, 750], 1536, 6144), gemm=linked)
    assert text.count("hal.dispatch.extern") == 1 and "stablehlo.dot_general" not in text
    assert "reduce_precision" not in text  # the kernel's BF16 store is the rounding point
    m = re.search(r'hal.dispatch.extern "gemm_bf16_nt"\(%\w+, %\w+, %\w+, %\w+, %\w+\) : '
                  r"\(tensor<1500x1536xbf16>, tensor<6144x1536xbf16>, i32, i32, i32\) -> tensor<1500x6144xbf16>", text)
    assert m is not None
    assert "arith.constant 288 : index" in text  # ceil(1500 / 128) * (6144 / 256) output tiles
    assert "workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 147456" in text
    assert str(GEMM_SM90.ptx_path()) in text
    # Without the kernel the same layer is IREE's dot followed by the contract's rounding.
    plain = probe_module(MLX_CUDA_V1, lambda e: e.linear([2, 750], 1536, 6144))
    assert "hal.dispatch.extern" not in plain and "stablehlo.dot_general" in plain and "e8m7" in plain


def test_tiny_cuda_module_links_every_eligible_linear_and_compiles():
    cfg = builtin_config("tiny")
    linked = select_gemm("auto", SM90, MLX_CUDA_V1)
    spec = AudioModuleSpec(cfg, MLX_CUDA_V1, (200,), (2,), gemm=linked)
    text = emit_audio_module(spec)
    plain = emit_audio_module(AudioModuleSpec(cfg, MLX_CUDA_V1, (200,), (2,)))
    # Every linear that the kernel supports moved; the dots that remain are the ones it does not.
    externs = text.count("hal.dispatch.extern")
    assert externs > 0 and plain.count("stablehlo.dot_general") - text.count("stablehlo.dot_general") == externs
    assert f'gemma3n.gemm = "{linked.identity}"' in text and 'gemma3n.gemm = "iree"' in plain
    assert spec.identity() != AudioModuleSpec(cfg, MLX_CUDA_V1, (200,), (2,)).identity()
    vmfb = compile_mlir(text, SM90)
    assert b"wgmma.mma_async" in vmfb and GEMM_SM90.entry.encode() in vmfb  # the PTX is inside the artifact
