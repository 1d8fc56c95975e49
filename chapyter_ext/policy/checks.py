"""Every node of a cell checked against the allow-list (pass 2 of the analysis): names,
attributes, items, definitions, imports; strings are :mod:`.texts`', settings :mod:`.options`',
calls :mod:`.calls`'."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

from .categories import (
    CERTIFICATES,
    DYNAMIC,
    GUESSED_CALL,
    GUESSED_CHANGE,
    NETWORK,
    OTHER_CODE,
    OWN_CALL,
    PROBES,
    STATE,
    UNPROVEN,
    WRITES,
)
from .levels import LIKELY
from .lists.functions import (
    CERTIFICATE_ATTRIBUTES,
    CONFIG,
    DENIED,
    DYNAMIC_BUILTINS,
    KNOWN_IMPORTS,
    NETWORK_MODULES,
    PROBE_MODULES,
    PURE,
    SAFE_BUILTINS,
)
from .lists.methods import KIND_METHODS, MEMORY_METHODS, RICH_REPRS
from .lists.types import KIND_LABELS, KIND_READS
from .names import (
    BUILTINS,
    METHOD_LABEL,
    OPAQUE,
    OWN,
    Held,
    allowed,
    canonical,
    dunder,
    label_of,
    ruled,
    safe_method,
    under,
)
from .secrets import Secrets
from .tree import children


class Checks(Secrets):
    """Pass 2 of one cell's analysis: every node checked, the first cause of each category kept
    in ``found`` (:mod:`.findings`); calls and IPython's syntax are the subclasses'
    (:mod:`.calls`, :mod:`.ipython`)."""

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
        if kind == "qual" and self.reads_env and self.env_use(name, node, ctx):
            pass  # the environment, whole: its names only, or a secret read
        elif kind == "qual" and not allowed(canonical(name)):
            self.refuse(name, node, "uses")
        elif kind == "builtin" and name in DYNAMIC_BUILTINS:
            self.flag(DYNAMIC, node)
        elif kind == "builtin" and name not in SAFE_BUILTINS:
            self.refuse(name, node, "uses")
        elif kind == "meth" and (name in METHOD_LABEL or not (ctx == "value" or safe_method(name))):
            self.refuse(name, node)
        elif ctx == "func" and kind in OPAQUE:
            self.flag(UNPROVEN, node, "calls")
        elif ctx == "func" and held == OWN:
            self.flag(OWN_CALL, node, "calls", LIKELY, "defined by an earlier cell")

    def c_Attribute(self, node: ast.Attribute, ctx: str) -> None:
        if dunder(node.attr):
            self.flag(DYNAMIC, node)
        if not isinstance(node.ctx, ast.Load):  # ``x.a = v``, ``del x.a``
            if node.attr in CERTIFICATE_ATTRIBUTES:  # on any object: a session, a context
                self.flag(CERTIFICATES, node)
            for base in self.values(node.value):
                path = f"{base.name}.{node.attr}"
                if base.kind == "qual" and self.attribute_set(path, node):
                    continue  # a setting chosen (``pio.renderers.default = 'png'``)
                if base.kind == "qual" and not under(path, CONFIG):
                    self.flag(PROBES if path.startswith("chapyter_ext") else STATE, node)
                else:
                    self.changed(base, node)
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
            kind, guessed = base.kind, False
            if kind in KIND_METHODS:  # a path, a file open for reading, a buffer, an image
                ok = name in KIND_METHODS[kind] or (kind == "buffer" and safe_method(name, plain))
            elif kind in ("inst", "self", "class"):
                own = name in self.methods.get(base.name, ())
                ok = own or safe_method(name, plain)
                guessed = not own and kind != "class"
            elif kind == "qual":
                ok = allowed(canonical(f"{base.name}.{name}"))
            elif kind == "own":  # of a class the notebook defined: its code was consented to
                ok, callee = True, node.func if isinstance(node, ast.Call) else node
                self.flag(OWN_CALL, callee, "calls", LIKELY, "defined by an earlier cell")
            elif kind in KIND_LABELS or kind in KIND_READS or kind == "typed":
                ok = name in KIND_READS.get(kind, ())  # known types: their own lists
            else:  # in-memory mutators only on values made here (not ``fs.remove(p)``)
                ok = kind == "bad" or safe_method(name, plain)
                ok = ok or (kind == "data" and name in MEMORY_METHODS)
                guessed = kind in ("ext", "param", "meth")
            if not ok:
                self.refuse_method(kind, name, node)
                return False
            if guessed:
                self.guess(GUESSED_CALL, node, "calls")
        return True

    def changed(self, base: Held, node: ast.Attribute | ast.Subscript) -> None:
        """An attribute or item of ``base`` set or deleted (not a module's: that is ``STATE``)."""
        kind = base.kind
        if kind in ("ext", "param", "meth", "own"):
            self.guess(GUESSED_CHANGE, node, "sets")
        elif kind in KIND_LABELS or kind in KIND_READS or kind == "typed":
            label = KIND_LABELS.get(kind, {}).get("*")
            self.flag(label, node) if label else self.flag(UNPROVEN, node, "sets")

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
            for base in self.values(node.value):
                if base.kind == "qual" and not under(base.name, CONFIG):
                    self.flag(STATE, node)
                elif base.kind == "qual":
                    self.option_set(base.name, node)
                elif base.kind == "store":  # ``store['df'] = df`` writes the file
                    self.flag(WRITES, node)
                else:
                    self.changed(base, node)
        else:
            if self.reads_env:
                self.env_item(node)
            if ctx == "value":
                self.url(node)
        self.check(node.value, "base")
        self.check(node.slice)

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
            if named and any(v.kind in OPAQUE and v.kind != "self" for v in self.values(expr)):
                self.flag(UNPROVEN, expr, "enters")
        for child in children(node):
            self.check(child)

    def c_Import(self, node: ast.Import | ast.ImportFrom, ctx: str) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.importable(alias.name)
            return
        module = node.module or ""
        for alias in node.names if not node.level else ():  # the name's category first
            path = canonical(f"{module}.{alias.name}")
            if label_of(path) and not allowed(path) and not ruled(path):
                self.refuse(path, f"from {module} import {alias.name}", "imports")
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
        if parts[0] in PROBE_MODULES:
            self.flag(PROBES, f"import {module}")
        elif any(".".join(parts[:i]) in DENIED for i in range(1, len(parts) + 1)) or (
            len(parts) > 1 and parts[0] in PURE and not allowed(module) and not ruled(module)
        ):
            self.refuse(module, f"import {module}", "imports")
        elif parts[0] in NETWORK_MODULES and not allowed(module):
            self.flag(NETWORK, f"import {module}")
        elif parts[0] not in KNOWN_IMPORTS:
            self.flag(UNPROVEN, module, "imports")
        else:
            return True
        return False
