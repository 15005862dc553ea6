"""Gemma 3n audio on IREE: StableHLO templates with explicit numeric contracts, compiled and run."""

__version__ = "0.1.0"
