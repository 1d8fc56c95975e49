"""The classes of effect the analysis closes as classes: whatever
unpickles or loads native code, posts a log or progress, resolves a name, sets a module's
attribute, reaches a dunder through a format string, chooses a plotting backend, extracts an
archive, shows content that fetches from another host, or probes the process. Each class with
its harmless neighbours, which must stay quiet."""

from __future__ import annotations

import pytest

from chapyter_ext.policy import (
    CERTIFICATES,
    DELETES,
    DYNAMIC,
    KNOWN,
    NETWORK,
    OTHER_CODE,
    PROBES,
    PROCESSES,
    STATE,
    UNPROVEN_LEVEL,
    WRITES,
    analyse,
)

HARMFUL = {
    "deserialisation": [
        ("import joblib\njoblib.load('m.pkl')", OTHER_CODE),
        ("import dill\ndill.loads(b)", OTHER_CODE),
        ("import cloudpickle\ncloudpickle.load(f)", OTHER_CODE),
        ("import torch\ntorch.load('w.pt')", OTHER_CODE),
        ("pd.read_pickle('x.pkl')", OTHER_CODE),
        ("np.load('a.npy', allow_pickle=True)", OTHER_CODE),
        ("import yaml\nyaml.load(text, Loader=yaml.Loader)", OTHER_CODE),
        ("import yaml\nyaml.unsafe_load(text)", OTHER_CODE),
        ("import shelve\nshelve.open('db')['k']", OTHER_CODE),
        ("pd.read_hdf('x.h5')", OTHER_CODE),
        ("from keras.models import load_model\nload_model('m.keras')", OTHER_CODE),
        ("import pickle as p\nu = p.Unpickler(f)", OTHER_CODE),
        ("import marshal\nmarshal.loads(b)", OTHER_CODE),
        ("pd.read_csv('c.csv', converters={'a': eval})", OTHER_CODE),
    ],
    "native plugins": [
        ("import ctypes\nctypes.CDLL('libx.so')", PROBES),  # importing ctypes probes first
        ("np.ctypeslib.load_library('x', '.')", OTHER_CODE),
        ("conn.enable_load_extension(True)", OTHER_CODE),
        ("conn.load_extension('./x')", OTHER_CODE),
        ("import duckdb\nduckdb.install_extension('httpfs')", NETWORK),
        ("import importlib.util\nimportlib.util.spec_from_file_location('m', 'm.py')", OTHER_CODE),
        ("import runpy\nrunpy.run_path('x.py')", OTHER_CODE),
        ("import sys\nsys.path.append('plugins')", STATE),
        ("pd.options.plotting.backend = 'evil'", OTHER_CODE),
        ("pd.api.extensions.register_dataframe_accessor('x')", STATE),
    ],
    "loggers and progress bars": [
        ("from tqdm.contrib.telegram import tqdm\ntqdm(range(3), token=t, chat_id=c)", NETWORK),
        ("import tqdm.contrib.slack", NETWORK),
        ("from tqdm.contrib import discord", NETWORK),
        ("import logging.handlers as lh\nlh.HTTPHandler('h:80', '/')", NETWORK),
        ("import logging\nlogging.handlers.SMTPHandler(('h', 25), 'a', ['b'], 's')", NETWORK),
        ("import logging.handlers\nlogging.handlers.SocketHandler('h', 9020)", NETWORK),
        ("import logging.handlers\nlogging.handlers.SysLogHandler(address=('h', 514))", NETWORK),
        ("import logging.handlers\nlogging.handlers.QueueHandler(q)", NETWORK),
        ("import logging.config\nlogging.config.dictConfig(cfg)", NETWORK),
        ("import logging\nlogging.getLogger('x').addHandler(h)", STATE),
        ("import wandb\nwandb.log({'loss': 1})", NETWORK),
    ],
    "name lookups": [
        ("import socket\nsocket.gethostbyname(secret + '.x.com')", NETWORK),
        ("socket.getaddrinfo(host, 80)", NETWORK),  # socket from an earlier cell
        ("import dns.resolver\ndns.resolver.resolve(name)", NETWORK),
        ("dns.resolver.resolve(name)", NETWORK),
        ("import email.utils\nemail.utils.make_msgid()", NETWORK),
    ],
    "module attributes": [
        ("ssl._create_default_https_context = ssl._create_unverified_context", STATE),
        ("import ssl\nssl.CERT_NONE = 0", STATE),
        ("requests.get = fake", STATE),
        ("urllib3.util.ssl_.DEFAULT_CIPHERS = 'x'", STATE),
        ("import json\njson.dumps = repr", STATE),
        ("pd.DataFrame.to_csv = my_fn", STATE),
        ("setattr(requests, 'get', fake)", STATE),
        ("del os.environ['PATH']", STATE),
        ("import threading\nthreading.excepthook = hook", STATE),
    ],
    "certificate checks, on any object": [
        ("session.verify = False", CERTIFICATES),
        (
            "import ssl\nctx = ssl.create_default_context()\nctx.check_hostname = False",
            CERTIFICATES,
        ),
        ("ctx.verify_mode = 0", CERTIFICATES),
        (
            "pool.connection_pool_kw['cert_reqs'] = 'CERT_NONE'\npool.cert_reqs = 'CERT_NONE'",
            CERTIFICATES,
        ),
    ],
    "format strings": [
        ("'{0.__class__.__init__.__globals__}'.format(x)", DYNAMIC),
        ("'{x.__class__}'.format_map({'x': 1})", DYNAMIC),
        ("import string\nstring.Formatter().format('{0.__dict__}', x)", DYNAMIC),
        ("str.format('{0.__globals__}', f)", DYNAMIC),
        ("t = '{0.' + '_' * 2 + 'class' + '_' * 2 + '}'\nt.format(1)", DYNAMIC),
        ("'{0.' + attr + '}'.format(x)", DYNAMIC),  # an attribute known only at run time
        ("jinja2.Template('{{ x.__class__.__mro__ }}')", DYNAMIC),
    ],
    "backends": [
        ("import matplotlib\nmatplotlib.use('webagg')", NETWORK),
        ("plt.switch_backend('WebAgg')", NETWORK),
        ("matplotlib.use(name)", OTHER_CODE),  # a backend this cell does not spell
        ("matplotlib.use('module://evil.backend')", OTHER_CODE),
        ("plt.rcParams['backend'] = 'webagg'", NETWORK),
        ("mpl.rcParams.update({'backend': 'qtagg'})", OTHER_CODE),
        ("plt.rc('webagg', port=9000)", NETWORK),
        ("with plt.rc_context({'webagg.open_in_browser': True}):\n    pass", NETWORK),
        ("%matplotlib webagg", NETWORK),
        ("%matplotlib qt", OTHER_CODE),
        ("import plotly.io as pio\npio.renderers.default = 'browser'", NETWORK),
        ("fig.show(renderer='browser')", NETWORK),
        ("fig.show(renderer=r)", NETWORK),
        ("import altair as alt\nalt.renderers.enable('browser')", NETWORK),
        ("import altair as alt\nalt.data_transformers.enable('json')", WRITES),
        ("from bokeh.plotting import show\nshow(p)", NETWORK),
    ],
    "archives": [
        ("import tarfile\ntarfile.open('a.tar').extractall()", WRITES),
        ("import zipfile\nzipfile.ZipFile('a.zip').extract('x')", WRITES),
        ("import shutil\nshutil.unpack_archive('a.zip')", WRITES),
        ("import zipfile\nz = zipfile.ZipFile('a.zip')\ngetattr(z, 'extractall')()", WRITES),
        ("import tarfile\ntarfile.TarFile.extractall(t)", WRITES),
        ("import py7zr\npy7zr.SevenZipFile('a.7z').extractall()", WRITES),
    ],
    "rendering that fetches": [
        ("HTML('<img src=\"//h.example/x.png\">')", NETWORK),
        ("HTML(\"<style>@import '//h.example/a.css'</style>\")", NETWORK),
        ("HTML('<div style=\"background:url(//h.example/a)\">')", NETWORK),
        ("HTML('<input type=image src=//h.example/a>')", NETWORK),
        ("HTML('<table background=\"//h.example/a\">')", NETWORK),
        ("HTML('<img srcset=\"//h.example/a 2x\">')", NETWORK),
        ("Markdown('![x](//h.example/a.png)')", NETWORK),
        ("Markdown('![x][r]\\n\\n[r]: //h.example/a.png')", NETWORK),
        ("SVG('<svg><image href=\"//h.example/a\"/></svg>')", NETWORK),
        ("from IPython.display import JSON\nJSON({'url': '//h.example/d.json'})", NETWORK),
        ("from IPython.display import Image\nImage(url='//h.example/a.png')", NETWORK),
        # an address or content known only at run time: for a run to tell
        ("HTML(f'<img src=\"{src}\">')", (NETWORK, UNPROVEN_LEVEL)),
        (
            "from IPython.display import Image\nImage(url=f'{base}/a.png')",
            (NETWORK, UNPROVEN_LEVEL),
        ),
        ("HTML(page)", (OTHER_CODE, UNPROVEN_LEVEL)),
        ("HTML('<script>alert(1)</script>')", OTHER_CODE),
        ("%%html\n<img src='//h.example/a.png'>", NETWORK),
        ("%%markdown\n![x](https://h.example/a.png)", NETWORK),
        ("df.style.set_table_styles([{'props': 'background:url(//h.example/a)'}])", NETWORK),
        ("display({'text/html': '<b>x</b>'}, raw=True)", OTHER_CODE),
        ("class C:\n    def _repr_html_(self):\n        return '<b>x</b>'", OTHER_CODE),
    ],
    "probes of the process": [
        ("import os\nos.getpid()", PROBES),
        ("os.getppid()", PROBES),
        ("import threading\nthreading.active_count()", PROBES),
        ("import threading\nthreading.enumerate()", PROBES),
        ("import sys\nsys._current_frames()", PROBES),
        ("open('/proc/self/status').read()", PROBES),
        ("Path('/proc') / str(pid) / 'maps'", PROBES),
        ("import resource\nresource.getrlimit(resource.RLIMIT_AS)", PROBES),
        ("import gc\ngc.get_objects()", PROBES),
        ("import gc\ngc.get_referrers(x)", PROBES),
        ("import sys\nsys.addaudithook(hook)", PROBES),
        ("import sys\nsys.settrace(f)", PROBES),
        ("import sys\nsys.setprofile(f)", PROBES),
        ("import sys\nsys._getframe(1).f_globals", PROBES),
        ("import inspect\ninspect.currentframe()", PROBES),
        ("import inspect\ninspect.stack()", PROBES),
        ("import chapyter_ext", PROBES),
        ("from chapyter_ext.trial import runner", PROBES),
        ("import ctypes", PROBES),
        ("import prctl", PROBES),
        ("import psutil\npsutil.Process().parent()", PROBES),
        ("%config Chapyter.run_policy = 'never'", PROBES),
        ("import sys\nsys.stdout.isatty()", PROBES),
        ("import sys\nsys.orig_argv", PROBES),
    ],
    "files": [
        ("Path('a').rename('b')", WRITES),
        ("p = Path('a')\np.replace('b')", WRITES),
        ("Path('a').touch()", WRITES),
        ("Path('d').rmdir()", DELETES),
        ("img.save('x.png')", WRITES),
        ("from PIL import Image\nImage.new('RGB', (1, 1)).show()", PROCESSES),
    ],
}
#: (kind, code, category, level): a category alone is a named harm, ``KNOWN``.
CASES = [
    (kind, code, *(expected if isinstance(expected, tuple) else (expected, KNOWN)))
    for kind, cases in HARMFUL.items()
    for code, expected in cases
]


@pytest.mark.parametrize(
    ("kind", "code", "category", "level"), CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES]
)
def test_each_class_names_its_harm(kind, code, category, level):
    reasons = {reason.category: reason for reason in analyse(code)}
    assert category in reasons, [reason.text for reason in reasons.values()]
    assert reasons[category].level == level


QUIET = [
    # neighbours of the classes above that only compute, read or show
    "import pickle\nblob = pickle.dumps(obj)",
    "import yaml\nyaml.safe_load(text)",
    "np.load('a.npy')",
    "pd.read_parquet('x.parquet')",
    "from tqdm.auto import tqdm\nfor i in tqdm(range(3)):\n    pass",
    "from tqdm.contrib.itertools import product\nlist(product([1], [2]))",
    "import logging\nlogging.basicConfig(level=logging.INFO)\nlogging.info('x')",
    "log = logging.getLogger(__name__)\nlog.warning('x')",
    "'{0.real:.2f} {name}'.format(x, name=n)",
    "'{:,.0f}'.format(1e6)",
    "'{0.__name__}'.format(f)",
    "import matplotlib\nmatplotlib.use('agg')",
    "plt.switch_backend('inline')",
    "plt.rcParams['figure.figsize'] = (8, 4)",
    "plt.rc('font', size=12)",
    "plt.rcParams.update({'font.size': 12, 'axes.grid': True})",
    "with plt.rc_context({'lines.linewidth': 2}):\n    plt.plot([1])",
    "%matplotlib inline",
    "%matplotlib widget",
    "%config InlineBackend.figure_format = 'retina'",
    "pd.options.plotting.backend = 'matplotlib'",
    "import plotly.io as pio\npio.renderers.default = 'notebook'",
    "HTML('<b>Results</b> <a href=\"https://example.com\">source</a>')",
    "HTML('<img src=\"local.png\">')",
    "Markdown('See [the docs](https://example.com/docs)')",
    "Markdown(f'**Accuracy**: {acc:.2%}')",
    "from IPython.display import Image\nImage(filename=f'figures/{name}.png')",
    "from IPython.display import SVG\nSVG('<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>')",
    "import tarfile\nt = tarfile.open('a.tar')\nt.getnames()",
    "import gc\ngc.collect()",
    "import inspect\ninspect.signature(f)",
    "import os\nos.cpu_count()",
    "print('/proc is a folder on Linux')",
    "df['path'].str.startswith('/processed')",
    "Path('data/processed.csv').exists()",
]


@pytest.mark.parametrize("code", QUIET)
def test_their_harmless_neighbours_stay_quiet(code):
    assert [r.text for r in analyse(code) if r.level != "likely"] == []
