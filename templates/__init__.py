"""Jinja2 StableHLO templates, one per op family (package data)."""
