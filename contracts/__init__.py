"""Numeric contracts: named rounding/reduction policies and their executable numpy emulation."""

from .policy import (
    CONTRACTS,
    DEFAULT_CONTRACT,
    F32_REFERENCE,
    MLX_CUDA_V1,
    MLX_CUDA_V1_BF16_CONV,
    PRODUCTION_CONTRACTS,
    NumericContract,
    get_contract,
)

__all__ = [
    "CONTRACTS",
    "DEFAULT_CONTRACT",
    "F32_REFERENCE",
    "MLX_CUDA_V1",
    "MLX_CUDA_V1_BF16_CONV",
    "PRODUCTION_CONTRACTS",
    "NumericContract",
    "get_contract",
]
