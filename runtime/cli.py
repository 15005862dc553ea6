"""`gemma3n-iree`: encode audio into the Gemma 3n language model's audio embeddings with IREE."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..config import DEFAULT_FRAME_BUCKETS, MAX_CLIP_FRAMES, builtin_config
from ..contracts.policy import CONTRACTS, DEFAULT_CONTRACT, PRODUCTION_CONTRACTS

TARGETS = click.Choice(["llvm-cpu", "cuda"])


def _say(message: str) -> None:
    click.echo(message, err=True)


def _encoder_options(func):
    """Options shared by every command that builds an encoder."""
    options = [
        click.option("--target", type=TARGETS, default="llvm-cpu", show_default=True,
                     help="Where to run: this machine's CPU or an NVIDIA GPU."),
        click.option("--contract", type=click.Choice(PRODUCTION_CONTRACTS), default=DEFAULT_CONTRACT,
                     show_default=True, help="Numeric contract the artifact is compiled under."),
        click.option("--cuda-arch", default=None, help="CUDA architecture (default sm_90: H100/H200)."),
        click.option("--frames", "frame_buckets", type=click.IntRange(1, MAX_CLIP_FRAMES), multiple=True,
                     help=f"Frame buckets to compile (repeatable; default {' '.join(map(str, DEFAULT_FRAME_BUCKETS))})."),
        click.option("--clips-per-call", type=click.IntRange(1, 256), multiple=True,
                     help="Clips batched per call (repeatable; default 1)."),
        click.option("--max-seconds", type=float, default=None,
                     help="Refuse inputs longer than this (longer audio is otherwise split into 30 s clips)."),
        click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Where compiled artifacts are cached (default $GEMMA3N_IREE_CACHE or ~/.cache/gemma3n-iree)."),
        click.option("--artifact", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                     help="Run this .vmfb (from emit-gemma3n, e.g. built elsewhere) instead of compiling; "
                          "its entry points define the buckets."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _encode(checkpoint: Path, audio: tuple[Path, ...], output: Path, **options) -> None:
    """Run `_encode_unchecked`; a bad input (configuration, checkpoint, audio, bucket, artifact, compile)
    becomes one error message and exit status 1 instead of a traceback."""
    from ..emitters.compile import CompileError
    from .session import SessionError

    try:
        _encode_unchecked(checkpoint, audio, output, **options)
    except (ValueError, SessionError) as exc:  # ConfigError, CheckpointError, AudioError, EncodeError, ...
        raise click.ClickException(str(exc)) from None
    except CompileError as exc:
        raise click.ClickException(f"compilation failed\n{exc}") from None


def _encode_unchecked(checkpoint: Path, audio: tuple[Path, ...], output: Path, target: str, contract: str,
                      cuda_arch: str | None, frame_buckets: tuple[int, ...], clips_per_call: tuple[int, ...],
                      max_seconds: float | None, cache_dir: Path | None, artifact: Path | None) -> None:
    from .artifacts import ArtifactCache
    from .encode import AudioEncoder

    started = time.perf_counter()
    encoder = AudioEncoder(checkpoint, target=target, contract=contract,
                           frame_buckets=frame_buckets or DEFAULT_FRAME_BUCKETS,
                           clips_per_call=clips_per_call or (1,), cuda_arch=cuda_arch,
                           cache=ArtifactCache(cache_dir), progress=_say, artifact=artifact)
    ready = time.perf_counter()
    _say(f"artifact {encoder.artifact} ready in {ready - started:.1f} s")
    clips = encoder.clips_from_files(audio, max_seconds)
    _say(f"{len(audio)} input(s) -> {len(clips)} clip(s) of at most 30 s")
    with click.progressbar(length=len(clips), label="encoding", file=click.get_text_stream("stderr")) as bar:
        result = encoder.encode_clips(clips, on_clip=bar.update)
    output.parent.mkdir(parents=True, exist_ok=True)
    result.save(output)
    done = time.perf_counter()
    _say(f"wrote {output}: audio_features {tuple(result.audio_features.shape)}, valid tokens "
         f"{result.valid_tokens.tolist()} ({done - ready:.1f} s to encode)")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Run Gemma 3n's audio path (audio tower + audio embedder) as compiled IREE artifacts.

    Artifacts are compiled on first use for the checkpoint's configuration and cached; weights are
    read straight from the checkpoint's safetensors files.
    """


@main.command()
@click.option("--checkpoint", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="A Gemma 3n checkpoint directory (transformers or mlx-vlm layout).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The .npz to write: audio_features, encoder_hidden, valid_tokens, clip_source, clip_start_s.")
@_encoder_options
@click.argument("audio", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def encode(checkpoint: Path, output: Path, audio: tuple[Path, ...], **options) -> None:
    """Encode AUDIO files (WAV, FLAC, OGG, MP3...) into the language model's audio embeddings.

    Every input becomes one or more 30 s clips (in input order); each clip gives 188 rows:
    soft embeddings for its valid tokens, then the hard embedding of audio row 127 (what the
    language model receives as padding).
    """
    _encode(checkpoint, audio, output, **options)


@main.command()
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("gemma3n-demo"), show_default=True,
              help="Where the random checkpoint and the result are written.")
@click.option("--builtin", type=click.Choice(["e4b", "e2b", "tiny"]), default="e4b", show_default=True,
              help="Configuration of the random checkpoint (real E4B shapes by default).")
@_encoder_options
def demo(workdir: Path, builtin: str, **options) -> None:
    """Encode the bundled speech sample with a deterministic random checkpoint of the real shapes.

    Real weights cannot be downloaded here, so the demo writes random weights (seed 0) in the
    transformers checkpoint layout, then runs exactly what `encode` runs.
    """
    from .synthetic import write_random_checkpoint

    checkpoint = workdir / f"random-{builtin}"
    if not (checkpoint / "model.safetensors").is_file():
        _say(f"writing a deterministic random {builtin} checkpoint to {checkpoint} ...")
        write_random_checkpoint(checkpoint, builtin_config(builtin), seed=0)
    sample = Path(__file__).resolve().parent / "data" / "sample_speech.wav"
    _encode(checkpoint, (sample,), workdir / "sample_speech.npz", **options)


@main.command()
@click.option("--checkpoint", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="A Gemma 3n checkpoint directory; only the audio tower and audio embedder tensors are read.")
@click.option("--target", type=TARGETS, default="llvm-cpu", show_default=True)
@click.option("--contract", type=click.Choice(sorted(CONTRACTS)), default=DEFAULT_CONTRACT, show_default=True,
              help="Contract the stage artifact is compiled under (diagnostic variants allowed).")
@click.option("--cuda-arch", default=None, help="CUDA architecture (default sm_90).")
@click.option("--reference", type=click.Choice(["contract", "transformers"]), default="contract", show_default=True,
              help="contract: the numpy emulation (bit-level reference, also checked stage by stage on the "
                   "artifact's own inputs); transformers: Hugging Face transformers in float32 (semantic).")
@click.option("--clip", type=click.IntRange(0), default=0, show_default=True, help="Which 30 s clip of AUDIO.")
@click.option("--max-abs", type=float, default=5e-3, show_default=True, help="Threshold on a stage's max |diff|.")
@click.option("--rms", type=float, default=5e-4, show_default=True, help="Threshold on a stage's RMS diff.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the full report.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write a per-stage error plot (PNG).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.argument("audio", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def diagnose(checkpoint: Path, target: str, contract: str, cuda_arch: str | None, reference: str, clip: int,
             max_abs: float, rms: float, json_path: Path | None, plot: Path | None, cache_dir: Path | None,
             audio: Path) -> None:
    """Compare every named stage of the artifact with a reference; report the first divergence.

    Exits with status 1 when a stage exceeds the thresholds (every stage is still reported). For
    linear layers and convolutions, differing elements are classified against the accumulation
    envelope: inside = a legitimate F32 summation order, outside = a bug.
    """
    from .artifacts import ArtifactCache
    from .diagnose import Thresholds
    from .diagnose_run import run_diagnosis

    if plot is not None:
        try:
            import matplotlib  # noqa: F401 - checked before the long run, used by Report.plot
        except ImportError:
            raise click.ClickException("--plot needs matplotlib: pip install 'gemma3n-iree[plot]'") from None
    report = run_diagnosis(checkpoint, audio, target=target, contract=contract, reference=reference,
                           thresholds=Thresholds(max_abs, rms), clip=clip, cuda_arch=cuda_arch,
                           cache=ArtifactCache(cache_dir), progress=_say)
    click.echo(report.table())
    if json_path is not None:
        report.write_json(json_path)
        _say(f"wrote {json_path}")
    if plot is not None:
        report.plot(plot)
        _say(f"wrote {plot}")
    if report.first_divergence is not None:
        raise SystemExit(1)
