"""A real JupyterHub for the tests: a user environment with its own ``sys.prefix``, the hub
with configurable-http-proxy, and an optional Kernel Gateway (what a user's browser does is
:mod:`.client`).

Everything listens on loopback ports chosen at run time; every process is started in its own
session and ended by its id.
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
import sysconfig
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from chapyter_ext.testing.jupyter_process import free_port

from .deploy_doc import HUB_URL, snippet

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PASSWORD = "hub-test-password-0123"
USERS = ("alice", "bob", "carol")


def proxy_command() -> str:
    """configurable-http-proxy, installed from tests/hub/package-lock.json."""
    path = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
    if not path.exists():
        raise RuntimeError(
            "configurable-http-proxy is missing: run `npm ci` in tests/hub (scripts/test.sh does)"
        )
    return str(path)


# -- the user environment ----------------------------------------------------------------------


def make_user_env(dest: Path, *, admin_server: str, admin_kernel: str) -> Path:
    """An environment like the page's ``/opt/jupyter``, with ``sys.prefix`` = ``dest``.

    It reuses this checkout's installed packages (a ``.pth`` file adds this environment's
    site-packages) and shares its ``share/jupyter`` (the built labextension, JupyterLab's
    assets), so nothing is installed; its ``etc/jupyter`` and ``etc/ipython`` are its own:
    the extension's enabling file, as pip puts it there, and the administrator's files.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = dest / "lib" / version / "site-packages"
    parent_site = sysconfig.get_paths()["purelib"]
    (site / "_chapyter_hub_test.pth").write_text(f"import site; site.addsitedir({parent_site!r})\n")
    (dest / "share").mkdir(exist_ok=True)
    (dest / "share" / "jupyter").symlink_to(Path(sys.prefix) / "share" / "jupyter")
    shutil.copytree(Path(sys.prefix) / "etc" / "jupyter", dest / "etc" / "jupyter")
    # The administrator's files (the page's snippets).
    (dest / "etc" / "jupyter" / "jupyter_server_config.json").write_text(admin_server)
    (dest / "etc" / "ipython").mkdir(parents=True)
    (dest / "etc" / "ipython" / "ipython_kernel_config.py").write_text(admin_kernel)
    # The console script pip would have written.
    script = dest / "bin" / "jupyterhub-singleuser"
    script.write_text(
        f"#!{dest / 'bin' / 'python'}\nimport sys\nfrom jupyterhub.singleuser import main\n"
        "sys.exit(main())\n"
    )
    script.chmod(0o755)
    return dest


def user_env_from_doc(dest: Path) -> Path:
    """:func:`make_user_env` with the page's administrator files (admin-server, admin-kernel)."""
    return make_user_env(
        dest, admin_server=snippet("admin-server"), admin_kernel=snippet("admin-kernel")
    )


# -- processes ---------------------------------------------------------------------------------


@dataclass
class Process:
    """A process we started (in its own session), its log file, and how to end it."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM, then SIGKILL to its process group (its children are ours too)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)


def start_process(
    name: str, cmd: list[str], *, env: dict[str, str], cwd: Path, log: Path
) -> Process:
    """Start ``cmd`` with its output in ``log``."""
    with log.open("ab") as out:
        popen = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return Process(name, popen, log)


def base_env(home: Path, user_env: Path) -> dict[str, str]:
    """A clean environment: no Jupyter or model settings of the test run leak in."""
    keep = ("LANG", "LC_ALL", "TZ", "SYSTEMROOT", "NODE_PATH")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PATH"] = os.pathsep.join(
        [str(user_env / "bin"), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
    )
    env["HOME"] = str(home)
    return env


def wait_for(check: Callable[[], Any], timeout: float, what: str, process: Process | None = None):
    """Poll ``check`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        if process is not None and process.popen.poll() is not None:
            raise RuntimeError(f"{process.name} exited: see {process.log}\n{tail(process.log)}")
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, OSError) as err:
            last = err
        time.sleep(0.25)
    raise TimeoutError(f"timed out waiting for {what} ({last!r})")


def tail(path: Path, lines: int = 40) -> str:
    """The end of a log, for a failure message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# -- the hub -----------------------------------------------------------------------------------

_GLUE = """\
# Test-only settings: loopback ports, state in the test's folder, the test's users and
# one OS user for everyone (SimpleLocalProcessSpawner; never in production).
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {pid_file!r}
c.JupyterHub.db_url = "sqlite:///{db}"
c.JupyterHub.cookie_secret_file = {cookie_file!r}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.SharedPasswordAuthenticator.user_password = {password!r}
c.Authenticator.allowed_users = set({users!r})
c.JupyterHub.services = [{{"name": "hub-test", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [
    {{"name": "hub-test", "scopes": ["admin:users", "admin:servers", "tokens"],
      "services": ["hub-test"]}}
]
"""

_GLUE_AFTER = """\
# Test-only: this machine runs everything as root, which jupyter_server refuses by default.
c.Spawner.args.append("--ServerApp.allow_root=True")
# Test-only: root owns /opt/jupyter here, so jupyter_core would read the environment's config
# before the user's ~/.jupyter; on a hub the users do not own it, and their config comes first.
c.Spawner.environment["JUPYTER_PREFER_ENV_PATH"] = "0"
"""


@dataclass
class Hub:
    """A running JupyterHub and what the tests need to reach it."""

    workdir: Path
    user_env: Path
    url: str
    admin_token: str
    keys: dict[str, str]
    process: Process
    logs: list[Path] = field(default_factory=list)
    #: Users log in at the identity provider (the page's GenericOAuthenticator), not the form.
    oauth: bool = False

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A call to the hub's REST API as the test's admin service."""
        headers = {"Authorization": f"token {self.admin_token}"}
        url = f"{self.url}/hub/api{path}"
        return httpx.request(method, url, headers=headers, timeout=60, **kwargs)

    def log_text(self) -> str:
        """Everything the hub, the proxy, the servers, the kernels (and the gateway) wrote."""
        return "\n".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    def server(self, name: str) -> dict[str, Any] | None:
        """``name``'s default server as the hub's REST API shows it (pending or ready), or None."""
        return self.api("GET", f"/users/{name}").json().get("servers", {}).get("")

    def start(self, name: str) -> None:
        """Start ``name``'s server unless the hub already has it, spawning or running.

        Logging in with the form already starts it (the hub sends a new login to
        ``/hub/spawn``): a second start of a server that got ready meanwhile is refused with
        "is already running", so a start is asked for only where there is none.
        """
        if self.server(name) is None:
            response = self.api("POST", f"/users/{name}/server")
            assert response.status_code in (201, 202), response.text

    def wait_ready(self, name: str) -> None:
        """Wait until ``name``'s server has started and answers through the proxy."""
        wait_for(
            lambda: (self.server(name) or {}).get("ready"),
            180,
            f"{name}'s server",
            self.process,
        )

    def token(self, name: str) -> str:
        """A new API token of ``name`` (what JupyterLab's cookie stands for)."""
        response = self.api("POST", f"/users/{name}/tokens", json={"note": "hub test"})
        assert response.status_code in (200, 201), response.text
        return response.json()["token"]


def start_hub(
    workdir: Path,
    user_env: Path,
    *,
    keys: dict[str, str],
    snippets: str,
    keyed_authenticator: bool,
    extra_logs: list[Path] = (),  # type: ignore[assignment]
) -> Hub:
    """Write ``jupyterhub_config.py`` (test glue, then the page's ``snippets``) and start it.

    ``keyed_authenticator``: the snippets set the page's authenticator that keeps auth state
    (hub-keys-auth-state, pointed at a loopback :mod:`.identity_provider`), and the page's
    hub address in them stands for this hub's; else the test glue's shared-password form.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    keys_file = workdir / "llm-keys.json"
    keys_file.write_text(json.dumps(keys))
    keys_file.chmod(0o600)
    port = free_port()
    admin_token = secrets.token_hex(16)
    glue = _GLUE.format(
        port=port,
        hub_port=free_port(),
        api_port=free_port(),
        proxy=proxy_command(),
        pid_file=str(workdir / "proxy.pid"),
        db=workdir / "jupyterhub.sqlite",
        cookie_file=str(workdir / "cookie_secret"),
        homes=str(workdir / "home"),
        password=PASSWORD,
        users=list(USERS),
        admin_token=admin_token,
    )
    url = f"http://127.0.0.1:{port}"
    if keyed_authenticator:
        assert HUB_URL in snippets, "no page's authenticator to point at this hub"
        snippets = snippets.replace(HUB_URL, url)
    else:
        glue += '\nc.JupyterHub.authenticator_class = "shared-password"\n'
    config = workdir / "jupyterhub_config.py"
    config.write_text(glue + "\n" + snippets + "\n" + _GLUE_AFTER)
    env = base_env(workdir, user_env)
    env["JUPYTERHUB_CRYPT_KEY"] = secrets.token_hex(32)
    log = workdir / "hub.log"
    process = start_process(
        "jupyterhub",
        [sys.executable, "-m", "jupyterhub", "-f", str(config)],
        env=env,
        cwd=workdir,
        log=log,
    )
    hub = Hub(workdir, user_env, url, admin_token, keys, process, oauth=keyed_authenticator)
    hub.logs = [log, *extra_logs]
    wait_for(lambda: hub.api("GET", "/").status_code == 200, 90, "the hub", process)
    return hub


def start_kernel_gateway(workdir: Path, user_env: Path, command: str) -> tuple[Process, int]:
    """The page's Kernel Gateway command, in the user environment, on a free port."""
    port = free_port()
    line = " ".join(command.replace("\\\n", " ").split())
    line = line.replace("--KernelGatewayApp.port=8889", f"--KernelGatewayApp.port={port}")
    args = line.split()
    home = workdir / "kg-home"
    home.mkdir(parents=True, exist_ok=True)
    env = base_env(home, user_env)
    while re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", args[0]):  # VAR=value before the command
        name, value = args.pop(0).split("=", 1)
        env[name] = value
    assert args[:2] == [str(user_env / "bin" / "jupyter"), "kernelgateway"], args
    process = start_process(
        "kernel gateway",
        [str(user_env / "bin" / "python"), "-m", "kernel_gateway", *args[2:]],
        env=env,
        cwd=home,
        log=workdir / "kernel-gateway.log",
    )
    url = f"http://127.0.0.1:{port}/api/kernelspecs"
    wait_for(lambda: httpx.get(url, timeout=5).status_code == 200, 90, "the gateway", process)
    return process, port


@contextlib.contextmanager
def running(*processes: Process) -> Iterator[None]:
    """End ``processes`` on the way out, last started first."""
    try:
        yield
    finally:
        for process in reversed(processes):
            process.stop()
