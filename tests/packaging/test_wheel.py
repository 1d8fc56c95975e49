"""The wheel an administrator installs, without Node.js.

``python -m build`` (from a copy of the checkout: its tracked and untracked files, none it
ignores, so neither the editable install's built extension nor ``node_modules``) makes an
sdist and a wheel; the wheel holds the production build of the JupyterLab extension. Then
docs/deploy.md's ``user-env`` runs as written (the wheel's path and ``/opt/jupyter`` replaced)
with a ``PATH`` that has every command of this machine but Node.js's; ``jupyter server
extension list`` and ``jupyter labextension list`` show chapyter-ext enabled and OK from that
environment; the page's administrator files go into the folders the install made; and the
installed server answers ``chapyter-ext/config`` with their models and serves the extension's
files to JupyterLab. About two minutes on 2 cores (nearly four when other work loads them),
most of it the build's ``npm install`` and its two isolated environments, then pip's install.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from chapyter_ext.testing.jupyter_process import free_port

from ..hub.deploy_doc import PREFIX, ROOT, snippet, wheel_name

pytestmark = pytest.mark.wheel

VERSION = json.loads((ROOT / "package.json").read_text())["version"]
#: Node.js's commands, which the installing machine does not have.
NODE = frozenset({"node", "nodejs", "npm", "npx", "corepack", "yarn", "pnpm"})
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(cmd: list[str], *, log: Path, **kwargs) -> None:
    """Run ``cmd`` with its output in ``log``; fail with the end of it."""
    with log.open("ab") as out:
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        pytest.fail(f"{' '.join(cmd)} exited with {done.returncode}:\n{tail}")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build`` of a copy of the checkout: its dist/ folder."""
    work = tmp_path_factory.mktemp("build")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    source = work / "source"
    for name in filter(None, listed.split("\0")):
        origin = ROOT / name
        if not origin.is_symlink() and not origin.is_file():
            continue  # deleted in the working tree
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, source / name, follow_symlinks=False)
    started = time.monotonic()
    run(
        [sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(source)],
        log=work / "build.log",
    )
    print(f"\n[wheel] python -m build: {time.monotonic() - started:.0f} s")
    return work / "dist"


def test_the_build_makes_an_sdist_and_a_wheel_with_the_prebuilt_extension(dist: Path) -> None:
    sdist = f"chapyter_ext-{VERSION}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == sorted([sdist, wheel_name()])
    names = set(zipfile.ZipFile(dist / wheel_name()).namelist())
    data = f"chapyter_ext-{VERSION}.data/data/"
    extension = f"{data}share/jupyter/labextensions/chapyter-ext/"
    meta = json.loads(zipfile.ZipFile(dist / wheel_name()).read(f"{extension}package.json"))
    entry = meta["jupyterlab"]["_build"]["load"]
    for name in ("package.json", "install.json", "static/style.js", entry):
        assert extension + name in names, name
    assert f"{data}etc/jupyter/jupyter_server_config.d/chapyter_ext.json" in names
    # The production build (the editable install's development build has source maps).
    assert not [n for n in names if n.endswith(".map")]
    with tarfile.open(dist / sdist) as archive:
        members = archive.getnames()
    assert f"chapyter_ext-{VERSION}/chapyter_ext/labextension/static/style.js" in members
    assert not [m for m in members if "node_modules" in m]


def path_without_node(folder: Path) -> str:
    """A PATH with every command of this machine's PATH but Node.js's (``python3`` is the
    Python running the tests; nothing of this checkout's environments)."""
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        directory = Path(entry or ".").resolve()
        if not directory.is_dir() or directory.is_relative_to(ROOT):
            continue
        for command in directory.iterdir():
            link = folder / command.name
            if command.name in NODE or link.exists() or link.is_symlink():
                continue
            if command.is_file() and os.access(command, os.X_OK):
                link.symlink_to(command)
    assert shutil.which("node", path=str(folder)) is None
    return str(folder)


def clean_env(path: str, **extra: str) -> dict[str, str]:
    """This process's environment with ``PATH``, and no Jupyter, Python or model setting."""
    drop = ("JUPYTER", "OPENAI_", "CHAPYTER_", "PYTHON", "VIRTUAL_ENV", "CONDA")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(PATH=path, **extra)
    return env


@contextlib.contextmanager
def jupyter_server(prefix: Path, env: dict[str, str], root: Path) -> Iterator[httpx.Client]:
    """The installed environment's ``jupyter server`` on a free loopback port, with a token."""
    port, token = free_port(), secrets.token_hex(16)
    root.mkdir()
    args = [
        str(prefix / "bin" / "jupyter-server"), "--no-browser", f"--port={port}",
        "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        *(["--ServerApp.allow_root=True"] if os.geteuid() == 0 else []),
    ]  # fmt: skip
    log = root.parent / "server.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            args, env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    client = httpx.Client(
        base_url=f"http://127.0.0.1:{port}/",
        headers={"Authorization": f"token {token}"},
        timeout=30,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the installed server did not start:\n" + log.read_text()[-3000:])
            with contextlib.suppress(httpx.HTTPError):
                if client.get("api/status").status_code == 200:
                    break
            time.sleep(0.25)
        yield client
    finally:
        client.close()
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(20)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def test_the_page_installs_the_wheel_where_there_is_no_node(dist: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    prefix = tmp_path / "opt-jupyter"
    no_node = path_without_node(tmp_path / "bin")
    # The page's install, as written: pip's own configuration and cache (HOME) as they are.
    install = snippet("user-env", prefix=str(prefix), wheel=str(dist / wheel_name()))
    run(["bash", "-e", "-c", install], log=tmp_path / "install.log", env=clean_env(no_node))
    print(f"\n[wheel] the page's install, without Node.js: {time.monotonic() - started:.0f} s")

    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(
        os.pathsep.join([str(prefix / "bin"), no_node]),
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    jupyter = str(prefix / "bin" / "jupyter")
    servers = subprocess.run(
        [jupyter, "server", "extension", "list"], env=env, capture_output=True, text=True
    )
    listed = ANSI.sub("", servers.stdout + servers.stderr)
    assert re.search(r"chapyter_ext\s+enabled", listed), listed
    assert re.search(rf"chapyter_ext {re.escape(VERSION)}\s+OK", listed), listed
    labs = subprocess.run(
        [jupyter, "labextension", "list"], env=env, capture_output=True, text=True
    )
    listed = ANSI.sub("", labs.stdout + labs.stderr)
    # Listed under the installed environment's own folder, enabled and OK.
    section = listed.split(f"{prefix}/share/jupyter/labextensions", 1)[-1].split("\n\n")[0]
    assert re.search(rf"chapyter-ext v{re.escape(VERSION)}\s+enabled\s+OK", section), listed

    # The administrator's files, where the page puts them: into folders the install made.
    files = {
        prefix / "etc" / "jupyter" / "jupyter_server_config.json": snippet("admin-server"),
        prefix / "etc" / "ipython" / "ipython_kernel_config.py": snippet("admin-kernel"),
    }
    for path, text in files.items():
        assert path.parent.is_dir(), f"docs/deploy.md's install leaves no {path.parent}"
        path.write_text(text)

    admin = json.loads(snippet("admin-server"))["ChapyterExtApp"]
    with jupyter_server(prefix, env, tmp_path / "root") as server:
        config = server.get("chapyter-ext/config")
        assert config.status_code == 200, config.text
        assert [m["name"] for m in config.json()["models"]] == list(admin["models"])
        assert config.json()["default"] == admin["default_model"]
        # JupyterLab lists the prebuilt extension and serves its files.
        page = server.get("lab")
        assert page.status_code == 200, page.text
        found = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page.text, re.S)
        assert found, page.text
        federated = json.loads(found[1])["federated_extensions"]
        (ours,) = [e for e in federated if e["name"] == "chapyter-ext"]
        served = server.get(f"lab/extensions/chapyter-ext/{ours['load']}")
        assert served.status_code == 200 and served.content
    print(f"[wheel] installed, listed and served: {time.monotonic() - started:.0f} s")


def test_the_page_installs_into_the_prefix_it_names() -> None:
    """The stand-ins the test replaces are the page's own."""
    install = snippet("user-env")
    assert f"{PREFIX}/bin/pip install ./{wheel_name()}" in install
    assert install.startswith(f"python3 -m venv {PREFIX}\n")
