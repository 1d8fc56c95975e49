"""Every node of a cell checked against the allow-list (pass 2 of the analysis): names,
attributes, items, strings that spell a URL, definitions, imports."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any, ClassVar

from .categories import DYNAMIC, INSTALLS, NETWORK, OTHER_CODE, SHELL, STATE, UNPROVEN
from .lists.functions import (
    BY_NAME,
    CONFIG,
    DENIED,
    DYNAMIC_BUILTINS,
    KNOWN_IMPORTS,
    NETWORK_MODULES,
    SAFE_BUILTINS,
    URL,
)
from .lists.methods import KIND_METHODS, MEMORY_METHODS, RICH_REPRS
from .names import (
    BUILTINS,
    METHOD_LABEL,
    Held,
    allowed,
    canonical,
    dunder,
    label_of,
    ruled,
    safe_method,
    under,
)
from .tree import BINDING, children, literal, walk
from .values import Values, fold

_SNIPPET = 60


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


class Checks(Values):
    """Pass 2 of one cell's analysis: every node checked, the first cause of each category kept
    in ``found``. A node is checked by the ``c_<type>`` method of the class (``HANDLERS``), else
    its children are; calls and IPython's syntax are the subclasses' (:mod:`.calls`,
    :mod:`.ipython`)."""

    #: Node type -> the ``c_<type>`` method that checks it, for each subclass.
    HANDLERS: ClassVar[dict[type, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        handlers = {
            getattr(ast, name[2:]): getattr(cls, name)
            for name in dir(cls)
            if name.startswith("c_") and hasattr(ast, name[2:])
        }
        handlers.update(dict.fromkeys((ast.BinOp, ast.JoinedStr), cls.c_text))
        handlers.update({ast.AsyncFunctionDef: cls.c_FunctionDef, ast.AsyncWith: cls.c_With})
        handlers[ast.ImportFrom] = cls.c_Import
        cls.HANDLERS = handlers

    def __init__(self, source: str, found: dict[str, str], known: frozenset[str]) -> None:
        super().__init__(known)
        self.source, self.found = source, found
        self.quiet = 0  # > 0 where strings are shown or compared, not fetched

    def run(self, tree: ast.Module) -> None:
        """Both passes over a parsed cell: what every name may hold, then every statement."""
        for node in walk(tree):
            if type(node) in BINDING:
                self.bind_node(node)
        for stmt in tree.body:
            self.check(stmt)

    def flag(self, category: str, node: ast.AST | str, verb: str = "") -> None:
        """One reason per category, the first found: enough to decide, short to read."""
        if category not in self.found:
            text = node if isinstance(node, str) else ast.get_source_segment(self.source, node)
            what = _snippet(text or ast.unparse(node))  # type: ignore[arg-type]
            self.found[category] = (
                f"{verb} `{what}`, which is {UNPROVEN}" if verb else f"{category}: {what}"
            )

    def refuse(self, path: str, node: ast.AST | str, verb: str = "calls") -> None:
        """``path`` (a dotted name or a method) is not allowed: say which category, if known."""
        label = label_of(path)
        if label == SHELL and isinstance(node, ast.Call):
            words = " ".join(s for a in ast.walk(node) for s in [literal(a)] if s).split()
            if "install" in words and {"pip", "pip3", "conda", "mamba"} & set(words):
                label = INSTALLS
        if label:
            self.flag(label, node)
        else:
            self.flag(UNPROVEN, node.func if isinstance(node, ast.Call) else node, verb)

    def check(self, node: ast.AST, ctx: str = "value") -> None:
        """Check ``node`` read as a ``value``, the ``base`` of an attribute or item, a callee,
        or a ``func`` handed over to be called."""
        handler = self.HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, ctx)
        elif isinstance(node, ast.AST):
            for child in children(node):
                self.check(child)

    def c_Expr(self, node: ast.Expr, ctx: str) -> None:
        if not isinstance(node.value, ast.Constant):  # a docstring or a bare string says nothing
            self.check(node.value)

    def c_Name(self, node: ast.Name, ctx: str) -> None:
        if node.id == "__builtins__" or (dunder(node.id) and node.id not in BUILTINS):
            self.flag(DYNAMIC, node)
        if isinstance(node.ctx, ast.Load) and ctx in ("value", "func"):
            for held in self.name_values(node.id):
                self.use(held, node, ctx)

    def use(self, held: Held, node: ast.AST, ctx: str) -> None:
        """A value read (``ctx`` "value") or handed over to be called ("func")."""
        kind, name = held.kind, held.name
        if kind == "qual" and not allowed(canonical(name)):
            self.refuse(name, node, "uses")
        elif kind == "builtin" and name in DYNAMIC_BUILTINS:
            self.flag(DYNAMIC, node)
        elif kind == "builtin" and name not in SAFE_BUILTINS:
            self.refuse(name, node, "uses")
        elif kind == "meth" and (name in METHOD_LABEL or not (ctx == "value" or safe_method(name))):
            self.refuse(name, node)
        elif ctx == "func" and kind in ("ext", "param", "self"):
            self.flag(UNPROVEN, node, "calls")

    def c_Attribute(self, node: ast.Attribute, ctx: str) -> None:
        if dunder(node.attr):
            self.flag(DYNAMIC, node)
        if not isinstance(node.ctx, ast.Load):  # ``x.a = v``, ``del x.a``
            for base in self.values(node.value):
                path = f"{base.name}.{node.attr}"
                if (base.kind == "qual" and not under(path, CONFIG)) or path in BY_NAME:
                    self.flag(STATE, node)
        elif ctx in ("value", "func"):
            for held in self.values(node):
                if held.kind == "meth" and ctx == "func":
                    self.method_ok(self.values(node.value), node.attr, node, plain=True)
                else:
                    self.use(held, node, ctx)
        elif any(h.kind == "qual" and label_of(h.name) == DYNAMIC for h in self.values(node)):
            self.flag(DYNAMIC, node)  # sys.modules['os']
        self.check(node.value, "base")

    def method_ok(
        self, bases: Iterable[Held], name: str, node: ast.AST, plain: bool = False
    ) -> bool:
        """Whether method ``name`` may be called on all of ``bases`` (``plain``: by something
        else, with arguments this cell does not show); refuses it if not."""
        for base in bases:
            kind = base.kind
            if kind in KIND_METHODS:  # a path, a file open for reading, a buffer, an image
                ok = name in KIND_METHODS[kind] or (kind == "buffer" and safe_method(name, plain))
            elif kind in ("inst", "self", "class"):
                ok = name in self.methods.get(base.name, ()) or safe_method(name, plain)
            elif kind == "qual":
                ok = allowed(canonical(f"{base.name}.{name}"))
            else:  # in-memory mutators only on values made here (not ``fs.remove(p)``)
                ok = kind == "bad" or safe_method(name, plain)
                ok = ok or (kind == "data" and name in MEMORY_METHODS)
            if not ok:
                self.refuse(name, node)
                return False
        return True

    def argument(self, node: ast.AST, mode: str | None, quiet: bool = False) -> None:
        """Check an argument; ``mode`` "func" or "agg" when the callee calls it ("agg": a
        function, a method's name, or lists and dicts of them)."""
        self.quiet += quiet
        if mode in (None, "mapping") or isinstance(node, (ast.Lambda, ast.Call)):
            self.check(node)
        elif isinstance(node, ast.Constant):
            if mode == "agg" and isinstance(node.value, str) and not safe_method(node.value, True):
                self.refuse(node.value, node)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            keys: list[Any] = node.keys if isinstance(node, ast.Dict) else []
            elts: list[Any] = node.values if isinstance(node, ast.Dict) else node.elts
            if isinstance(node, ast.Tuple) and mode == "agg" and len(elts) == 2:
                keys, elts = elts[:1], elts[1:]  # named aggregation: (column, function)
            for key in keys:
                if key is not None:
                    self.check(key)
            for elt in elts:
                self.argument(elt, mode)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            self.check(node, "func")
        else:
            self.check(node)
            self.flag(UNPROVEN, node, "calls")
        self.quiet -= quiet

    def c_Subscript(self, node: ast.Subscript, ctx: str) -> None:
        if not isinstance(node.ctx, ast.Load):  # ``os.environ['X'] = v``
            if any(b.kind == "qual" and not under(b.name, CONFIG) for b in self.values(node.value)):
                self.flag(STATE, node)
        elif ctx == "value" and not self.quiet:
            self.url(node)
        self.check(node.value, "base")
        self.check(node.slice)

    def c_Constant(self, node: ast.Constant, ctx: str) -> None:
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not self.quiet and isinstance(value, str) and URL.search(value):
            self.flag(NETWORK, node)

    def c_text(self, node: ast.AST, ctx: str) -> None:
        """A string made of pieces (``'ht' + 'tps://'``, an f-string)."""
        if not self.quiet and not isinstance(getattr(node, "op", ast.Add()), (ast.Div, ast.Sub)):
            self.url(node)
        for child in children(node):
            self.check(child)

    def c_Compare(self, node: ast.Compare, ctx: str) -> None:
        self.quiet += 1  # ``url == 'https://...'`` fetches nothing
        for child in children(node):
            self.check(child)
        self.quiet -= 1

    def url(self, node: ast.AST) -> None:
        text = fold(node, self)
        if text is not None and URL.search(text):
            self.flag(NETWORK, node)

    def c_FunctionDef(self, node: Any, ctx: str) -> None:
        if node.name in RICH_REPRS:
            self.flag(OTHER_CODE, f"def {node.name} (the browser renders what it returns)")
        for decorator in node.decorator_list:
            self.argument(decorator, "func")
        for child in (node.args, node.returns, *node.body):
            if child is not None:
                self.check(child)

    def c_arg(self, node: ast.arg, ctx: str) -> None:
        if node.annotation is not None:  # evaluated when the function is defined
            self.check(node.annotation)

    def c_ClassDef(self, node: ast.ClassDef, ctx: str) -> None:
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.argument(expr, "func")  # a base's metaclass and __init_subclass__ run
        for stmt in node.body:
            self.check(stmt)

    def c_With(self, node: Any, ctx: str) -> None:
        for item in node.items:  # entering an object from elsewhere runs its __enter__
            expr = item.context_expr
            named = isinstance(expr, (ast.Name, ast.Attribute))
            if named and any(v.kind in ("ext", "param") for v in self.values(expr)):
                self.flag(UNPROVEN, expr, "enters")
        for child in children(node):
            self.check(child)

    def c_Import(self, node: ast.Import | ast.ImportFrom, ctx: str) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.importable(alias.name)
            return
        module = node.module or ""
        if node.level:
            self.flag(UNPROVEN, f"from {'.' * node.level}{module} import …", "imports")
        elif self.importable(module):
            for alias in node.names:
                path = f"{module}.{alias.name}"
                if alias.name == "*" and not allowed(module):
                    self.flag(UNPROVEN, module, "imports everything from")
                elif alias.name != "*" and not allowed(canonical(path)) and not ruled(path):
                    self.refuse(path, f"from {module} import {alias.name}", "imports")

    def importable(self, module: str) -> bool:
        parts = module.split(".")
        if any(".".join(parts[:i]) in DENIED for i in range(1, len(parts) + 1)):
            self.refuse(module, f"import {module}", "imports")
        elif parts[0] in NETWORK_MODULES and not allowed(module):
            self.flag(NETWORK, f"import {module}")
        elif parts[0] not in KNOWN_IMPORTS:
            self.flag(UNPROVEN, module, "imports")
        else:
            return True
        return False
