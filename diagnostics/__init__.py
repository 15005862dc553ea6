"""Diagnostics and benchmarks: per-stage error against transformers, speed measurements."""
