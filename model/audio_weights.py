"""The audio stage's weights: logical names, checkpoint tensor names, shapes and dtypes.

Templates and the emulation address weights by logical name (`conformer.3.attention.q_proj`); the
emitted module binds each to an IREE parameter whose key is the checkpoint's own tensor name, so a
loaded context reads the tensors straight from the checkpoint's safetensors shards.
"""

from __future__ import annotations

from dataclasses import dataclass

from .audio_config import AudioConfig

HF_TOWER = "model.audio_tower."
HF_EMBED = "model.embed_audio."
MLX_TOWER = "audio_tower."
MLX_EMBED = "embed_audio."


@dataclass(frozen=True)
class WeightLayout:
    """How a checkpoint names and lays out the audio weights."""

    name: str
    tower_prefix: str
    embed_prefix: str
    conv_layout: str  # "oihw" (transformers) or "ohwi" (mlx)
    depthwise_layout: str  # "d1k" (transformers) or "dk1" (mlx)


HF_LAYOUT = WeightLayout("hf", HF_TOWER, HF_EMBED, "oihw", "d1k")
MLX_LAYOUT = WeightLayout("mlx", MLX_TOWER, MLX_EMBED, "ohwi", "dk1")
LAYOUTS = {layout.name: layout for layout in (HF_LAYOUT, MLX_LAYOUT)}


@dataclass(frozen=True)
class WeightSpec:
    logical: str
    key: str
    shape: tuple[int, ...]
    dtype: str = "bf16"

    @property
    def symbol(self) -> str:
        """The `util.global` symbol of this weight."""
        return "w_" + self.logical.replace(".", "_")


BLOCK_WEIGHTS: tuple[str, ...] = (
    "ffw_layer_start.pre_layer_norm",
    "ffw_layer_start.ffw_layer_1",
    "ffw_layer_start.ffw_layer_2",
    "ffw_layer_start.post_layer_norm",
    "attention.pre_attn_norm",
    "attention.q_proj",
    "attention.k_proj",
    "attention.v_proj",
    "attention.per_dim_scale",
    "attention.pos_proj",
    "attention.post",
    "attention.post_norm",
    "lconv1d.pre_layer_norm",
    "lconv1d.linear_start",
    "lconv1d.depthwise_conv1d",
    "lconv1d.conv_norm",
    "lconv1d.linear_end",
    "ffw_layer_end.pre_layer_norm",
    "ffw_layer_end.ffw_layer_1",
    "ffw_layer_end.ffw_layer_2",
    "ffw_layer_end.post_layer_norm",
    "norm",
)


def _block_key(name: str) -> str:
    """Checkpoint suffix of a conformer block weight."""
    special = {
        "attention.q_proj": "attention.attn.q_proj.weight",
        "attention.k_proj": "attention.attn.k_proj.weight",
        "attention.v_proj": "attention.attn.v_proj.weight",
        "attention.per_dim_scale": "attention.attn.per_dim_scale",
        "attention.pos_proj": "attention.attn.relative_position_embedding.pos_proj.weight",
    }
    return special.get(name, name + ".weight")


def _block_shape(cfg: AudioConfig, name: str, layout: WeightLayout) -> tuple[int, ...]:
    d, ff = cfg.hidden_size, cfg.ffw_hidden
    leaf = name.split(".", 1)[-1]
    if name.endswith("ffw_layer_1"):
        return (ff, d)
    if name.endswith("ffw_layer_2"):
        return (d, ff)
    if name == "attention.per_dim_scale":
        return (cfg.head_dim,)
    if name == "lconv1d.linear_start":
        return (2 * d, d)
    if name == "lconv1d.depthwise_conv1d":
        k = cfg.conf_conv_kernel_size
        return (d, 1, k) if layout.depthwise_layout == "d1k" else (d, k, 1)
    if leaf in ("q_proj", "k_proj", "v_proj", "pos_proj", "post", "linear_end"):
        return (d, d)
    return (d,)


def audio_weight_specs(cfg: AudioConfig, layout: WeightLayout = HF_LAYOUT) -> list[WeightSpec]:
    """Every weight of the audio tower and audio embedder, in checkpoint order."""
    t, e = layout.tower_prefix, layout.embed_prefix
    sscp = t + "subsample_conv_projection."
    specs: list[WeightSpec] = []
    cin = 1
    for i, cout in enumerate(cfg.sscp_conv_channel_size):
        kt, kf = cfg.sscp_conv_kernel_size[i]
        shape = (cout, cin, kt, kf) if layout.conv_layout == "oihw" else (cout, kt, kf, cin)
        specs.append(WeightSpec(f"sscp.conv_{i}.weight", f"{sscp}conv_{i}.conv.weight", shape))
        specs.append(WeightSpec(f"sscp.conv_{i}.norm", f"{sscp}conv_{i}.norm.weight", (cout,)))
        cin = cout
    specs.append(
        WeightSpec("sscp.input_proj", f"{sscp}input_proj_linear.weight", (cfg.hidden_size, cfg.flat_sscp_width))
    )
    for layer in range(cfg.conf_num_hidden_layers):
        for name in BLOCK_WEIGHTS:
            specs.append(
                WeightSpec(
                    f"conformer.{layer}.{name}",
                    f"{t}conformer.{layer}.{_block_key(name)}",
                    _block_shape(cfg, name, layout),
                )
            )
    d, th = cfg.hidden_size, cfg.text_hidden_size
    specs += [
        WeightSpec("embed.embedding", f"{e}embedding.weight", (cfg.vocab_size, d)),
        WeightSpec("embed.hard_norm", f"{e}hard_embedding_norm.weight", (d,)),
        WeightSpec("embed.soft_norm", f"{e}soft_embedding_norm.weight", (d,)),
        WeightSpec("embed.projection", f"{e}embedding_projection.weight", (th, d)),
    ]
    return specs
