"""Whether the user must approve a step's code before it runs.

:func:`classify` reads the code as IPython would run it: IPython's ``TransformerManager`` first
turns magics and ``!cmd`` into calls (``get_ipython().system('pip install x')``), then the
Python AST is walked. A reason is one short line naming the category and the code that caused
it, e.g. ``"writes files: df.to_csv('out.csv')"``. The categories: writes files, deletes files,
installs packages, opens the network, runs shell commands, deletes variables (``%reset``), runs
other code (``%run``, ``exec``, a magic not known to be harmless). Policy ``ask`` asks before
every run, ``risky`` only when :func:`classify` finds a reason, ``never`` never.

Code that does not parse is not flagged: IPython runs none of a cell that does not compile.
"""

from __future__ import annotations

import ast
import re

WRITES = "writes files"
DELETES = "deletes files"
INSTALLS = "installs packages"
NETWORK = "opens the network"
SHELL = "runs shell commands"
VARIABLES = "deletes variables"
OTHER_CODE = "runs other code"
#: The code calls ``%ai``/``%%ai`` (asking the model again from inside the turn): never run.
MAGIC_CALL = "calls %ai (asks the model again)"

_SNIPPET = 60


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Magics that only read, time or display (their Python arguments are classified in turn).
_HARMLESS_MAGICS = _words(
    "matplotlib who whos who_ls pwd precision pinfo pinfo2 pdoc pdef psource psearch "
    "history hist page xmode lsmagic magic timeit time prun capture debug load_ext "
    "reload_ext autoreload aimport colors doctest_mode quickref env"
)
# Magics whose argument (line) or body (cell) is Python to classify.
_PYTHON_MAGICS = frozenset({"time", "timeit", "prun", "capture", "debug"})
_SHELL_MAGICS = _words(
    "bash sh script system sx sc perl ruby python2 python3 pypy cmd powershell rm mv cp mkdir"
)
_INSTALL_MAGICS = frozenset({"pip", "conda", "mamba", "micromamba", "uv"})
_WRITE_MAGICS = frozenset({"writefile", "save", "store", "logstart", "notebook", "bookmark"})
_VARIABLE_MAGICS = frozenset({"reset", "reset_selective", "xdel"})
_RUN_MAGICS = frozenset({"run", "load", "loadpy", "macro", "rerun", "recall", "edit"})

_NETWORK_MODULES = _words(
    "requests httpx urllib urllib3 aiohttp socket http ftplib smtplib poplib imaplib "
    "telnetlib paramiko websocket websockets pycurl boto3 botocore webbrowser xmlrpc"
)
_URL = re.compile(r"^\s*(?:https?|ftp|s3|gs|gcs|az|abfs|hf|sftp|ws|wss)://", re.IGNORECASE)
_INSTALL_COMMAND = re.compile(
    r"^\s*(?:[\w./-]*python[\d.]*\s+-m\s+)?(?:pip3?|conda|mamba|micromamba|uv\s+pip|poetry\s+add|"
    r"apt(?:-get)?|brew|npm)\s+(?:install|add|i)\b"
)

# Calls by their full dotted name (after import aliases are resolved).
_CALLS = {
    WRITES: _words(
        "shutil.copy shutil.copy2 shutil.copyfile shutil.copytree shutil.move "
        "shutil.make_archive shutil.unpack_archive os.makedirs os.mkdir os.open os.rename "
        "os.renames os.replace os.symlink os.link os.chmod os.truncate numpy.save numpy.savez "
        "numpy.savez_compressed numpy.savetxt pickle.dump joblib.dump torch.save "
        "tempfile.mkstemp"
    ),
    DELETES: _words("os.remove os.unlink os.rmdir os.removedirs shutil.rmtree"),
    SHELL: _words(
        "os.system os.popen os.posix_spawn os.posix_spawnp pty.spawn "
        "asyncio.create_subprocess_exec asyncio.create_subprocess_shell"
    ),
}
_SHELL_PREFIXES = ("subprocess.", "os.exec", "os.spawn")
_NUMPY_ALIASES = {"np": "numpy"}
# Methods that write a file when given a path (a DataFrame's to_csv() alone returns a string).
_WRITE_METHODS_WITH_PATH = _words(
    "to_csv to_parquet to_excel to_feather to_hdf to_pickle to_stata to_orc to_json "
    "to_html to_latex to_markdown to_xml to_netcdf to_zarr to_sql tofile save write_image "
    "write_html"
)
# The keywords that name where such a method writes.
_PATH_KEYWORDS = _words(
    "path path_or_buf buf excel_writer fname file filename filepath_or_buffer con name store"
)
_WRITE_METHODS = _words("savefig write_text write_bytes touch mkdir symlink_to")
_DELETE_METHODS = frozenset({"unlink", "rmdir"})
_MODE = re.compile(r"^[rwaxbtU+]{1,4}$")
_EXEC_BUILTINS = frozenset({"exec", "eval", "compile", "__import__"})


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Visitor(ast.NodeVisitor):
    def __init__(self, source: str, found: dict[str, None]) -> None:
        self.source = source
        self.found = found
        # Import aliases: local name -> module path ("sp" -> "subprocess").
        self.aliases: dict[str, str] = dict(_NUMPY_ALIASES)

    def flag(self, category: str, what: str) -> None:
        # One reason per category, the first found: enough to decide, short to read.
        if not any(r.startswith(category + ":") for r in self.found):
            self.found[f"{category}: {_snippet(what)}"] = None

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.dump(node)[:_SNIPPET]

    # -- imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            if alias.name.split(".")[0] in _NETWORK_MODULES:
                self.flag(NETWORK, f"import {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
        if module.split(".")[0] in _NETWORK_MODULES:
            self.flag(NETWORK, f"from {module} import …")

    # -- calls

    def resolve(self, func: ast.AST) -> str | None:
        name = _dotted(func)
        if name is None:
            return None
        root, _, rest = name.partition(".")
        if root in self.aliases:
            return self.aliases[root] + ("." + rest if rest else "")
        return name

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if self.ipython_call(node):
            return
        name = self.resolve(node.func)
        what = self.segment(node)
        if name:
            self.named_call(name, node, what)
        if isinstance(node.func, ast.Attribute):
            self.method_call(node.func.attr, node, what)
        for arg in [] if name == "print" else [*node.args, *(k.value for k in node.keywords)]:
            text = _literal(arg)
            if text and _URL.match(text):
                self.flag(NETWORK, what)

    def named_call(self, name: str, node: ast.Call, what: str) -> None:
        for category, names in _CALLS.items():
            if name in names:
                self.flag(category, what)
        root = name.split(".")[0]
        if name.startswith(_SHELL_PREFIXES) or name == "subprocess":
            words = " ".join(
                s for a in ast.walk(node) for s in [_literal(a)] if s is not None
            ).split()
            pip = any(w in ("pip", "pip3", "conda", "mamba") for w in words)
            self.flag(INSTALLS if pip and "install" in words else SHELL, what)
        elif root in _NETWORK_MODULES:
            self.flag(NETWORK, what)
        elif name in ("open", "io.open", "codecs.open", "builtins.open"):
            self.open_call(node, what, builtin=True)
        elif name in _EXEC_BUILTINS and not all(isinstance(a, ast.Constant) for a in node.args):
            self.flag(OTHER_CODE, what)

    def method_call(self, method: str, node: ast.Call, what: str) -> None:
        if method in _WRITE_METHODS:
            self.flag(WRITES, what)
        elif method in _DELETE_METHODS:
            self.flag(DELETES, what)
        elif method in _WRITE_METHODS_WITH_PATH and self.has_target(node):
            self.flag(WRITES, what)
        elif method == "dump" and len(node.args) + len(node.keywords) >= 2:
            # json.dump(obj, f), pickle.dump(obj, f); yaml.dump(obj) alone returns text.
            self.flag(WRITES, what)
        elif method == "open":
            self.open_call(node, what, builtin=False)

    @staticmethod
    def has_target(node: ast.Call) -> bool:
        """Whether a ``to_csv``-like call is given where to write (``df.to_csv(index=False)``
        returns text)."""
        targets = [k.value for k in node.keywords if k.arg in _PATH_KEYWORDS]
        if node.args:
            targets.append(node.args[0])
        return any(not (isinstance(t, ast.Constant) and t.value is None) for t in targets)

    def open_call(self, node: ast.Call, what: str, *, builtin: bool) -> None:
        """``open(p, 'w')`` writes; so do ``Path(p).open('a')`` and ``tarfile.open(p, 'w')``.

        For the builtin the mode is the second argument, and one computed at run time counts as
        writing; for an ``.open`` method (``Image.open(path)``) only a literal that reads as a
        mode (or a ``mode=`` keyword) counts.
        """
        keyword = [k.value for k in node.keywords if k.arg == "mode"]
        if builtin:
            modes = keyword or node.args[1:2]
        else:
            modes = keyword + [a for a in node.args[:2] if _literal(a) is not None]
        for mode_node in modes:
            mode = _literal(mode_node)
            if mode is None:
                if builtin or mode_node in keyword:
                    self.flag(WRITES, what)
            elif _MODE.match(mode) and any(c in mode for c in "wax+"):
                self.flag(WRITES, what)

    # -- IPython

    def ipython_call(self, node: ast.Call) -> bool:
        """``get_ipython().system(...)`` and friends: magics and ``!cmd`` after the transform."""
        if not isinstance(node.func, ast.Attribute):
            return False
        owner = node.func.value
        if not (
            isinstance(owner, ast.Call)
            and isinstance(owner.func, ast.Name)
            and owner.func.id == "get_ipython"
        ):
            return False
        method, args = node.func.attr, [_literal(a) for a in node.args]
        if method in ("system", "getoutput"):
            command = args[0] if args and args[0] is not None else "…"
            if _INSTALL_COMMAND.match(command):
                self.flag(INSTALLS, f"!{command}")
            else:
                self.flag(SHELL, f"!{command}")
        elif method in ("run_line_magic", "run_cell_magic", "magic"):
            magic = (args[0] or "") if args else ""
            rest = [a or "" for a in args[1:]]
            self.magic(magic, method == "run_cell_magic", rest)
        else:
            return False
        return True

    def magic(self, name: str, cell: bool, rest: list[str]) -> None:
        prefix = "%%" if cell else "%"
        line = rest[0] if rest else ""
        shown = f"{prefix}{name} {line}".strip()
        if cell and len(rest) > 1 and rest[1].strip():
            shown += ": " + rest[1].strip().split("\n")[0]
        if name == "ai":
            self.found.setdefault(MAGIC_CALL, None)
        elif name in _INSTALL_MAGICS:
            self.flag(INSTALLS, shown)
        elif name in _SHELL_MAGICS:
            self.flag(SHELL, shown)
        elif name in _WRITE_MAGICS:
            self.flag(WRITES, shown)
        elif name in _VARIABLE_MAGICS:
            self.flag(VARIABLES, shown)
        elif name in _RUN_MAGICS or name not in _HARMLESS_MAGICS:
            self.flag(OTHER_CODE, shown)
        if name in _PYTHON_MAGICS:
            # The timed or captured code runs too: classify it the same way.
            body = rest[1] if cell and len(rest) > 1 else line
            _classify_into(body, self.found)


def _classify_into(code: str, found: dict[str, None]) -> None:
    from IPython.core.inputtransformer2 import TransformerManager

    for line in code.splitlines():
        if re.match(r"\s*%%?ai(\s|$)", line):
            found.setdefault(MAGIC_CALL, None)
    try:
        source = TransformerManager().transform_cell(code)
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    _Visitor(source, found).visit(tree)


def classify(code: str) -> list[str]:
    """Why ``code`` may need approval: one line per category found, naming the first code
    found in it, in order ([] if none)."""
    found: dict[str, None] = {}
    _classify_into(code, found)
    return list(found)


def needs_approval(policy: str, reasons: list[str]) -> bool:
    """Whether ``policy`` ("ask", "risky" or "never") asks before running code with
    ``reasons`` (from :func:`classify`)."""
    if policy == "never":
        return False
    if policy == "risky":
        return bool(reasons)
    return True


def approval(policy: str, code: str) -> tuple[bool, list[str]]:
    """``(needs_approval, reasons)`` for running ``code`` under ``policy``."""
    reasons = classify(code)
    return needs_approval(policy, reasons), reasons
