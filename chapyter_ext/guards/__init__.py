"""The guard rails for everything a model writes that a feature shows or runs, in one place.

- :mod:`.verdict`: whether code may be offered as runnable (``check_code``): it parses as an
  IPython cell; with the small-model profile, the names and columns it reads exist
  (:mod:`.candidate`, also ``%%ai``'s candidate check: :mod:`.code_names` reads the code,
  :mod:`.kernel_checks` holds it against the kernel, :mod:`.request` against the request),
  read through :mod:`.names` (the live namespace, or the chat's snapshot on the server).
- :mod:`.repair`: cheap repairs of a failing cell from its error (typos, one past the end,
  brackets), for the small model's Fix.
- :mod:`.rebinding`: with the small-model profile, code offered for a request keeps the
  user's data (a new name unless the request asks to change it) and shows its result.
- :mod:`.review`: review first with the bundled model.
- :mod:`.answers`: chat and Explain answers that echo their instructions (:mod:`.echo`: what
  the server built, whole or in part); unmatched fences; each code block's verdict.
- :mod:`chapyter_ext.complete.suggestions`: inline completion suggests code or nothing.
"""

from .candidate import Candidate, check_candidate
from .names import KernelNames, LiveNames, SnapshotNames, snapshot_names
from .repair import Repair, repairs
from .request import requested_target
from .review import REVIEW_NOTE, review_first
from .verdict import Verdict, check_code, same_code, syntax_problem

__all__ = [
    "REVIEW_NOTE",
    "Candidate",
    "KernelNames",
    "LiveNames",
    "Repair",
    "SnapshotNames",
    "Verdict",
    "check_candidate",
    "check_code",
    "repairs",
    "requested_target",
    "review_first",
    "same_code",
    "snapshot_names",
    "syntax_problem",
]
