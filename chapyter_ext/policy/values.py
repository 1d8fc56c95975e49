"""What the names and expressions of a cell may hold (pass 1 of the analysis), and the strings
they spell (``fold``: a URL built from pieces is still a URL)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from .lists.functions import MODULE_NAMES, OUTSIDE_MODULES
from .names import BUILTINS, DATA, EXT, FN, MADE_HERE, OWN, Held, member, of_type, result
from .tree import dotted, literal


class Values:
    """Pass 1 of one cell's analysis: what every name the cell binds may hold, and so what any
    expression may hold, remembered by node (pass 2 asks about the same nodes many times)."""

    def __init__(self, known: frozenset[str], types: Mapping[str, str] | None = None) -> None:
        self.known = known  # the notebook's own functions: safe to call
        self.types = types or {}  # what the notebook's names hold (``known_types``)
        self.plain: frozenset[str] = frozenset()  # safe to call here (a formula's ``C``, ``I``)
        self.bindings: dict[str, list[Any]] = {}  # name -> Held | ("=" | "elem" | "with", node)
        self.methods: dict[str, frozenset[str]] = {}  # class defined here -> its methods
        self.selves: dict[int, str] = {}  # id(a method's first parameter) -> its class
        self.memo: dict[Any, tuple[Held, ...]] = {}
        self.folds: dict[int, str | None] = {}
        self.reads: dict[int, ast.Attribute | None] = {}  # id(getattr call) -> what it reads

    def bind(self, target: ast.AST, source: Any) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(source)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                self.bind(elt.value if isinstance(elt, ast.Starred) else elt, ("unpack", source, i))

    def bind_node(self, node: Any) -> None:
        t = type(node)
        if t is ast.Assign:
            for target in node.targets:
                self.bind(target, ("=", node.value))
        elif t in (ast.AnnAssign, ast.NamedExpr, ast.AugAssign) and node.value is not None:
            self.bind(node.target, ("=", node if t is ast.AugAssign else node.value))
        elif t in (ast.For, ast.AsyncFor, ast.comprehension):
            self.bind(node.target, ("elem", node.iter))
        elif t in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, ("with", item.context_expr))
        elif t in (ast.Import, ast.ImportFrom):
            for a in node.names:
                if t is ast.Import:
                    held = Held("qual", a.name if a.asname else a.name.split(".")[0])
                else:
                    held = EXT if node.level else Held("qual", f"{node.module}.{a.name}")
                self.bind(ast.Name((a.asname or a.name).split(".")[0]), held)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            if t is not ast.Lambda:
                self.bind(ast.Name(node.name), FN)
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    cls = self.selves.get(id(arg))
                    self.bind(ast.Name(arg.arg), Held("self", cls) if cls else Held("param"))
        elif t is ast.ClassDef:
            self.bind(ast.Name(node.name), Held("class", node.name))
            defs = [d for d in node.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]
            self.methods[node.name] = frozenset(d.name for d in defs)
            for d in defs:
                first = [*d.args.posonlyargs, *d.args.args][:1]
                if first and "staticmethod" not in map(dotted, d.decorator_list):
                    self.selves[id(first[0])] = node.name
        else:  # ``except E as e``; a ``match`` pattern's captures
            for name in (getattr(node, "name", None), getattr(node, "rest", None)):
                if name:
                    self.bind(ast.Name(name), DATA if t is ast.ExceptHandler else EXT)

    def getattr_literal(self, node: ast.Call) -> ast.Attribute | None:
        """``getattr(x, 'name')`` as the attribute ``x.name`` it reads (one node per call, kept
        with the analysis: values are remembered by node)."""
        if id(node) not in self.reads:
            func, args = node.func, node.args
            name = literal(args[1]) if len(args) in (2, 3) else None
            read = None
            if isinstance(func, ast.Name) and func.id == "getattr" and name and name.isidentifier():
                read = ast.copy_location(ast.Attribute(args[0], name, ast.Load()), node)
            self.reads[id(node)] = read
        return self.reads[id(node)]

    def values(self, node: ast.AST) -> tuple[Held, ...]:
        if node.__class__ is ast.Name:
            return self.name_values(node.id)  # remembered by name
        key = id(node)
        if key not in self.memo:
            self.memo[key] = (EXT,)  # a cycle reads as unknown
            self.memo[key] = self._values(node)
        return self.memo[key]

    def name_values(self, name: str) -> tuple[Held, ...]:
        if name not in self.memo:
            # A cycle (``df = df.dropna()``) reads the value the name held before the cell.
            self.memo[name] = (self.outside(name),)
            sources = self.bindings.get(name)
            held = (
                [v for s in sources for v in self.source_values(s)]
                if sources
                else [self.outside(name)]
            )
            self.memo[name] = tuple(dict.fromkeys(held))
        return self.memo[name]

    def outside(self, name: str) -> Held:
        """What a name the cell does not bind holds."""
        if name in self.plain:
            return FN
        if name in self.known:
            return OWN  # the notebook's own function: consented to when its cell ran
        if name in self.types:
            return of_type(self.types[name])
        if name in BUILTINS:
            return Held("builtin", name)
        module = MODULE_NAMES.get(name) or (name if name in OUTSIDE_MODULES else None)
        return Held("qual", module) if module else EXT

    def source_values(self, source: Any) -> tuple[Held, ...]:
        if isinstance(source, Held):
            return (source,)
        how, node = source[0], source[1]
        if how == "elem" and isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return tuple(v for e in node.elts for v in self.values(e)) or (DATA,)
        if how == "unpack":
            if node[0] == "=" and isinstance(node[1], (ast.Tuple, ast.List)):
                elts = node[1].elts
                if len(elts) > source[2] and not any(isinstance(e, ast.Starred) for e in elts):
                    return self.values(elts[source[2]])
            held = self.source_values(node)
            return (DATA,) if all(v.kind in MADE_HERE for v in held) else (EXT,)
        held = self.values(node)
        if how == "elem":
            return (Held("path"),) if held and all(v.kind == "path" for v in held) else (EXT,)
        return held

    def _values(self, node: Any) -> tuple[Held, ...]:
        t = type(node)
        if t is ast.Name:
            return self.name_values(node.id)
        if t is ast.Attribute:
            return tuple(member(b, node.attr) for b in self.values(node.value))
        if t is ast.Call:
            attribute, func = self.getattr_literal(node), node.func
            if attribute is not None:
                return self.values(attribute)
            if isinstance(func, ast.Attribute):
                return tuple(result(b, func.attr) for b in self.values(func.value))
            return tuple(result(f) for f in self.values(func))
        if t in (ast.IfExp, ast.BoolOp):
            parts = node.values if t is ast.BoolOp else (node.body, node.orelse)
            return tuple(v for e in parts for v in self.values(e))
        if t in (ast.NamedExpr, ast.Starred):
            return self.values(node.value)
        if t is ast.BinOp and isinstance(node.op, ast.Div):  # Path('data') / 'x.csv'
            return (
                (Held("path"),)
                if any(v.kind == "path" for v in self.values(node.left))
                else (DATA,)
            )
        if t is ast.Lambda:
            return (FN,)
        return (EXT,) if t in (ast.Subscript, ast.Await, ast.Yield, ast.YieldFrom) else (DATA,)


def fold(node: ast.AST | None, cell: Values, depth: int = 0) -> str | None:
    """The string ``node`` makes from literals and names bound once to them (parts known only
    at run time read as NUL; pieces joined, formatted or sliced are kept in order and reversed);
    None when no literal is in it."""
    if node is None or depth > 12:
        return None
    if id(node) not in cell.folds:
        cell.folds[id(node)] = None  # a cycle folds to nothing
        cell.folds[id(node)] = _fold_new(node, cell, depth + 1)
    return cell.folds[id(node)]


def _fold_new(node: Any, cell: Values, depth: int) -> str | None:
    t = type(node)
    if t is ast.Constant:
        value = node.value
        return (
            value.decode("latin-1")
            if isinstance(value, bytes)
            else value
            if isinstance(value, str)
            else None
        )
    if t is ast.Name:
        sources = cell.bindings.get(node.id, [])
        single = len(sources) == 1 and isinstance(sources[0], tuple) and sources[0][0] == "="
        return fold(sources[0][1], cell, depth) if single else None
    if t is ast.BinOp:
        left, right = fold(node.left, cell, depth), fold(node.right, cell, depth)
        if left is None and right is None:
            return None
        if isinstance(node.op, ast.Mult):
            times = node.right if left is not None else node.left
            n = times.value if isinstance(times, ast.Constant) and type(times.value) is int else 1
            return (left or right or "") * (n if 0 < n < 100 else 1)
        return (
            (left or "\x00") + (right or "\x00")
            if isinstance(node.op, (ast.Add, ast.Mod))
            else None
        )
    if t is ast.Subscript:
        text = fold(node.value, cell, depth)
        return None if text is None else text + text[::-1]
    parts: list[ast.AST] = []
    if t in (ast.JoinedStr, ast.Tuple, ast.List):
        parts = [
            getattr(v, "value", v) if type(v) is ast.FormattedValue else v
            for v in (node.values if t is ast.JoinedStr else node.elts)
        ]
    elif t is ast.Call and isinstance(node.func, ast.Attribute):  # "".join(...), "{}".format(...)
        parts = [a for arg in node.args for a in (arg, *getattr(arg, "elts", ()))]
        receiver = fold(node.func.value, cell, depth)
        texts = [fold(p, cell, depth) for p in parts]
        if receiver is None and all(p is None for p in texts):
            return None
        pieces = [p or "\x00" for p in texts]
        return "".join(pieces) + "\x00" + (receiver or "").join(pieces) + "\x00" + (receiver or "")
    texts = [fold(p, cell, depth) for p in parts]
    return (
        None
        if all(p is None for p in texts) and t is not ast.JoinedStr
        else "".join(p or "\x00" for p in texts)
    )
