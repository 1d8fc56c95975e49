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
#: The code calls ``%ai``/``%%ai`` (asking the model again from inside the turn): never run.
MAGIC_CALL = "calls %ai (asks the model again)"
#: The category of a reason naming what could not be proven ("calls `r`, which is not ...").
UNPROVEN = "not known to be safe"
