"""`emit-gemma3n`: emit the audio stage as StableHLO and compile it into a `.vmfb`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..contracts.mel import MEL_HELP, resolve_mel
from ..contracts.policy import get_contract
from ..files import write_atomically
from ..model.audio_config import DEFAULT_FRAME_BUCKETS, AudioConfig, ConfigError, builtin_config, read_json_object
from ..model.audio_weights import LAYOUTS
from ..model.checkpoint_config import CheckpointConfig
from ..runtime.commands.cli_options import (
    EXISTING_FILE,
    OUTPUT_FILE,
    capacity_option,
    checkpoint_option,
    contract_option,
    cuda_arch_option,
    frames_option,
    kernels_option,
    mel_option,
    output_option,
    target_option,
)
from .audio import AudioModuleSpec, BucketError, emit_audio_module
from .compile import compile_mlir, parse_target
from .compile_errors import CompileError
from .kernels import IREE_CODEGEN, select_kernels
from .lowering import DEFAULT_LOWERING, lowering_for


def resolve_config(checkpoint: Path | None, config_file: Path | None, builtin: str | None) -> AudioConfig:
    """The configuration from exactly one source (a checkpoint, a JSON file, or a built-in name)."""
    given = [s for s in (checkpoint, config_file, builtin) if s is not None]
    if len(given) > 1:
        raise click.UsageError("give at most one of --checkpoint, --config and --builtin")
    if checkpoint is not None:
        return CheckpointConfig.read(checkpoint).audio
    if config_file is not None:
        return AudioConfig.from_json_file(config_file)
    return builtin_config(builtin or "e4b")


def decoder_spec(
    checkpoint: Path | None,
    config_file: Path | None,
    builtin: str | None,
    contract: str,
    capacities: tuple[int, ...],
    slots: int,
    prompts: tuple[int, ...],
    batches: tuple[int, ...],
    contexts: tuple[int, ...],
    layout: str,
    kernels=IREE_CODEGEN,
    lowering=DEFAULT_LOWERING,
    top_k: int | None = None,
    prompt_batches: tuple[int, ...] = (),
    sampling: bool = False,
):
    """The decoder program the options describe (defaults clipped to the capacity and the slots)."""
    from ..model.decoder_config import DecoderConfig, builtin_decoder_config
    from .decoder import DEFAULT_BATCHES, DEFAULT_PROMPT_BUCKETS, TOP_LOGPROBS, DecoderModuleSpec

    given = [s for s in (checkpoint, config_file, builtin) if s is not None]
    if len(given) > 1:
        raise click.UsageError("give at most one of --checkpoint, --config and --builtin")
    if checkpoint is not None:
        cfg = CheckpointConfig.read(checkpoint).decoder
    elif config_file is not None:
        cfg = DecoderConfig.from_config_json(read_json_object(config_file), source=str(config_file))
    else:
        cfg = builtin_decoder_config(builtin or "e4b")
    if len(capacities) > 1:
        raise click.UsageError("--stage decoder takes one --capacity (the KV cache's positions per slot)")
    capacity = capacities[0] if capacities else 4096
    prompts = prompts or tuple(p for p in DEFAULT_PROMPT_BUCKETS if p <= capacity) or (capacity,)
    batches = batches or tuple(b for b in DEFAULT_BATCHES if b <= slots) or (slots,)
    return DecoderModuleSpec(
        cfg,
        get_contract(contract),
        slots,
        capacity,
        tuple(prompts),
        tuple(batches),
        tuple(contexts),
        LAYOUTS[layout],
        kernels,
        lowering,
        TOP_LOGPROBS if top_k is None else top_k,
        tuple(prompt_batches),
        sampling,
    )


def emit_decoder(spec) -> str:
    from .decoder import emit_decoder_module

    return emit_decoder_module(spec)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--stage",
    type=click.Choice(["audio", "prefill", "decoder"]),
    default="audio",
    show_default=True,
    help="Which program to emit: the audio tower + audio embedder, the prefill merge + dense PLE, or the "
    "text decoder (prefill and decode entries over a resident KV cache).",
)
@target_option("IREE backend: NVIDIA GPUs (cuda) or this kind of CPU (llvm-cpu).", required=True)
@checkpoint_option("A Gemma 3n checkpoint directory; only its config.json is read (no weights needed).", required=False)
@click.option(
    "--config",
    "config_file",
    type=EXISTING_FILE,
    help="A JSON configuration (checkpoint-style nested, or flat audio fields + text_hidden_size).",
)
@click.option(
    "--builtin",
    type=click.Choice(["e2b", "e4b", "tiny"]),
    help="A built-in configuration (default: e4b; E2B and E4B share the audio stage).",
)
@frames_option(
    f"Mel-frame bucket(s), one entry point each (repeatable; default "
    f"{' '.join(map(str, DEFAULT_FRAME_BUCKETS))}; 2997 frames = 30 s)."
)
@click.option(
    "--clips",
    type=click.IntRange(1, 256),
    multiple=True,
    help="Clips per call for every bucket (repeatable; default 1).",
)
@capacity_option(
    "--stage prefill: context capacities, one entry per (capacity, clips) (repeatable; default "
    "256 512 1024 2048 4096 8192). --stage decoder: the KV cache's positions per slot (one value; "
    "default 4096)."
)
@click.option(
    "--slots",
    type=click.IntRange(1),
    default=8,
    show_default=True,
    help="--stage decoder: KV cache slots (sequences decoded together; one per request).",
)
@click.option(
    "--prompt",
    "prompts",
    type=click.IntRange(1),
    multiple=True,
    help="--stage decoder: prompt buckets, one prefill entry each (repeatable; default 64 256 1024 4096 "
    "up to the capacity).",
)
@click.option(
    "--batch",
    "batches",
    type=click.IntRange(1),
    multiple=True,
    help="--stage decoder: decode batch sizes, one decode entry per (context, batch) (repeatable; default "
    "1 8 32 up to the slots).",
)
@click.option(
    "--prompt-batch",
    "prompt_batches",
    type=click.IntRange(2),
    multiple=True,
    help="--stage decoder: numbers of prompts one batched prefill entry takes at once, one entry per (prompt "
    "bucket, number) (repeatable; default none: one prompt per prefill call).",
)
@click.option(
    "--context",
    "contexts",
    type=click.IntRange(1),
    multiple=True,
    help="--stage decoder: decode context buckets (the full-attention layers read that many cache rows; "
    "repeatable; default: the capacity).",
)
@click.option(
    "--top-logprobs",
    "top_k",
    type=click.IntRange(0),
    default=None,
    help="--stage decoder: k of the top-k entries (the most likely tokens of a call's logits, computed on the "
    "device; default 20, OpenAI's largest top_logprobs; 0: none).",
)
@click.option(
    "--sampling",
    is_flag=True,
    help="--stage decoder: also compile the sampler (temperature, top-k, top-p and a seed, drawn on the device "
    "from each call's logits), which `generate --temperature` and the server's chat completions need.",
)
@contract_option("Numeric contract: where values are rounded and what contractions see.", diagnostic=True)
@kernels_option()
@mel_option("--stage audio: " + MEL_HELP)
@cuda_arch_option(
    "CUDA architecture (default sm_90 for H100/H200, emitted as an explicit target attribute "
    "because IREE 3.13 has no Hopper entry; sm_80 also runs on Hopper through PTX JIT)."
)
@click.option(
    "--layout",
    type=click.Choice(sorted(LAYOUTS)),
    default="hf",
    show_default=True,
    help="Checkpoint tensor naming/layout the parameters bind to (transformers or mlx-vlm).",
)
@click.option("--stages", is_flag=True, help="Also return every named stage tensor (diagnostics build).")
@output_option("Where to write the compiled .vmfb.", flags=("-o", "--output"))
@click.option("--emit-mlir", type=OUTPUT_FILE, help="Also write the StableHLO module that was compiled.")
def main(
    stage: str,
    target: str,
    checkpoint: Path | None,
    config_file: Path | None,
    builtin: str | None,
    frame_buckets: tuple[int, ...],
    clips: tuple[int, ...],
    capacities: tuple[int, ...],
    slots: int,
    prompts: tuple[int, ...],
    batches: tuple[int, ...],
    prompt_batches: tuple[int, ...],
    contexts: tuple[int, ...],
    top_k: int | None,
    sampling: bool,
    contract: str,
    kernels: str,
    mel: str | None,
    cuda_arch: str | None,
    layout: str,
    stages: bool,
    output: Path,
    emit_mlir: Path | None,
) -> None:
    """Emit a Gemma 3n stage from its templates and compile it with IREE.

    The audio stage has one entry point `encode_f<frames>_c<clips>` per bucket, the prefill stage one per
    (capacity, clips), the decoder one prefill entry per prompt bucket (and per (bucket, --prompt-batch)) and one
    decode entry per (context, batch) over a KV cache of --slots x --capacity positions that stays on the device. Every stage's weights
    are IREE parameters named by checkpoint tensor (scope "model"): load the program with the checkpoint's
    safetensors files as parameters, e.g. `gemma3n-iree encode` and `runtime.decoder.DecoderSession` do.
    With `--mel device` the audio entries take 16 kHz samples [clips, samples] and the real-sample count of
    each clip instead of log-mel features and frame counts.
    """
    try:
        iree_target = parse_target(target, cuda_arch)
        if sampling and stage != "decoder":
            raise ValueError("--sampling applies to --stage decoder (the sampler draws from the decoder's logits)")
        if stage == "decoder":
            linked = select_kernels(kernels, iree_target, get_contract(contract))
            spec = decoder_spec(
                checkpoint,
                config_file,
                builtin,
                contract,
                capacities,
                slots,
                prompts,
                batches,
                contexts,
                layout,
                linked,
                lowering_for(iree_target, get_contract(contract)),
                top_k,
                prompt_batches,
                sampling,
            )
            emit, names = emit_decoder, [e.symbol for e in spec.entry_points]
            if stages:
                raise ValueError("--stages applies to --stage audio and prefill")
            if mel is not None:
                raise ValueError("--mel applies to --stage audio; the decoder reads the prefill stage's outputs")
        else:
            cfg = resolve_config(checkpoint, config_file, builtin)
        if stage == "prefill":
            from .prefill import DEFAULT_CAPACITIES, PrefillModuleSpec, emit_prefill_module, resolve_text_config

            spec = PrefillModuleSpec(
                cfg,
                resolve_text_config(checkpoint, config_file, builtin),
                get_contract(contract),
                tuple(capacities) or DEFAULT_CAPACITIES,
                tuple(clips) or (1,),
                LAYOUTS[layout],
                stages,
                lowering_for(iree_target, get_contract(contract)),
            )
            emit, names, linked = emit_prefill_module, [e.symbol for e in spec.entry_points], IREE_CODEGEN
            if kernels not in ("auto", "iree"):
                raise ValueError(
                    f"--kernels {kernels} applies to --stage audio; prefill uses IREE's own code generation"
                )
            if mel is not None:
                raise ValueError("--mel applies to --stage audio; prefill reads the encoder's embeddings")
        elif stage == "audio":
            policy = get_contract(contract)
            linked = select_kernels(kernels, iree_target, policy)
            spec = AudioModuleSpec(
                cfg,
                policy,
                tuple(frame_buckets) or DEFAULT_FRAME_BUCKETS,
                tuple(clips) or (1,),
                LAYOUTS[layout],
                stages,
                kernels=linked,
                mel=resolve_mel(mel, iree_target.kind),
                lowering=lowering_for(iree_target, policy),
            )
            emit, names = emit_audio_module, [e.symbol for e in spec.entry_points]
        started = time.perf_counter()
        click.echo(
            f"emitting {len(names)} entry point(s) for {iree_target.describe()} "
            f"under contract {spec.contract.name}, kernels: "
            f"{linked.identity if linked.files else 'IREE code generation'}"
            + (f", log-mel: {spec.mel.name}" if stage == "audio" else "")
            + " ...",
            err=True,
        )
        mlir = emit(spec)
        if emit_mlir is not None:
            write_atomically(emit_mlir, mlir.encode())
        emitted = time.perf_counter()
        click.echo(
            f"  emitted {len(mlir) / 1e6:.1f} MB of StableHLO in {emitted - started:.1f} s; compiling "
            "(a real-size encoder or decoder takes minutes) ...",
            err=True,
        )
        vmfb = compile_mlir(mlir, iree_target)
        write_atomically(output, vmfb)
    except (ConfigError, BucketError, ValueError) as exc:  # DecoderBucketError, PrefillBucketError: ValueErrors
        raise click.ClickException(str(exc)) from None
    except CompileError as exc:
        click.echo(f"error: compilation failed\n{exc}", err=True)
        sys.exit(2)
    done = time.perf_counter()
    click.echo(
        f"wrote {output} ({len(vmfb) / 1e6:.1f} MB) in {done - emitted:.1f} s of compilation; entries: "
        + ", ".join(names),
        err=True,
    )


if __name__ == "__main__":  # pragma: no cover
    main()
