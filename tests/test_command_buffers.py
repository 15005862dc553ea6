"""Every entry's kernel launches are recorded once, when the module loads, not again on every call (cuda, no GPU).

IREE memoizes an entry's command buffer only where every buffer its launches bind is a constant, an immutable
global or a slot of the call's binding table (`diagnostics/command_buffers.py`). The committed kernels are linked
through layouts we write (`templates/_macros.mlir.j2`'s `extern`); without the `Indirect` flag on their bindings
a call's transient buffer is bound directly, and the VM records every launch of the entry again on each call
(the tiny decode step: 704 launches recorded per call before the flag, none after). A change that brings
per-call recording back fails here.

The prefill entries took their slot and last position as `dynamic_slice` / `dynamic_update_slice` offsets,
which IREE reads back to the host in the middle of the call and passes as push constants: a wait, and every
launch after it recorded on each call (the tiny prefill: 194 of 195). They gather and scatter at rows computed on
the device now (`decoder_layer.write_prefill.*`, `_macros.take`).
"""

from __future__ import annotations

import dataclasses

import pytest

from gemma3n_iree.contracts import MLX_CUDA_V1
from gemma3n_iree.diagnostics.command_buffers import Recording, recording_per_entry
from gemma3n_iree.emitters.audio import AudioModuleSpec, emit_audio_module
from gemma3n_iree.emitters.compile import compile_mlir_to, parse_target
from gemma3n_iree.emitters.decoder import DecoderModuleSpec, emit_decoder_module
from gemma3n_iree.emitters.kernels import select_kernels
from gemma3n_iree.emitters.lowering import lowering_for
from gemma3n_iree.model.audio_config import builtin_config
from gemma3n_iree.model.decoder_config import builtin_decoder_config

SM90 = parse_target("cuda", "sm_90")
KERNELS = select_kernels("auto", SM90, MLX_CUDA_V1)
LOWERING = lowering_for(SM90, MLX_CUDA_V1)

MEMOIZED = """
  util.initializer {
    %0 = util.call @__step_memoize_apply() : () -> !hal.command_buffer
    util.global.store %0, @__step_memoize_result_0_device_0 : !hal.command_buffer
    util.return
  }
  util.func private @__step_memoize_apply() -> !hal.command_buffer {
    hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%e : !hal.executable)[%f]
    hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%e : !hal.executable)[%f]
    util.return %cmd : !hal.command_buffer
  }
  util.func public @step(%arg0: !hal.buffer_view) -> !hal.buffer_view {
    %cmd = util.global.load immutable @__step_memoize_result_0_device_0 : !hal.command_buffer
    hal.device.queue.execute.indirect<%d : !hal.device> commands(%cmd) bindings([])
    util.return %arg0 : !hal.buffer_view
  }
"""
PER_CALL = """
  util.func private @__step_memoize_apply(%arg0: !hal.buffer) -> !hal.command_buffer {
    hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%e : !hal.executable)[%f]
    util.return %cmd : !hal.command_buffer
  }
  util.func public @step(%arg0: !hal.buffer_view) -> !hal.buffer_view {
    %t = hal.device.queue.alloca<%d : !hal.device> : !hal.buffer{%c64}
    %cmd = util.call @__step_memoize_apply(%t) : (!hal.buffer) -> !hal.command_buffer
    hal.command_buffer.dispatch<%other : !hal.command_buffer> target(%e : !hal.executable)[%f]
    util.return %arg0 : !hal.buffer_view
  }
"""


def test_the_reading_tells_memoized_from_per_call_recording():
    assert recording_per_entry(MEMOIZED) == {"step": Recording(per_call=0, at_load=2)}
    assert recording_per_entry(PER_CALL) == {"step": Recording(per_call=2, at_load=0)}


def decoder_spec() -> DecoderModuleSpec:
    """Three layers of the tiny decoder (sliding and full owning K/V, one sharing them): decode at 1 and 2,
    one prompt bucket with a two-prompt batched prefill."""
    cfg = builtin_decoder_config("tiny")
    three = dataclasses.replace(
        cfg,
        num_hidden_layers=3,
        intermediate_sizes=cfg.intermediate_sizes[:3],
        layer_types=(cfg.layer_types[0], cfg.layer_types[4], cfg.layer_types[0]),
        activation_sparsity=cfg.activation_sparsity[:3],
        num_kv_shared_layers=1,
    )
    return DecoderModuleSpec(
        three,
        MLX_CUDA_V1,
        2,
        16,
        prompts=(8,),
        batches=(1, 2),
        prompt_batches=(2,),
        kernels=KERNELS,
        lowering=LOWERING,
    )


@pytest.mark.parametrize(
    "emit, hot",
    [
        pytest.param(
            lambda: emit_decoder_module(decoder_spec()),
            ("decoder_decode", "decoder_prefill", "decoder_top_k"),
            id="decoder",
        ),
        pytest.param(
            lambda: emit_audio_module(
                AudioModuleSpec(builtin_config("tiny"), MLX_CUDA_V1, (64,), (1,), kernels=KERNELS, lowering=LOWERING)
            ),
            ("",),
            id="encoder",
        ),
    ],
)
def test_hot_entries_record_their_launches_once_at_load(emit, hot):
    recordings = recording_per_entry(compile_mlir_to(emit(), SM90, "hal"))
    entries = {name: r for name, r in recordings.items() if name.startswith(hot)}
    assert entries, sorted(recordings)
    for name, recording in entries.items():
        assert recording.per_call == 0 and recording.at_load > 0, (name, recording)
