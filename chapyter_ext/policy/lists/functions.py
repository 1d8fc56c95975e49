"""Builtins, modules and their functions: which are safe to call, which rules apply to which
calls, which arguments a function calls, and the category of a refused dotted name."""

from __future__ import annotations

import builtins
import re
import sys

from ..categories import NETWORK, OTHER_CODE, WRITES
from . import calls, pairs, words

# -- builtins --------------------------------------------------------------------------------

#: Builtins that only compute or print (``display`` is IPython's, in every kernel's namespace).
SAFE_BUILTINS = words(
    "abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict dir "
    "divmod enumerate filter float format frozenset hasattr hash help hex id int isinstance "
    "issubclass iter len list map max memoryview min next object oct ord pow print property "
    "range repr reversed round set slice sorted staticmethod str sum super tuple type zip "
    "display NotImplemented Ellipsis __name__ __doc__ __debug__"
) | {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
#: Builtins that reach names or namespaces at run time.
DYNAMIC_BUILTINS = words("getattr setattr delattr vars globals locals")
#: Dunders allowed as names and attributes, and those a class may call on ``super()``.
SAFE_DUNDERS = words("__name__ __doc__ __qualname__ __module__ __version__ __file__")
SUPER_DUNDERS = words("__init__ __post_init__ __repr__ __str__ __eq__ __hash__ __init_subclass__")

# -- modules ---------------------------------------------------------------------------------

#: Pure namespaces: every name under one is allowed but these (see the docstring of
#: :mod:`chapyter_ext.policy.lists`).
PURE: dict[str, frozenset[str]] = {
    "numpy": words(
        "load memmap DataSource seterrcall frompyfunc lib ctypeslib f2py distutils testing "
        "show_config show_runtime"
    ),
    "pandas": words(
        "read_sql read_sql_query read_sql_table read_clipboard read_hdf read_gbq HDFStore "
        "ExcelWriter io eval register_dataframe_accessor register_series_accessor "
        "register_index_accessor register_extension_dtype"
    ),
    "scipy": words("io datasets misc weave LowLevelCallable"),
    "matplotlib": words(
        "backends testing sphinxext imsave ginput waitforbuttonpress connect rc_file"
    ),
    "seaborn": words("get_dataset_names"),
    "sklearn": words("externals export_graphviz clear_data_home get_data_home"),
    "statsmodels": words("iolib get_rdataset webuse"),
    "plotly": words("offline io renderers"),
    "plotly.io": words("show renderers"),
    "pyarrow": words(
        "fs ParquetWriter RecordBatchFileWriter RecordBatchStreamWriter jvm cffi substrait flight "
        "cuda hdfs plasma register_extension_type"
    ),
    "altair": words("renderers data_transformers serve"),
    "tqdm": words("contrib cli gui tk keras dask rich"),
    "polars": words("read_database read_database_uri Config"),
    "calendar": words("prmonth prcal"),
    "operator": words("methodcaller attrgetter"),
    **dict.fromkeys(
        words(
            "numpy.lib.stride_tricks numpy.lib.scimath pandas.api.types scipy.signal pyarrow.csv "
            "pyarrow.json polars.selectors mpl_toolkits "
            "math cmath statistics random decimal fractions numbers datetime time zoneinfo "
            "dateutil re string textwrap unicodedata difflib itertools functools collections "
            "heapq bisect array copy pprint enum dataclasses typing typing_extensions abc "
            "warnings uuid zlib hashlib secrets struct base64 binascii os.path fnmatch "
            "urllib.parse html patsy PIL.ImageOps PIL.ImageFilter PIL.ImageEnhance"
        ),
        frozenset(),
    ),
}
#: Modules a path may not pass through (``matplotlib.subprocess.run``, ``enum.bltns.exec``):
#: the standard library's that are not pure, and packages' internals and aliases; and the ones
#: it may not end with either (``np.select`` and ``np.trace`` may).
FOREIGN_ENDS = words(
    "os sys subprocess shutil builtins importlib ctypes socket pickle marshal pty posix nt code "
    "runpy inspect types gc signal threading multiprocessing webbrowser urllib http requests "
    "jinja2 sqlite3 shelve dbm asyncio tempfile io logging zipfile tarfile glob pathlib platform "
    "bltns com cbook texmanager dviread backend_bases backends"
)
FOREIGN_MODULES = (
    FOREIGN_ENDS
    | words("core compat")
    | (frozenset(getattr(sys, "stdlib_module_names", ())) - {n.split(".")[0] for n in PURE})
)
#: Sub-namespaces of pure ones that are not.
DENIED = words(
    "numpy.lib.format numpy.lib.npyio numpy.lib._datasource sklearn.datasets.fetch_openml "
    "sklearn.utils._testing statsmodels.datasets.get_rdataset statsmodels.datasets.webuse"
)
#: Names under a pure namespace that write, delete, load code or reach the network.
EFFECT_NAME = re.compile(
    r"^(to_(csv|excel|parquet|pickle|hdf|sql|stata|feather|orc|clipboard|json|html|latex|xml|"
    r"markdown|string|gbq|iceberg|netcdf|zarr)|save|write|dump|tofile|read_pickle|fetch_|"
    r"load_dataset|imsave|savefig|print_figure|unlink|remove|rmtree|mkdir|makedirs|system|"
    r"popen|download|upload|urlopen)"
)
#: The environment, whole (``from os import environ`` binds the same): its reads are the rules
#: of :mod:`chapyter_ext.policy.secrets`.
ENVIRONS = words("os.environ os.environb")
#: Module functions and values allowed one by one (their namespaces are not pure).
ALLOWED = words(
    # os and sys: reading the file system and the process's own facts; the cell's own output
    "os.getcwd os.listdir os.scandir os.walk os.cpu_count os.getenv os.environ.get os.environ.keys "
    "os.environ.items os.environ.values os.environ.copy os.sep os.linesep os.pathsep os.curdir "
    "os.pardir os.name os.stat os.lstat os.fspath os.fsdecode os.fsencode os.path "
    "os.get_terminal_size os.PathLike os.access os.devnull sys.version sys.version_info "
    "sys.platform sys.getsizeof sys.maxsize sys.float_info sys.executable sys.path sys.byteorder "
    "sys.argv sys.getdefaultencoding sys.implementation sys.prefix sys.exc_info sys.maxunicode "
    "sys.getrecursionlimit sys.stdout sys.stderr sys.stdout.write sys.stdout.flush sys.int_info "
    "sys.stderr.write sys.stderr.flush "
    # files: finding and reading them
    "pathlib.Path pathlib.PurePath pathlib.PurePosixPath pathlib.PureWindowsPath pathlib.PosixPath "
    "pathlib.WindowsPath pathlib.Path.cwd pathlib.Path.home glob.glob glob.iglob glob.escape "
    "shutil.which shutil.disk_usage shutil.get_terminal_size io.StringIO io.BytesIO io.open "
    "io.FileIO codecs.open codecs.decode codecs.encode codecs.lookup gzip.open gzip.decompress "
    "gzip.compress bz2.open bz2.decompress bz2.compress lzma.open lzma.decompress lzma.compress "
    "zipfile.ZipFile zipfile.is_zipfile zipfile.BadZipFile tarfile.open tarfile.is_tarfile "
    "json.loads json.dumps json.load json.JSONDecodeError json.JSONEncoder json.JSONDecoder "
    "csv.reader csv.DictReader csv.Sniffer csv.excel csv.QUOTE_ALL csv.QUOTE_MINIMAL "
    "csv.QUOTE_NONE csv.QUOTE_NONNUMERIC csv.field_size_limit pickle.dumps tempfile.gettempdir "
    "yaml.safe_load yaml.safe_load_all yaml.safe_dump yaml.dump yaml.SafeLoader yaml.YAMLError "
    "xml.etree.ElementTree.parse xml.etree.ElementTree.fromstring xml.etree.ElementTree.tostring "
    "xml.etree.ElementTree.Element xml.etree.ElementTree.SubElement ast.literal_eval ast.parse "
    "ast.dump ast.unparse ast.walk PIL.Image PIL.ImageDraw PIL.ImageFont PIL.ImageStat "
    "PIL.Image.open PIL.Image.new PIL.Image.fromarray PIL.Image.merge PIL.Image.blend "
    "PIL.Image.composite PIL.ImageDraw.Draw PIL.ImageFont.truetype PIL.ImageFont.load_default "
    "PIL.ImageStat.Stat "
    # notebook display (HTML, SVG and Markdown only with literal, script-free content)
    "IPython.display.display IPython.display.Markdown IPython.display.HTML IPython.display.SVG "
    "IPython.display.Latex IPython.display.Math IPython.display.Image IPython.display.JSON "
    "IPython.display.Pretty IPython.display.clear_output IPython.display.FileLink "
    "IPython.display.FileLinks IPython.display.Audio IPython.display.update_display "
    "IPython.display.DisplayHandle IPython.display.ProgressBar "
    # the rest
    "logging.getLogger logging.basicConfig logging.Formatter logging.StreamHandler "
    "logging.NullHandler logging.getLevelName logging.info logging.debug logging.warning "
    "logging.error logging.critical logging.INFO logging.DEBUG logging.WARNING logging.ERROR "
    "platform.system platform.python_version platform.platform platform.machine "
    "platform.release platform.node platform.python_implementation contextlib.suppress "
    "contextlib.nullcontext contextlib.contextmanager contextlib.closing contextlib.ExitStack "
    "types.SimpleNamespace types.MappingProxyType gc.collect gc.isenabled inspect.signature "
    "inspect.getsource inspect.getdoc inspect.getfile inspect.isfunction inspect.isclass "
    "inspect.ismethod inspect.ismodule inspect.Parameter inspect.Signature inspect.getmembers "
    "inspect.getfullargspec inspect.cleandoc tqdm.contrib.itertools tqdm.contrib.tenumerate "
    "tqdm.contrib.tzip tqdm.contrib.tmap tqdm.contrib.itertools.product "
    "tqdm.contrib.logging.logging_redirect_tqdm altair.data_transformers.disable_max_rows"
)
#: Where the display module's names also live.
ALIASES = pairs("IPython.core.display=IPython.display posixpath=os.path ntpath=os.path")
#: Namespaces whose attributes and items a cell may set (options, not code).
#: Attributes that decide whether TLS certificates are checked, on whatever object they are set.
CERTIFICATE_ATTRIBUTES = words("verify check_hostname verify_mode cert_reqs assert_hostname")
CONFIG = words(
    "pandas.options matplotlib.rcParams matplotlib.pyplot.rcParams plotly.io.templates "
    "numpy.random warnings.filters"
)
#: pandas' plotting backends that may be named (each a module pandas imports by that name).
PLOT_BACKENDS = words("matplotlib plotly hvplot holoviews bokeh altair pandas_bokeh")
#: Settings that choose what starts or loads, by name: the safe choices (a ``+`` joins several
#: of plotly's) and the category of any other (``webagg``, whichever setting: the network).
CHOICES = {
    "matplotlib.rcParams.backend": (
        words(
            "inline module://matplotlib_inline.backend_inline agg svg pdf ps pgf cairo template "
            "nbagg widget ipympl module://ipympl.backend_nbagg"
        ),
        OTHER_CODE,
    ),
    "pandas.options.plotting.backend": (PLOT_BACKENDS, OTHER_CODE),
    "plotly.io.renderers.default": (
        words("notebook jupyterlab plotly_mimetype png svg jpeg jpg pdf json"),
        NETWORK,
    ),
    "altair.renderers.active": (
        words("default mimetype jupyterlab nteract json png svg"),
        NETWORK,
    ),
    "altair.data_transformers.active": (words("default vegafusion"), WRITES),
}
#: Calls that choose a setting, and how: a key of ``CHOICES`` (the first argument is the
#: choice), ``group`` (``plt.rc(group, ...)``), ``keys`` (a dict of rcParams), ``option``.
SETTING_KEYS = {
    **dict.fromkeys(
        words("matplotlib.use matplotlib.pyplot.switch_backend"), "matplotlib.rcParams.backend"
    ),
    **dict.fromkeys(words("matplotlib.rc matplotlib.pyplot.rc"), "group"),
    **dict.fromkeys(
        words(
            "matplotlib.rcParams.update matplotlib.pyplot.rcParams.update matplotlib.rc_context "
            "matplotlib.pyplot.rc_context"
        ),
        "keys",
    ),
    "altair.renderers.enable": "altair.renderers.active",
    "altair.data_transformers.enable": "altair.data_transformers.active",
    "pandas.set_option": "option",
}
#: The values of ``%matplotlib`` that draw in the notebook (or list the backends).
MATPLOTLIB_MAGIC = words("inline widget ipympl notebook nbagg agg --list -l")
#: Modules a cell may import without asking (importing them runs nothing): the pure ones and
#: standard ones whose every use is checked where it happens.
KNOWN_IMPORTS = frozenset(n.split(".")[0] for n in PURE) | words(
    "os sys pathlib glob shutil io codecs gzip bz2 lzma zipfile tarfile json csv pickle tempfile "
    "yaml xml ast PIL IPython logging platform contextlib types subprocess importlib ctypes "
    "threading multiprocessing concurrent signal asyncio sqlite3 shelve marshal builtins runpy "
    "code inspect gc atexit traceback weakref queue sched select socketserver email mimetypes "
    "getpass locale"
)
#: Modules that exist to reach the network: importing one asks.
NETWORK_MODULES = words(
    "requests httpx urllib urllib3 aiohttp socket http ftplib smtplib poplib imaplib telnetlib "
    "paramiko websocket websockets pycurl boto3 botocore webbrowser xmlrpc ssl dns aiodns "
    "pycares dnslib slack_sdk telegram discord twilio tweepy wandb mlflow neptune comet_ml "
    "clearml sentry_sdk huggingface_hub kaggle gdown wget yfinance pandas_datareader folium "
    "pydeck ipyleaflet keplergl bokeh panel streamlit gradio dash flask fastapi uvicorn zmq "
    "grpc pymongo redis"
)
#: Names a cell uses without importing them, read as what earlier cells conventionally import.
MODULE_NAMES = pairs(
    "np=numpy pd=pandas plt=matplotlib.pyplot mpl=matplotlib sns=seaborn sm=statsmodels.api "
    "smf=statsmodels.formula.api px=plotly.express go=plotly.graph_objects pl=polars pa=pyarrow "
    "pq=pyarrow.parquet stats=scipy.stats osp=os.path Path=pathlib.Path "
    "HTML=IPython.display.HTML Markdown=IPython.display.Markdown"
)
#: Names that read as the module they spell when a cell uses them unbound (an earlier cell
#: imported it): the standard library's, but those often used as variables, and packages
#: whose use the lists name.
_VARIABLE_NAMES = words(
    "test code token select stat queue symbol parser site this wave turtle profile trace cmd "
    "dis keyword chunk posix nt sched tokenize numbers string array copy types time calendar "
    "random"
)
OUTSIDE_MODULES = (
    frozenset(getattr(sys, "stdlib_module_names", ())) - _VARIABLE_NAMES - {"__future__"}
) | words(
    "os sys shutil subprocess pickle json glob pathlib importlib ctypes socket requests urllib "
    "builtins signal threading multiprocessing asyncio webbrowser tempfile zipfile tarfile "
    "sqlite3 shelve marshal dill joblib cloudpickle io math statistics numpy pandas seaborn "
    "scipy matplotlib re datetime itertools functools collections operator warnings yaml runpy "
    "pty http inspect urllib3 httpx aiohttp dns torch tensorflow keras tqdm ssl logging duckdb "
    "pyarrow bokeh altair plotly wandb mlflow psutil prctl resource cffi chapyter_ext "
    "ipykernel IPython jinja2 py7zr patoolib"
)
#: Modules whose import alone inspects the process or reaches the trial's machinery.
PROBE_MODULES = words(
    "ctypes _ctypes resource prctl psutil chapyter_ext faulthandler tracemalloc _thread"
)

# -- calls with rules ------------------------------------------------------------------------

#: What a module function's result is, when its methods are checked against their own lists.
RESULT_KINDS = pairs(
    "sqlite3.connect=sql duckdb.connect=sql logging.getLogger=logger pandas.HDFStore=store "
    "pathlib.Path=path pathlib.PurePath=path pathlib.PosixPath=path pathlib.WindowsPath=path "
    "pathlib.Path.cwd=path pathlib.Path.home=path io.StringIO=buffer io.BytesIO=buffer "
    "PIL.Image.open=image PIL.Image.new=image PIL.Image.fromarray=image"
)
#: Calls that open a file, and the position of their mode argument.
OPENERS = {
    n: 1
    for n in words(
        "open io.open codecs.open gzip.open bz2.open lzma.open io.FileIO zipfile.ZipFile "
        "tarfile.open PIL.Image.open"
    )
}
#: Keywords with which a module function writes a file.
WRITE_KEYWORDS = {"logging.basicConfig": ("filename",), "yaml.dump": ("stream",)}
#: Displays whose content the browser renders, and as what: it must be spelled in the cell, without
#: script, fetching nothing from another host (:mod:`chapyter_ext.untrusted.remote_content`).
HTML_DISPLAYS = pairs(
    "IPython.display.HTML=text/html IPython.display.Markdown=text/markdown "
    "IPython.display.SVG=image/svg+xml"
)
#: Displays whose string arguments are addresses the browser (or the kernel) fetches.
ADDRESS_DISPLAYS = words(
    "IPython.display.JSON IPython.display.Image IPython.display.Video IPython.display.Audio"
)
#: Markup that runs script or leaves the page (fetches are the one rule's, remote_content).
ACTIVE_HTML = re.compile(
    r"<\s*(script|iframe|frame|frameset|object|embed|applet|portal|meta|base|form)\b|"
    r"\bon\w+\s*=|javascript:|vbscript:|srcdoc",
    re.IGNORECASE,
)
#: Names a model formula may call (``C(region)``, ``I(x**2)``), beside numpy's.
FORMULA_NAMES = words(
    "C I Q center standardize scale bs cr cc te poly Treatment Sum Poly Diff Helmert"
)
#: A string that spells a URL (or one reversed); a literal mode that is a file mode.
URL = re.compile(r"://|//:")
MODE = re.compile(r"^[rwaxbtU+]{1,4}$")

# -- what calls its arguments ----------------------------------------------------------------

#: Keywords whose value is called: a function, or (``agg``) a function or a method's name.
CALLABLE_KEYWORDS = {
    **dict.fromkeys(
        words(
            "key function callback fun jac hess hessp opener object_hook object_pairs_hook "
            "parse_float parse_int parse_constant date_parser on_bad_lines default_factory "
            "statistic converters"
        ),
        "func",
    ),
    "func": "agg",
    "aggfunc": "agg",
}
#: Functions whose positional argument is called (a name ending in "." covers a namespace).
CALLABLE_FUNCTIONS = calls(
    "functools.partial:0:func functools.reduce:0:func functools.lru_cache:0:func "
    "functools.cache:0:func functools.wraps:0:func functools.cmp_to_key:0:func "
    "functools.singledispatch:0:func itertools.starmap:0:func itertools.filterfalse:0:func "
    "itertools.takewhile:0:func itertools.dropwhile:0:func numpy.vectorize:0:func "
    "numpy.apply_along_axis:0:func numpy.apply_over_axes:0:func numpy.fromfunction:0:func "
    "operator.call:0:func contextlib.contextmanager:0:func matplotlib.ticker.FuncFormatter:0:func "
    "scipy.optimize.:0:func scipy.integrate.:0:func filter:0:func map:0:func "
    "numpy.piecewise:2:func matplotlib.animation.FuncAnimation:1:func "
    "scipy.stats.bootstrap:1:func scipy.stats.permutation_test:1:func "
    "scipy.stats.monte_carlo_test:1:func re.sub:1:mapping re.subn:1:mapping"
)
