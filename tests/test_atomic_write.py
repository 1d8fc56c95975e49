"""The atomic write every notebook writer uses: mode kept, links refused, nothing half written,
no temporary file left behind, whatever fails."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from chapyter_ext.atomic_write import UnsafeTargetError, check_target, write_bytes, write_notebook
from chapyter_ext.redact import Redactor

#: A redactor given no secret: these tests are about the file, not what is in it.
NOTHING = Redactor()

POSIX = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and links")


def notebook(text: str = "x = 1"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(text)]
    return nb


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_writes_what_nbformat_writes(tmp_path):
    nb = notebook()
    write_notebook(nb, tmp_path / "a.ipynb", redactor=NOTHING)
    nbformat.write(nb, tmp_path / "b.ipynb")
    assert (tmp_path / "a.ipynb").read_bytes() == (tmp_path / "b.ipynb").read_bytes()
    assert names(tmp_path) == ["a.ipynb", "b.ipynb"]


@POSIX
def test_an_existing_file_keeps_its_mode(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text("old")
    path.chmod(0o640)
    write_bytes(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.chmod(0o604)  # odd bits too; not the temporary file's 0600
    write_notebook(notebook(), path, redactor=NOTHING)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert names(tmp_path) == ["nb.ipynb"]


@POSIX
def test_a_new_file_gets_the_umask_mode(tmp_path):
    mask = os.umask(0o027)
    try:
        write_bytes(tmp_path / "new.ipynb", b"{}")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.ipynb").stat().st_mode) == 0o640


@POSIX
def test_a_symlinked_target_is_refused_and_left_alone(tmp_path):
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("precious")
    link = tmp_path / "nb.ipynb"
    link.symlink_to(victim)
    with pytest.raises(UnsafeTargetError, match="symbolic link"):
        write_notebook(notebook(), link, redactor=NOTHING)
    assert link.is_symlink() and victim.read_text() == "precious"
    assert names(tmp_path) == ["elsewhere", "nb.ipynb"]
    dangling = tmp_path / "dangling.ipynb"
    dangling.symlink_to(tmp_path / "not-there")
    with pytest.raises(UnsafeTargetError):
        write_bytes(dangling, b"x")
    assert not (tmp_path / "not-there").exists()


@POSIX
def test_links_planted_at_guessable_temporary_names_are_never_followed(tmp_path):
    """The old writer used ``.NAME.PID.tmp``: a link planted there sent the write anywhere."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    path = tmp_path / "nb.ipynb"
    path.write_text("old")
    for guess in (f".nb.ipynb.{os.getpid()}.tmp", ".nb.ipynb.tmp", "nb.ipynb.tmp"):
        (tmp_path / guess).symlink_to(victim)
    write_notebook(notebook(), path, redactor=NOTHING)
    assert victim.read_text() == "precious"
    assert nbformat.read(path, as_version=4).cells[0].source == "x = 1"
    assert all((tmp_path / n).is_symlink() for n in names(tmp_path) if n.endswith(".tmp"))


@POSIX
def test_a_symlinked_folder_on_the_way_is_the_callers_choice(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    write_bytes(tmp_path / "via" / "nb.ipynb", b"{}")
    assert (real / "nb.ipynb").read_bytes() == b"{}"
    assert not (real / "nb.ipynb").is_symlink()


def test_what_is_not_a_regular_file_is_refused(tmp_path):
    (tmp_path / "folder.ipynb").mkdir()
    with pytest.raises(UnsafeTargetError, match="not a regular file"):
        write_bytes(tmp_path / "folder.ipynb", b"{}")
    with pytest.raises(FileNotFoundError, match="no folder"):
        check_target(tmp_path / "missing" / "nb.ipynb")
    assert check_target(tmp_path / "new.ipynb") is None
    assert names(tmp_path) == ["folder.ipynb"]


def test_a_notebook_that_cannot_be_serialised_leaves_the_file(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text("old")
    nb = notebook()
    nb.cells[0].source = object()  # not JSON
    with pytest.raises(TypeError):
        write_notebook(nb, path, redactor=NOTHING)
    assert path.read_text() == "old"
    assert names(tmp_path) == ["nb.ipynb"]


def test_an_interrupt_mid_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    """A second Ctrl-C lands while the file is written: the old file stays whole."""
    path = tmp_path / "nb.ipynb"
    path.write_text("old")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_notebook(notebook(), path, redactor=NOTHING)
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert names(tmp_path) == ["nb.ipynb"]


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE and SIGXFSZ as on Linux")
def test_a_disk_that_fills_up_leaves_the_old_file_and_no_temporary(tmp_path):
    """A real failure half-way through the data: the file-size limit stops the write."""
    path = tmp_path / "nb.ipynb"
    path.write_text("old")
    script = textwrap.dedent(
        f"""
        import resource, signal
        from chapyter_ext.atomic_write import write_bytes
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        try:
            write_bytes({str(path)!r}, b"x" * 100_000)
        except OSError as err:
            print(type(err).__name__, err.errno)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split()[0] == "OSError", out
    assert path.read_text() == "old"
    assert names(tmp_path) == ["nb.ipynb"]
