"""The settings a cell chooses for the whole session that start or load something: plotting
backends (``matplotlib.use('webagg')`` starts a web server, ``rcParams['backend']``,
``%matplotlib qt``), renderers (plotly's and altair's ``browser``), pandas' plotting backend
(a module imported by name). A listed safe choice, spelled literally, is fine; any other, or
one this cell does not spell, is not."""

from __future__ import annotations

import ast
from typing import Any

from .categories import NETWORK, UNPROVEN
from .lists.functions import CHOICES, SETTING_KEYS
from .texts import Texts
from .tree import literal


def _dict_keys(node: ast.AST | None, cell: Any) -> list[ast.AST | None] | None:
    """The keys of a dict this cell spells (directly or through a name bound once), or None."""
    if isinstance(node, ast.Name):
        sources = cell.bindings.get(node.id, [])
        if len(sources) == 1 and isinstance(sources[0], tuple) and sources[0][0] == "=":
            node = sources[0][1]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return [ast.Constant(k.arg) if k.arg else None for k in node.keywords]
    return list(node.keys) if isinstance(node, ast.Dict) else None


class Options(Texts):
    """Settings chosen for the session: by a call, an assignment or an item."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.assigned: dict[int, ast.AST] = {}  # id(assignment target) -> the value assigned

    def c_Assign(self, node: ast.Assign, ctx: str) -> None:
        for target in node.targets:
            self.assigned[id(target)] = node.value
        for child in (*node.targets, node.value):
            self.check(child)

    def choose(self, setting: str, value: ast.AST | None, node: ast.AST) -> None:
        """``setting`` (a key of ``CHOICES``) given ``value``: fine when it is a listed choice
        spelled literally; else the setting's category (``webagg`` serves the network)."""
        choices, label = CHOICES[setting]
        name = literal(value)
        if name is None or name.lower() not in choices:
            webagg = name is not None and "webagg" in name.lower()
            self.flag(NETWORK if webagg else label, node)

    def setting_call(self, path: str, node: ast.Call) -> bool:
        """A call that chooses a setting (``matplotlib.use``, ``plt.rc``, ``rcParams.update``,
        ``alt.renderers.enable``, ``pd.set_option``); False when ``path`` is no such call."""
        rule = SETTING_KEYS.get(path)
        if rule is None:
            return False
        args, keywords = node.args, {k.arg: k.value for k in node.keywords}
        first = args[0] if args else None
        if rule in CHOICES:  # the first argument is the choice
            self.choose(rule, first or keywords.get("backend") or keywords.get("name"), node)
        elif rule == "group":  # plt.rc('backend', ...), plt.rc('font', size=12)
            self.option_key(first, node)
        elif rule == "keys":  # rcParams.update({...}), rc_context({...})
            keys = _dict_keys(first or keywords.get("rc"), self)
            if keys is None and (first is not None or "rc" in keywords):
                self.flag(UNPROVEN, node, "calls")  # settings this cell does not spell
            for key in keys or ():
                self.option_key(key, node, self.dict_value(first, key))
        elif rule == "option":  # pd.set_option('plotting.backend', name)
            name = literal(first)
            if name is None or "backend" in name:
                value = args[1] if len(args) > 1 else None
                self.choose("pandas.options.plotting.backend", value, node)
        return True

    def dict_value(self, mapping: ast.AST | None, key: ast.AST | None) -> ast.AST | None:
        if isinstance(mapping, ast.Dict) and key in mapping.keys:
            return mapping.values[mapping.keys.index(key)]
        return None

    def option_key(self, key: ast.AST | None, node: ast.AST, value: ast.AST | None = None) -> None:
        """A matplotlib setting by its key (``backend``, ``webagg.port``), given ``value``."""
        name = literal(key)
        if name is None:
            self.flag(UNPROVEN, node, "sets")
        elif name == "backend":
            self.choose("matplotlib.rcParams.backend", value, node)
        elif name.startswith("webagg"):
            self.flag(NETWORK, node)

    def option_set(self, namespace: str, node: ast.Subscript) -> None:
        """An item of a settings namespace set (``plt.rcParams['backend'] = 'webagg'``)."""
        if namespace.endswith("rcParams"):
            self.option_key(node.slice, node, self.assigned.get(id(node)))

    def attribute_set(self, path: str, node: ast.Attribute) -> bool:
        """A setting chosen by an attribute (``pio.renderers.default = 'browser'``); False when
        ``path`` is no such setting."""
        if path not in CHOICES:
            return False
        self.choose(path, self.assigned.get(id(node)), node)
        return True
