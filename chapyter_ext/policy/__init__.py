"""Whether the user must approve code before it runs: the agent's steps (``Chapyter.agent_policy``),
``%%ai``'s answers and Fix proposals (``Chapyter.run_policy``).

Policy ``ask`` asks before every run, ``never`` never, ``risky`` unless :func:`classify` proves
the code only computes, reads and plots. Proving is an allow-list (:mod:`.lists`): every
call must resolve to a listed function or method (builtins, pandas/numpy/scipy/matplotlib and
friends, plotting that only shows, reading local files), to the notebook's own functions
(``known_functions``) or to a function, lambda or class the code defines, whose bodies are
checked the same way whether called or not. Anything else asks, with one line naming the cause:
``"calls `r`, which is not known to be safe"``, ``"writes files: df.to_csv('out.csv')"``.

The code is read as IPython runs it (IPython's ``TransformerManager`` turns magics and ``!cmd``
into calls), in two passes over the AST: what every name the code binds may hold (a module or a
name in one, a value made here, an object from elsewhere), then every node. Module functions
are matched by dotted name after aliases (``o.system`` after ``import os as o``), methods of
objects of unknown type by name (``df.groupby('a').sum()``). No dynamic features: ``exec``,
``__import__``, ``getattr`` with a built name, dunder attributes, ``globals()``, ``sys.modules``,
``get_ipython()`` beyond the magics IPython writes. A name called that is neither defined here,
a builtin nor known asks; one merely read is fine, but a callable that is not allowed, read as a
value (``r = shutil.rmtree``, ``map(os.remove, files)``), asks: it would carry the harm into
allowed code. Strings spelling a URL (folded from pieces too) open the network, except where
they are printed, compared or searched.

Decided: a notebook function is known when a cell of the notebook defined it and ran (the user
consented then); its body is not checked again. Results of allowed calls may be called
(``interp1d(x, y)(xs)``; ``np.vectorize(f)`` checks ``f``).

Limits (these ask nothing): an object from outside the cell whose read-side-named method does
harm (a ``requests`` session's ``get``, an ``HDFStore``'s ``append``, a PIL image's ``show``,
a callable from elsewhere given to ``Series.map``); a URL assembled at run time from values the
cell does not spell; HTML a DataFrame's ``style`` shows. Code that does not parse is not
flagged: IPython runs none of a cell that does not compile.

Layout, bottom up: :mod:`.categories` (what a reason starts with) and :mod:`.lists` (the data);
:mod:`.tree` (reading the AST) and :mod:`.names` (whether a dotted name or method is allowed,
what a value may hold); one cell's analysis as layers of one class, :mod:`.values` (pass 1),
:mod:`.checks` (pass 2), :mod:`.ipython` (magics, ``!cmd``, parsing as IPython does) and
:mod:`.calls` (the whole :class:`~.calls.Cell`); on top, :mod:`.decide` (``classify`` and the
policies) and :mod:`.known` (the notebook's own functions).
"""

from __future__ import annotations

from .categories import (
    DELETES,
    DYNAMIC,
    INSTALLS,
    MAGIC_CALL,
    NETWORK,
    OTHER_CODE,
    PROCESSES,
    SHELL,
    STATE,
    UNPROVEN,
    VARIABLES,
    WRITES,
)
from .decide import approval, classify, hold_reason, needs_approval
from .known import bound_names, defined_functions, namespace_functions

__all__ = [
    "DELETES",
    "DYNAMIC",
    "INSTALLS",
    "MAGIC_CALL",
    "NETWORK",
    "OTHER_CODE",
    "PROCESSES",
    "SHELL",
    "STATE",
    "UNPROVEN",
    "VARIABLES",
    "WRITES",
    "approval",
    "bound_names",
    "classify",
    "defined_functions",
    "hold_reason",
    "namespace_functions",
    "needs_approval",
]
