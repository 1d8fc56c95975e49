"""Whether the user must approve code before it runs: the agent's steps (``Chapyter.agent_policy``),
``%%ai``'s answers and Fix proposals (``Chapyter.run_policy``), and what a confined trial of the
code decides instead (:mod:`.consent`).

:func:`analyse` lists why code may need approval, each :class:`Reason` with its level:
``KNOWN`` (a named harm, or code that could tell a trial from the real run or reach its
machinery: always asks), ``UNPROVEN_LEVEL`` (not known to be safe: a trial decides, else it
asks) and ``LIKELY`` (passes on a name-based guess: a trial decides, else it runs).
:func:`classify` is its texts but the ``LIKELY`` ones; policy ``ask`` asks before every run,
``never`` never, ``risky`` unless :func:`classify` finds nothing.

Proving is an allow-list (:mod:`.lists`): every call must resolve to a listed function or
method (builtins, pandas/numpy/scipy/matplotlib and friends, plotting that only shows, reading
local files), to the notebook's own functions (``known_functions``; a call of one is ``LIKELY``:
its body was consented to, not every call) or to a function, lambda or class the code defines,
whose bodies are checked the same way whether called or not. Anything else gets a reason naming
the cause: ``"calls `r`, which is not known to be safe"``, ``"writes files: df.to_csv('x')"``.

The code is read as IPython runs it (IPython's ``TransformerManager`` turns magics and ``!cmd``
into calls), in two passes over the AST: what every name the code binds may hold (a module or a
name in one, a value made here, an object from elsewhere), then every node. Module functions
are matched by dotted name after aliases (``o.system`` after ``import os as o``). What a name
from an earlier cell holds comes from ``known_types`` (:func:`namespace_types` reads a kernel's
namespace): a module, or a name reached from one, behaves as if imported here; an object of a
type the lists know (pandas, numpy, matplotlib, builtins' containers; paths, files, images;
network clients, databases, stores, loggers, processes, IPython's shell, chapyter-ext's own
objects: :mod:`.lists.types`) has its methods checked against that kind's list; a type no list
knows is ``UNPROVEN_LEVEL``; a name it does not type is an object of unknown type, whose
safe-sounding methods (``df.head()``) and attributes set (``df.columns = ...``) are ``LIKELY``.
No dynamic features: ``exec``, ``__import__``, ``getattr`` with a built name, dunder attributes,
``globals()``, ``sys.modules``, ``get_ipython()`` beyond the magics IPython writes. A name called
that is neither defined here, a builtin nor known asks; one merely read is fine, but a callable
that is not allowed, read as a value (``r = shutil.rmtree``, ``map(os.remove, files)``), asks.

Closed as classes, not by example: whatever unpickles (pickle and its kin, ``joblib``, ``torch``,
``np.load(allow_pickle=...)``, unsafe YAML, shelves, HDF stores, Keras models) or loads code
(``ctypes``, ``np.ctypeslib``, database extensions, ``importlib`` and ``runpy``, the import path)
runs other code; whatever posts (logging's network handlers and ``dictConfig``, tqdm's chat bars,
tracking services), resolves a name (``socket``, ``dns``) or serves (a ``webagg`` backend, a
``browser`` renderer, bokeh and panel) opens the network; any attribute of a module set (in the
cell, through an alias, ``setattr`` or a module from an earlier cell) changes the session; format
templates reaching a dunder (``'{0.__class__}'.format(x)``, ``format_map``, ``string.Formatter``,
Jinja's ``{{ }}``) look names up; archives extract by writing files; plotting backends, renderers
and ``%matplotlib`` are checked by name against safe choices; content shown as HTML, Markdown, SVG,
CSS or JSON (``HTML(...)``, ``%%html``, a Styler's CSS, any literal holding markup) opens the
network when it fetches from another host, by the one rule of
:mod:`chapyter_ext.untrusted.remote_content` (protocol-relative ``//host``, ``url()``, ``@import``,
``srcset``...); process ids, threads, frames, tracing and audit hooks, ``gc``'s object lists,
``resource``, ``/proc`` paths and ``chapyter_ext`` itself inspect the process. Strings spelling a
URL (folded from pieces too) open the network, except where they are printed, compared or searched.

Reading a secret is no harm a trial can see, yet what is read goes on to outputs, the notebook
on disk and the model, so it is ``KNOWN`` (:mod:`.secrets`): a secret-named environment
variable (``os.environ['OPENAI_API_KEY']``, ``os.getenv('GITHUB_TOKEN')``, ``%env HF_TOKEN``,
``!echo $DB_PASSWORD``; the redactor's rule, plus the caller's ``secret_names``), the whole
environment or a variable whose name only a run tells (``dict(os.environ)``, ``%env``,
``!env``), a credentials file (``.env``, ``~/.aws/credentials``, ``Path.home() / '.ssh' /
'id_rsa'``, spelled or joined) and secret stores (``dotenv``, ``keyring``, notebook secrets).
Reading other variables (``os.getenv('HOME')``) and asking whether one is set (``'X' in
os.environ``) stay quiet.

Limits: what only a run can tell stays ``LIKELY`` or ``UNPROVEN_LEVEL`` for the trial (a method
of an object whose type is not given, HTML made at run time, a callable from elsewhere); a call
of a logger from an earlier cell is allowed whatever handlers that cell attached; a URL or name
assembled from values the cell does not spell; timing (a trial may run slower). Code that does
not parse is not flagged: IPython runs none of a cell that does not compile.

Layout, bottom up: :mod:`.categories` (what a reason starts with), :mod:`.levels` (how sure it
is) and :mod:`.lists` (the data); :mod:`.tree` (reading the AST) and :mod:`.names` (whether a
dotted name or method is allowed, what a value or a known type holds); one cell's analysis as
layers of one class, :mod:`.values` (pass 1), :mod:`.findings` (what is kept, and the walk),
:mod:`.texts` (what strings spell), :mod:`.options` (settings: backends, renderers),
:mod:`.secrets` (reading the environment and secret stores), :mod:`.checks` (pass 2),
:mod:`.ipython` (magics, ``!cmd``) and :mod:`.calls` (the whole :class:`~.calls.Cell`); on
top, :mod:`.decide` (``analyse``, ``classify`` and the policies), :mod:`.known` (the
notebook's own functions and types) and :mod:`.consent` (trials).
"""

from __future__ import annotations

from .categories import (
    CERTIFICATES,
    DELETES,
    DYNAMIC,
    GUESSED_CALL,
    GUESSED_CHANGE,
    INSTALLS,
    MAGIC_CALL,
    NETWORK,
    OTHER_CODE,
    OWN_CALL,
    PROBES,
    PROCESSES,
    SECRETS,
    SHELL,
    STATE,
    UNPROVEN,
    VARIABLES,
    WRITES,
)
from .decide import (
    KNOWN,
    LIKELY,
    UNPROVEN_LEVEL,
    Reason,
    analyse,
    approval,
    classify,
    hold_reason,
    needs_approval,
)
from .known import (
    bound_names,
    defined_functions,
    imported_types,
    namespace_functions,
    namespace_types,
)

__all__ = [
    "CERTIFICATES",
    "DELETES",
    "DYNAMIC",
    "GUESSED_CALL",
    "GUESSED_CHANGE",
    "INSTALLS",
    "KNOWN",
    "LIKELY",
    "MAGIC_CALL",
    "NETWORK",
    "OTHER_CODE",
    "OWN_CALL",
    "PROBES",
    "PROCESSES",
    "SECRETS",
    "SHELL",
    "STATE",
    "UNPROVEN",
    "UNPROVEN_LEVEL",
    "VARIABLES",
    "WRITES",
    "Reason",
    "analyse",
    "approval",
    "bound_names",
    "classify",
    "defined_functions",
    "hold_reason",
    "imported_types",
    "namespace_functions",
    "namespace_types",
    "needs_approval",
]
