"""The command-line layer every command shares: the options of `emit-gemma3n` (emitters/cli.py) and of every
`gemma3n-iree` command (runtime/commands/cli.py, runtime/commands/transcribe_cli.py, serve/cli.py), their path
types, the status messages and the one way a bad input becomes an error message -- declared once here, so every
command spells, types, defaults and explains them alike.  Where two commands explain an option differently, the
help text is the factory's parameter; everything else about the option is fixed here."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ...contracts.mel import MEL_CHOICES, MEL_HELP
from ...contracts.policy import CONTRACTS, DEFAULT_CONTRACT, PRODUCTION_CONTRACTS
from ...emitters.kernels import KERNEL_CHOICES, KERNELS_HELP
from ...model.audio_config import DEFAULT_FRAME_BUCKETS, MAX_CLIP_FRAMES

if TYPE_CHECKING:
    from ..programs.artifacts import ArtifactCache
    from ..text.prefill import AudioPrefill

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]

TARGETS = click.Choice(["llvm-cpu", "cuda"])
#: A file that must exist (audio, artifacts, prompts), a checkpoint directory, a file or folder to write.
EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
EXISTING_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
OUTPUT_FILE = click.Path(dir_okay=False, path_type=Path)
OUTPUT_DIR = click.Path(file_okay=False, path_type=Path)

RUN_TARGET_HELP = "Where to run: this machine's CPU or an NVIDIA GPU."
CONTRACT_HELP = "Numeric contract the artifact is compiled under."
CUDA_ARCH_HELP = "CUDA architecture (default sm_90: H100/H200)."
PREFILL_ARTIFACT_HELP = "A prefill .vmfb from `emit-gemma3n --stage prefill` (its entries define the capacities)."


def say(message: str) -> None:
    """A status message: on stderr, so stdout carries only results."""
    click.echo(message, err=True)


@contextmanager
def errors_as_messages() -> Iterator[None]:
    """A bad input (configuration, checkpoint, audio, prompt, bucket, artifact) or a failed compilation becomes
    one error message and exit status 1 instead of a traceback."""
    from ...emitters.compile_errors import CompileError
    from ..programs.session import SessionError

    try:
        yield
    except (ValueError, SessionError) as exc:  # ConfigError, CheckpointError, AudioError, PromptError, ...
        raise click.ClickException(str(exc)) from None
    except CompileError as exc:
        raise click.ClickException(f"compilation failed\n{exc}") from None


def prefill_stage(
    checkpoint: Path,
    options: dict[str, Any],
    capacities: tuple[int, ...],
    artifact: Path | None,
    cache: ArtifactCache,
) -> AudioPrefill:
    """The prefill stage (and its encoder) a command's `encoder_options`, `--capacity` and `--prefill-artifact`
    describe."""
    from ...emitters.prefill import DEFAULT_CAPACITIES
    from ..text.prefill import AudioPrefill

    return AudioPrefill(
        checkpoint,
        target=options["target"],
        contract=options["contract"],
        capacities=capacities or DEFAULT_CAPACITIES,
        cuda_arch=options.get("cuda_arch"),
        cache=cache,
        progress=say,
        artifact=artifact,
        encoder_options={
            "frame_buckets": options.get("frame_buckets") or DEFAULT_FRAME_BUCKETS,
            "clips_per_call": options.get("clips_per_call") or (1,),
            "artifact": options.get("artifact"),
            "mel": options.get("mel"),
        },
    )


def stacked(options: Sequence[Decorator]) -> Decorator:
    """The options as one decorator, in the order given (the order `--help` lists them)."""

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


def checkpoint_option(help: str, required: bool = True) -> Decorator:
    """`--checkpoint`: a Gemma 3n checkpoint directory."""
    return click.option("--checkpoint", type=EXISTING_DIR, required=required, help=help)


def target_option(help: str = RUN_TARGET_HELP, required: bool = False) -> Decorator:
    """`--target`: the IREE backend; the CPU by default, or `required` (then listed sorted, as `--contract`'s
    every-contract choice is)."""
    if required:
        return click.option("--target", type=click.Choice(sorted(TARGETS.choices)), required=True, help=help)
    return click.option("--target", type=TARGETS, default="llvm-cpu", show_default=True, help=help)


def contract_option(help: str = CONTRACT_HELP, diagnostic: bool = False) -> Decorator:
    """`--contract`: the numeric contract; the production ones, or with `diagnostic` every one."""
    choices = sorted(CONTRACTS) if diagnostic else PRODUCTION_CONTRACTS
    return click.option(
        "--contract", type=click.Choice(choices), default=DEFAULT_CONTRACT, show_default=True, help=help
    )


def cuda_arch_option(help: str = CUDA_ARCH_HELP) -> Decorator:
    """`--cuda-arch`: the CUDA architecture compiled for."""
    return click.option("--cuda-arch", default=None, help=help)


def kernels_option(help: str = KERNELS_HELP) -> Decorator:
    """`--kernels`: which committed GPU kernels the program links."""
    return click.option("--kernels", type=click.Choice(KERNEL_CHOICES), default="auto", show_default=True, help=help)


def mel_option(help: str = MEL_HELP) -> Decorator:
    """`--mel`: where the log-mel is computed."""
    return click.option("--mel", type=click.Choice(MEL_CHOICES), default=None, help=help)


def frames_option(help: str) -> Decorator:
    """`--frames`: the audio program's frame buckets (repeatable)."""
    return click.option("--frames", "frame_buckets", type=click.IntRange(1, MAX_CLIP_FRAMES), multiple=True, help=help)


def capacity_option(help: str) -> Decorator:
    """`--capacity`: context capacities (repeatable)."""
    return click.option("--capacity", "capacities", type=click.IntRange(1), multiple=True, help=help)


def artifact_option(flag: str, help: str) -> Decorator:
    """`--artifact`, `--prefill-artifact`, `--decoder-artifact`: a `.vmfb` run instead of compiling one."""
    return click.option(flag, type=EXISTING_FILE, default=None, help=help)


def cache_dir_option() -> Decorator:
    """`--cache-dir`: where compiled artifacts are cached."""
    return click.option(
        "--cache-dir",
        type=OUTPUT_DIR,
        default=None,
        help="Where compiled artifacts are cached (default $GEMMA3N_IREE_CACHE or ~/.cache/gemma3n-iree).",
    )


def output_option(help: str, flags: tuple[str, str] = ("--output", "-o")) -> Decorator:
    """`--output` / `-o`: the file a command writes (`flags` in the order its error messages name them)."""
    return click.option(*flags, type=OUTPUT_FILE, required=True, help=help)


def workdir_option(help: str) -> Decorator:
    """`--workdir`: where the random checkpoint (and the demo's result) are written."""
    return click.option("--workdir", type=OUTPUT_DIR, default=Path("gemma3n-demo"), show_default=True, help=help)


#: Options shared by every command that builds an encoder.
encoder_options = stacked(
    [
        target_option(),
        contract_option(),
        cuda_arch_option(),
        mel_option(),
        frames_option(f"Frame buckets to compile (repeatable; default {' '.join(map(str, DEFAULT_FRAME_BUCKETS))})."),
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
        cache_dir_option(),
        artifact_option(
            "--artifact",
            "Run this .vmfb (from emit-gemma3n, e.g. built elsewhere) instead of compiling; "
            "its entry points define the buckets.",
        ),
    ]
)


def pipeline_options(func: F) -> F:
    """Options of the commands that encode files through the parallel pipeline (encode, demo)."""
    from ..encoder.pipeline import default_workers

    return stacked(
        [
            click.option(
                "--workers",
                type=click.IntRange(1),
                default=None,
                help=f"Threads decoding, resampling and computing the host log-mel, overlapped with the "
                f"device calls (default: this machine's cores, {default_workers()} here).",
            ),
            click.option(
                "--quiet", "-q", is_flag=True, help="Print errors only: no progress line, no status messages."
            ),
        ]
    )(func)


def decoder_stage_options(sized_for: str) -> Decorator:
    """The options of the commands that run the prefill stage and a decoder program (transcribe, generate):
    `--capacity`, `--prefill-artifact`, `--decoder-artifact` (a prebuilt one instead of one compiled `sized_for`
    what the command decodes), `--kernels`, then `encoder_options`."""
    return stacked(
        [
            capacity_option("Prefill context capacities to compile (repeatable; default: 256 ... 8192)."),
            artifact_option(
                "--prefill-artifact", "Run this prefill .vmfb (emit-gemma3n --stage prefill) instead of compiling."
            ),
            artifact_option(
                "--decoder-artifact",
                f"Run this decoder .vmfb (emit-gemma3n --stage decoder) instead of compiling one sized for "
                f"{sized_for}; refused when its contract, prompt bucket or capacity do not fit.",
            ),
            kernels_option("Decoder program kernels. " + KERNELS_HELP),
            encoder_options,
        ]
    )


def max_new_tokens_option(default: int, per: str = "") -> Decorator:
    """`--max-new-tokens` of the commands that generate text (`per`: what the limit counts, e.g. " per 30 s
    window")."""
    return click.option(
        "--max-new-tokens",
        type=click.IntRange(1),
        default=default,
        show_default=True,
        help=f"Most tokens generated{per} (generation also stops at <end_of_turn> or <eos>).",
    )
