"""`scripts/emit_matrix.py`, the proof that a refactor kept every emitted module: its dump is
deterministic and its comparison finds a changed text, ignoring only the reflection keys it is told to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "emit_matrix.py"
ONLY = "audio/tiny/mlx-cuda-v1/cuda-sm_90/"  # three kernel choices, plain and stage builds


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("matrix")
    for name in ("a", "b"):
        assert _run("dump", str(root / name), "--only", ONLY).returncode == 0
    return root / "a", root / "b"


def _rewrite(folder: Path, case: str, edit, part: str = "module") -> None:  # noqa: ANN001
    """Point `case`'s module (or fragments) at an edited copy of its text (a text is stored under its own hash)."""
    index = json.loads((folder / "index.json").read_text())
    text = edit((folder / "texts" / f"{index[case][part]}.mlir").read_text())
    (folder / "texts" / f"edited-{part}.mlir").write_text(text)
    index[case][part] = f"edited-{part}"
    (folder / "index.json").write_text(json.dumps(index))


def test_two_dumps_of_the_same_code_are_equal(dumps):
    a, b = dumps
    index = json.loads((a / "index.json").read_text())
    assert sorted(index) == sorted(
        f"{ONLY}{choice}/{build}" for choice in ("auto", "iree", "triton-sm90") for build in ("plain", "stages")
    )
    assert len(index[f"{ONLY}auto/plain"]["ptx"]) > 5  # the linked kernels, by file, with their hashes
    result = _run("compare", str(a), str(b))
    assert result.returncode == 0 and "0 differences" in result.stdout, result.stdout


def test_a_changed_text_is_found_and_an_added_reflection_key_only_when_told(dumps, tmp_path):
    a, b = dumps
    changed = tmp_path / "changed"
    subprocess.run(["cp", "-r", str(b), str(changed)], check=True)
    case = f"{ONLY}iree/plain"
    _rewrite(changed, case, lambda t: t.replace("e8m7", "e8m23", 1))
    result = _run("compare", str(a), str(changed))
    assert result.returncode == 1 and f"{case} (module) differs" in result.stdout and "+" in result.stdout

    added = tmp_path / "added"
    subprocess.run(["cp", "-r", str(b), str(added)], check=True)
    _rewrite(added, case, lambda t: t.replace('gemma3n.kernels = "iree"', 'gemma3n.kernels = "iree", gemma3n.x = "1"'))
    assert _run("compare", str(a), str(added)).returncode == 1
    result = _run("compare", str(a), str(added), "--ignore-reflection", "gemma3n.x")
    # the edited module passes; the other five modules and all six fragment listings lack the key
    assert result.returncode == 1 and "11 differences" in result.stdout and "differs" not in result.stdout
    assert f"{case} (module)" not in result.stdout and f"{case} (fragments): 4 entry point(s) without" in result.stdout


def test_blank_lines_in_fragments_pass_only_when_told(dumps, tmp_path):
    a, b = dumps
    case = f"{ONLY}iree/stages"
    spaced = tmp_path / "spaced"
    subprocess.run(["cp", "-r", str(b), str(spaced)], check=True)
    _rewrite(spaced, case, lambda t: t.replace("\nfunc.func", "\n\n\nfunc.func"), part="fragments")
    assert _run("compare", str(a), str(spaced)).returncode == 1
    result = _run("compare", str(a), str(spaced), "--ignore-blank-lines")
    assert result.returncode == 0 and "of 1 only up to blank lines; 0 differences" in result.stdout, result.stdout
    _rewrite(spaced, case, lambda t: t.replace("\nfunc.func", "\n\n\nfunc.func") + "%x = 1\n", part="fragments")
    assert _run("compare", str(a), str(spaced), "--ignore-blank-lines").returncode == 1
