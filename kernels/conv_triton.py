"""The light convolution's gated linear unit and causal depthwise convolution as one kernel (build
time only: imports triton).

From the start projection's BF16 result G [clip, frame, 2C] (value | gate) and the depthwise taps
W [K, C] (F32 carriers of BF16 weights), it computes what the light-conv template computes:

    glu[t]  = round(value[t] * logistic(gate[t]))     IREE's logistic: 1 / (exp(-g) + 1)
    conv[t] = round(glu[t-K+1] W[0] + ... + glu[t] W[K-1])   products added in tap order, from
                                                      the first product (frames before 0 are 0)

The GLU of a frame is recomputed for each tap that reads it (K times), which costs arithmetic the
GPU has to spare and saves IREE's separate GLU pass, its padded copy and the taps pass. Every
operation is the template's, F32 and unfused (no FMA contraction in the build; `tl.fma` only inside
IREE's exp), so the result has the template's bits.

One workgroup per (clip, FRAMES frames, CHANNELS channels).
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemma3n_iree.kernels.triton_numerics import _iree_exp, _round_to_bf16


@triton.jit
def glu_depthwise(g_ptr, w_ptr, y_ptr, frames, channels, taps, FRAMES: tl.constexpr, CHANNELS: tl.constexpr):
    program = tl.program_id(0)  # (clip * frame_blocks + frame_block) * channel_blocks + channel_block
    channel_blocks = (channels + CHANNELS - 1) // CHANNELS
    frame_blocks = (frames + FRAMES - 1) // FRAMES
    channel = (program % channel_blocks) * CHANNELS + tl.arange(0, CHANNELS)
    frame = ((program // channel_blocks) % frame_blocks) * FRAMES + tl.arange(0, FRAMES)
    clip = program // (channel_blocks * frame_blocks)
    live = (frame[:, None] < frames) & (channel[None, :] < channels)
    acc = tl.full((FRAMES, CHANNELS), -0.0, tl.float32)  # -0 + p = p exactly: the sum starts at the first product
    for j in range(taps):
        source = frame - (taps - 1) + j
        present = live & (source[:, None] >= 0)
        at = (clip * frames + source)[:, None].to(tl.int64) * (2 * channels) + channel[None, :]
        value = tl.load(g_ptr + at, mask=present, other=0.0).to(tl.float32)
        gate = tl.load(g_ptr + at + channels, mask=present, other=0.0).to(tl.float32)
        glu = _round_to_bf16(value * tl.math.div_rn(1.0, _iree_exp(-gate) + 1.0))  # 0 before the first frame
        weight = tl.load(w_ptr + j * channels + channel, mask=channel < channels, other=0.0)
        acc = acc + glu * weight[None, :]
    out = (clip * frames + frame)[:, None].to(tl.int64) * channels + channel[None, :]
    tl.store(y_ptr + out, _round_to_bf16(acc), mask=live)
