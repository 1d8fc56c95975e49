"""How sure the analysis is (``analyse``'s levels) and what it knows of the notebook's names
(``known_types``): ``LIKELY`` is a name-based guess the trial decides, ``UNPROVEN_LEVEL`` what
only a run can tell, ``KNOWN`` a named harm or a probe of the process, which always asks."""

from __future__ import annotations

import pickle
import tarfile

import pandas as pd
import pytest
import requests
from PIL import Image

from chapyter_ext.policy import (
    CERTIFICATES,
    DYNAMIC,
    GUESSED_CALL,
    GUESSED_CHANGE,
    KNOWN,
    LIKELY,
    NETWORK,
    OTHER_CODE,
    OWN_CALL,
    PROBES,
    PROCESSES,
    STATE,
    UNPROVEN,
    UNPROVEN_LEVEL,
    WRITES,
    Reason,
    analyse,
    approval,
    classify,
    hold_reason,
    imported_types,
    namespace_types,
)


def type_name(value: object) -> str:
    """A value's type as a kernel reports it (``known_types``)."""
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def found(code: str, **kwargs) -> list[tuple[str, str]]:
    return [(reason.category, reason.level) for reason in analyse(code, **kwargs)]


def test_a_reason_names_its_category_text_and_level():
    (reason,) = analyse("import os\nos.remove('x')")
    assert reason == Reason("deletes files", "deletes files: os.remove('x')", KNOWN)
    with pytest.raises(AttributeError):
        reason.level = LIKELY  # type: ignore[misc]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("df.head()", [(GUESSED_CALL, LIKELY)]),  # df from an earlier cell, type unknown
        ("df.columns = ['a', 'b']", [(GUESSED_CHANGE, LIKELY)]),
        ("df['total'] = df['a'] + 1", [(GUESSED_CHANGE, LIKELY)]),
        ("def f(d):\n    return d.mean()", [(GUESSED_CALL, LIKELY)]),  # a parameter
        ("frobnicate(df)", [(UNPROVEN, UNPROVEN_LEVEL)]),
        ("import mylib", [(UNPROVEN, UNPROVEN_LEVEL)]),
        ("df.to_csv('out.csv')", [(WRITES, KNOWN), (GUESSED_CALL, LIKELY)]),
        ("import os\nos.getpid()", [(PROBES, KNOWN)]),
        ("x = [1, 2]\nx.append(3)", []),  # made here: checked, no guess
    ],
)
def test_levels(code, expected):
    assert found(code) == expected


def test_one_likely_reason_per_category_naming_the_first_code():
    reasons = analyse("a.head()\nb.tail()\nc.x = 1\nd.y = 2")
    assert [r.text for r in reasons] == [
        "calls `a.head` on an object from an earlier cell",
        "sets `c.x` on an object from an earlier cell",
    ]


def test_a_stronger_level_replaces_a_weaker_one_in_its_category():
    reasons = analyse("def f(d):\n    return d.mean()\n\nfrobnicate()")
    assert (UNPROVEN, UNPROVEN_LEVEL) in [(r.category, r.level) for r in reasons]
    assert [r.level for r in analyse("x.__class__\nimport os\nos.getpid()")] == [KNOWN, KNOWN]


def test_classify_and_the_policies_leave_likely_reasons_out():
    code = "session.get(url)\ndf.columns = ['a']"
    assert [r.level for r in analyse(code)] == [LIKELY, LIKELY]
    assert classify(code) == []
    assert approval("risky", code) == (False, [])
    assert hold_reason("risky", code) is None
    unproven = "session.get(url)\nfrobnicate()"
    assert classify(unproven) == ["calls `frobnicate`, which is not known to be safe"]


SESSION = type_name(requests.Session())
FRAME = type_name(pd.DataFrame())
IMAGE = type_name(Image.new("RGB", (1, 1)))
TORCH = "torch.nn.modules.linear.Linear"  # a type no list covers


@pytest.mark.parametrize(
    ("code", "types", "expected"),
    [
        # a module from an earlier cell behaves as if imported here
        ("ssl._create_default_https_context = x", {"ssl": "module:ssl"}, [(STATE, KNOWN)]),
        ("s._create_default_https_context = x", {"s": "module:ssl"}, [(STATE, KNOWN)]),
        ("np.mean(a)", {"np": "module:numpy"}, []),
        ("LR().fit(X, y)", {"LR": "module:sklearn.linear_model.LinearRegression"}, []),
        ("rm('x')", {"rm": "module:os.remove"}, [("deletes files", KNOWN)]),
        # data of a type the lists know: checked precisely
        ("df.head()\ndf.columns = ['a']\ndf['b'] = 1", {"df": FRAME}, []),
        ("df.groupby('a').sum().plot()", {"df": FRAME}, []),
        ("df.to_csv('x.csv')", {"df": FRAME}, [(WRITES, KNOWN)]),
        ("df.frobnicate()", {"df": FRAME}, [(UNPROVEN, UNPROVEN_LEVEL)]),
        ("d.update(x)\nd.clear()", {"d": "builtins.dict"}, []),
        # objects of a type the lists know to do harm
        ("session.get(url)", {"session": SESSION}, [(NETWORK, KNOWN)]),
        ("session.verify = False", {"session": SESSION}, [(CERTIFICATES, KNOWN), (NETWORK, KNOWN)]),
        ("img.show()", {"img": IMAGE}, [(PROCESSES, KNOWN)]),
        ("t.extractall()", {"t": "tarfile.TarFile"}, [(WRITES, KNOWN)]),
        ("store.append('k', df)", {"store": "pandas.io.pytables.HDFStore"}, [(WRITES, KNOWN)]),
        ("store['k'] = df", {"store": "pandas.io.pytables.HDFStore"}, [(WRITES, KNOWN)]),
        ("store.select('k')", {"store": "pandas.io.pytables.HDFStore"}, [(OTHER_CODE, KNOWN)]),
        ("c.execute('select 1')", {"c": "sqlite3.Connection"}, [(OTHER_CODE, KNOWN)]),
        ("c.fetchall()", {"c": "sqlite3.Cursor"}, []),
        ("log.info('x')\nlog.setLevel(10)", {"log": "logging.Logger"}, []),
        ("log.addHandler(h)", {"log": "logging.Logger"}, [(STATE, KNOWN)]),
        ("ip.run_cell('x')", {"ip": "ipykernel.zmqshell.ZMQInteractiveShell"}, [(DYNAMIC, KNOWN)]),
        ("t.status()", {"t": "chapyter_ext.trial.runner.Trial"}, [(PROBES, KNOWN)]),
        # a known type no list covers: only a run can tell
        ("model.forward(x)", {"model": TORCH}, [(UNPROVEN, UNPROVEN_LEVEL)]),
        ("model.eval = None", {"model": TORCH}, [(UNPROVEN, UNPROVEN_LEVEL)]),
        ("f(1)", {"f": "builtins.function"}, [(UNPROVEN, UNPROVEN_LEVEL)]),
        # an instance of the notebook's own class: its code was consented to, a trial sees it
        ("cache.get('k')", {"cache": "__main__.DiskCache"}, [(OWN_CALL, LIKELY)]),
        # names it does not type stay unknown (LIKELY), the cell's own bindings win
        ("other.get(url)", {"session": SESSION}, [(GUESSED_CALL, LIKELY)]),
        ("session = {}\nsession.get('a')", {"session": SESSION}, []),
        ("df = df.dropna()\ndf.head()", {"df": FRAME}, []),
    ],
)
def test_known_types(code, types, expected):
    assert found(code, known_types=types) == expected


def test_approval_and_hold_reason_take_known_types():
    code = "session.get(url)"
    types = {"session": SESSION}
    assert approval("risky", code) == (False, [])
    assert approval("risky", code, known_types=types)[0] is True
    assert hold_reason("risky", code, known_types=types) == "opens the network: session.get(url)"


def test_namespace_types_reads_a_kernel_namespace():
    namespace = {
        "pd": pd,
        "df": pd.DataFrame(),
        "session": requests.Session(),
        "loads": pickle.loads,
        "read_csv": pd.read_csv,
        "TarFile": tarfile.TarFile,
        "n": 3,
        "_private": 1,
        "In": [],
    }
    types = namespace_types(namespace)
    assert types == {
        "pd": "module:pandas",
        "df": FRAME,
        "session": SESSION,
        "loads": f"module:{pickle.loads.__module__}.loads",
        "read_csv": "module:pandas.read_csv",  # where pandas exposes it, not its own module
        "TarFile": "module:tarfile.TarFile",
        "n": "builtins.int",
    }
    assert found("loads(b)", known_types=types) == [(OTHER_CODE, KNOWN)]
    assert found("read_csv('x.csv').head()", known_types=types) == []


def test_imported_types_reads_what_cells_import():
    cells = [
        "import numpy as np\nimport os.path\nfrom sklearn.svm import SVC as Model\n%matplotlib",
        "import matplotlib.pyplot as plt\nnp = None",
        "from . import local\nfrom x import *",
    ]
    assert imported_types(cells) == {
        "os": "module:os",
        "Model": "module:sklearn.svm.SVC",
        "plt": "module:matplotlib.pyplot",
    }


def test_a_call_of_the_notebooks_own_function_is_for_a_trial_to_see():
    """Its body was consented to when its cell ran, not each call (other arguments, other
    files): allowed where no trial decides, LIKELY where one does."""
    code = "save_fig('histogram')\ndf.apply(clean)"
    reasons = analyse(code, known_functions={"save_fig", "clean"})
    assert [(r.category, r.level) for r in reasons] == [
        (OWN_CALL, LIKELY),
        (GUESSED_CALL, LIKELY),
    ]
    assert reasons[0].text == "calls `save_fig` defined by an earlier cell"
    assert classify(code, known_functions={"save_fig", "clean"}) == []
    # Defined in the cell itself, it is checked with the cell: nothing to guess.
    assert analyse("def f(x):\n    return x + 1\n\nf(2)") == []


def test_code_is_read_whatever_the_warning_filters():
    """``"\\s"`` in a string warns when compiled; with warnings made errors (as in this test
    run) the cell must still parse, or nothing in it would be flagged."""
    code = 'import os\npattern = "\\s+"\nos.remove("x")'
    assert [r.category for r in analyse(code)] == ["deletes files"]
