"""The approval policy: what classify finds in code (from the AST and IPython syntax)."""

from __future__ import annotations

import pytest

from chapyter_ext.agent.policy import (
    DELETES,
    INSTALLS,
    MAGIC_CALL,
    NETWORK,
    OTHER_CODE,
    SHELL,
    VARIABLES,
    WRITES,
    approval,
    classify,
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


def test_needs_approval_per_policy():
    assert needs_approval("ask", []) is True
    assert needs_approval("risky", []) is False
    assert needs_approval("risky", ["writes files: x"]) is True
    assert needs_approval("never", ["writes files: x"]) is False
