"""Audio files in, the language model's audio embeddings out (the Python API behind `encode`).

Each input is decoded, resampled to 16 kHz and cut into consecutive 30 s clips (never truncated);
each clip's log-mel features are computed on their own (or, for an artifact that computes them
itself, its samples are kept), padded with zeros into the smallest frame bucket that holds them, and
run through the compiled artifact several clips per call.  A clip's rows therefore never depend on
its neighbours or on the bucket it landed in.

`AudioEncoder.encode_files` runs the inputs through the parallel host pipeline (`runtime/encoder/pipeline.py`:
decoding and log-mel on a pool of worker threads, overlapped with the device calls); `encode_clips`
is the serial reference path (prefill and tests use it).  An input that cannot be used fails alone:
the others are still encoded, and :class:`EncodeFailed` names every failure and carries their result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from ...contracts.mel import resolve_mel
from ...contracts.policy import DEFAULT_CONTRACT, get_contract
from ...emitters.audio import AudioModuleSpec
from ...emitters.compile import parse_target
from ...emitters.kernels import select_kernels
from ...emitters.lowering import lowering_for
from ...model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP, DEFAULT_FRAME_BUCKETS
from ..audio import frontend
from ..programs.artifacts import ArtifactCache
from ..programs.session import DEVICE_FOR_TARGET
from .audio_session import AudioSession
from .batching import call_width
from .clips import Clip, EncodeError, EncodeResult, choose_bucket
from .pipeline import PipelineProgress, encode_files

Progress = Callable[[str], None]


def plan_calls(
    clips: Sequence[Clip], buckets: Sequence[int], clips_per_call: Sequence[int]
) -> list[tuple[int, int, list[int]]]:
    """(bucket, call width, clip indices) per call: clips grouped by bucket, widest calls first."""
    by_bucket: dict[int, list[int]] = {}
    for i, clip in enumerate(clips):
        by_bucket.setdefault(choose_bucket(clip.frames, buckets), []).append(i)
    calls = []
    for bucket, members in sorted(by_bucket.items()):
        while members:
            width = call_width(len(members), clips_per_call)
            calls.append((bucket, width, members[:width]))
            members = members[width:]
    return calls


class AudioEncoder:
    """A checkpoint's audio stage compiled for one target, with one resident copy of its weights."""

    def __init__(
        self,
        checkpoint: str | Path,
        target: str = "llvm-cpu",
        contract: str = DEFAULT_CONTRACT,
        frame_buckets: Sequence[int] = DEFAULT_FRAME_BUCKETS,
        clips_per_call: Sequence[int] = (1,),
        cuda_arch: str | None = None,
        cache: ArtifactCache | None = None,
        progress: Progress | None = None,
        artifact: str | Path | None = None,
        kernels: str = "auto",
        mel: str | None = None,
    ) -> None:
        """Compile (or reuse from the cache) the artifact for `checkpoint` and load it.

        `kernels` picks the committed GPU kernels (emitters/kernels.py): "auto" links the Hopper
        kernels (GEMM, lane sums, RMS norms, attention, light convolution, SiLU) on sm_90, "iree"
        keeps IREE's own code generation. `mel` says where the log-mel is computed
        (contracts/mel.py MEL_CHOICES; None: the target's default, DEFAULT_MEL).

        With `artifact`, a `.vmfb` compiled elsewhere (e.g. by `emit-gemma3n` on a build machine) is
        loaded instead and no compiler is needed; its entry points define the buckets.
        """
        from ..checkpoint import open_checkpoint

        self.progress = progress or (lambda _msg: None)
        self.checkpoint = open_checkpoint(checkpoint)
        self.checkpoint.check_finite()  # NaN/Inf weights (or overflowing quantization scales) are refused
        self.config = self.checkpoint.config
        device = DEVICE_FOR_TARGET[target]
        front_end = resolve_mel(mel, target)
        if artifact is None:
            compile_target, policy = parse_target(target, cuda_arch), get_contract(contract)
            spec = AudioModuleSpec(
                self.config,
                policy,
                tuple(frame_buckets),
                tuple(clips_per_call),
                self.checkpoint.layout,
                quantization=self.checkpoint.quantization,
                quantized=frozenset(self.checkpoint.quantized_names()),
                kernels=select_kernels(kernels, compile_target, policy),
                mel=front_end,
                lowering=lowering_for(compile_target, policy),
            )
            built = (cache or ArtifactCache()).get_or_build(
                spec, compile_target, self.checkpoint.schema_digest(), self.progress
            )
            artifact = built.path
        self.artifact = Path(artifact)
        self.session = AudioSession(self.artifact, self.checkpoint.files, device=device)
        if mel is not None and self.session.mel != front_end:
            raise EncodeError(
                f"{self.artifact}: the artifact computes its log-mel on the "
                f"{'device' if self.session.mel.on_device else 'host'} ({self.session.mel.name}), "
                f"not {front_end.name} as asked"
            )
        self.frame_buckets = tuple(sorted({f for f, _ in self.session.buckets}))
        self.clips_per_call = tuple(sorted({c for _, c in self.session.buckets}))

    def close(self) -> None:
        """Release the program and its resident weights on the device (`LoadedProgram.close`)."""
        self.session.close()

    # ------------------------------------------------------------------ inputs
    def decode_file(self, path: str | Path, max_seconds: float | None = None) -> np.ndarray:
        """One input as 16 kHz mono float32 samples (`decode.decode_audio`), within `max_seconds`."""
        samples, _rate = frontend.load_audio(path)
        seconds = len(samples) / frontend.SAMPLE_RATE
        if max_seconds is not None and seconds > max_seconds:
            raise EncodeError(f"{path}: {seconds:.1f} s of audio exceeds --max-seconds {max_seconds:g}")
        return samples

    def clips_from_files(self, paths: Iterable[str | Path], max_seconds: float | None = None) -> list[Clip]:
        """Every input's clips, one input after the other (the serial path; the first unusable input raises)."""
        clips: list[Clip] = []
        for source, path in enumerate(paths):
            clips += self.clips_from_samples(self.decode_file(path, max_seconds), source)
        return clips

    def clips_from_samples(self, samples: np.ndarray, source: int = 0) -> list[Clip]:
        """16 kHz mono samples -> consecutive <= 30 s clips with what the artifact reads: each clip's
        log-mel features (host mel) or its samples (device mel)."""
        if not self.session.mel.on_device:
            samples = frontend.check_samples(samples, "clip_features")
        return [self.make_clip(piece, source) for piece in frontend.split_clips(samples)]

    def make_clip(self, piece: frontend.Clip, source: int) -> Clip:
        """What one piece of an input puts in its call: its log-mel (host mel: `frontend.log_mel`, the
        feature extractor's computation) or its samples (device mel)."""
        if self.session.mel.on_device:
            return Clip(source, float(piece.start_s), None, frontend.num_frames(len(piece.samples))[1], piece.samples)
        features, valid = frontend.log_mel(piece.samples)
        return Clip(source, float(piece.start_s), features, int(valid))

    # ------------------------------------------------------------------ encoding
    def encode_clips(self, clips: Sequence[Clip], on_clip: Callable[[int], None] | None = None) -> EncodeResult:
        """Encode clips in bucketed calls, one call after the other (the serial path); `on_clip(n)` is
        told after every call how many finished."""
        n = len(clips)
        rows = AUDIO_SOFT_TOKENS_PER_CLIP
        features = np.zeros((n, rows, self.config.text_hidden_size), np.float32)
        hidden = np.zeros((n, rows, self.config.hidden_size), np.float32)
        valid = np.zeros(n, np.int32)
        calls = plan_calls(clips, self.frame_buckets, self.clips_per_call)
        for bucket, width, members in calls:
            out = self.session.run(*self.call_inputs(bucket, width, [clips[i] for i in members]))
            for slot, index in enumerate(members):
                features[index] = out["audio_features"][slot]
                hidden[index] = out["encoder_hidden"][slot]
                valid[index] = out["valid_tokens"][slot]
            if on_clip is not None:
                on_clip(len(members))
        return EncodeResult(
            features,
            hidden,
            valid,
            np.array([c.source for c in clips], np.int32),
            np.array([c.start_s for c in clips], np.float32),
        )

    def call_inputs(self, bucket: int, width: int, clips: Sequence[Clip]) -> tuple[np.ndarray, np.ndarray]:
        """One call's inputs: each clip's rows (features or samples) in its slot, zeros past them and in
        the padding slots, and the count of real rows per slot (0 for padding)."""
        inputs = np.zeros((width, *self.session.input_shape(bucket)), np.float32)
        counts = np.zeros(width, np.int32)
        for slot, clip in enumerate(clips):
            rows, counts[slot] = clip.call_input()
            inputs[slot, : len(rows)] = rows
        return inputs, counts

    def encode_files(
        self,
        paths: Sequence[str | Path],
        max_seconds: float | None = None,
        *,
        workers: int | None = None,
        on_progress: Callable[[PipelineProgress], None] | None = None,
    ) -> EncodeResult:
        """Encode audio files through the parallel host pipeline (`runtime/encoder/pipeline.py`): decoding,
        resampling and the host log-mel on `workers` threads (default: this process's cores),
        overlapped with the device calls.  The result is bit for bit what the serial path
        (`encode_clips(clips_from_files(paths))`) gives, clips in input order.

        An input that cannot be decoded, exceeds `max_seconds` or fits no frame bucket fails alone:
        the others are encoded, then :class:`EncodeFailed` is raised naming every failure, with the
        others' result as `.result`.  `on_progress` is called from this thread after each call."""
        return encode_files(self, paths, max_seconds=max_seconds, workers=workers, on_progress=on_progress)
