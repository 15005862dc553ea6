"""Build the stage-output artifact for one clip, run it and its reference, and compare every stage."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..contracts import encoder as emulated
from ..contracts.emulation import affine_dequantize
from ..contracts.policy import get_contract
from ..emitters.audio import AudioModuleSpec
from ..emitters.compile import parse_target
from ..emitters.kernels import select_kernels
from ..emitters.lowering import lowering_for
from ..model.audio_weights import HF_LAYOUT, audio_weight_specs
from ..runtime.checkpoint import Checkpoint, open_checkpoint
from ..runtime.encoder.audio_session import AudioSession
from ..runtime.programs.artifacts import ArtifactCache
from ..runtime.programs.session import DEVICE_FOR_TARGET
from .diagnose import Report, Thresholds, diagnose_stages

Progress = Callable[[str], None]
REFERENCES = ("contract", "transformers")


def logical_weights(checkpoint: Checkpoint) -> dict[str, np.ndarray]:
    """Every audio weight as float32 in the checkpoint's layout (packed weights dequantized)."""
    out = {}
    for spec in checkpoint.specs:
        if checkpoint.is_quantized(spec.logical):
            bits, group = checkpoint.quantization
            base = spec.key[: -len(".weight")]
            out[spec.logical] = affine_dequantize(
                checkpoint.read(spec.key),
                checkpoint.read(base + ".scales"),
                checkpoint.read(base + ".biases"),
                bits,
                group,
            )
        else:
            out[spec.logical] = np.asarray(checkpoint.read(spec.key), np.float32)
    return out


def hf_named(checkpoint: Checkpoint, logical: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The weights under transformers' names and layouts (for the transformers reference)."""
    named = {}
    for spec in audio_weight_specs(checkpoint.config, HF_LAYOUT):
        value = logical[spec.logical]
        if checkpoint.layout.conv_layout == "ohwi" and value.ndim == 4:
            value = value.transpose(0, 3, 1, 2)
        named[spec.key] = value.reshape(spec.shape)
    return named


DEFAULT_THRESHOLDS = Thresholds()


def run_diagnosis(
    checkpoint_dir: str | Path,
    audio: str | Path,
    target: str = "llvm-cpu",
    contract: str = "mlx-cuda-v1",
    reference: str = "contract",
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    clip: int = 0,
    cuda_arch: str | None = None,
    kernels: str = "auto",
    cache: ArtifactCache | None = None,
    progress: Progress | None = None,
    artifact: str | Path | None = None,
) -> Report:
    """Diagnose clip `clip` of `audio` (the artifact is specialised on exactly its frame count).

    `artifact` runs a stage artifact compiled elsewhere (`emit-gemma3n --stages --frames N`) whose
    bucket must equal the clip's frame count; no compiler is needed then.
    """
    from ..runtime.audio.frontend import clip_features, load_audio

    if reference not in REFERENCES:
        raise ValueError(f"unknown reference {reference!r}; choose one of {', '.join(REFERENCES)}")
    say = progress or (lambda _msg: None)
    checkpoint = open_checkpoint(checkpoint_dir)
    checkpoint.check_finite()
    cfg = checkpoint.config
    samples, _rate = load_audio(audio)
    clips = clip_features(samples)
    if not 0 <= clip < len(clips):
        raise ValueError(f"{audio}: clip {clip} requested but the audio has {len(clips)} clip(s) of 30 s")
    chosen = clips[clip]
    frames = int(chosen.valid_frames)
    mel = chosen.features[None, :frames].astype(np.float32)
    policy = get_contract(contract)
    compile_target = parse_target(target, cuda_arch)
    spec = AudioModuleSpec(
        cfg,
        policy,
        (frames,),
        (1,),
        checkpoint.layout,
        stages=True,
        quantization=checkpoint.quantization,
        quantized=frozenset(checkpoint.quantized_names()),
        kernels=select_kernels(kernels, compile_target, policy),
        lowering=lowering_for(compile_target, policy),
    )
    if artifact is None:
        artifact = (cache or ArtifactCache()).get_or_build(spec, compile_target, checkpoint.schema_digest(), say).path
    session = AudioSession(artifact, checkpoint.files, device=DEVICE_FOR_TARGET[target])
    if (frames, 1) not in session.entries:
        raise ValueError(
            f"{artifact} has no entry for {frames} frames x 1 clip (clip {clip} of {audio}); it has {session.buckets}"
        )
    say(f"running the stage artifact on clip {clip} ({frames} frames)")
    ours = session.run(mel, np.array([frames], np.int32))
    weights = logical_weights(checkpoint)
    conv_layout = checkpoint.layout.conv_layout
    if reference == "contract":
        ref_policy = get_contract(policy.reference_name)
        say(f"running the numpy emulation of {ref_policy.name} (chained and stage-local)")
        chained = emulated.encode(ref_policy, cfg, weights, mel, np.array([frames]), conv_layout=conv_layout)
        local = emulated.encode(ref_policy, cfg, weights, mel, np.array([frames]), conv_layout=conv_layout, forced=ours)
        label = f"contract emulation ({ref_policy.name})"
    else:
        from .transformers_reference import build_modules, load_weights, run_stages

        say("running transformers (float32)")
        encoder, embedder = build_modules(cfg)
        load_weights(encoder, embedder, hf_named(checkpoint, weights))
        stages = run_stages(encoder, embedder, mel[0])
        chained = {k: (v if k == "hard_post_norm" else v[None]) for k, v in stages.items()}
        local = None
        label = "transformers float32"
    report = Report(target=target, contract=policy.name, reference=label, thresholds=thresholds)
    return diagnose_stages(cfg, ours, chained, local, weights if local is not None else None, policy.round_bf16, report)
