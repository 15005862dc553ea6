"""Each kernel's specification (kernels/*.py) is the one description of it that everything else derives from.

The specification's parameter list is the Triton source's (read from the source itself, no triton
needed); the registry, the manifest and the `ptx/` folder name the same files and every file verifies;
the PTX entry takes the specification's pointers and push constants; and every `hal.dispatch.extern`
the emitters write for a module agrees with the specification of the file it links (binding element
types, push constants, launch size). A call that breaks a promise of the specification is refused.
"""

from __future__ import annotations

import ast
import re

import pytest
from kernel_files import committed_manifest, entry_parameters

from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.render import TemplateRenderError, render
from gemma3n_iree.kernels import GEMM_SM90, KERNEL_FILES, SILU_SM90, Launch
from gemma3n_iree.kernels.registry import KERNEL_DIR
from gemma3n_iree.kernels.spec import PTX_DIR
from gemma3n_iree.model.audio_config import builtin_config

SM90 = parse_target("cuda", "sm_90")
SIGNATURES = sorted({f.signature for f in KERNEL_FILES}, key=lambda s: (s.entry, str(s.pointers)))


def _triton_parameters(source: str, entry: str) -> tuple[list[str], list[str]]:
    """(every parameter, the `tl.constexpr` ones) of the @triton.jit function `entry` in `source`."""
    tree = ast.parse((KERNEL_DIR / f"{source}.py").read_text())
    func = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == entry)
    constexprs = [
        a.arg for a in func.args.args if a.annotation is not None and ast.unparse(a.annotation) == "tl.constexpr"
    ]
    return [a.arg for a in func.args.args], constexprs


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: f"{s.entry}-{s.output.dtype}-{s.inputs[0].dtype}")
def test_the_specification_is_the_triton_sources_parameter_list(signature):
    parameters, constexprs = _triton_parameters(signature.source, signature.entry)
    assert signature.parameter_names() == parameters
    assert list(signature.constexprs) == constexprs


def test_registry_manifest_and_folder_name_the_same_files():
    stems = [f.stem for f in KERNEL_FILES]
    assert len(stems) == len(set(stems)) == 135
    assert set(committed_manifest()["files"]) == set(stems)
    assert {p.stem for p in PTX_DIR.glob("*.ptx")} == set(stems)
    assert {p.name for p in PTX_DIR.iterdir()} == {f"{s}.ptx" for s in stems} | {"manifest.json"}
    for file in KERNEL_FILES:
        verified = file.verify()
        assert verified.threads == file.threads and verified.ptx_path == str(file.ptx_path())


@pytest.mark.parametrize("file", KERNEL_FILES, ids=lambda f: f.stem)
def test_the_ptx_entry_takes_the_specifications_bindings_then_push_constants(file):
    ptx = file.ptx_path().read_text()
    signature = file.signature
    assert entry_parameters(ptx, file.entry) == [".u64"] * len(signature.pointers) + [".u32"] * len(signature.constants)
    assert f".reqntid {file.threads}" in ptx


# As the printer writes a dispatch: its operands, types and result, the layout (an alias defined at the top of
# the module), the PTX file, the launch size.
_EXTERN = re.compile(
    r'hal\.dispatch\.extern "(\w+)"\(([^)]*)\) : \(([^)]*)\) -> (tensor<[^>]*>) count\(.*?'
    r'layout\((#\w+)\) objects\(\{.*?path = "[^"]*/([^"/]+\.ptx)".*?'
    r"workgroup_size = \[(\d+) : index, 1 : index, 1 : index\], workgroup_local_memory = (\d+)>",
    re.S,
)
_ELEMENT = re.compile(r"x([a-z]\w*)>$")


def test_every_emitted_dispatch_agrees_with_its_kernel_specification():
    linked = select_kernels("auto", SM90, MLX_CUDA_V1)
    text = emit_audio_module(AudioModuleSpec(builtin_config("tiny"), MLX_CUDA_V1, (100,), (2,), kernels=linked))
    by_ptx = {f.ptx_path().name: f for f in KERNEL_FILES}
    manifest = committed_manifest()["files"]
    layouts = dict(re.findall(r"^(#\w+) = (#hal\.pipeline\.layout<.*>)$", text, re.M))
    calls = _EXTERN.findall(text)
    assert len(calls) == text.count("hal.dispatch.extern")
    assert {call[0] for call in calls} == {
        "gemm_bf16_nt",
        "lane_xor_sum",
        "rms_norm",
        "rms_norm_residual",
        "attention_core",
        "glu_depthwise",
        "silu_bf16",
    }
    for entry, operands, types, result, layout, ptx, threads, shared in calls:
        file = by_ptx[ptx]
        signature = file.signature
        types = [t.strip() for t in re.split(r", (?=tensor<|i32)", types)]
        assert entry == file.entry and len(operands.split(",")) == len(types)
        assert [_ELEMENT.search(t).group(1) for t in types[: len(signature.inputs)]] == [
            p.dtype for p in signature.inputs
        ], entry
        assert _ELEMENT.search(result).group(1) == signature.output.dtype, entry
        assert types[len(signature.inputs) :] == ["i32"] * len(signature.constants), entry
        assert f"constants = {len(signature.constants)}, bindings = [" in layouts[layout], entry
        assert layouts[layout].count("#hal.pipeline.binding<storage_buffer") == len(signature.pointers), entry
        assert (int(threads), int(shared)) == (file.threads, manifest[file.stem]["shared_bytes"]), entry


def test_a_call_that_breaks_a_promise_is_refused():
    with pytest.raises(ValueError, match="a call gives \\['M', 'N'\\], the kernel takes \\['M', 'N', 'K'\\]"):
        GEMM_SM90.file.call(1, M=1, N=16)
    with pytest.raises(ValueError, match="count = 40 breaks the kernel's multiple-of-16 promise"):
        SILU_SM90.file.call(1, count=40)
    with pytest.raises(ValueError, match="is not a 32-bit integer"):
        SILU_SM90.file.call(1, count=2**31)
    assert SILU_SM90.call(40) is None and SILU_SM90.call(2**31) is None  # what the emitter asks first


def test_a_template_binding_other_inputs_than_the_kernel_reads_is_a_render_error():
    gemm = Launch(GEMM_SM90.file.verify(), GEMM_SM90.call(4, 128, 128))  # reads a and b; the lane-sum template binds x
    with pytest.raises(
        TemplateRenderError,
        match=r"lane_xor_sum.kernel.mlir.j2:\d+: .*the template binds \['x'\], "
        r"the kernel reads \['a', 'b'\]",
    ):
        render("lane_xor_sum.kernel.mlir.j2", symbol="s", c=MLX_CUDA_V1, rows=4, width=128, kernel=gemm)
