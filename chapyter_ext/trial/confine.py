"""Confining the forked copy of the kernel before its trial runs, and telling whether this
machine can.

What the child may still do once :func:`confine` returned: read files, compute, write inside
its own scratch folder. What it may not (each enforced by the kernel, not by Python):

- **write, create, delete or rename** anything outside the scratch folder (Landlock);
  change modes, owners, times or extended attributes of any file (seccomp);
- **open sockets** of any kind, so no connection and no name lookup; no SysV or POSIX IPC
  (seccomp);
- **start programs or processes** (``execve``, ``fork``; threads are fine) and **signal,
  trace or inspect other processes** (seccomp, and its own process group);
- use more than its **memory** (address space) and **CPU** budget (rlimits), or any
  **capability** (all dropped, also when the kernel runs as root);
- touch anything it inherited: every inherited socket, pipe, eventfd and device (the
  kernel's ZeroMQ machinery among them) is replaced by a read-only ``/dev/null``, every file
  open for writing is reopened read-only, every shared writable mapping is unmapped.

Bindings: the ``landlock`` package for Landlock, ``pyseccomp`` (over Debian's libseccomp) for
seccomp; ``prctl``, ``capset``, ``setrlimit`` and ``munmap`` through libc with ``ctypes``,
where the standard library has no call.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import resource
import signal
import stat
import sys
from typing import Any

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_DUMPABLE = 4
PR_SET_PTRACER = 0x59616D61
_CAP_LAST = 63
_CAPABILITY_VERSION_3 = 0x20080522
CLONE_THREAD = 0x00010000


#: Denied outright (EPERM): sockets, programs, other processes, the machine's own state.
def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_DENIED = _names(
    "socket socketpair connect bind listen accept accept4 sendto sendmsg sendmmsg "
    "execve execveat fork vfork ptrace process_vm_readv process_vm_writev kcmp "
    "pidfd_open pidfd_getfd pidfd_send_signal tkill setpgid setsid "
    "mount umount2 pivot_root chroot unshare setns move_mount open_tree fsopen fsconfig "
    "fsmount fspick mount_setattr bpf perf_event_open userfaultfd io_uring_setup "
    "io_uring_enter io_uring_register keyctl add_key request_key reboot kexec_load "
    "kexec_file_load init_module finit_module delete_module swapon swapoff acct quotactl "
    "syslog settimeofday clock_settime clock_adjtime adjtimex sethostname setdomainname "
    "iopl ioperm vhangup open_by_handle_at fanotify_init "
    "chmod fchmod fchmodat fchmodat2 chown fchown lchown fchownat utime utimes utimensat "
    "futimesat setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr "
    "shmget shmat shmctl semget semop semtimedop semctl msgget msgsnd msgrcv msgctl "
    "mq_open mq_unlink mq_timedsend mq_notify mq_getsetattr"
)
#: Denied when aimed at another process (the first argument is a pid other than 0 or self).
_OTHERS = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
_OTHERS_OR_ZERO = _names(
    "prlimit64 setpriority sched_setaffinity sched_setscheduler sched_setparam "
    "sched_setattr ioprio_set migrate_pages move_pages"
)
#: ``prctl`` options that would undo the confinement or open the child to others.
_PRCTL_DENIED = (PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_PTRACER)


class ConfineError(Exception):
    """The child could not be confined; ``str()`` is one line (trials are then off)."""


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why trials cannot run in this process, in one line, or None when they can: Linux
    only, with Landlock enabled in the kernel and libseccomp loadable."""
    if not sys.platform.startswith("linux"):
        return f"trial runs need Linux (this kernel runs on {sys.platform})"
    if not hasattr(os, "fork"):
        return "trial runs need os.fork"
    try:
        import landlock  # type: ignore[import-untyped]
    except ImportError:
        return "trial runs need the landlock package in the kernel's environment"
    try:
        import pyseccomp  # type: ignore[import-untyped]
    except (ImportError, OSError):
        return "trial runs need libseccomp (Debian: libseccomp2) in the kernel's environment"
    try:
        version = landlock_version(landlock)
    except OSError as err:
        reason = getattr(err, "reason", None) or os.strerror(err.errno or 0)
        return f"Landlock is not available in this kernel ({' '.join(str(reason).split())})"
    if version < 1:
        return "Landlock is not available in this kernel"
    try:
        pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    except Exception as err:  # a missing or too old libseccomp
        return f"seccomp is not available here ({' '.join(str(err).split())})"
    return None


def landlock_version(landlock: Any) -> int:
    """Landlock's ABI version in this kernel (0 when it has none)."""
    import ctypes

    ctypes.set_errno(0)  # the binding reads errno after the call, whatever it returned
    return int(landlock.landlock_abi_version())


def confine(scratch: str, keep: set[int], *, memory_bytes: int, cpu_seconds: int) -> None:
    """Confine the calling process (a freshly forked child) as the module says; ``keep``:
    its own descriptors (the report pipe). :class:`ConfineError` when any step fails."""
    try:
        os.setpgid(0, 0)  # its own group: a signal to the kernel's group never reaches it
        libc = _libc()
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _neutralise_descriptors(keep)
        _unmap_shared_writable(libc)
        _limit(memory_bytes, cpu_seconds)
        _drop_capabilities(libc)
        _landlock(scratch)
        _seccomp(os.getpid())
    except ConfineError:
        raise
    except Exception as err:
        raise ConfineError(f"{type(err).__name__}: {' '.join(str(err).split())}") from None


def _neutralise_descriptors(keep: set[int]) -> None:
    """Every inherited descriptor made harmless, numbers kept (see the module)."""
    null_read = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    null_write = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    skip = keep | {null_read, null_write}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd in skip:
            continue
        try:
            info = os.fstat(fd)
            flags = _flags(fd)
        except OSError:
            continue  # the listing's own descriptor, already closed
        if fd in (1, 2):
            os.dup2(null_write, fd)
        elif stat.S_ISDIR(info.st_mode) or (
            stat.S_ISREG(info.st_mode) and flags & os.O_ACCMODE == os.O_RDONLY
        ):
            continue
        elif stat.S_ISREG(info.st_mode):
            _reopen_read_only(fd, null_read)
        else:
            os.dup2(null_read, fd)
    os.close(null_write)
    os.close(null_read)


def _flags(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETFL)


def _reopen_read_only(fd: int, fallback: int) -> None:
    """A file the kernel has open for writing, reopened read-only at the same offset (a
    SQLite database stays readable; a write fails)."""
    try:
        offset = os.lseek(fd, 0, os.SEEK_CUR)
        again = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        os.dup2(fallback, fd)
        return
    try:
        os.lseek(again, offset, os.SEEK_SET)
        os.dup2(again, fd)
    finally:
        os.close(again)


def _unmap_shared_writable(libc: Any) -> None:
    """Shared writable mappings (a numpy memmap opened r+, shared memory) would carry the
    child's writes to the file and to other processes: unmapped (touching them then crashes
    the child, and the trial says so)."""
    import ctypes

    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    with open("/proc/self/maps") as maps:
        lines = maps.read().splitlines()
    for line in lines:
        fields = line.split()
        if len(fields) < 2 or fields[1][1] != "w" or fields[1][3] != "s":
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if libc.munmap(start, end - start) != 0:
            raise ConfineError(f"cannot unmap shared memory ({os.strerror(ctypes.get_errno())})")


def _limit(memory_bytes: int, cpu_seconds: int) -> None:
    """Address space: what the kernel already maps plus the budget; CPU seconds; no core."""
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    space = mapped + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (space, space))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    scratch_cap = 256 * 1024 * 1024  # the largest file it may write in its scratch folder
    resource.setrlimit(resource.RLIMIT_FSIZE, (scratch_cap, scratch_cap))


def _drop_capabilities(libc: Any) -> None:
    """No capability left (a kernel running as root keeps uid 0, without its powers)."""
    import ctypes

    if os.geteuid() != 0:
        return
    for cap in range(_CAP_LAST + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise ConfineError(f"cannot drop capability {cap}")

    class Header(ctypes.Structure):
        _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))

    class Data(ctypes.Structure):
        _fields_ = (
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        )

    header = Header(_CAPABILITY_VERSION_3, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise ConfineError(f"cannot drop capabilities ({os.strerror(ctypes.get_errno())})")


def _landlock(scratch: str) -> None:
    """No write of any kind outside ``scratch``; reading and running installed code stay."""
    import ctypes

    import landlock

    access = landlock.FSAccess
    version = landlock_version(landlock)
    rights = (
        access.WRITE_FILE
        | access.REMOVE_DIR
        | access.REMOVE_FILE
        | access.MAKE_CHAR
        | access.MAKE_DIR
        | access.MAKE_REG
        | access.MAKE_SOCK
        | access.MAKE_FIFO
        | access.MAKE_BLOCK
        | access.MAKE_SYM
    )
    if version >= 2:
        rights |= access.REFER
    if version >= 3:
        rights |= access.TRUNCATE
    if version >= 5:
        rights |= access.IOCTL_DEV
    ctypes.set_errno(0)
    ruleset = landlock.Ruleset(restrict_rules=rights)
    ctypes.set_errno(0)
    ruleset.allow(scratch)
    ctypes.set_errno(0)
    ruleset.apply()


def _add(rules: Any, action: int, name: str, *args: Any) -> None:
    # Not a system call of this architecture or libseccomp: skipped.
    with contextlib.suppress(OSError, ValueError, RuntimeError):
        rules.add_rule(action, name, *args)


@functools.lru_cache(maxsize=1)
def _shared_rules() -> Any:
    """The filter's rules that are the same for every child, built once in the kernel (a
    hundred rules take milliseconds); each child adds the few that name its own pid."""
    import pyseccomp as sc

    denied = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    for name in _DENIED:
        _add(rules, denied, name)
    # glibc falls back to clone() when clone3() is missing: a new thread stays possible, a
    # new process (no CLONE_THREAD) does not.
    _add(rules, sc.ERRNO(errno.ENOSYS), "clone3")
    _add(rules, denied, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    for name in _OTHERS_OR_ZERO:
        _add(rules, denied, name, sc.Arg(0, sc.GT, 0))  # 0 is "this process"
    for option in _PRCTL_DENIED:
        _add(rules, denied, "prctl", sc.Arg(0, sc.EQ, option))
    return rules


def prepare() -> None:
    """Build what every child shares before forking (the child's copy is then free)."""
    _shared_rules()


def _seccomp(pid: int) -> None:
    """The system-call filter (see the module); unknown names on an older libseccomp are
    skipped, each rule's absence weakening nothing Landlock or the others do not cover. The
    shared rules are this child's copy of the kernel's (fork copied them): the kernel's own
    filter object is never loaded nor changed."""
    import pyseccomp as sc

    rules = _shared_rules()
    for name in _OTHERS:
        _add(rules, sc.ERRNO(errno.EPERM), name, sc.Arg(0, sc.NE, pid))
    rules.load()
