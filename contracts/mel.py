"""Where the log-mel features are computed, and the executable specification of the device log-mel.

An artifact's entries take one of two inputs, recorded in the artifact's identity and, for device
entries, in each entry's reflection (`gemma3n.mel`):

* ``host``: log-mel features [clips, frames, 128] computed by `runtime.audio.frontend.log_mel` in NumPy,
  bit-identical to transformers' `Gemma3nAudioFeatureExtractor` (an entry without `gemma3n.mel`);
* ``device-<dft>``: 16 kHz mono float32 samples [clips, samples_for_frames(frames)] and the number of
  real samples per clip; the module's first stage computes the features (templates `mel_*.mlir.j2`,
  composed by `OpEmitter.mel_front`) in this order:

  1. samples at or past the clip's count are zeroed, so a clip's rows never depend on its slot (this is
     also the host's zero padding to a multiple of 128: the frames the encoder keeps read nothing else);
  2. the valid frame count, ``min(ceil(n / 160), (max(ceil128(n), 640) - 513) // 160 + 1)``, as the
     host counts them (0 for an empty slot);
  3. HTK pre-emphasis in F32 with the host's two roundings (``0.97 * s[i-1]``, then the difference;
     the first sample of a frame times ``float32(1 - 0.97)``), framed 512 samples every 160;
  4. the periodic Hann window (the host's F32 values);
  5. the 1024-point real DFT of the zero-padded frame, by ``dft``: ``matmul``, one F32 ``dot_general``
     (precision HIGHEST: no TF32) against the [512, 1026] table of ``cos`` and ``-sin`` of
     ``2 pi ((n k) mod 1024) / 1024``, each rounded once from float64; or ``rfft``, ``stablehlo.fft``,
     which IREE 3.13 lowers to bit-reversal and ten radix-2 stages with F32 twiddles;
  6. the magnitude ``sqrt(re^2 + im^2)`` in F64 (the squares are exact, the sum and the square root
     round once each), rounded to F32;
  7. the mel matmul in F32 against the filterbank rounded to F32 (the host multiplies by the float64
     filterbank in float64);
  8. ``log(max(mel, 1e-5))`` in F64, rounded to F32, as the host does.

Steps 1-4, 6 and 8 are exact functions of their inputs: the emulation below reproduces them bit for
bit on every backend. Steps 5 and 7 are the only sums, and how they round is the backend's
(`ARITHMETIC`): the emulation either sums each dot product exactly and rounds once (``exact``, the
order-free reference) or repeats what IREE 3.13's code does, read from its generated code and checked
bit for bit: on llvm-cpu every dot product accumulates serially from 0 in fused multiply-adds and each
radix-2 butterfly fuses its product pair (``serial-fma``); on CUDA the same serial order with every
product rounded (``serial``: PTX ``mul.rn``/``add.rn``, no FMA).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..runtime.audio.frontend import (
    FFT_LENGTH,
    FRAME_LENGTH,
    HOP_LENGTH,
    MEL_FLOOR,
    MIN_SAMPLES,
    N_MELS,
    PAD_MULTIPLE,
    PREEMPHASIS,
    WINDOW_SIZE,
    _window,
    mel_filterbank,
)

F32 = np.float32
BINS = FFT_LENGTH // 2 + 1  # 513
DFT_METHODS: tuple[str, ...] = ("matmul", "rfft")
#: How the emulation does the sums of steps 5 and 7 (see the module docstring).
ARITHMETIC: tuple[str, ...] = ("exact", "serial-fma", "serial")
#: The arithmetic of IREE 3.13's code per target.
TARGET_ARITHMETIC: dict[str, str] = {"llvm-cpu": "serial-fma", "cuda": "serial"}
#: What `--mel` accepts: "device" picks the target's DFT from DEFAULT_DFT.
MEL_CHOICES: tuple[str, ...] = ("host", "device") + tuple(f"device-{m}" for m in DFT_METHODS)

#: The one table of per-target defaults, from measurements (BENCHMARKS.md): on the CPU the device front end
#: is no faster than NumPy's and takes both cores; on the H200 it costs the GPU 1.3 ms per 30 s clip where
#: NumPy costs the host 52-59 ms of a core, and files -> .npz is faster with it at every count measured.
DEFAULT_MEL: dict[str, str] = {"llvm-cpu": "host", "cuda": "device"}
#: The DFT a "device" mel uses per target. IREE 3.13 compiles `stablehlo.fft` for both, but on CUDA
#: each radix-2 stage is a dispatch whose 32-thread workgroups all run one row's butterflies serially
#: (BENCHMARKS.md), while the matmul is one tiled dispatch; on the CPU they cost the same.
DEFAULT_DFT: dict[str, str] = {"llvm-cpu": "matmul", "cuda": "matmul"}


MEL_HELP = (
    "Where the log-mel features are computed: host (NumPy, bit-identical to transformers' feature "
    "extractor; the artifact takes features) or device (the artifact's first stage, from 16 kHz samples; "
    "device-matmul / device-rfft pick its DFT, device the target's: "
    + ", ".join(f"{target} {method}" for target, method in DEFAULT_DFT.items())
    + "). Default: "
    + ", ".join(f"{target} {choice}" for target, choice in DEFAULT_MEL.items())
    + "."
)


class MelChoiceError(ValueError):
    """An unknown `--mel` choice or target."""


@dataclass(frozen=True)
class MelFrontEnd:
    """Where an artifact's log-mel is computed: on the host (``dft`` None) or in the module."""

    dft: str | None = None

    def __post_init__(self) -> None:
        if self.dft is not None and self.dft not in DFT_METHODS:
            raise MelChoiceError(f"unknown DFT method {self.dft!r}; choose one of {', '.join(DFT_METHODS)}")

    @property
    def on_device(self) -> bool:
        return self.dft is not None

    @property
    def name(self) -> str:
        """``host``, ``device-matmul`` or ``device-rfft``: the artifact identity's and reflection's spelling."""
        return "host" if self.dft is None else f"device-{self.dft}"


HOST_MEL = MelFrontEnd()


def resolve_mel(choice: str | None, target: str) -> MelFrontEnd:
    """The front end `choice` names for `target` ("llvm-cpu" or "cuda"); None: the target's default."""
    if target not in DEFAULT_MEL:
        raise MelChoiceError(f"unknown target {target!r}; choose one of {', '.join(DEFAULT_MEL)}")
    choice = DEFAULT_MEL[target] if choice is None else choice
    if choice == "host":
        return HOST_MEL
    if choice == "device":
        return MelFrontEnd(DEFAULT_DFT[target])
    if choice.startswith("device-"):
        return MelFrontEnd(choice[len("device-") :])
    raise MelChoiceError(f"unknown mel front end {choice!r}; choose one of {', '.join(MEL_CHOICES)}")


def mel_from_reflection(reflection: dict[str, str]) -> MelFrontEnd:
    """The front end an entry's reflection records (no `gemma3n.mel`: host features)."""
    name = reflection.get("gemma3n.mel", "host")
    if name == "host":
        return HOST_MEL
    if not name.startswith("device-"):
        raise MelChoiceError(f"entry reflection gemma3n.mel = {name!r} is not a known mel front end")
    return MelFrontEnd(name[len("device-") :])


# ---------------------------------------------------------------------------------------------- shapes
def samples_for_frames(frames: int) -> int:
    """Samples a device entry of `frames` frames takes per clip: the most a clip whose host frame count
    is at most `frames` can have (the largest multiple of 128 <= 160 * frames + 512; 480000 at 2997)."""
    if frames < 1:
        raise ValueError(f"a frame bucket has at least one frame, got {frames}")
    return (HOP_LENGTH * frames + FRAME_LENGTH) // PAD_MULTIPLE * PAD_MULTIPLE


def frame_counts(counts: np.ndarray) -> np.ndarray:
    """Valid frames of clips of `counts` samples, as `frontend.num_frames` counts them (0 for 0)."""
    n = np.asarray(counts, np.int64)
    padded = np.maximum(-(-n // PAD_MULTIPLE) * PAD_MULTIPLE, MIN_SAMPLES)
    total = (padded - WINDOW_SIZE) // HOP_LENGTH + 1
    return np.minimum(-(-n // HOP_LENGTH), total).astype(np.int32)


# ---------------------------------------------------------------------------------------------- tables
def hann_window() -> np.ndarray:
    """The periodic Hann window [512] F32: the host's own values."""
    return np.array(_window(), F32)


def filterbank_f32() -> np.ndarray:
    """The HTK mel filterbank [513, 128] rounded to F32 (the host uses the float64 values)."""
    return mel_filterbank().astype(F32)


@lru_cache(maxsize=1)
def dft_table() -> np.ndarray:
    """[512, 1026] F32: columns 0..512 cos, 513..1025 -sin of 2 pi (n k mod 1024) / 1024, from float64."""
    n = np.arange(FRAME_LENGTH)[:, None]
    k = np.arange(BINS)[None, :]
    angle = 2.0 * np.pi * ((n * k) % FFT_LENGTH) / FFT_LENGTH
    table = np.concatenate([np.cos(angle), -np.sin(angle)], axis=1).astype(F32)
    table.flags.writeable = False
    return table


def rfft_twiddles(stage: int) -> tuple[np.ndarray, np.ndarray]:
    """IREE's F32 twiddles of radix-2 stage `stage` (m = 2^stage): cos and -sin of 2 pi j / m, j < m/2."""
    m = 1 << stage
    angle = 2.0 * np.pi * np.arange(m // 2) / m
    return np.cos(angle).astype(F32), (-np.sin(angle)).astype(F32)


# ---------------------------------------------------------------------------------------------- emulation
def windowed_frames(samples: np.ndarray, counts: np.ndarray, frames: int) -> np.ndarray:
    """Steps 1, 3 and 4: [clips, S] samples -> pre-emphasised, windowed frames [clips, frames, 512] F32."""
    x = np.asarray(samples, F32)
    s = np.where(np.arange(x.shape[1])[None, :] < np.asarray(counts)[:, None], x, F32(0)).astype(F32)
    need = HOP_LENGTH * (frames - 1) + FRAME_LENGTH
    if s.shape[1] < need:
        raise ValueError(f"{frames} frames need {need} samples per clip, got {s.shape[1]}")
    index = np.arange(frames)[:, None] * HOP_LENGTH + np.arange(FRAME_LENGTH)[None, :]
    current = s[:, index]
    previous = s[:, np.maximum(index - 1, 0)]
    emphasised = (current - (F32(PREEMPHASIS) * previous).astype(F32)).astype(F32)
    first = (current[..., 0] * F32(1.0 - PREEMPHASIS)).astype(F32)
    emphasised[..., 0] = first
    return (emphasised * hann_window()).astype(F32)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """round_f32(a * b + c) for F32 a, b, c: the product is exact in F64 and the F64 sum rounds to the
    same F32 as the fused operation unless it lands exactly on an F32 tie (the tests compare bits)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(F32)


def _dot(x: np.ndarray, table: np.ndarray, arithmetic: str) -> np.ndarray:
    """x [..., K] @ table [K, N] in F32 with the given arithmetic (exact, or serial from 0)."""
    if arithmetic not in ARITHMETIC:
        raise ValueError(f"unknown arithmetic {arithmetic!r}; choose one of {', '.join(ARITHMETIC)}")
    x64, t64 = np.asarray(x, np.float64), np.asarray(table, np.float64)
    if arithmetic == "exact":
        return (x64 @ t64).astype(F32)
    acc = np.zeros(x64.shape[:-1] + t64.shape[1:], F32)
    for k in range(t64.shape[0]):
        product = x64[..., k : k + 1] * t64[k]  # exact in F64
        if arithmetic == "serial-fma":
            acc = (product + acc).astype(F32)
        else:
            acc = (product.astype(F32) + acc).astype(F32)
    return acc


def dft_matmul(y: np.ndarray, arithmetic: str = "exact") -> tuple[np.ndarray, np.ndarray]:
    """Step 5 as the matmul computes it: (re, im) [..., 513] F32."""
    out = _dot(y, dft_table(), arithmetic)
    return out[..., :BINS], out[..., BINS:]


def _bit_reversed(n: int) -> np.ndarray:
    bits = n.bit_length() - 1
    return np.array([int(format(i, f"0{bits}b")[::-1], 2) for i in range(n)])


def dft_rfft(y: np.ndarray, arithmetic: str = "exact") -> tuple[np.ndarray, np.ndarray]:
    """Step 5 as IREE 3.13 lowers `stablehlo.fft` RFFT: the zero-padded frame in bit-reversed order, then
    ten radix-2 stages, each butterfly ``t = w * v; (u + t, u - t)`` in F32; with ``serial-fma`` (llvm-cpu)
    ``t = (fma(wr, vr, -(wi vi)), fma(wi, vr, wr vi))``, otherwise every product rounded."""
    if arithmetic not in ARITHMETIC:
        raise ValueError(f"unknown arithmetic {arithmetic!r}; choose one of {', '.join(ARITHMETIC)}")
    fused = arithmetic == "serial-fma"
    y = np.asarray(y, F32)
    padded = np.zeros(y.shape[:-1] + (FFT_LENGTH,), F32)
    padded[..., :FRAME_LENGTH] = y
    re = padded[..., _bit_reversed(FFT_LENGTH)]
    im = np.zeros_like(re)
    for stage in range(1, int(math.log2(FFT_LENGTH)) + 1):
        m, half = 1 << stage, 1 << (stage - 1)
        wr, wi = rfft_twiddles(stage)
        shape = re.shape[:-1] + (FFT_LENGTH // m, m)
        re, im = re.reshape(shape), im.reshape(shape)
        ur, ui, vr, vi = re[..., :half], im[..., :half], re[..., half:], im[..., half:]
        if fused:
            tr, ti = _fma(wr, vr, -(wi * vi).astype(F32)), _fma(wi, vr, (wr * vi).astype(F32))
        else:
            tr = ((wr * vr).astype(F32) - (wi * vi).astype(F32)).astype(F32)
            ti = ((wr * vi).astype(F32) + (wi * vr).astype(F32)).astype(F32)
        re = np.concatenate([(ur + tr).astype(F32), (ur - tr).astype(F32)], axis=-1)
        im = np.concatenate([(ui + ti).astype(F32), (ui - ti).astype(F32)], axis=-1)
        re, im = re.reshape(padded.shape), im.reshape(padded.shape)
    return re[..., :BINS], im[..., :BINS]


DFTS = {"matmul": dft_matmul, "rfft": dft_rfft}


def magnitude(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """Step 6: sqrt(re^2 + im^2) in F64, rounded to F32."""
    r, i = np.asarray(re, np.float64), np.asarray(im, np.float64)
    return np.sqrt(r * r + i * i).astype(F32)


def mel_power(mag: np.ndarray, arithmetic: str = "exact") -> np.ndarray:
    """Step 7: [..., 513] -> [..., 128] F32."""
    return _dot(mag, filterbank_f32(), arithmetic)


def log_floor(mel: np.ndarray) -> np.ndarray:
    """Step 8: log(max(mel, 1e-5)) in F64, rounded to F32."""
    return np.log(np.maximum(np.asarray(mel, np.float64), MEL_FLOOR)).astype(F32)


def device_log_mel(
    samples: np.ndarray, counts: np.ndarray, frames: int, dft: str = "matmul", arithmetic: str = "exact"
) -> tuple[np.ndarray, np.ndarray]:
    """The device front end on [clips, S] samples: (log-mel [clips, frames, 128] F32, valid frames [clips]).

    Every frame of the bucket is computed, as the module does; the encoder zeroes frames at or past
    each clip's valid count."""
    y = windowed_frames(samples, counts, frames)
    mel = log_floor(mel_power(magnitude(*DFTS[dft](y, arithmetic)), arithmetic))
    assert mel.shape[-1] == N_MELS
    return mel, frame_counts(counts)


# ---------------------------------------------------------------------------------------------- error bound
_U = 2.0**-24  # F32 unit roundoff


def _gamma(n: int) -> float:
    return n * _U / (1 - n * _U)


def float64_log_mel(y: np.ndarray) -> np.ndarray:
    """Steps 5-8 in float64 on windowed F32 frames [..., 512]: the value the device approximates."""
    power = np.abs(np.fft.rfft(np.asarray(y, np.float64), n=FFT_LENGTH, axis=-1)) @ mel_filterbank()
    return np.log(np.maximum(power, MEL_FLOOR))


def error_bound(y: np.ndarray, dft: str) -> np.ndarray:
    """Per log-mel value, the largest distance from `float64_log_mel(y)` that the front end's F32
    operations allow in any accumulation order (steps 1-4 are exact, so the frames are common):

    * DFT, per frame and bin: ``matmul``, re and im are each a 512-term F32 dot product with table
      entries within u of cos/sin, so |dX| <= sqrt(2) (gamma_512 + 2u) sum|y|; ``rfft``, radix-2 with
      twiddles within sqrt(2) u: ||dX||_2 <= log2(N) eta / (1 - log2(N) eta) sqrt(N) ||y||_2 with
      eta = sqrt(2) u + gamma_4 (sqrt(2) + sqrt(2) u) (Higham, Accuracy and Stability of Numerical
      Algorithms, 2nd ed., thm 24.2);
    * magnitude: that, plus u |X| for the F32 rounding (the F64 arithmetic adds below 2^-50);
    * mel: sum_k fb |d mag_k| + (gamma_513 + 2u) sum_k fb (|X_k| + d mag_k) (F32 sum, F32 filterbank);
    * log: both values lie in [log max(m - b, floor), log max(m + b, floor)], plus u |log| for the F32
      rounding.
    """
    y64 = np.asarray(y, np.float64)
    if dft == "matmul":
        dft_error = math.sqrt(2) * (_gamma(FRAME_LENGTH) + 2 * _U) * np.abs(y64).sum(-1, keepdims=True)
    elif dft == "rfft":
        stages = math.log2(FFT_LENGTH)
        eta = math.sqrt(2) * _U + _gamma(4) * (math.sqrt(2) + math.sqrt(2) * _U)
        dft_error = (
            stages * eta / (1 - stages * eta) * math.sqrt(FFT_LENGTH) * np.linalg.norm(y64, axis=-1, keepdims=True)
        )
    else:
        raise MelChoiceError(f"unknown DFT method {dft!r}; choose one of {', '.join(DFT_METHODS)}")
    magnitude = np.abs(np.fft.rfft(y64, n=FFT_LENGTH, axis=-1))
    d_mag = dft_error + _U * (magnitude + dft_error)
    fb = mel_filterbank()
    power = magnitude @ fb
    bound = d_mag @ fb + (_gamma(BINS) + 2 * _U) * ((magnitude + d_mag) @ fb)
    upper = np.log(np.maximum(power + bound, MEL_FLOOR))
    lower = np.log(np.maximum(power - bound, MEL_FLOOR))
    return (upper - lower) + _U * np.abs(upper) + 1e-12
