"""Audio-encoder configurations shared by the tests.

Each is a dict with the field names of Hugging Face ``Gemma3nAudioConfig`` plus
``text_hidden_size`` (the language model width that ``embed_audio`` projects to).
"""

from __future__ import annotations

from typing import Any

# The released Gemma 3n (E2B and E4B) audio tower: Gemma3nAudioConfig() defaults, text hidden 2048
# (spec section 1.1 and 1.2).
REAL: dict[str, Any] = dict(
    vocab_size=128,
    vocab_offset=262272,
    input_feat_size=128,
    hidden_size=1536,
    rms_norm_eps=1e-6,
    gradient_clipping=1e10,
    conf_attention_chunk_size=12,
    conf_attention_context_left=13,
    conf_attention_context_right=0,
    conf_attention_logit_cap=50.0,
    conf_num_attention_heads=8,
    conf_num_hidden_layers=12,
    conf_conv_kernel_size=5,
    conf_reduction_factor=4,
    conf_residual_weight=0.5,
    sscp_conv_channel_size=[128, 32],
    sscp_conv_group_norm_eps=1e-3,
    sscp_conv_kernel_size=[[3, 3], [3, 3]],
    sscp_conv_stride_size=[[2, 2], [2, 2]],
    text_hidden_size=2048,
)

# A tiny config that keeps every structural feature of the real one (two SSCP convs with
# 128 mel bins, a chunked attention with the real chunk/context sizes, two heads, a
# depthwise conv, reduction 4) but runs in milliseconds: the real one with these widths and depths.
TINY: dict[str, Any] = {
    **REAL,
    "hidden_size": 64,
    "conf_num_attention_heads": 2,
    "conf_num_hidden_layers": 2,
    "sscp_conv_channel_size": [8, 4],
    "text_hidden_size": 48,
}
