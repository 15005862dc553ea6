"""Specialisation symbols (emitters/symbols.py, specialisations.py, entries.py): one spelling, read back.

Every symbol a specialisation writes parses back to it (hypothesis over every family and every field),
no two families read the same symbol, values a symbol cannot spell exactly are refused, the spelling is
pinned by literal examples, and every function the emitters render is named by a specialisation.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gemma3n_iree.contracts.policy import F32_REFERENCE, MLX_CUDA_V1
from gemma3n_iree.emitters import entries, specialisations  # noqa: F401 - registers every family
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import parse_target
from gemma3n_iree.emitters.entries import EncodeEntry, EntryReflectionError, PrefillEntry
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.prefill import PrefillModuleSpec, emit_prefill_module
from gemma3n_iree.emitters.render import ModuleBuilder
from gemma3n_iree.emitters.specialisations import AffineDequant, LaneXorSum, Linear, RmsNorm, SscpConv
from gemma3n_iree.emitters.symbols import (
    Choice,
    Decimal,
    Dims,
    F32Bits,
    Flag,
    Int,
    OptionalInt,
    Specialisation,
    Switch,
    SymbolError,
    parse_symbol,
)
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.text_config import builtin_text_config

FAMILIES = sorted(Specialisation._families.items())


def _values(kind: object) -> st.SearchStrategy:
    if isinstance(kind, OptionalInt):
        return st.none() | st.integers(0, 10**9)
    if isinstance(kind, Int):
        return st.integers(0, 10**9)
    if isinstance(kind, Dims):
        return st.lists(st.integers(0, 10**6), min_size=1, max_size=5).map(tuple)
    if isinstance(kind, (Flag, Switch)):
        return st.booleans()
    if isinstance(kind, Choice):
        return st.sampled_from(kind.choices + ((kind.omitted,) if kind.omitted is not None else ()))
    if isinstance(kind, F32Bits):
        return st.none() | st.floats(allow_nan=False, width=32)
    if isinstance(kind, Decimal):
        return st.none() | st.floats(allow_nan=False).filter(lambda v: float(f"{v:g}") == v)
    raise AssertionError(f"no strategy for {kind}")


@st.composite
def specialisations_of(draw: st.DrawFn, cls: type[Specialisation]) -> Specialisation:
    values = {f.name: draw(_values(kind)) for f, kind in cls._tokens()}
    try:
        return cls(**values)
    except ValueError:  # a combination the family refuses (e.g. a norm output without its kernel)
        assume(False)
        raise


@pytest.mark.parametrize("family,cls", FAMILIES, ids=[f for f, _ in FAMILIES])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_symbol_parses_back_to_its_specialisation(family, cls, data):
    spec = data.draw(specialisations_of(cls))
    assert spec.symbol.startswith(family + "_")
    assert cls.from_symbol(spec.symbol) == spec
    assert parse_symbol(spec.symbol) == spec  # and no other family reads it


def test_the_spelling_is_pinned():
    """Literal symbols: cached artifacts, golden files and profiles name functions this way."""
    assert LaneXorSum(4, 128, 4).symbol == "lane_xor_sum_R4_W128_X4"
    assert LaneXorSum(2, 1536, 8, square=True, kernel=True).symbol == "lane_xor_sum_R2_W1536_X8_sq_Ksm90"
    assert (
        Linear((8, 750), 1536, 6144, "bf16", "bf16", kernel=True, bf16_result=True).symbol
        == "linear_8x750_K1536_N6144_Ibf16_Xbf16_Ksm90_Ybf16"
    )
    assert (
        RmsNorm((8, 750), 1536, True, 1e10, 0.5, "bf16", kernel=True).symbol
        == "rms_norm_8x750_D1536_scaled_clip501502f9_res0.5_Xbf16_Ksm90"
    )
    assert RmsNorm((1, 7), 48, False).symbol == "rms_norm_1x7_D48_noscale"
    assert (
        RmsNorm((4,), 64, True, 10.0, kernel=True, output="silu_bf16").symbol
        == "rms_norm_4_D64_scaled_clip41200000_Ksm90_silu_bf16"
    )
    assert (
        SscpConv(1, 100, 128, (1, 8), (2, 2), "bf16", "f32", "oihw").symbol
        == "sscp_conv_B1_T100_F128_C1x8_S2x2_Ibf16_Rf32_oihw"
    )
    assert AffineDequant((4, 128), 4, 64).symbol == "affine_dequant_4x128_b4_g64"
    assert EncodeEntry(2997, 8).symbol == "encode_f2997_c8" and PrefillEntry(512, 2).symbol == "prefill_c512_a2"


def test_values_a_symbol_cannot_spell_exactly_are_refused():
    with pytest.raises(SymbolError, match="no exact short spelling"):
        RmsNorm((4,), 64, residual_weight=0.1234567)  # `:g` would write 0.123457: two weights, one symbol
    with pytest.raises(SymbolError, match="not a non-negative integer"):
        LaneXorSum(-1, 128, 4)
    with pytest.raises(SymbolError, match="is not one of"):
        SscpConv(1, 100, 128, (1, 8), (2, 2), "f16", "f32", "oihw")
    with pytest.raises(ValueError, match="only a kernel hands a norm over as bf16"):
        RmsNorm((4,), 64, output="bf16")


def test_a_clamp_limit_is_held_as_the_f32_constant_the_templates_write():
    spec = RmsNorm((4,), 64, clip=1e10)
    assert spec.clip == float(np.float32(1e10)) and RmsNorm.from_symbol(spec.symbol) == spec


@pytest.mark.parametrize(
    "symbol",
    [
        "lane_xor_sum_R4_W128",
        "lane_xor_sum_R4_W128_X4_Ksm90_sq",
        "rms_norm_4_D64",
        "linear_8x750_K1536_N6144_Ibf16_Xf32",
        "encode_f10",
        "nothing_R1",
    ],
)
def test_a_symbol_no_family_writes_is_an_error(symbol):
    with pytest.raises(SymbolError):
        parse_symbol(symbol)


def test_entry_reflection_round_trips_and_ignores_other_stages():
    entry = EncodeEntry(2997, 8)
    assert entry.reflection == {"gemma3n.stage": "encode", "gemma3n.frames": "2997", "gemma3n.clips": "8"}
    assert EncodeEntry.from_reflection({**entry.reflection, "gemma3n.outputs": "a,b"}) == entry
    assert PrefillEntry.from_reflection(entry.reflection) is None
    assert EncodeEntry.from_reflection({"gemma3n.outputs": "a"}) is None  # a function of no stage
    with pytest.raises(EntryReflectionError, match="gemma3n.clips"):
        EncodeEntry.from_reflection({"gemma3n.stage": "encode", "gemma3n.frames": "10"})


def _fragment_symbols(emit) -> list[str]:  # noqa: ANN001
    captured: list[ModuleBuilder] = []
    original = ModuleBuilder.build

    def build(self: ModuleBuilder, inline: bool = True) -> str:
        captured.append(self)
        return original(self, inline=inline)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ModuleBuilder, "build", build)
        emit()
    return [key for key in captured[0].fragments if key != "entry"]


TINY = builtin_config("tiny")
SM90 = parse_target("cuda", "sm_90")


@pytest.mark.parametrize(
    "emit",
    [
        lambda: emit_audio_module(AudioModuleSpec(TINY, MLX_CUDA_V1, (100,), (1, 2), stages=True)),
        lambda: emit_audio_module(
            AudioModuleSpec(TINY, MLX_CUDA_V1, (100,), (2,), kernels=select_kernels("auto", SM90, MLX_CUDA_V1))
        ),
        lambda: emit_audio_module(
            AudioModuleSpec(TINY, F32_REFERENCE, (100,), (1,), kernels=select_kernels("auto", SM90, F32_REFERENCE))
        ),
        lambda: emit_prefill_module(PrefillModuleSpec(TINY, builtin_text_config("tiny"), MLX_CUDA_V1, (256,), (0, 1))),
    ],
    ids=["audio-stages", "audio-sm90", "audio-sm90-f32", "prefill"],
)
def test_every_rendered_function_is_named_by_a_specialisation(emit):
    symbols = _fragment_symbols(emit)
    assert len(symbols) > 10
    for symbol in symbols:
        spec = parse_symbol(symbol)
        assert spec.symbol == symbol and dataclasses.is_dataclass(spec)


# ---------------------------------------------------------------------------------------------- loaded entries
def _artifact(functions: str) -> bytes:
    from gemma3n_iree.emitters.compile import compile_mlir

    return compile_mlir(f"module @m {{\n{functions}\n}}\n", parse_target("llvm-cpu"))


def _function(name: str, reflection: str) -> str:
    return (
        f"func.func @{name}(%mel: tensor<1x4x128xf32>, %frames: tensor<1xi32>) -> tensor<1xi32> attributes "
        f"{{iree.reflection = {{{reflection}}}}} {{\n  return %frames : tensor<1xi32>\n}}"
    )


def test_a_session_finds_its_entries_by_reflection_not_by_name():
    from gemma3n_iree.runtime.encoder.audio_session import AudioSession

    entry = EncodeEntry(4, 1)
    reflection = ", ".join(f'{k} = "{v}"' for k, v in {**entry.reflection, "gemma3n.outputs": "valid_tokens"}.items())
    session = AudioSession(_artifact(_function("any_name", reflection)), [])
    assert session.buckets == [(4, 1)] and session.entries[(4, 1)].name == "any_name"
    assert session.entries[(4, 1)].outputs == ("valid_tokens",)


@pytest.mark.parametrize(
    "reflection,message",
    [
        ('gemma3n.outputs = "valid_tokens"', 'no encode entry points .*gemma3n.stage = "encode"'),
        ('gemma3n.stage = "encode", gemma3n.frames = "4"', "entry encode_f4_c1: .*lacks a valid 'gemma3n.clips'"),
    ],
)
def test_a_session_refuses_entries_without_their_reflection(reflection, message):
    """An artifact whose entries do not record their stage and shape (one built before they did) is
    refused, however its functions are named."""
    from gemma3n_iree.runtime.encoder.audio_session import AudioSession
    from gemma3n_iree.runtime.programs.session import SessionError

    with pytest.raises(SessionError, match=message):
        AudioSession(_artifact(_function("encode_f4_c1", reflection)), [])
