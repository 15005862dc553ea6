"""`gemma3n-iree`: encode audio into the Gemma 3n language model's audio embeddings with IREE."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ...contracts.mel import MEL_HELP
from ...model.audio_config import DEFAULT_FRAME_BUCKETS, builtin_config
from .cli_options import (
    EXISTING_FILE,
    OUTPUT_FILE,
    PREFILL_ARTIFACT_HELP,
    artifact_option,
    cache_dir_option,
    capacity_option,
    checkpoint_option,
    contract_option,
    cuda_arch_option,
    encoder_options,
    errors_as_messages,
    frames_option,
    kernels_option,
    mel_option,
    output_option,
    pipeline_options,
    prefill_stage,
    say,
    target_option,
    workdir_option,
)
from .terminal import ProgressLine

if TYPE_CHECKING:
    from ..encoder.pipeline import PipelineProgress


def progress_line(p: PipelineProgress) -> str:
    """One line of `encode`'s terminal progress."""
    failed = f", {p.failed} failed" if p.failed else ""
    return (
        f"encoding: {p.files_done}/{p.files} files{failed}, {p.clips_done} clips, "
        f"{p.audio_seconds_done:,.1f} audio-s, {p.audio_s_per_s:,.0f} audio-s/s"
    )


def _encode(checkpoint: Path, audio: tuple[Path, ...], output: Path, **options) -> None:
    """Run `_encode_unchecked`; a bad input (configuration, checkpoint, audio, bucket, artifact, compile)
    becomes one error message and exit status 1 instead of a traceback."""
    with errors_as_messages():
        _encode_unchecked(checkpoint, audio, output, **options)


def _encode_unchecked(
    checkpoint: Path,
    audio: tuple[Path, ...],
    output: Path,
    target: str,
    contract: str,
    cuda_arch: str | None,
    mel: str | None,
    frame_buckets: tuple[int, ...],
    clips_per_call: tuple[int, ...],
    max_seconds: float | None,
    cache_dir: Path | None,
    artifact: Path | None,
    workers: int | None,
    quiet: bool,
) -> None:
    """Encode through the pipeline; an input that fails fails alone: the others are written (`clip_source`
    indexes AUDIO, `failed_source` / `failed_error` list the failures), then exit status 1."""
    from ..encoder.clips import EncodeFailed
    from ..encoder.encode import AudioEncoder
    from ..programs.artifacts import ArtifactCache

    status = (lambda _message: None) if quiet else say
    started = time.perf_counter()
    encoder = AudioEncoder(
        checkpoint,
        target=target,
        contract=contract,
        frame_buckets=frame_buckets or DEFAULT_FRAME_BUCKETS,
        clips_per_call=clips_per_call or (1,),
        cuda_arch=cuda_arch,
        cache=ArtifactCache(cache_dir),
        progress=status,
        artifact=artifact,
        mel=mel,
    )
    ready = time.perf_counter()
    status(f"artifact {encoder.artifact} ready in {ready - started:.1f} s (log-mel: {encoder.session.mel.name})")
    progress = ProgressLine(sys.stderr, not quiet and sys.stderr.isatty(), progress_line)
    failed: EncodeFailed | None = None
    try:
        result = encoder.encode_files(audio, max_seconds, workers=workers, on_progress=progress)
    except EncodeFailed as exc:
        failed, result = exc, exc.result
    finally:
        progress.close()
    encoded = time.perf_counter()
    if result is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        result.save(output)
        done = time.perf_counter()
        seconds = progress.last.audio_seconds_done if progress.last is not None else 0.0
        status(
            f"{len(audio) - (len(failed.failures) if failed else 0)} input(s) -> {len(result.clip_source)} clip(s) "
            f"of at most 30 s, {seconds:,.1f} audio-s in {encoded - ready:.3f} s ({seconds / (encoded - ready):,.0f} "
            f"audio-s/s); written in {done - encoded:.3f} s"
        )
        status(
            f"wrote {output}: audio_features {tuple(result.audio_features.shape)}, valid tokens "
            f"{result.valid_tokens.tolist()}"
        )
    if failed is not None:
        if result is None:
            raise click.ClickException(f"{failed}\nnothing was written" if len(audio) > 1 else str(failed))
        raise click.ClickException(
            f"{failed}\nthe other {len(audio) - len(failed.failures)} input(s) were written to "
            f"{output} (its failed_source and failed_error list the failures)"
        )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Run Gemma 3n's audio path (audio tower + audio embedder) as compiled IREE artifacts.

    Artifacts are compiled on first use for the checkpoint's configuration and cached; weights are
    read straight from the checkpoint's safetensors files.
    """


@main.command()
@checkpoint_option("A Gemma 3n checkpoint directory (transformers or mlx-vlm layout).")
@output_option(
    "The .npz to write: audio_features, encoder_hidden, valid_tokens, clip_source, clip_start_s, "
    "failed_source, failed_error."
)
@encoder_options
@pipeline_options
@click.argument("audio", nargs=-1, required=True, type=EXISTING_FILE)
def encode(checkpoint: Path, output: Path, audio: tuple[Path, ...], **options) -> None:
    """Encode AUDIO files (WAV, FLAC, OGG, MP3...) into the language model's audio embeddings.

    Every input becomes one or more 30 s clips (in input order); each clip gives 188 rows:
    soft embeddings for its valid tokens, then the hard embedding of audio row 127 (what the
    language model receives as padding).

    Files are decoded (and their log-mel computed, for a host-mel artifact) by --workers threads
    while the device runs the previous call; on a terminal a progress line shows files, clips and
    audio-seconds per second. An input that cannot be used fails alone: the others are written,
    each failure is reported, and the exit status is 1 (the .npz's failed_source and failed_error
    name them; clip_source indexes AUDIO as given).
    """
    _encode(checkpoint, audio, output, **options)


@main.command()
@workdir_option("Where the random checkpoint and the result are written.")
@click.option(
    "--builtin",
    type=click.Choice(["e4b", "e2b", "tiny"]),
    default="e4b",
    show_default=True,
    help="Configuration of the random checkpoint (real E4B shapes by default).",
)
@encoder_options
@pipeline_options
def demo(workdir: Path, builtin: str, **options) -> None:
    """Encode the bundled speech sample with a deterministic random checkpoint of the real shapes.

    Real weights cannot be downloaded here, so the demo writes random weights (seed 0) in the
    transformers checkpoint layout, then runs exactly what `encode` runs.
    """
    from ..audio.frontend import SAMPLE_SPEECH
    from ..synthetic import write_random_checkpoint

    checkpoint = workdir / f"random-{builtin}"
    if not (checkpoint / "model.safetensors").is_file():
        say(f"writing a deterministic random {builtin} checkpoint to {checkpoint} ...")
        write_random_checkpoint(checkpoint, builtin_config(builtin), seed=0)
    _encode(checkpoint, (SAMPLE_SPEECH,), workdir / "sample_speech.npz", **options)


@main.command()
@checkpoint_option("A Gemma 3n checkpoint directory; only the audio tower and audio embedder tensors are read.")
@target_option("Where to run the stage artifact: this machine's CPU or an NVIDIA GPU.")
@contract_option("Contract the stage artifact is compiled under (diagnostic variants allowed).", diagnostic=True)
@cuda_arch_option("CUDA architecture (default sm_90).")
@kernels_option()
@click.option(
    "--reference",
    type=click.Choice(["contract", "transformers"]),
    default="contract",
    show_default=True,
    help="contract: the numpy emulation (bit-level reference, also checked stage by stage on the "
    "artifact's own inputs); transformers: Hugging Face transformers in float32 (semantic).",
)
@click.option("--clip", type=click.IntRange(0), default=0, show_default=True, help="Which 30 s clip of AUDIO.")
@click.option("--max-abs", type=float, default=5e-3, show_default=True, help="Threshold on a stage's max |diff|.")
@click.option("--rms", type=float, default=5e-4, show_default=True, help="Threshold on a stage's RMS diff.")
@click.option("--json", "json_path", type=OUTPUT_FILE, help="Write the full report.")
@click.option("--plot", type=OUTPUT_FILE, help="Write a per-stage error plot (PNG).")
@cache_dir_option()
@artifact_option("--artifact", "A stage artifact compiled elsewhere (emit-gemma3n --stages --frames <clip frames>).")
@click.argument("audio", type=EXISTING_FILE)
def diagnose(
    checkpoint: Path,
    target: str,
    contract: str,
    cuda_arch: str | None,
    kernels: str,
    reference: str,
    clip: int,
    max_abs: float,
    rms: float,
    json_path: Path | None,
    plot: Path | None,
    cache_dir: Path | None,
    artifact: Path | None,
    audio: Path,
) -> None:
    """Compare every named stage of the artifact with a reference; report the first divergence.

    Exits with status 1 when a stage exceeds the thresholds (every stage is still reported). For
    linear layers and convolutions, differing elements are classified against the accumulation
    envelope: inside = a legitimate F32 summation order, outside = a bug.
    """
    from ...diagnostics.diagnose import Thresholds
    from ...diagnostics.diagnose_run import run_diagnosis
    from ..programs.artifacts import ArtifactCache

    if plot is not None:
        try:
            import matplotlib  # noqa: F401 - checked before the long run, used by Report.plot
        except ImportError:
            raise click.ClickException("--plot needs matplotlib: pip install 'gemma3n-iree[plot]'") from None
    report = run_diagnosis(
        checkpoint,
        audio,
        target=target,
        contract=contract,
        reference=reference,
        thresholds=Thresholds(max_abs, rms),
        clip=clip,
        cuda_arch=cuda_arch,
        kernels=kernels,
        cache=ArtifactCache(cache_dir),
        progress=say,
        artifact=artifact,
    )
    click.echo(report.table())
    if json_path is not None:
        report.write_json(json_path)
        say(f"wrote {json_path}")
    if plot is not None:
        report.plot(plot)
        say(f"wrote {plot}")
    if report.first_divergence is not None:
        raise SystemExit(1)


@main.command()
@checkpoint_option(
    "Checkpoint to bind (default: a deterministic random E4B checkpoint written to --workdir).", required=False
)
@workdir_option("Where the random checkpoint is written when --checkpoint is not given.")
@target_option()
@contract_option()
@cuda_arch_option()
@kernels_option()
@mel_option(MEL_HELP + " With device, the timed calls take 16 kHz samples and include the log-mel.")
@frames_option("Frame buckets (default 2997 = 30 s).")
@click.option("--batch", "batches", type=click.IntRange(1, 256), multiple=True, help="Clips per call (default 1 8 32).")
@click.option(
    "--warmup",
    type=click.IntRange(0),
    default=3,
    show_default=True,
    help="Untimed calls per entry first (module load, PTX JIT, allocations).",
)
@click.option(
    "--repeats",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Timed calls per entry; the median is reported.",
)
@artifact_option("--artifact", "A .vmfb compiled elsewhere (its entries are what is benchmarked).")
@cache_dir_option()
def bench(
    checkpoint: Path | None,
    workdir: Path,
    target: str,
    contract: str,
    cuda_arch: str | None,
    kernels: str,
    mel: str | None,
    frame_buckets: tuple[int, ...],
    batches: tuple[int, ...],
    warmup: int,
    repeats: int,
    artifact: Path | None,
    cache_dir: Path | None,
) -> None:
    """Benchmark encode calls per (frames, batch) entry; prints JSON lines (a benchmark, not a test)."""
    from ...diagnostics.bench import bench_entries, print_records
    from ..encoder.encode import AudioEncoder
    from ..programs.artifacts import ArtifactCache
    from ..synthetic import write_random_checkpoint

    if checkpoint is None:
        checkpoint = workdir / "random-e4b"
        if not (checkpoint / "model.safetensors").is_file():
            say(f"writing a deterministic random e4b checkpoint to {checkpoint} ...")
            write_random_checkpoint(checkpoint, builtin_config("e4b"), seed=0)
    encoder = AudioEncoder(
        checkpoint,
        target=target,
        contract=contract,
        frame_buckets=frame_buckets or (2997,),
        clips_per_call=batches or (1, 8, 32),
        cuda_arch=cuda_arch,
        kernels=kernels,
        cache=ArtifactCache(cache_dir),
        progress=say,
        artifact=artifact,
        mel=mel,
    )
    print_records(bench_entries(encoder.session, warmup=warmup, repeats=repeats))


@main.command()
@checkpoint_option("A Gemma 3n checkpoint directory (BF16, transformers or mlx-vlm names) with its tokenizer.json.")
@click.option(
    "--prompt",
    default=None,
    help="The user's text. Place audio with <audio_soft_token> markers (one per "
    "AUDIO file, in order); without markers the audio comes first.",
)
@click.option("--prompt-file", type=EXISTING_FILE, default=None, help="Read the prompt text from this file instead.")
@click.option(
    "--input-ids",
    type=EXISTING_FILE,
    default=None,
    help="Already expanded token ids (.npy, or whitespace-separated integers) instead of a prompt: one run "
    "of 188 <audio_soft_token> ids per clip; no tokenizer is needed.",
)
@click.option("--no-chat-template", is_flag=True, help="Use the prompt as is (no <bos>/turn markers added).")
@capacity_option(
    "Context capacities to choose from (repeatable; the smallest that holds the prompt is used; "
    "default 256 512 1024 2048 4096 8192)."
)
@artifact_option("--prefill-artifact", PREFILL_ARTIFACT_HELP)
@output_option("The .npz to write: input_ids, inputs_embeds, per_layer_inputs, audio_rows.")
@encoder_options
@click.argument("audio", nargs=-1, type=EXISTING_FILE)
def prefill(
    checkpoint: Path,
    prompt: str | None,
    prompt_file: Path | None,
    input_ids: Path | None,
    no_chat_template: bool,
    capacities: tuple[int, ...],
    prefill_artifact: Path | None,
    output: Path,
    audio: tuple[Path, ...],
    **options,
) -> None:
    """Merge AUDIO into a prompt: the language model's prefill inputs (input embeddings + dense per-layer inputs).

    The prompt is expanded in Gemma 3n's chat format (each 30 s clip of audio becomes <start_of_audio>,
    188 <audio_soft_token> and <end_of_audio>) and tokenized with the checkpoint's tokenizer.json; the
    audio is encoded by the audio stage (--artifact: its .vmfb), then the prefill stage merges them.
    Writes input_ids int32 [L], inputs_embeds float32 [L, hidden], per_layer_inputs float32
    [L, layers, 256] and audio_rows int32 [L] (the audio row at each placeholder, -1 elsewhere).
    """
    import numpy as np

    from ..programs.artifacts import ArtifactCache

    given = [s for s in (prompt, prompt_file, input_ids) if s is not None]
    if len(given) > 1:
        raise click.UsageError("give one of --prompt, --prompt-file and --input-ids")
    if prompt_file is not None:
        prompt = prompt_file.read_text()
    max_seconds = options.get("max_seconds")
    started = time.perf_counter()
    with errors_as_messages():
        runner = prefill_stage(
            checkpoint, options, capacities, prefill_artifact, ArtifactCache(options.get("cache_dir"))
        )
        if input_ids is None:
            result = runner.prefill(prompt or "", audio, chat=not no_chat_template, max_seconds=max_seconds)
        else:
            ids = (
                np.load(input_ids)
                if input_ids.suffix == ".npy"
                else np.array(input_ids.read_text().split(), dtype=np.int64)
            ).reshape(-1)
            features = None
            if audio:
                clips = runner.encoder.clips_from_files(audio, max_seconds)
                features = runner.encoder.encode_clips(clips).audio_features
            result = runner.run(ids, features)
    output.parent.mkdir(parents=True, exist_ok=True)
    result.save(output)
    say(
        f"wrote {output}: {len(result.input_ids)} tokens ({int((result.audio_rows >= 0).sum())} audio rows) in "
        f"context capacity {result.capacity}, inputs_embeds {tuple(result.inputs_embeds.shape)}, per_layer_inputs "
        f"{tuple(result.per_layer_inputs.shape)} ({time.perf_counter() - started:.1f} s)"
    )


def _register_commands() -> None:
    """`gemma3n-iree transcribe` (runtime/commands/transcribe_cli.py) and `generate` (generate_cli.py) on the compiled
    decoder program, and `gemma3n-iree serve` (serve/cli.py)."""
    from ...serve.cli import serve
    from .generate_cli import make_generate_command
    from .transcribe_cli import compiled_decoder, make_transcribe_command

    main.add_command(make_transcribe_command(compiled_decoder))
    main.add_command(make_generate_command(compiled_decoder))
    main.add_command(serve)


_register_commands()
