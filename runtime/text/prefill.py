"""A prompt with audio in, the language model's prefill inputs out (the Python API behind `prefill`).

    prefill = AudioPrefill("~/models/gemma-3n-E4B-it", target="cuda")
    result = prefill.prefill("Transcribe this audio.", ["talk.flac"])    # PrefillResult
    result.save("prefill.npz")

Three steps: the audio files are encoded by the encoder stage (`runtime.encoder.encode.AudioEncoder`: 188 rows
per 30 s clip), the prompt is expanded and tokenized (`runtime.text.tokens`), and the prefill stage
(`emitters.prefill`) merges the audio rows into the token embeddings and computes the dense per-layer
inputs.  The two large language-model tables never reach the device: `embed_tokens` (262400 x hidden)
and `embed_tokens_per_layer` (262144 x layers*256; 4-4.7 GB in BF16) stay memory-mapped in the
checkpoint and only the prompt's rows are gathered on the host and passed in.  The prefill module's
resident weights are the audio embedder's hard path and `per_layer_model_projection` /
`per_layer_projection_norm` (about 43 MB for E4B).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from ...contracts.policy import DEFAULT_CONTRACT, get_contract
from ...emitters import entries
from ...emitters.compile import Target, parse_target
from ...emitters.lowering import lowering_for
from ...emitters.prefill import (
    DEFAULT_CAPACITIES,
    TEXT_PREFIX,
    PrefillModuleSpec,
    emit_prefill_module,
    resident_weight_specs,
    text_weight_specs,
)
from ...files import atomic_writer
from ...model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP
from ...model.audio_weights import HF_LAYOUT, MLX_LAYOUT, WeightLayout
from ...model.checkpoint_config import CheckpointConfig
from ...model.text_config import TextConfig
from ..checkpoint import CheckpointSchemaError
from ..programs.artifacts import ArtifactCache, BuiltArtifact, program_identity
from ..programs.session import DEVICE_FOR_TARGET, LoadedProgram, SessionError
from ..safetensors_files import TensorInfo, find_safetensors_files, read_safetensors_header
from .tokens import (
    ContextCapacityError,
    PromptError,
    audio_row_map,
    check_ids,
    expand_prompt,
    expand_text,
    load_tokenizer,
)

Progress = Callable[[str], None]
BF16 = np.dtype(ml_dtypes.bfloat16)


# ---------------------------------------------------------------------------------------------- host tables


class TextTables:
    """The four language-model tensors the prefill needs, validated from the safetensors headers.

    `embed_tokens` and `embed_tokens_per_layer` are read only through a read-only memory map of their
    own bytes, row by row (`rows`); the other two are bound as IREE parameters by the module.
    """

    def __init__(self, directory: str | Path, cfg: TextConfig, layout: WeightLayout = HF_LAYOUT) -> None:
        self.directory = Path(directory)
        self.cfg = cfg
        self.layout = layout
        files, _, _ = find_safetensors_files(self.directory)
        everything: dict[str, TensorInfo] = {}
        for path in files:
            everything.update(read_safetensors_header(path))
        self.specs = text_weight_specs(cfg, layout)
        problems, missing = [], []
        self.tensors: dict[str, TensorInfo] = {}
        for logical, spec in self.specs.items():
            info = everything.get(spec.key)
            if info is None:
                other = MLX_LAYOUT if layout is HF_LAYOUT else HF_LAYOUT
                alt = TEXT_PREFIX[other.name] + spec.key[len(TEXT_PREFIX[layout.name]) :]
                hint = f" (the checkpoint has {alt}: the {other.name} layout)" if alt in everything else ""
                missing.append(f"{spec.key}{hint}")
                continue
            base = spec.key.removesuffix(".weight")
            if base + ".scales" in everything:
                problems.append(
                    f"{spec.key}: affine-quantized ({base}.scales exists); the prefill stage reads "
                    f"BF16 language-model tensors only"
                )
            elif info.dtype != "BF16" or info.shape != spec.shape:
                problems.append(f"{spec.key}: {info.dtype} {list(info.shape)}, expected BF16 {list(spec.shape)}")
            self.tensors[logical] = info
        if missing or problems:
            lines = [f"  - missing: {m}" for m in missing] + [f"  - {p}" for p in problems]
            raise CheckpointSchemaError(
                f"{self.directory}: the language-model tensors the prefill stage needs do not match its config "
                f"({cfg.num_hidden_layers} layers x {cfg.hidden_size_per_layer_input}, hidden {cfg.hidden_size}, "
                f"{layout.name} layout):\n" + "\n".join(lines),
                missing=missing,
                mismatched=problems,
            )
        self._maps: dict[str, np.ndarray] = {}

    def read(self, logical: str) -> np.ndarray:
        """One of the four tensors by logical name, as a read-only BF16 memory map (nothing is read yet)."""
        table = self._maps.get(logical)
        if table is None:
            info = self.tensors[logical]
            table = np.memmap(info.file, dtype=BF16, mode="r", offset=info.offsets[0], shape=info.shape)
            self._maps[logical] = table
        return table

    def text_rows(self, ids: np.ndarray, capacity: int) -> np.ndarray:
        """bf16 [capacity, hidden]: `embed_tokens[id]` for the prompt, zero rows past it."""
        out = np.zeros((capacity, self.cfg.hidden_size), BF16)
        out[: len(ids)] = self.read("text.embed_tokens")[np.asarray(ids, np.int64)]
        return out

    def ple_rows(self, ids: np.ndarray, capacity: int) -> np.ndarray:
        """bf16 [capacity, layers*256]: `embed_tokens_per_layer[id']`, id' = id inside the per-layer vocabulary, else 0."""
        ids = np.asarray(ids, np.int64)
        rows = np.where((ids >= 0) & (ids < self.cfg.vocab_size_per_layer_input), ids, 0)
        out = np.zeros((capacity, self.cfg.ple_width), BF16)
        out[: len(ids)] = self.read("text.embed_tokens_per_layer")[rows]
        return out

    def resident(self, name: str) -> TensorInfo:
        return self.tensors[name]


# ---------------------------------------------------------------------------------------------- session


@dataclass(frozen=True)
class PrefillEntry:
    name: str
    capacity: int
    clips: int
    outputs: tuple[str, ...]


class PrefillSession(LoadedProgram):
    """One loaded prefill artifact: its resident weights (IREE parameters) and its entry points."""

    def __init__(
        self,
        vmfb: bytes | str | Path,
        parameter_files: Sequence[str | Path],
        device: str = "local-task",
        scope: str = "model",
    ) -> None:
        super().__init__(vmfb, parameter_files, device, scope)
        self.entries: dict[tuple[int, int], PrefillEntry] = {}
        for name, entry in self.entry_points(entries.PrefillEntry).items():
            self.entries[(entry.capacity, entry.clips)] = PrefillEntry(
                name, entry.capacity, entry.clips, self.output_names(name)
            )

    def run(
        self,
        capacity: int,
        clips: int,
        input_ids: np.ndarray,
        text_rows: np.ndarray,
        ple_rows: np.ndarray,
        audio_rows: np.ndarray | None,
        row_map: np.ndarray | None,
        length: int,
    ) -> dict[str, np.ndarray]:
        entry = self.entries.get((capacity, clips))
        if entry is None:
            raise SessionError(
                f"no prefill entry for capacity {capacity} x {clips} clip(s); the artifact has "
                + ", ".join(f"{c}x{a}" for c, a in sorted(self.entries))
            )
        args = [
            np.ascontiguousarray(input_ids, np.int32),
            np.ascontiguousarray(text_rows, BF16),
            np.ascontiguousarray(ple_rows, BF16),
        ]
        if clips:
            args += [np.ascontiguousarray(audio_rows, np.float32), np.ascontiguousarray(row_map, np.int32)]
        args.append(np.array(length, np.int32))
        return self.invoke(entry.name, entry.outputs, *args)


def build_prefill_artifact(
    cache: ArtifactCache, spec: PrefillModuleSpec, target: Target, weight_schema: str, progress: Progress | None = None
) -> BuiltArtifact:
    """Compile (or reuse, verified) the prefill artifact of `spec` in the artifact cache's directory."""
    mlir = emit_prefill_module(spec)
    identity = program_identity(mlir, target, spec.contract.identity(), spec.identity(), weight_schema)
    what = f"prefill entries {', '.join(f'{c}x{a}' for c, a in spec.entries)}"
    return cache.build("prefill", mlir, identity, target, what, progress)


# ---------------------------------------------------------------------------------------------- API


@dataclass
class PrefillResult:
    input_ids: np.ndarray  # int32 [L]
    inputs_embeds: np.ndarray  # float32 [L, hidden]
    per_layer_inputs: np.ndarray  # float32 [L, layers, 256]
    audio_rows: np.ndarray  # int32 [L]: row of the audio features placed there (clip*188 + token), -1 elsewhere
    capacity: int
    stages: dict[str, np.ndarray] | None = None  # diagnostics builds only (full capacity)

    def save(self, path: str | Path) -> None:
        """Write the four arrays as an .npz, atomically (`np.savez`'s naming: `.npz` is appended
        to a name without it)."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        with atomic_writer(path) as handle:
            np.savez(
                handle,
                input_ids=self.input_ids,
                inputs_embeds=self.inputs_embeds,
                per_layer_inputs=self.per_layer_inputs,
                audio_rows=self.audio_rows,
            )


class AudioPrefill:
    """A checkpoint's prefill stage for one target (plus its encoder stage, built when audio is given)."""

    def __init__(
        self,
        checkpoint: str | Path,
        target: str = "llvm-cpu",
        contract: str = DEFAULT_CONTRACT,
        capacities: Sequence[int] = DEFAULT_CAPACITIES,
        cuda_arch: str | None = None,
        cache: ArtifactCache | None = None,
        progress: Progress | None = None,
        artifact: str | Path | None = None,
        encoder: object | None = None,
        encoder_options: dict | None = None,
        stages: bool = False,
    ) -> None:
        """`artifact`: a prefill `.vmfb` compiled elsewhere (emit-gemma3n --stage prefill); otherwise each
        needed (capacity, clips) entry is compiled on first use and cached.  `encoder`: an
        `AudioEncoder` to reuse; otherwise one is built on first use with `encoder_options`
        (keyword arguments of `AudioEncoder`)."""
        from ..checkpoint import open_checkpoint

        self.directory = Path(checkpoint)
        self.progress = progress or (lambda _msg: None)
        self.checkpoint = open_checkpoint(self.directory)
        if self.checkpoint.quantized_names():
            raise CheckpointSchemaError(
                f"{self.directory}: quantized audio embedder weights "
                f"({', '.join(self.checkpoint.quantized_names())}) are not supported by the "
                f"prefill stage yet; use a BF16 checkpoint"
            )
        self.audio_config = self.checkpoint.config
        self.text = CheckpointConfig.read(self.directory).text
        self.tables = TextTables(self.directory, self.text, self.checkpoint.layout)
        self.target, self.contract, self.cuda_arch, self.stages = target, get_contract(contract), cuda_arch, stages
        self.capacities = tuple(sorted(set(capacities)))
        self.cache = cache or ArtifactCache()
        self.device = DEVICE_FOR_TARGET[target]
        self._artifact = Path(artifact) if artifact is not None else None
        self._session: PrefillSession | None = None  # the resident program
        #: entry -> the program holding it (compiled or found in the cache)
        self._built: dict[tuple[int, int], Path] = {}
        self._encoder = encoder
        self._owns_encoder = encoder is None  # built here on first use: closed with this stage
        self._encoder_options = dict(encoder_options or {})
        self._tokenizer = None
        specs = resident_weight_specs(self.audio_config, self.text, self.checkpoint.layout)
        infos = [
            self.checkpoint.tensors[s.key] if s.key in self.checkpoint.tensors else self.tables.resident(s.logical)
            for s in specs
        ]
        self.parameter_files = sorted({info.file for info in infos})
        self.weight_schema = hashlib.sha256(
            "".join(f"{s.key}:{i.dtype}:{list(i.shape)}\n" for s, i in zip(specs, infos)).encode()
        ).hexdigest()

    # ------------------------------------------------------------------ pieces
    @property
    def tokenizer(self):
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.directory, self.text)
        return self._tokenizer

    @property
    def encoder(self):
        if self._encoder is None:
            from ..encoder.encode import AudioEncoder

            options = {
                "target": self.target,
                "contract": self.contract.name,
                "cuda_arch": self.cuda_arch,
                "cache": self.cache,
                "progress": self.progress,
                **self._encoder_options,
            }
            self._encoder = AudioEncoder(self.directory, **options)
        return self._encoder

    def expand(
        self, prompt: str, clips_per_file: Sequence[int], chat: bool = True, system: str | None = None
    ) -> np.ndarray:
        """The expanded, tokenized and validated prompt (see `runtime.text.tokens`)."""
        return expand_prompt(self.tokenizer, self.text, prompt, clips_per_file, chat, system)

    def expand_text(self, text: str, clips_per_file: Sequence[int]) -> np.ndarray:
        """Prompt text already in its final form (a conversation rendered by `tokens.render_chat`) with one
        marker per audio file, expanded, tokenized and validated (`tokens.expand_text`)."""
        return expand_text(self.tokenizer, self.text, text, clips_per_file)

    def capacity_for(self, length: int, clips: int) -> int:
        if self._artifact is not None:
            available = sorted(c for c, a in self._load(None).entries if a == clips)
        else:
            available = list(self.capacities)
        fitting = [c for c in available if c >= length]
        if not fitting:
            raise ContextCapacityError(
                f"the expanded prompt has {length} tokens, more than the largest context "
                f"capacity for {clips} clip(s) ({max(available) if available else 'none'})"
            )
        return fitting[0]

    def entries_at_hand(self) -> tuple[tuple[int, int], ...]:
        """The (capacity, clips) entries a call can run without compiling or loading another program: the resident
        program's (every entry of a prebuilt artifact; none before the first call of a stage built here)."""
        if self._artifact is not None:
            self._load(None)
        return tuple(sorted(self._session.entries)) if self._session is not None else ()

    def _build(self, entries: Sequence[tuple[int, int]]) -> Path:
        """One program holding `entries` (its spec's capacities x clip counts, where they fit), compiled or found in
        the cache; every entry it holds is then found in it."""
        target = parse_target(self.target, self.cuda_arch)
        spec = PrefillModuleSpec(
            self.audio_config,
            self.text,
            self.contract,
            tuple(sorted({capacity for capacity, _ in entries})),
            tuple(sorted({clips for _, clips in entries})),
            self.checkpoint.layout,
            self.stages,
            lowering_for(target, self.contract),
        )
        path = build_prefill_artifact(self.cache, spec, target, self.weight_schema, self.progress).path
        self._built.update(dict.fromkeys(spec.entries, path))
        return path

    def prepare(self, *entries: tuple[int, int]) -> None:
        """Compile (or find in the cache) one program holding the (capacity, clips) `entries` without loading it, so
        a server compiles on a worker thread and its device thread only loads (a no-op with a prefill artifact).
        Entries prepared together are one program: calls of any of them find it resident."""
        held = {self._built.get(entry) for entry in entries}  # the programs holding them now
        if self._artifact is None and (None in held or len(held) > 1):
            self._build(entries)

    def _load(self, key: tuple[int, int] | None) -> PrefillSession:
        """The session holding entry `key` (one prefill program is kept resident at a time)."""
        if self._session is not None and (self._artifact is not None or key in self._session.entries):
            return self._session
        if self._artifact is not None:
            path: Path = self._artifact
        else:
            assert key is not None
            path = self._built.get(key) or self._build([key])
        self._close_session()  # release the previous program's resident weights first
        self._session = PrefillSession(path, self.parameter_files, device=self.device)
        return self._session

    def _close_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def close(self) -> None:
        """Release the resident prefill program, and the encoder when this stage built it (`LoadedProgram.close`);
        a later `run` loads the program again."""
        self._close_session()
        if self._owns_encoder and self._encoder is not None:
            self._encoder.close()
            self._encoder = None

    # ------------------------------------------------------------------ running
    def run(
        self, input_ids: np.ndarray, audio_features: np.ndarray | None = None, capacity: int | None = None
    ) -> PrefillResult:
        """Prefill tensors for already-expanded token ids and the encoder's `audio_features` [N, 188, hidden],
        in the entry of the smallest capacity that holds them (or `capacity`, checked to hold them)."""
        ids = check_ids(np.asarray(input_ids), self.text)
        audio_features = self._features(audio_features)
        clips = audio_features.shape[0]
        row_map = audio_row_map(ids, self.text, clips)
        length = len(ids)
        if length == 0:
            raise PromptError("the prompt has no tokens")
        if capacity is None:
            capacity = self.capacity_for(length, clips)
        elif capacity < length:
            raise ContextCapacityError(f"the expanded prompt has {length} tokens, more than capacity {capacity}")
        session = self._load((capacity, clips))
        padded_ids = np.zeros(capacity, np.int32)
        padded_ids[:length] = ids
        padded_map = np.full(capacity, -1, np.int32)
        padded_map[:length] = row_map
        out = session.run(
            capacity,
            clips,
            padded_ids,
            self.tables.text_rows(ids, capacity),
            self.tables.ple_rows(ids, capacity),
            audio_features.reshape(-1, self.text.hidden_size),
            padded_map,
            length,
        )
        stages = {k: v for k, v in out.items() if k not in ("inputs_embeds", "per_layer_inputs")} or None
        return PrefillResult(
            ids, out["inputs_embeds"][:length], out["per_layer_inputs"][:length], row_map, capacity, stages
        )

    def run_many(
        self,
        prompts: Sequence[tuple[np.ndarray, np.ndarray]],
        pad_to: int | None = None,
        capacity: int | None = None,
    ) -> list[PrefillResult]:
        """`run` of several (input_ids, audio_features) prompts in one call: the stage is row by row (each
        position's embedding, audio row and per-layer inputs depend on that position alone), so their ids
        placed one after another, with their clips in the same order, give each prompt's rows as `run` gives
        them (`tests/test_prefill.py` holds it bit for bit). `pad_to`: add copies of the last prompt up
        to that many, and `capacity`: the entry's capacity (at least their length; default the smallest that
        holds them), so that calls of fewer or shorter prompts run the same entry (one resident session); the
        padding's rows are dropped."""
        if not prompts:
            raise PromptError("run_many needs at least one prompt")
        if pad_to is not None and pad_to < len(prompts):
            raise PromptError(f"pad_to={pad_to} is fewer than the {len(prompts)} prompts given")
        items = [(check_ids(np.asarray(ids), self.text), self._features(features)) for ids, features in prompts]
        real = len(items)
        items += [items[-1]] * ((pad_to or real) - real)
        packed = self.run(
            np.concatenate([ids for ids, _ in items]), np.concatenate([f for _, f in items]), capacity=capacity
        )
        results, start = [], 0
        for ids, features in items[:real]:
            end = start + len(ids)
            results.append(
                PrefillResult(
                    ids,
                    packed.inputs_embeds[start:end],
                    packed.per_layer_inputs[start:end],
                    audio_row_map(ids, self.text, len(features)),
                    packed.capacity,
                )
            )
            start = end
        return results

    def _features(self, audio_features: np.ndarray | None) -> np.ndarray:
        """The encoder's `audio_features` [N, 188, hidden] as F32, checked (none: [0, 188, hidden])."""
        if audio_features is None:
            return np.zeros((0, AUDIO_SOFT_TOKENS_PER_CLIP, self.text.hidden_size), np.float32)
        audio_features = np.asarray(audio_features, np.float32)
        if audio_features.ndim != 3 or audio_features.shape[1:] != (AUDIO_SOFT_TOKENS_PER_CLIP, self.text.hidden_size):
            raise PromptError(
                f"audio_features must be [clips, {AUDIO_SOFT_TOKENS_PER_CLIP}, {self.text.hidden_size}], "
                f"got {audio_features.shape}"
            )
        return audio_features

    def prefill(
        self, prompt: str, audio: Sequence[str | Path], chat: bool = True, max_seconds: float | None = None
    ) -> PrefillResult:
        """Encode the audio files, expand and tokenize the prompt, merge: the whole path."""
        clips_per_file: list[int] = []
        features = None
        if audio:
            encoder = self.encoder
            clips = encoder.clips_from_files(audio, max_seconds)
            clips_per_file = [sum(1 for c in clips if c.source == i) for i in range(len(audio))]
            self.progress(f"{len(audio)} audio file(s) -> {len(clips)} clip(s) of at most 30 s")
            features = encoder.encode_clips(clips).audio_features
        ids = self.expand(prompt, clips_per_file, chat)
        return self.run(ids, features)
