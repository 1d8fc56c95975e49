"""The calls of a cell: to a module's function, a builtin, a method, or a value from
elsewhere; the rules of calls whose effect depends on their arguments (``open(p, 'w')``,
``df.to_csv(path)``, ``np.load(f, allow_pickle=True)``); the arguments a callee calls."""

from __future__ import annotations

import ast
import re
from typing import Any

from .categories import DYNAMIC, NETWORK, OTHER_CODE, OWN_CALL, UNPROVEN, WRITES
from .ipython import IPythonSyntax
from .levels import LIKELY
from .lists.functions import (
    ADDRESS_DISPLAYS,
    CALLABLE_FUNCTIONS,
    CALLABLE_KEYWORDS,
    DYNAMIC_BUILTINS,
    FORMULA_NAMES,
    HTML_DISPLAYS,
    MODE,
    OPENERS,
    PLOT_BACKENDS,
    SAFE_BUILTINS,
    SUPER_DUNDERS,
    WRITE_KEYWORDS,
)
from .lists.methods import CALLABLE_METHODS, TARGET_KEYWORDS, TARGET_WRITERS, TEXT_CALLEES
from .names import (
    BUILTINS,
    EXT,
    MADE_HERE,
    OPAQUE,
    OWN,
    Held,
    allowed,
    canonical,
    dunder,
    ruled,
    safe_method,
)
from .texts import PATH_JOINERS
from .tree import is_super, literal, parse, truthy
from .values import fold

#: Methods that make text from a template or pieces: the text is checked as a literal is.
FORMATTERS = frozenset({"join", "format", "format_map", "vformat"})


def _position(entry: tuple[int, str] | None) -> dict[Any, str]:
    return {entry[0]: entry[1]} if entry else {}


def _has_target(node: ast.Call) -> bool:
    """Whether a ``to_csv``-like call is given where to write (``df.to_csv()`` returns text)."""
    targets = [k.value for k in node.keywords if k.arg in TARGET_KEYWORDS or k.arg is None]
    return any(
        not (isinstance(t, ast.Constant) and t.value is None) for t in targets + node.args[:1]
    )


class Cell(IPythonSyntax):
    """One cell's analysis, whole: what its names hold (:mod:`.values`), its nodes checked
    (:mod:`.checks`), IPython's syntax (:mod:`.ipython`) and, here, its calls: which function or
    method each resolves to, the rules of those that write, read or run code depending on their
    arguments, and the arguments a callee calls in turn."""

    def c_Call(self, node: ast.Call, ctx: str) -> None:
        outer, self.quiet = self.quiet, 0  # print(pd.read_csv(url)) still fetches url
        try:
            self.call(node, ctx)
        finally:
            self.quiet = outer

    def call(self, node: ast.Call, ctx: str) -> None:
        attribute = self.getattr_literal(node)
        if attribute is not None:  # getattr(x, 'name') reads x.name
            for child in (attribute, *node.args[2:]):
                self.check(child, ctx if child is attribute else "value")
            return
        if self.ipython(node):
            return
        func, named = node.func, False
        modes: dict[Any, str] = {}
        if isinstance(func, ast.Attribute):
            name, receiver = func.attr, func.value
            quiet, named = name in TEXT_CALLEES, name in ("agg", "aggregate")
            bases = () if is_super(receiver) and name in SUPER_DUNDERS else self.values(receiver)
            if bases and dunder(name):
                self.flag(DYNAMIC, func)
            for base in bases:
                if base.kind == "qual":
                    modes.update(self.module_call(canonical(f"{base.name}.{name}"), node))
                elif base.kind != "bad":
                    self.method_rules(base, name, node)
            if bases and all(b.kind != "qual" for b in bases) and self.method_ok(bases, name, node):
                modes.update(_position(CALLABLE_METHODS.get(name)))
            self.check(receiver, "base")
        else:
            quiet = isinstance(func, ast.Name) and func.id in TEXT_CALLEES
            for held in self.values(func):
                if held.kind == "qual":
                    modes.update(self.module_call(canonical(held.name), node))
                elif held.kind == "builtin":
                    modes.update(self.builtin_call(held.name, node))
                elif held.kind == "meth":  # f = df.to_csv; f('out.csv'); getattr(z, 'extract')()
                    read = self.getattr_literal(func) if isinstance(func, ast.Call) else None
                    bases = self.values(read.value) if read is not None else (EXT,)
                    for base in bases:
                        self.method_rules(base, held.name, node)
                    self.method_ok(bases, held.name, node)
                elif held.kind in OPAQUE:
                    self.flag(UNPROVEN, func, "calls")
                elif held == OWN or held.kind == "own":
                    self.flag(OWN_CALL, func, "calls", LIKELY, "defined by an earlier cell")
            if not isinstance(func, ast.Name):
                self.check(func, "callee")
            elif func.id == "__builtins__" or (dunder(func.id) and func.id not in BUILTINS):
                self.flag(DYNAMIC, func)
        for i, arg in enumerate(node.args):
            self.argument(arg, modes.get(i), quiet)
        for keyword in node.keywords:
            if keyword.arg == "storage_options":
                self.flag(NETWORK, node)
            elif keyword.arg == "backend" and literal(keyword.value) not in PLOT_BACKENDS:
                self.flag(OTHER_CODE, node)  # pandas imports a plotting backend by its name
            mode = modes.get(keyword.arg) or CALLABLE_KEYWORDS.get(keyword.arg or "")
            if named and isinstance(keyword.value, ast.Tuple):  # agg(total=('sales', 'sum'))
                mode = "agg"
            self.argument(keyword.value, mode, quiet)
        if isinstance(func, ast.Attribute) and func.attr in FORMATTERS:
            self.url(node)  # the text made, and the template's fields (``'{0.__class__}'``)
            if func.attr != "join":
                for template in (func.value, *node.args[:1]):
                    text = fold(template, self)
                    if text is not None and "{" in text:
                        self.format_fields(text, template)

    def builtin_call(self, name: str, node: ast.Call) -> dict[Any, str]:
        args, keywords = node.args, {k.arg: k.value for k in node.keywords}
        if name == "open":
            self.open_mode(node, 1)
        elif name in ("setattr", "delattr") and len(args) > 1 and literal(args[1]):
            target = ast.Attribute(args[0], literal(args[1]) or "", ast.Store())
            self.check(ast.copy_location(target, node))
        elif name not in SAFE_BUILTINS:
            self.flag(DYNAMIC, node) if name in DYNAMIC_BUILTINS else self.refuse(name, node)
        elif name == "print" and ("file" in keywords or None in keywords):
            file = keywords.get("file")
            if file is None or any(
                v.kind != "buffer" and v.name not in ("sys.stdout", "sys.stderr")
                for v in self.values(file)
            ):
                self.flag(WRITES, node)
        elif name == "display" and "raw" in keywords and truthy(keywords["raw"]):
            self.flag(OTHER_CODE, node)  # a raw mime bundle: HTML the browser runs
        elif (name == "help" and not args) or (name == "type" and len(args) > 1):
            self.flag(UNPROVEN, node, "calls")
        elif name == "iter" and len(args) == 2:
            return {0: "func"}
        return _position(CALLABLE_FUNCTIONS.get(name))

    def module_call(self, path: str, node: ast.Call) -> dict[Any, str]:
        """A module's function called: its rule, or the allow-list; which arguments it calls."""
        args, keywords = node.args, {k.arg: k.value for k in node.keywords}
        first = args[0] if args else keywords.get("expr", keywords.get("formula"))
        if self.reads_env:
            self.env_call(path, node)
        if path in PATH_JOINERS and len(args) > 1:
            self.joined_path(args, node)
        if self.setting_call(path, node):
            pass  # matplotlib.use('webagg'), plt.rc('backend', ...), pd.set_option(...)
        elif path in OPENERS:
            self.open_mode(node, OPENERS[path])
        elif path == "numpy.load":
            if truthy(keywords.get("allow_pickle", keywords.get(None))):
                self.flag(OTHER_CODE, node)
            if literal(keywords.get("mmap_mode")) not in (None, "r", "c"):
                self.flag(WRITES, node)
        elif path == "numpy.memmap":
            if literal(keywords.get("mode", args[2] if len(args) > 2 else None)) not in ("r", "c"):
                self.flag(WRITES, node)
        elif ruled(path) == "formula":
            self.nested_expression(first, node, formula=True)
        elif path in HTML_DISPLAYS:
            if "url" in keywords:  # IPython fetches it in the kernel
                self.flag(NETWORK, node)
            content = first if first is not None else keywords.get("data")
            self.shown(content, HTML_DISPLAYS[path], node)
        elif path in ADDRESS_DISPLAYS:
            self.addresses([*args, *keywords.values()], node)
        elif path in ("operator.methodcaller", "operator.attrgetter"):
            name = literal(first)
            if name is None or any(dunder(p) for p in name.split(".")):
                self.flag(DYNAMIC, node)
            elif path == "operator.methodcaller" and not safe_method(name, True):
                self.refuse(name, node)
        elif path in WRITE_KEYWORDS and set(WRITE_KEYWORDS[path]) & set(keywords):
            self.flag(WRITES, node)  # logging.basicConfig(filename=...), yaml.dump(d, stream=f)
        elif path == "yaml.dump" and len(args) > 1:
            self.flag(WRITES, node)
        elif not allowed(path):
            self.refuse(path, node)
            return {}
        return _position(
            CALLABLE_FUNCTIONS.get(path) or CALLABLE_FUNCTIONS.get(path.rsplit(".", 1)[0] + ".")
        )

    def method_rules(self, base: Held, name: str, node: ast.Call) -> None:
        """The rules of methods that write, read or run code depending on their arguments."""
        args, keywords = node.args, {k.arg: k.value for k in node.keywords}
        first = args[0] if args else keywords.get("expr", keywords.get("formula"))
        if name in TARGET_WRITERS and _has_target(node):
            self.flag(WRITES, node)
        elif name == "open":
            self.open_mode(node, {"path": 0, "file": 1}.get(base.kind))
        elif name == "joinpath" and base.kind == "path" and isinstance(node.func, ast.Attribute):
            self.joined_path([node.func.value, *args], node)
        elif name in ("query", "eval", "from_formula") and base.kind not in ("path", "file"):
            self.nested_expression(first, node, formula=name == "from_formula")
        elif name == "info" and keywords.get("buf") is not None:
            self.flag(WRITES, node)
        elif name == "show" and "renderer" in keywords:
            self.choose("plotly.io.renderers.default", keywords["renderer"], node)
        elif name in ("replace", "rename", "copy") and base.kind not in MADE_HERE:
            # A path's replace/rename/copy moves or copies a file; data's take other arguments.
            one = len(args) == 1 and not keywords
            if (name == "copy" and args) or (
                one and not isinstance(args[0], (ast.Dict, ast.List, ast.Lambda))
            ):
                self.flag(UNPROVEN, node.func, "calls")

    def open_mode(self, node: ast.Call, position: int | None) -> None:
        """``open(p, 'w')`` writes; so does a mode computed at run time. For an ``.open``
        method of unknown signature only literals that read as a mode count."""
        args = node.args
        modes = [k.value for k in node.keywords if k.arg == "mode"]
        unknown = any(k.arg is None for k in node.keywords)
        unknown |= any(isinstance(a, ast.Starred) for a in args)
        if position is not None:
            modes += args[position : position + 1]
        else:
            modes += [a for a in args if MODE.match(literal(a) or "")]
            unknown |= any(literal(a) is None for a in args[1:])
        for mode in [fold(m, self) for m in modes]:
            unknown |= mode is None or bool(set(mode) & set("wax+\x00"))
        if unknown:
            self.flag(WRITES, node)

    def nested_expression(
        self, node: ast.AST | None, call: ast.Call, formula: bool = False
    ) -> None:
        """A pandas expression (``df.query('a > @b')``) or a model formula, checked as code."""
        text = fold(node, self)
        if text is not None and "\x00" not in text:
            text = re.sub(r"`[^`]*`", "_c", re.sub(r"@(?=[A-Za-z_])", "", text))
            if formula:
                text = re.sub(r"[~:|]", "+", text).lstrip("+ ") or "0"
            parsed = parse(text)
            if parsed is not None:
                nested = type(self)(
                    parsed[0], self.found, self.known, self.types, secret_names=self.secret_names
                )
                nested.plain = FORMULA_NAMES if formula else frozenset()
                return nested.run(parsed[1])
        self.flag(OTHER_CODE, call)
