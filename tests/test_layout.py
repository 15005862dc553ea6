"""The README's architecture table matches the tree: every package folder of pyproject.toml has its row
(with the name it installs as), every module of the folder is named in it, and the row names no module
the folder lacks; every top-level folder holding Python has a row."""

from __future__ import annotations

import ast
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


# ---------------------------------------------------------------------------------------------- imports


def product_modules() -> dict[str, Path]:
    """Every product module's installed name -> its file."""
    modules = {}
    for name, folder in package_dirs().items():
        for path in (ROOT / folder).glob("*.py"):
            modules[name if path.stem == "__init__" else f"{name}.{path.stem}"] = path
    return modules


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The product modules `module` imports anywhere in its file -- a function's lazy import ties the two as
    much as one at the top -- except under `if TYPE_CHECKING:` (annotations only)."""
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text())]
    while pending:
        node = pending.pop()
        if _type_checking_only(node):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0]  # level 1: the package itself
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return found & known - {module}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that reach each other through imports (Tarjan's strongly connected components, >1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_import_circle_finder_sees_a_lazy_import():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_no_product_module_imports_itself_through_others():
    modules = product_modules()
    graph = {name: imported_modules(name, path, set(modules)) for name, path in modules.items()}
    assert len(graph) > 100 and graph["gemma3n_iree.runtime.commands.transcribe_cli"]
    circles = import_circles(graph)
    assert not circles, "import circles (each group reaches itself):\n" + "\n".join(" ".join(c) for c in circles)
