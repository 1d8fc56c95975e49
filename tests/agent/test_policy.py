"""The approval policy: what classify finds in code (from the AST and IPython syntax).

Under ``risky`` code runs unasked only when it is proven to compute, read and plot; the
disguised and everyday cases are in ``tests/vectors/policy_corpus.json`` (test_policy_corpus.py).
"""

from __future__ import annotations

import pytest

from chapyter_ext.policy import (
    DELETES,
    DYNAMIC,
    INSTALLS,
    MAGIC_CALL,
    NETWORK,
    OTHER_CODE,
    PROCESSES,
    SHELL,
    STATE,
    UNPROVEN,
    VARIABLES,
    WRITES,
    approval,
    bound_names,
    classify,
    defined_functions,
    needs_approval,
)

# (code, the categories found, in order)
TABLE = [
    # writes files
    ("df.to_csv('out.csv')", [WRITES]),
    ("df.to_parquet(path='x.parquet')", [WRITES]),
    ("open('a.txt', 'w').write('x')", [WRITES]),
    ("with open(p, mode='a') as f:\n    f.write('x')", [WRITES]),
    ("with open(p, mode) as f:\n    pass", [WRITES]),  # a mode computed at run time
    ("from pathlib import Path\nPath('a').write_text('x')", [WRITES]),
    ("Path('a').open(mode='a')", [WRITES]),
    ("import tarfile\ntarfile.open('a.tar', 'w')", [WRITES]),
    ("plt.savefig('a.png')", [WRITES]),
    ("import numpy as np\nnp.save('a.npy', arr)", [WRITES]),
    ("import shutil\nshutil.copy('a', 'b')", [WRITES]),
    ("json.dump(d, f)", [WRITES]),
    ("%%writefile helper.py\nprint(1)\n", [WRITES]),
    # deletes
    ("import os\nos.remove('x')", [DELETES]),
    ("from os import unlink as rm\nrm('x')", [DELETES]),
    ("from pathlib import Path\nPath('x').unlink()", [DELETES]),
    ("import shutil as sh\nsh.rmtree('data')", [DELETES]),
    ("%%time\nimport shutil\nshutil.rmtree('x')\n", [DELETES]),  # the timed code counts
    ("%reset -f", [VARIABLES]),
    # installs
    ("%pip install pandas", [INSTALLS]),
    ("!pip install pandas", [INSTALLS]),
    ("!python -m pip install -U numpy", [INSTALLS]),
    ("%conda install scipy", [INSTALLS]),
    ("import subprocess\nsubprocess.run(['pip', 'install', 'x'])", [INSTALLS]),
    # network
    ("import requests\nr = requests.get(url)", [NETWORK]),
    ("pd.read_csv('https://example.com/data.csv')", [NETWORK]),
    ("from urllib.request import urlopen\nurlopen(u)", [NETWORK]),
    ("import socket", [NETWORK]),
    # shell
    ("!ls -la", [SHELL]),
    ("files = !ls *.csv", [SHELL]),
    ("for i in range(2):\n    !echo $i", [SHELL]),
    ("%%bash\nrm -rf /tmp/x\n", [SHELL]),
    ("%sx ls", [SHELL]),
    ("import subprocess as sp\nsp.run('ls')", [SHELL]),
    ("os.system('ls')", [SHELL]),
    ("%%capture out\n!make\n", [SHELL]),
    # other code
    ("%run other.py", [OTHER_CODE]),
    ("exec(source)", [OTHER_CODE]),
    ("%some_unknown_magic x", [OTHER_CODE]),
    ("%%ai\nplot it", [MAGIC_CALL]),
    ("%ai status", [MAGIC_CALL]),
    # reached at run time, the session changed, processes
    ("getattr(df, 'to_' + kind)", [DYNAMIC]),
    ("x.__dict__['a']", [DYNAMIC]),
    ("ip = get_ipython()", [DYNAMIC]),
    ("import os\nos.environ['KEY'] = 'x'", [STATE]),
    ("%cd /tmp", [STATE]),
    ("import os\nos.kill(1, 9)", [PROCESSES]),
    ("import pickle\npickle.loads(blob)", [OTHER_CODE]),
    ("import numpy as np\nnp.load('a.npy', allow_pickle=True)", [OTHER_CODE]),
    ("from IPython.display import HTML\nHTML('<script>x()</script>')", [OTHER_CODE]),
]

HARMLESS = [
    "x = df.groupby('region')['sales'].sum()\nx.sort_values()",
    "df.to_csv(index=False)",  # returns text
    "print(df.to_json())",
    "df.rename(columns={'a': 'b'})",
    "s.replace('a', 'b')",
    "open('data.csv').read()",
    "from PIL import Image\nImage.open('x.png')",
    "import io\nio.open('x.txt').read()",
    "Path('a').open()",
    "with open('data.csv', 'r') as f:\n    rows = f.readlines()",
    "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.title('x')",
    "%timeit sum(range(10))",
    "%who",
    "df?",
    "print('see https://example.com')",
    "import os\nos.path.exists('x')",
    "import json\njson.dumps(d)",
    "x = (",  # does not parse: IPython runs none of it
    "",
]


def categories(code: str) -> list[str]:
    return [reason.split(":")[0] if reason != MAGIC_CALL else reason for reason in classify(code)]


@pytest.mark.parametrize(("code", "expected"), TABLE)
def test_classify_table(code, expected):
    assert categories(code) == expected


@pytest.mark.parametrize("code", HARMLESS)
def test_harmless_code_needs_no_approval_under_risky(code):
    assert classify(code) == []
    assert approval("risky", code) == (False, [])
    assert approval("ask", code) == (True, [])


def test_reasons_name_the_code_as_written():
    assert classify("!pip install pandas") == ["installs packages: !pip install pandas"]
    assert classify("%%bash\nls -la\n") == ["runs shell commands: %%bash: ls -la"]
    assert classify("df.to_csv('out.csv')") == ["writes files: df.to_csv('out.csv')"]
    long = "df.to_csv('" + "x" * 100 + ".csv')"
    (reason,) = classify(long)
    assert len(reason) < 80 and reason.endswith("…")


def test_several_findings_in_order_without_repeats():
    code = "import requests\n!pip install x\nos.remove('a')\nos.remove('a')"
    assert categories(code) == [NETWORK, INSTALLS, DELETES]


# Proven safe: pandas, numpy, plotting, reading local files, the cell's own functions.
PROVEN = [
    "df.groupby('a').sum()",
    "import pandas as pd\ndf = pd.read_parquet('x.parquet')\ndf.describe()",
    "import numpy as np\nX = np.load('x.npy')\nnp.linalg.norm(X, axis=1)",
    "from pathlib import Path\ntext = Path('a.txt').read_text()",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.hist(x)\nplt.show()",
    "def norm(s):\n    return (s - s.mean()) / s.std()\n\ndf['z'] = norm(df['v'])",
    "cols = list(df.columns)\ncols.remove('id')",
    "%timeit np.sum(a)",
    "df.agg(total=('sales', 'sum'))",
    "df.query('price > @limit')",
]


@pytest.mark.parametrize("code", PROVEN)
def test_proven_code_runs_unasked(code):
    assert classify(code) == []


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("r = cleanup\nr('data')", "calls `r`, which is not known to be safe"),
        ("result = frobnicate(df)", "calls `frobnicate`, which is not known to be safe"),
        ("import mylib", "imports `mylib`, which is not known to be safe"),
        ("df['a'].apply(helper)", "calls `helper`, which is not known to be safe"),
        ("fs.remove('bucket/key')", "deletes files: fs.remove('bucket/key')"),
        ("x.write('a')", "writes files: x.write('a')"),
        ("p.unlink()", "deletes files: p.unlink()"),
        ("f.to_csv('p')", "writes files: f.to_csv('p')"),
        ("conn.execute('DROP TABLE t')", "runs other code: conn.execute('DROP TABLE t')"),
        ("s.send(b'x')", "opens the network: s.send(b'x')"),
        ("import shutil\nr = shutil.rmtree", "deletes files: shutil.rmtree"),
        ("exec('1')", "runs other code: exec('1')"),
        ("def f():\n    os.remove('x')", "deletes files: os.remove('x')"),  # never called
    ],
)
def test_reasons_name_the_cause_in_one_line(code, says):
    reasons = classify(code)
    assert says in reasons
    assert all("\n" not in reason for reason in reasons)


def test_a_known_function_may_be_called():
    code = "df['name'] = df['name'].apply(clean_name)\nsummary = report(df)"
    assert classify(code) == ["calls `clean_name`, which is not known to be safe"]
    assert classify(code, known_functions={"clean_name", "report"}) == []
    assert approval("risky", code, known_functions=["clean_name", "report"]) == (False, [])
    # Rebound in the cell, the name is no longer the notebook's function.
    rebound = "import os\nreport = os.remove\nreport('x')"
    assert classify(rebound, known_functions={"report"})[0].startswith(DELETES)
    # The timed code of a magic sees the cell's own functions too.
    assert classify("def f(x):\n    return x\n\n%timeit f(3)") == []


def test_unproven_reasons_are_their_own_category():
    (reason,) = classify("frobnicate()")
    assert reason.endswith(UNPROVEN) and ":" not in reason


def test_defined_functions_reads_the_cells_top_level():
    sources = [
        "import pandas as pd\n\ndef clean(df):\n    def inner():\n        pass\n    return df",
        "%matplotlib inline\nclass Report:\n    def show(self):\n        pass",
        "square = lambda x: x * x\nif True:\n    def maybe():\n        pass",
        "def broken(:\n",  # does not parse: skipped
        "x = 1",
    ]
    assert defined_functions(sources) == {"clean", "Report", "square", "maybe"}
    assert defined_functions([]) == frozenset()


def test_bound_names_are_every_name_a_step_may_rebind():
    code = "import numpy as np\nfrom os import path\nx, (y, *z) = 1, (2, 3)\nfor i in r: pass\n"
    code += "def f():\n    global g\n    g = 1\nclass C: pass\ndel w"
    assert bound_names(code) == {"np", "path", "x", "y", "z", "i", "f", "g", "C", "w"}
    assert bound_names("x = (") == frozenset()


def test_code_too_deep_to_check_asks_and_defines_nothing():
    code = "x = " + " + ".join(["a"] * 3000)  # Python's own parser gives up
    assert classify(code) == ["nests too deeply to check, so it is not known to be safe"]
    assert defined_functions([code]) == bound_names(code) == frozenset()


def test_needs_approval_per_policy():
    assert needs_approval("ask", []) is True
    assert needs_approval("risky", []) is False
    assert needs_approval("risky", ["writes files: x"]) is True
    assert needs_approval("never", ["writes files: x"]) is False
