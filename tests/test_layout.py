"""The README's architecture table matches the tree: every package folder of pyproject.toml has its row
(with the name it installs as), every module of the folder is named in it, and the row names no module
the folder lacks; every top-level folder holding Python has a row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def package_dirs() -> dict[str, str]:
    """pyproject.toml's `[tool.setuptools.package-dir]`: installed name -> folder."""
    text = (ROOT / "pyproject.toml").read_text()
    section = re.search(r"^\[tool\.setuptools\.package-dir\]\n(.*?)(?:^\[|\Z)", text, flags=re.S | re.M).group(1)
    return dict(re.findall(r'^"([\w.]+)"\s*=\s*"([\w/]+)"', section, flags=re.M))


def table_rows() -> dict[str, tuple[str, str]]:
    """The architecture table: folder -> (installed as, what it holds)."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Architecture") :]
    rows = re.findall(
        r"^\| `([\w/]+)/` \| (.*?) \| (.*) \|$", section[: section.index("\n\n", section.index("| folder"))], flags=re.M
    )
    return {folder: (installed.strip("`"), holds) for folder, installed, holds in rows}


def test_every_package_folder_has_its_row():
    packages, rows = package_dirs(), table_rows()
    assert len(packages) >= 9, packages
    for name, folder in packages.items():
        assert folder in rows, f"README's architecture table has no row for {folder}/ ({name})"
        assert rows[folder][0] == name, f"{folder}/ installs as {name}, the table says {rows[folder][0]}"


def test_every_top_level_folder_with_python_has_its_row():
    folders = {p.parent.relative_to(ROOT).parts[0] for p in ROOT.glob("*/*.py") if not p.parent.name.startswith(".")}
    folders -= {"build"}
    missing = sorted(folders - set(table_rows()))
    assert not missing, f"top-level folders missing from README's architecture table: {missing}"


@pytest.mark.parametrize("folder", sorted(set(package_dirs().values())))
def test_every_module_is_named_in_its_row(folder: str):
    holds = table_rows()[folder][1]
    modules = {p.name for p in (ROOT / folder).glob("*.py")} - ({"__init__.py"} if folder != "gemma3n_iree" else set())
    named = set(re.findall(r"`([\w.]+\.py)`", holds))
    assert modules - named == set(), f"{folder}/ modules the table does not name: {sorted(modules - named)}"
    ghosts = {n for n in named if not (ROOT / folder / n).exists()}
    assert not ghosts, f"the table's {folder}/ row names modules the folder lacks: {sorted(ghosts)}"
