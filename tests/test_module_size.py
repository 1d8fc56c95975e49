"""No Python module of the package is over 500 lines, as no TypeScript one is
(``labextension/src/__tests__/layers.spec.ts``): a module that grows past it is split by what
it does (CONTRIBUTING, "Where things go")."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "chapyter_ext"
MAX_LINES = 500


def too_long(root: Path, most: int = MAX_LINES) -> dict[str, int]:
    """The modules below ``root`` with more than ``most`` lines, by path."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        if "labextension" in path.relative_to(root).parts:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > most:
            found[str(path.relative_to(root))] = lines
    return found


def test_no_module_is_over_500_lines() -> None:
    assert too_long(PACKAGE) == {}


def test_the_check_sees_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert too_long(tmp_path) == {"pkg/long.py": MAX_LINES + 1}
