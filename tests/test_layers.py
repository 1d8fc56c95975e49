"""The Python package's layers, read from its own imports, as ``layers.spec.ts`` reads the
frontend's: shared code imports no feature folder and nothing of the server; a feature folder
reaches another only through that one's package (its ``__init__.py``, the feature's public
surface) and never imports the server; the import graph has no cycles, between modules or
between packages. Every import counts: at module level, inside a function, or for type
checking only. CONTRIBUTING ("Layers") says why."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "chapyter_ext"

#: Folders of one feature each, as the frontend's: they may not import each other's insides.
FEATURES = ("magic", "fix", "chat", "history", "complete", "agent", "outside")

#: The top: the server's app, base handler and routes, and the entry points. They wire the
#: features together, so they may import any module; nothing below imports them.
TOP = ("server", "cli", "settings_doc", "")

#: Module name -> the package modules it imports.
Graph = dict[str, set[str]]


def _name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(module: str, is_package: bool, tree: ast.AST) -> Iterable[tuple[str, list[str]]]:
    """Every import of ``module``'s source, anywhere in it: the module named and the names
    taken from it (none for ``import x.y``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            yield origin, [alias.name for alias in node.names]


def _parse(source: str) -> ast.AST:
    """``ast.parse``, once more if CPython 3.11 raised its spurious SystemError: its AST
    conversion shares one recursion counter between threads (python/cpython#106905), and a
    thread another test left running can be parsing at the same moment."""
    try:
        return ast.parse(source)
    except SystemError:
        return ast.parse(source)


def import_graph(root: Path = PACKAGE) -> Graph:
    """The modules of the package below ``root`` and the package modules each imports (a
    submodule taken from a package by name counts as that submodule, not the package)."""
    sources = {
        _name(root, path): path
        for path in root.rglob("*.py")
        if "labextension" not in path.relative_to(root).parts
    }

    graph: Graph = {}
    for module, path in sources.items():
        tree = _parse(path.read_text(encoding="utf-8"))
        targets = set()
        for origin, names in _imported(module, path.name == "__init__.py", tree):
            submodules = [f"{origin}.{name}" for name in names if f"{origin}.{name}" in sources]
            targets.update(submodules)
            # A module that is not a source file here (the build's _version.py) is no edge.
            if origin in sources and (len(submodules) < len(names) or not names):
                targets.add(origin)
        targets.discard(module)
        targets.discard("")
        graph[module] = targets
    return graph


def area(module: str) -> str:
    """The first folder (or root module) below the package: ``chat``, ``config``; "" for the
    package's own ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_breaches(graph: Graph) -> list[str]:
    """Every import that runs up a layer or into another feature's insides, one line each."""
    found = []
    for module, targets in sorted(graph.items()):
        source = area(module)
        for target in sorted(targets):
            into = area(target)
            if source in TOP or into == source:
                continue
            if into in TOP:
                found.append(f"{module} imports {target}, above it (the server or an entry)")
            elif into in FEATURES and source not in FEATURES:
                found.append(f"{module} (shared) imports the feature module {target}")
            elif into in FEATURES and target != f"chapyter_ext.{into}":
                found.append(
                    f"{module} imports {target}: another feature is reached through its "
                    f"package, chapyter_ext.{into}"
                )
    return found


def cycle(graph: Graph) -> list[str]:
    """One import cycle of ``graph``, as the list of its nodes (empty: none)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def area_graph(graph: Graph) -> Graph:
    """The graph between folders and root modules (a package's own ``__init__`` is in it)."""
    areas: Graph = {}
    for module, targets in graph.items():
        edges = areas.setdefault(area(module), set())
        edges.update(area(t) for t in targets if area(t) != area(module))
    return areas


def test_shared_code_imports_no_feature_and_features_meet_through_their_package() -> None:
    breaches = layer_breaches(import_graph())
    assert not breaches, "\n".join(breaches)


def test_no_import_cycle_between_modules() -> None:
    found = cycle(import_graph())
    assert not found, " -> ".join(found)


def test_no_import_cycle_between_folders() -> None:
    graph = area_graph(import_graph())
    graph.pop("", None)  # the package's __init__: its entry points import the features lazily
    found = cycle(graph)
    assert not found, " -> ".join(found)


def test_every_feature_is_a_folder() -> None:
    assert all((PACKAGE / feature / "__init__.py").is_file() for feature in FEATURES)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "chapyter_ext"
    for name, source in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


@pytest.mark.parametrize(
    ("files", "breach"),
    [
        (
            {
                "llm/__init__.py": "from ..chat import service\n",
                "chat/__init__.py": "",
                "chat/service.py": "",
            },
            "chapyter_ext.llm (shared) imports the feature module chapyter_ext.chat.service",
        ),
        (
            {
                "fix/__init__.py": "",
                "fix/service.py": "def f():\n    from ..chat.turn import T\n",
                "chat/__init__.py": "",
                "chat/turn.py": "T = 1\n",
            },
            "chapyter_ext.fix.service imports chapyter_ext.chat.turn: another feature is "
            "reached through its package, chapyter_ext.chat",
        ),
        (
            {
                "chat/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from chapyter_ext.server import app\n",
                "server/__init__.py": "",
                "server/app.py": "",
            },
            "chapyter_ext.chat imports chapyter_ext.server.app, above it (the server or an entry)",
        ),
    ],
)
def test_the_check_sees_a_bad_import(tmp_path: Path, files: dict[str, str], breach: str) -> None:
    assert layer_breaches(import_graph(_package(tmp_path, files))) == [breach]


def test_the_check_sees_a_cycle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "config.py": "def f():\n    from . import values\n",
            "values.py": "from .config import f\n",
        },
    )
    assert cycle(import_graph(root)) == [
        "chapyter_ext.config",
        "chapyter_ext.values",
        "chapyter_ext.config",
    ]
    assert cycle(area_graph(import_graph(root))) == ["config", "values", "config"]


def test_a_feature_may_use_another_through_its_package(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "chat/__init__.py": "from .service import ChatService\n",
            "chat/service.py": "",
            "fix/__init__.py": "",
            "fix/service.py": "from ..chat import ChatService\n",
        },
    )
    assert layer_breaches(import_graph(root)) == []
