"""The categories of a reason: its start ("writes files: df.to_csv('out.csv')"), one reason per
category found. The labels of :mod:`.lists` name them; the callers compare them (``MAGIC_CALL``
never runs, whatever the policy)."""

from __future__ import annotations

WRITES = "writes files"
DELETES = "deletes files"
INSTALLS = "installs packages"
NETWORK = "opens the network"
SHELL = "runs shell commands"
VARIABLES = "deletes variables"
OTHER_CODE = "runs other code"
DYNAMIC = "looks names up at run time"
STATE = "changes the session"
PROCESSES = "starts or stops processes"
#: A secret-named environment variable, the whole environment or a credentials file read
#: (:mod:`.secrets`): a trial cannot see a read.
SECRETS = "reads a secret"
#: An attribute that decides whether TLS certificates are checked, set on any object (a
#: ``requests`` session's ``verify``, an SSL context's ``check_hostname``).
CERTIFICATES = "changes certificate checks"
#: Code that could tell a confined trial from the real run or reach the trial's machinery
#: (process ids, threads, frames, tracing hooks, ``/proc``, ``chapyter_ext`` itself).
PROBES = "inspects the process"
#: The code calls ``%ai``/``%%ai`` (asking the model again from inside the turn): never run.
MAGIC_CALL = "calls %ai (asks the model again)"
#: The category of a reason naming what could not be proven ("calls `r`, which is not ...").
UNPROVEN = "not known to be safe"
#: What passes by a name-based guess only (level ``LIKELY``): a safe-sounding method of an
#: object of unknown type, and an attribute or item set on one.
GUESSED_CALL = "calls a method of an object of unknown type"
#: A call of the notebook's own function (``LIKELY``): its body was consented to when its cell
#: ran, not its every call (it may be handed other arguments).
OWN_CALL = "calls the notebook's own functions"
GUESSED_CHANGE = "changes an object of unknown type"
