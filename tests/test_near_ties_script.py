"""scripts/greedy_near_ties.py's bookkeeping (the study itself runs minutes per seed and is not part of CI):
the first differing step and the summary's counts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "greedy_near_ties.py"


def _script():
    spec = importlib.util.spec_from_file_location("greedy_near_ties", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_first_difference_and_summary():
    s = _script()
    assert s.first_difference([1, 2, 3], [1, 2, 3]) is None and s.first_difference([1, 5, 3], [1, 2, 3]) == 1
    assert s._top2_gap([0.0, 3.0, 2.5, -1.0]) == 0.5
    base = {"f32_reference_equals_fp32": True, "bf16_first_difference_from_fp32": None, "steps": 4}
    cases = [
        {**base, "mlx_first_difference_from_bf16": None, "mlx_first_difference_from_fp32": None, "near_tie_steps": 1},
        {
            **base,
            "mlx_first_difference_from_bf16": 3,
            "mlx_first_difference_from_fp32": 2,
            "near_tie_steps": 3,
            "inside_envelope": True,
            "f32_reference_equals_fp32": False,
            "bf16_first_difference_from_fp32": 2,
        },
    ]
    summary = s.summarize(cases)
    assert summary == {
        "cases": 2,
        "f32_reference_exact": 1,
        "mlx_vs_bf16_diverged": 1,
        "mlx_vs_bf16_first_difference_steps": [3],
        "divergences_inside_envelope": 1,
        "bf16_vs_fp32_diverged": 1,
        "mlx_vs_fp32_diverged": 1,
        "near_tie_steps": 4,
        "steps": 8,
        "near_tie_fraction": 0.5,
    }
