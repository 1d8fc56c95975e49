"""IPython's magics by what they do (``%pip`` installs, ``%%bash`` runs shell commands, ``%who``
only reads), and the options that change what they do."""

from __future__ import annotations

import re

from . import pairs, words

#: Magics that only read, time or display (their Python arguments are classified in turn).
HARMLESS_MAGICS = words(
    "matplotlib who whos who_ls pwd precision pinfo pinfo2 pdoc pdef psource pfile psearch "
    "history hist page xmode lsmagic magic timeit time prun capture load_ext reload_ext "
    "autoreload aimport colors doctest_mode quickref env config tb latex"
)
#: Magics whose argument (line) or body (cell) is Python to classify.
PYTHON_MAGICS = words("time timeit prun capture")
#: Cell magics whose body the browser renders, and as what (checked as ``HTML(...)`` is).
SHOWN_MAGICS = pairs("html=text/html markdown=text/markdown svg=image/svg+xml")
#: What ``%config`` may set: these classes' traits, and these traits (display only); any other
#: changes the session (``Chapyter.*``: the extension's own settings, the trial's machinery).
CONFIG_CLASSES = words("InlineBackend IPCompleter Completer PlainTextFormatter")
CONFIG_TRAITS = words(
    "InteractiveShell.ast_node_interactivity ZMQInteractiveShell.ast_node_interactivity"
)
#: Options that take a value (``%timeit -n 100 f()``); options that write, and whose.
VALUE_OPTIONS = words("-n -r -p -l -s -T -D -f")
WRITE_OPTIONS = words("-T -D -f")
WRITE_OPTION_MAGICS = words("prun history hist")
#: Extensions ``%load_ext`` may load.
EXTENSION_MAGICS = words("load_ext reload_ext")
KNOWN_EXTENSIONS = words("autoreload chapyter_ext chapyter")
SHELL_MAGICS = words(
    "bash sh script system sx sc perl ruby python python2 python3 pypy cmd powershell rm mv cp "
    "mkdir ls cat less more man alias unalias rehashx"
)
INSTALL_MAGICS = words("pip conda mamba micromamba uv")
WRITE_MAGICS = words("writefile save store logstart notebook bookmark")
STATE_MAGICS = words("cd pushd popd dhist")
VARIABLE_MAGICS = words("reset reset_selective xdel")
#: A shell command (``!pip install x``, ``!python -m pip install x``) that installs packages.
INSTALL_COMMAND = re.compile(
    r"^\s*(?:[\w./-]*python[\d.]*\s+-m\s+)?(?:pip3?|conda|mamba|micromamba|uv\s+pip|poetry\s+add|"
    r"apt(?:-get)?|brew|npm)\s+(?:install|add|i)\b"
)
