"""The committed Hopper GEMM kernel (kernels/), and how the emitters select and link the kernels.

No GPU is needed here: these tests pin the kernel file (content hash, rebuild from its Triton
source, the PTX parameter list IREE's custom dispatch passes) and the emitted and compiled module
(every eligible linear layer is an extern dispatch with the right launch, nothing else changes).
Its numerics on the H200 are checked by `gemma3n-iree diagnose` (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from kernel_files import committed_manifest, rebuilt_ptx

from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import compile_mlir, parse_target
from gemma3n_iree.emitters.kernels import KernelChoiceError, select_kernels
from gemma3n_iree.emitters.probe import probe_module
from gemma3n_iree.kernels import GEMM_SM90, KernelFileError
from gemma3n_iree.kernels import spec as kernel_spec
from gemma3n_iree.kernels.build import strip_scratch_params
from gemma3n_iree.model.audio_config import builtin_config

SM90 = parse_target("cuda", "sm_90")
PTX = GEMM_SM90.file.ptx_path().read_text()


def test_committed_ptx_matches_its_manifest():
    assert len(GEMM_SM90.file.verify().sha256) == 64


def test_a_damaged_kernel_file_is_refused(tmp_path, monkeypatch):
    file = GEMM_SM90.file
    for name in (f"{file.stem}.ptx", kernel_spec.MANIFEST_NAME):
        shutil.copy(kernel_spec.PTX_DIR / name, tmp_path / name)
    monkeypatch.setattr(kernel_spec, "PTX_DIR", tmp_path)
    (tmp_path / f"{file.stem}.ptx").write_text(PTX.replace("wgmma", "wgmmb", 1))
    with pytest.raises(KernelFileError, match="does not match"):
        file.verify()
    (tmp_path / f"{file.stem}.ptx").unlink()
    with pytest.raises(KernelFileError, match="cannot read"):
        file.verify()


def test_a_file_built_from_another_specification_is_refused(tmp_path, monkeypatch):
    """The manifest records how each file was built; a record that is not the specification's (here: another
    tile) is an error even though the PTX matches its hash."""
    file = GEMM_SM90.file
    shutil.copy(file.ptx_path(), tmp_path / f"{file.stem}.ptx")
    manifest = committed_manifest()
    manifest["files"][file.stem]["constexprs"]["BN"] = 128
    (tmp_path / kernel_spec.MANIFEST_NAME).write_text(json.dumps(manifest))
    monkeypatch.setattr(kernel_spec, "PTX_DIR", tmp_path)
    with pytest.raises(KernelFileError, match="records a build .* other than the specification"):
        file.verify()


def test_rebuilding_from_the_triton_source_gives_the_committed_bytes(tmp_path):
    rebuilt_ptx(GEMM_SM90.file, tmp_path)


def test_ptx_parameters_are_the_bindings_then_the_push_constants():
    entry = re.search(r"\.visible \.entry (\w+)\((.*?)\n\)", PTX, re.S)
    assert entry is not None and entry.group(1) == GEMM_SM90.file.entry
    params = [p.strip().split()[1] for p in entry.group(2).strip().split(",")]
    assert params == [".u64"] * 3 + [".u32"] * 3  # A, B, C pointers; M, N, K
    assert f".reqntid {GEMM_SM90.file.threads}" in PTX
    assert ".target sm_90a" in PTX
    version = re.search(r"^\.version (\d+)\.(\d+)", PTX, re.M)
    assert (int(version.group(1)), int(version.group(2))) <= (9, 0)  # the H200's driver (CUDA 13.0) JIT limit
    assert "wgmma.mma_async.sync.aligned" in PTX and "f32.bf16.bf16" in PTX
    assert "cvt.rn.bf16x2.f32" in PTX  # the contract's rounding point: round to nearest even


def test_scratch_parameters_are_removed_only_when_unused():
    head = ".visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_param_0,\n\t.param .u32 k_param_1"
    tail = (
        ",\n\t.param .u64 .ptr .global .align 1 k_param_2,\n\t.param .u64 .ptr .global .align 1 k_param_3\n)\n"
        "{\n\tld.param.u64 %rd1, [k_param_0];\n}\n"
    )
    assert "k_param_2" not in strip_scratch_params(head + tail, "k")
    with pytest.raises(RuntimeError, match="reads a Triton scratch pointer"):
        strip_scratch_params(head + tail.replace("[k_param_0]", "[k_param_3]"), "k")
    with pytest.raises(RuntimeError, match="found 0"):
        strip_scratch_params(head + "\n)\n", "k")


@pytest.mark.parametrize(
    "target,contract,choice,sums,gemm",
    [
        (SM90, MLX_CUDA_V1, "auto", True, True),
        (parse_target("cuda", "sm_90a"), MLX_CUDA_V1, "auto", True, True),
        (SM90, MLX_CUDA_V1, "triton-sm90", True, True),
        (SM90, MLX_CUDA_V1, "iree", False, False),
        (parse_target("cuda", "sm_80"), MLX_CUDA_V1, "auto", False, False),
        (parse_target("llvm-cpu"), MLX_CUDA_V1, "auto", False, False),
        (SM90, F32_REFERENCE, "auto", True, False),  # the row kernels serve every contract, the GEMM BF16 ones
    ],
)
def test_auto_links_the_kernels_only_on_hopper_and_the_gemm_only_under_a_bf16_contract(
    target, contract, choice, sums, gemm
):
    linked = select_kernels(choice, target, contract)
    assert bool(linked.files) is sums
    assert linked.links(GEMM_SM90.file) is gemm


def test_requiring_the_kernels_where_they_cannot_run_is_an_error():
    with pytest.raises(KernelChoiceError, match="Hopper .* target is llvm-cpu"):
        select_kernels("triton-sm90", parse_target("llvm-cpu"), MLX_CUDA_V1)
    with pytest.raises(KernelChoiceError, match="f32-reference does not use BF16 operands"):
        select_kernels("triton-sm90", SM90, F32_REFERENCE)
    with pytest.raises(KernelChoiceError, match="unknown kernel set 'cublas'"):
        select_kernels("cublas", SM90, MLX_CUDA_V1)


def test_a_linear_layer_becomes_one_extern_dispatch_with_its_launch():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = probe_module(MLX_CUDA_V1, lambda e: e.linear([2, 750], 1536, 6144), kernels=linked)
    assert text.count("hal.dispatch.extern") == 1 and "stablehlo.dot_general" not in text
    assert "reduce_precision" not in text  # the kernel's BF16 store is the rounding point
    m = re.search(
        r'hal.dispatch.extern "gemm_bf16_nt"\(%\w+, %\w+, %\w+, %\w+, %\w+\) : '
        r"\(tensor<1500x1536xbf16>, tensor<6144x1536xbf16>, i32, i32, i32\) -> tensor<1500x6144xbf16>",
        text,
    )
    assert m is not None
    assert "arith.constant 288 : index" in text  # ceil(1500 / 128) * (6144 / 256) output tiles
    assert "workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 147456" in text
    assert str(GEMM_SM90.file.ptx_path()) in text
    # Without the kernel the same layer is IREE's dot followed by the contract's rounding.
    plain = probe_module(MLX_CUDA_V1, lambda e: e.linear([2, 750], 1536, 6144))
    assert "hal.dispatch.extern" not in plain and "stablehlo.dot_general" in plain and "e8m7" in plain


def test_tiny_cuda_module_links_every_eligible_linear_and_lane_sum_and_compiles():
    cfg = builtin_config("tiny")
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    spec = AudioModuleSpec(cfg, MLX_CUDA_V1, (200,), (2,), kernels=linked)
    text = emit_audio_module(spec)
    plain = emit_audio_module(AudioModuleSpec(cfg, MLX_CUDA_V1, (200,), (2,)))
    # Every linear that the GEMM supports moved; the dots that remain are the ones it does not.
    gemms = text.count('hal.dispatch.extern "gemm_bf16_nt"')
    attentions = text.count('hal.dispatch.extern "attention_core"')  # each takes the attention's three products
    assert gemms > 0 and attentions == cfg.conf_num_hidden_layers
    assert plain.count("stablehlo.dot_general") - text.count("stablehlo.dot_general") == gemms + 3 * attentions
    # Every lane sum (one function per shape) is one kernel dispatch, with no butterfly left in IREE's hands.
    # (Each butterfly ends with the halving slices [.., 2] -> [.., 1], twice.)
    last_level = re.compile(r"stablehlo.slice.*\(tensor<[0-9x]*x2xf32>\) -> tensor<[0-9x]*x1xf32>")
    sums = text.count('hal.dispatch.extern "lane_xor_sum"')
    assert sums > 0 and not last_level.findall(text) and len(last_level.findall(plain)) >= 2 * sums
    assert f'gemma3n.kernels = "{linked.identity}"' in text and 'gemma3n.kernels = "iree"' in plain
    assert spec.identity() != AudioModuleSpec(cfg, MLX_CUDA_V1, (200,), (2,)).identity()
    vmfb = compile_mlir(text, SM90)
    assert b"wgmma.mma_async" in vmfb and b".entry lane_xor_sum(" in vmfb  # the PTX is inside the artifact
