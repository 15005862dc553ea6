"""Structure of the device log-mel front end in emitted modules (printed, verified text).

* A device-mel entry takes samples [B, S] and sample counts [B], records `gemma3n.mel`, and reads its
  tables from immutable module globals whose bytes are the emulation's tables (never parameters).
* The front end's functions: one F32 matmul per DFT and one for the filterbank, both at HIGHEST precision
  (no TF32), or exactly one RFFT; no gather; the pre-emphasis product materialised (no FMA); F64 only in
  the magnitude and the log, whose sqrt and log are F64 ops.
* The entry then runs what a host entry runs on its features: the valid-frame masks from the front end's
  counts, the mask, the explicit BF16 mel boundary, the SSCP.
* A host-mel module has none of it (its text is unchanged by the device front end's existence).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from test_structure import calls, emit_captured, functions, ops

from gemma3n_iree.contracts import mel as M
from gemma3n_iree.contracts.policy import MLX_CUDA_V1
from gemma3n_iree.emitters.audio import AudioModuleSpec
from gemma3n_iree.emitters.entries import EncodeEntry
from gemma3n_iree.emitters.mel import MelDft, MelFrameCounts, MelFraming, MelFront, MelLog, MelMagnitude
from gemma3n_iree.emitters.symbols import parse_symbol
from gemma3n_iree.model.audio_config import builtin_config

TINY = builtin_config("tiny")
FRAMES, CLIPS = (100,), (1, 2)


@cache
def module(dft: str | None):
    return emit_captured(AudioModuleSpec(TINY, MLX_CUDA_V1, FRAMES, CLIPS, mel=M.MelFrontEnd(dft)))


def entry_header(text: str, name: str) -> str:
    return re.search(rf"func\.func @{name}\((.*?)\{{\n", text, re.S).group(1)


@pytest.mark.parametrize("dft", M.DFT_METHODS)
def test_entries_take_samples_and_record_the_front_end(dft):
    text = module(dft).text
    samples = M.samples_for_frames(FRAMES[0])
    for clips in CLIPS:
        header = entry_header(text, EncodeEntry(FRAMES[0], clips).symbol)
        assert re.match(rf"%\w+: tensor<{clips}x{samples}xf32>, %\w+: tensor<{clips}xi32>\)", header), header
        assert f'gemma3n.mel = "device-{dft}"' in header
        assert f'gemma3n.contract = "{MLX_CUDA_V1.identity()}"' in header


@pytest.mark.parametrize("dft", M.DFT_METHODS)
def test_tables_are_module_constants_equal_to_the_emulation(dft):
    text = module(dft).text
    want = {"mel_window": M.hann_window(), "mel_filterbank": M.filterbank_f32()}
    if dft == "matmul":
        want["mel_dft"] = M.dft_table()
    found = dict(re.findall(r'util\.global private @(mel_\w+) = dense<"0x([0-9A-F]+)">', text))
    assert set(found) == set(want)
    for name, values in want.items():
        got = np.frombuffer(bytes.fromhex(found[name]), "<f4").reshape(values.shape)
        np.testing.assert_array_equal(got.view(np.uint32), values.astype(np.float32).view(np.uint32), err_msg=name)
    assert not re.search(r"util\.global private @mel_\w+ = #flow\.parameter", text)


@pytest.mark.parametrize("dft", M.DFT_METHODS)
def test_front_end_functions(dft):
    flat = functions(module(dft).flat)
    for clips in CLIPS:
        b, t = clips, FRAMES[0]
        front = flat[MelFront(b, t, dft).symbol]
        assert calls(front) == [
            MelFrameCounts(b).symbol,
            MelFraming(b, t, M.samples_for_frames(t)).symbol,
            MelDft(dft, b, t).symbol,
            MelMagnitude(b, t).symbol,
            MelLog(b, t, 128).symbol,
        ]
        framing, spectrum = flat[calls(front)[1]], flat[calls(front)[2]]
        magnitude, log = flat[calls(front)[3]], flat[calls(front)[4]]
        assert len(ops(framing, "stablehlo.optimization_barrier")) == 1
        assert len(ops(framing, "stablehlo.concatenate")) == 2
        everything = "".join((framing, spectrum, magnitude, log))
        assert "gather" not in everything and "reduce_precision" not in everything
        dots = ops(spectrum, "stablehlo.dot_general") + ops(log, "stablehlo.dot_general")
        if dft == "matmul":
            assert len(dots) == 2
            assert not ops(spectrum, "stablehlo.fft")
        else:
            assert len(dots) == 1
            (fft,) = ops(spectrum, "stablehlo.fft")
            assert "type =  RFFT" in fft or "type = RFFT" in fft
            assert "length = [1024]" in fft
        for dot in dots:
            assert "precision = [HIGHEST, HIGHEST]" in dot and "bf16" not in dot, dot
        assert "f64" not in framing and "f64" not in spectrum
        assert all("f64" in line for line in ops(magnitude, "stablehlo.sqrt") + ops(log, "stablehlo.log"))
        assert len(ops(magnitude, "stablehlo.convert")) == 3 and len(ops(log, "stablehlo.convert")) == 2


@pytest.mark.parametrize("clips", CLIPS)
def test_entry_runs_the_host_path_on_the_front_ends_mel(clips):
    entry = functions(module("matmul").flat)[EncodeEntry(FRAMES[0], clips).symbol]
    called = calls(entry)
    front = called.index(MelFront(clips, FRAMES[0], "matmul").symbol)
    mask = called.index(f"mask_frames_{clips}x{FRAMES[0]}x128")
    boundary = called.index(f"mel_boundary_B{clips}_T{FRAMES[0]}_M128")
    sscp = next(i for i, name in enumerate(called) if name.startswith("sscp_block_"))
    assert front < mask < boundary < sscp
    result = re.search(r"(%\w+):2 = (?:func\.)?call @mel_front_", entry).group(1)
    masks = re.findall(r"call @valid_mask_\w+\((%[\w#]+)\)", entry)
    assert len(masks) == 3 and set(masks) == {f"{result}#1"}, masks  # the front end's frame counts


@pytest.mark.parametrize("dft", M.DFT_METHODS)
def test_every_function_is_named_by_a_specialisation(dft):
    symbols = [name for name in functions(module(dft).flat) if not name.startswith("encode_")]
    assert any(name.startswith("mel_front_") for name in symbols)
    for symbol in symbols:
        assert parse_symbol(symbol).symbol == symbol


def test_host_module_has_no_front_end():
    text = emit_captured(AudioModuleSpec(TINY, MLX_CUDA_V1, FRAMES, CLIPS)).text
    assert "mel_front" not in text and "@mel_" not in text and "gemma3n.mel" not in text
    assert "stablehlo.fft" not in text
