"""The command-line options and messages shared by the `gemma3n-iree` commands (runtime/commands/cli.py, serve/cli.py) and
`gemma3n-iree transcribe` (runtime/commands/transcribe_cli.py): declared once here, so every command spells, defaults and
explains them alike."""

from __future__ import annotations

from pathlib import Path

import click

from ...contracts.mel import MEL_CHOICES, MEL_HELP
from ...contracts.policy import DEFAULT_CONTRACT, PRODUCTION_CONTRACTS
from ...model.audio_config import DEFAULT_FRAME_BUCKETS, MAX_CLIP_FRAMES

TARGETS = click.Choice(["llvm-cpu", "cuda"])


def say(message: str) -> None:
    """A status message: on stderr, so stdout carries only results."""
    click.echo(message, err=True)


def encoder_options(func):
    """Options shared by every command that builds an encoder."""
    options = [
        click.option(
            "--target",
            type=TARGETS,
            default="llvm-cpu",
            show_default=True,
            help="Where to run: this machine's CPU or an NVIDIA GPU.",
        ),
        click.option(
            "--contract",
            type=click.Choice(PRODUCTION_CONTRACTS),
            default=DEFAULT_CONTRACT,
            show_default=True,
            help="Numeric contract the artifact is compiled under.",
        ),
        click.option("--cuda-arch", default=None, help="CUDA architecture (default sm_90: H100/H200)."),
        click.option("--mel", type=click.Choice(MEL_CHOICES), default=None, help=MEL_HELP),
        click.option(
            "--frames",
            "frame_buckets",
            type=click.IntRange(1, MAX_CLIP_FRAMES),
            multiple=True,
            help=f"Frame buckets to compile (repeatable; default {' '.join(map(str, DEFAULT_FRAME_BUCKETS))}).",
        ),
        click.option(
            "--clips-per-call",
            type=click.IntRange(1, 256),
            multiple=True,
            help="Clips batched per call (repeatable; default 1).",
        ),
        click.option(
            "--max-seconds",
            type=float,
            default=None,
            help="Refuse inputs longer than this (longer audio is otherwise split into 30 s clips).",
        ),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Where compiled artifacts are cached (default $GEMMA3N_IREE_CACHE or ~/.cache/gemma3n-iree).",
        ),
        click.option(
            "--artifact",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            default=None,
            help="Run this .vmfb (from emit-gemma3n, e.g. built elsewhere) instead of compiling; "
            "its entry points define the buckets.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def pipeline_options(func):
    """Options of the commands that encode files through the parallel pipeline (encode, demo)."""
    from ..encoder.pipeline import default_workers

    options = [
        click.option(
            "--workers",
            type=click.IntRange(1),
            default=None,
            help=f"Threads decoding, resampling and computing the host log-mel, overlapped with the "
            f"device calls (default: this machine's cores, {default_workers()} here).",
        ),
        click.option("--quiet", "-q", is_flag=True, help="Print errors only: no progress line, no status messages."),
    ]
    for option in reversed(options):
        func = option(func)
    return func
