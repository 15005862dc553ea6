"""Named, versioned numeric policies: where values are rounded and what contractions see.

A contract is the whole answer to "which number does each op produce": the rounding points (a BF16
rounding after every op of the graph, or none), the dtype of matmul/convolution operands, and the
result type of the SSCP convolutions.  Reduction schedules (lane/XOR sums, the hierarchical prefix
scan, sequential depthwise taps) are part of the graph and shared by every contract.  The emitted
templates and the numpy emulation in `emulation.py` read the same object, and the contract's
identity is part of every artifact's identity.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NumericContract:
    name: str
    version: int
    summary: str
    #: BF16 rounding (round-to-nearest-even, `reduce_precision e8m7`) at every rounding point; when
    #: False the same points are emitted as the identity `e8m23` and fold away.
    round_bf16: bool
    #: dtype of the operands of every matmul and convolution ("bf16" or "f32").
    operand_dtype: str
    #: result type of the SSCP convolutions: "f32" (production) or "bf16" (diagnostic negative evidence).
    sscp_conv_result_dtype: str = "f32"
    #: False for diagnostic-only variants that production artifacts must never use.
    production: bool = True
    #: The production contract a diagnostic variant is judged against (itself when empty).
    reference: str = ""
    #: Named rounding points this variant leaves out (diagnostics and tests of the diagnostics only).
    dropped_rounding: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.operand_dtype not in ("bf16", "f32"):
            raise ValueError(f"operand_dtype must be bf16 or f32, got {self.operand_dtype!r}")
        if self.sscp_conv_result_dtype not in ("bf16", "f32"):
            raise ValueError(f"sscp_conv_result_dtype must be bf16 or f32, got {self.sscp_conv_result_dtype!r}")

    @property
    def round_format(self) -> str:
        """The `stablehlo.reduce_precision` format of a rounding point."""
        return "e8m7" if self.round_bf16 else "e8m23"

    def rounds_at(self, point: str | None) -> bool:
        """Whether the (optionally named) rounding point rounds under this contract."""
        return self.round_bf16 and (point is None or point not in self.dropped_rounding)

    @property
    def reference_name(self) -> str:
        return self.reference or self.name

    def identity(self) -> str:
        dropped = ",".join(sorted(self.dropped_rounding))
        return (
            f"{self.name}@v{self.version}:round={self.round_format}:operands={self.operand_dtype}"
            f":sscp_conv_result={self.sscp_conv_result_dtype}" + (f":dropped={dropped}" if dropped else "")
        )


MLX_CUDA_V1 = NumericContract(
    name="mlx-cuda-v1",
    version=1,
    summary="BF16 operands with F32 matmul/convolution results, BF16 rounding after every op, "
    "MLX CUDA reduction schedules (32-lane XOR sums, hierarchical prefix scan)",
    round_bf16=True,
    operand_dtype="bf16",
)

F32_REFERENCE = NumericContract(
    name="f32-reference",
    version=1,
    summary="the same graph and schedules entirely in F32 with no intermediate rounding",
    round_bf16=False,
    operand_dtype="f32",
)

MLX_CUDA_V1_BF16_CONV = NumericContract(
    name="mlx-cuda-v1-bf16-conv",
    version=1,
    summary="diagnostic only: mlx-cuda-v1 with BF16-result SSCP convolutions (the seed's negative evidence: "
    "the backend then accumulates in BF16); production keeps F32 results",
    round_bf16=True,
    operand_dtype="bf16",
    sscp_conv_result_dtype="bf16",
    production=False,
    reference="mlx-cuda-v1",
)

CONTRACTS: dict[str, NumericContract] = {c.name: c for c in (MLX_CUDA_V1, F32_REFERENCE, MLX_CUDA_V1_BF16_CONV)}
PRODUCTION_CONTRACTS = sorted(name for name, c in CONTRACTS.items() if c.production)
DEFAULT_CONTRACT = MLX_CUDA_V1.name


def get_contract(name: str) -> NumericContract:
    try:
        return CONTRACTS[name]
    except KeyError:
        raise ValueError(f"unknown numeric contract {name!r}; choose one of {sorted(CONTRACTS)}") from None
