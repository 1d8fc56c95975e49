"""Reading a secret: a secret-named environment variable (``os.environ['OPENAI_API_KEY']``,
``os.getenv('GITHUB_TOKEN')``, ``%env HF_TOKEN``, ``!echo $DB_PASSWORD``), the whole environment
(``dict(os.environ)``, ``print(os.environ)``, ``%env``, ``!env``, ``!printenv``) or a file
that holds credentials (``.env``, ``~/.aws/credentials``, ``Path.home() / '.ssh' / 'id_rsa'``).
A trial cannot see a read, and what is read goes on to outputs, the notebook on disk and the
model: ``KNOWN``, always asks. What counts as a secret is the redactor's one rule
(:func:`~chapyter_ext.redact.is_secret_env_name`, :func:`~chapyter_ext.redact.is_secret_file`),
with the caller's extra names (``secret_names`` of :func:`~.decide.analyse`); a variable read
by a name the cell does not spell could be any of them. Secret stores' readers (``dotenv``,
``keyring``, ``netrc``, Colab's and Kaggle's secrets, ``get_secret``) are labels
(:mod:`.lists.labels`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from ..redact import is_secret_env_name, is_secret_file
from .categories import SECRETS
from .lists.functions import ENVIRONS
from .names import canonical
from .options import Options
from .tree import literal, walk
from .values import fold

#: Calls that read one variable, by the name they are given first.
ENV_GETTERS = frozenset(
    {f"{e}.{m}" for e in ENVIRONS for m in ("get", "pop", "setdefault", "__getitem__")}
    | {"os.getenv", "os.getenvb"}
)
#: Methods of the environment that give its names only, or change it (a change is the
#: session's: :mod:`.lists.labels`).
ENV_NAMES_ONLY = frozenset(
    {f"{e}.{m}" for e in ENVIRONS for m in ("keys", "__contains__", "update", "clear")}
)
#: What ``known_types`` says of a name from an earlier cell that is the environment's.
_ENV_TYPES = ("os._Environ", "module:os.environ", "module:os.getenv")
#: Shell commands that print the environment: always, or when given no operand.
_PRINTS_ENV = frozenset({"printenv"})
_PRINTS_ENV_BARE = frozenset({"env", "set", "export", "declare", "typeset"})
_SHELL_SPLIT = re.compile(r"[;&|\n()`]+")
_SHELL_VARIABLE = re.compile(r"\$\{?([A-Za-z_]\w*)")
_SHELL_WORD = re.compile(r"""[\s'"=<>]+""")


class Secrets(Options):
    """Secrets a cell reads (see the module); ``secret_names``: the caller's extra names. A
    cell that spells no ``env`` and has no name from an earlier cell that is the environment
    reads none of it (most cells: nothing here runs for them)."""

    def __init__(self, *args: Any, secret_names: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.secret_names = frozenset(secret_names)
        self.reads_env = "env" in self.source or any(
            t.startswith(_ENV_TYPES) for t in self.types.values()
        )
        self.names_seen: set[int] | None = None  # reads of the environment that see names only

    def secret_variable(self, name: str) -> bool:
        return is_secret_env_name(name, self.secret_names)

    # -- the environment ---------------------------------------------------------------------

    def env_use(self, name: str, node: ast.AST, ctx: str) -> bool:
        """Whether module name ``name`` read as a value (``ctx`` "value") or handed over to be
        called ("func") is the environment's; flags what it reads: the whole environment
        (printed, iterated, copied, shown), or variables by names known at run time
        (``map(os.getenv, names)``)."""
        path = canonical(name)
        if path in ENVIRONS:
            if id(node) not in self.names_only():
                self.flag(SECRETS, node)
            return True
        if path in ENV_GETTERS and ctx == "func":
            self.flag(SECRETS, node)
        return False

    def names_only(self) -> set[int]:
        """The nodes where the whole environment gives its names only (``'HOME' in
        os.environ``, ``len(os.environ)``) or is bound to a name whose uses are checked
        (``env = os.environ``); found once, in the cells that read the environment."""
        if self.names_seen is None:
            seen: set[int] = set()
            for node in walk(self.tree):
                if isinstance(node, ast.Compare):
                    if all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                        seen.update(map(id, node.comparators))
                elif isinstance(node, ast.Assign):
                    if all(isinstance(t, ast.Name) for t in node.targets):
                        seen.add(id(node.value))
                elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "len":
                    seen.update(map(id, node.args))
            self.names_seen = seen
        return self.names_seen

    def env_item(self, node: ast.Subscript) -> None:
        """``os.environ['NAME']`` read."""
        if any(b.kind == "qual" and canonical(b.name) in ENVIRONS for b in self.values(node.value)):
            self.env_variable(node.slice, node)

    def env_call(self, path: str, node: ast.Call) -> None:
        """A module function called: the environment's (``os.getenv(name)``,
        ``os.environ.items()``) reads what it is given, or all of it."""
        if path in ENV_GETTERS:
            keywords = {k.arg: k.value for k in node.keywords}
            first = node.args[0] if node.args else keywords.get("key")
            self.env_variable(first, node)
        elif path.rsplit(".", 1)[0] in ENVIRONS and path not in ENV_NAMES_ONLY:
            self.flag(SECRETS, node)

    def env_variable(self, key: ast.AST | None, node: ast.AST) -> None:
        """One variable read, named by ``key``: secret-named, or a name the cell does not
        spell (it could be any)."""
        names = self.spelled_names(key)
        if names is None or any(self.secret_variable(n) for n in names):
            self.flag(SECRETS, node)

    def spelled_names(self, node: ast.AST | None) -> list[str] | None:
        """The names ``node`` may hold, if the cell spells them all: a literal, a name bound
        once to one, the loop variable of a literal list; None when a run decides."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            sources = self.bindings.get(node.id, [])
            if sources and all(
                isinstance(s, tuple)
                and s[0] == "elem"
                and isinstance(s[1], (ast.List, ast.Tuple, ast.Set))
                for s in sources
            ):
                items = [literal(e) for s in sources for e in s[1].elts]
                return None if None in items else items  # type: ignore[return-value]
        text = fold(node, self)
        return None if text is None or "\x00" in text else [text]

    # -- IPython ---------------------------------------------------------------------------

    def env_magic(self, line: str, shown: str) -> None:
        """``%env`` (the whole environment) or ``%env NAME`` (one variable) read."""
        name = line.strip()
        if not name or "$" in name or "{" in name or self.secret_variable(name):
            self.flag(SECRETS, shown)

    def shell_secrets(self, command: str, shown: str) -> None:
        """A shell command that prints the environment (``env``, ``printenv``, a bare
        ``set``), expands a secret-named variable (``$OPENAI_API_KEY``) or names a
        credentials file (``cat ~/.aws/credentials``)."""
        for segment in _SHELL_SPLIT.split(command):
            words = segment.split()
            if words[:1] == ["sudo"]:
                words = words[1:]
            if not words:
                continue
            bare = (
                len(words) == 1
                or (  # ``env -0``, ``export -p`` (``set -e`` sets)
                    words[0] != "set" and all(w[:1] == "-" for w in words[1:])
                )
            )
            if words[0] in _PRINTS_ENV or (words[0] in _PRINTS_ENV_BARE and bare):
                self.flag(SECRETS, shown)
                return
        if any(self.secret_variable(v) for v in _SHELL_VARIABLE.findall(command)) or any(
            is_secret_file(w) for w in _SHELL_WORD.split(command) if w
        ):
            self.flag(SECRETS, shown)
