"""Builtins, modules and their functions: which are safe to call, which rules apply to which
calls, which arguments a function calls, and the category of a refused dotted name."""

from __future__ import annotations

import builtins
import re
import sys

from ..categories import DELETES, DYNAMIC, NETWORK, OTHER_CODE, PROCESSES, SHELL, STATE, WRITES
from . import calls, pairs, words

# -- builtins --------------------------------------------------------------------------------

#: Builtins that only compute or print (``display`` is IPython's, in every kernel's namespace).
SAFE_BUILTINS = words(
    "abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict dir "
    "divmod enumerate filter float format frozenset hasattr hash help hex id int isinstance "
    "issubclass iter len list map max memoryview min next object oct ord pow print property "
    "range repr reversed round set slice sorted staticmethod str sum super tuple type zip "
    "display NotImplemented Ellipsis"
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
        "ExcelWriter io eval"
    ),
    "scipy": words("io datasets misc weave LowLevelCallable"),
    "matplotlib": words("backends testing sphinxext imsave ginput waitforbuttonpress connect"),
    "seaborn": words("get_dataset_names"),
    "sklearn": words("externals export_graphviz clear_data_home get_data_home"),
    "statsmodels": words("iolib get_rdataset webuse"),
    "plotly": words("offline io renderers"),
    "plotly.io": words("show renderers"),
    "pyarrow": words("fs ParquetWriter RecordBatchFileWriter RecordBatchStreamWriter"),
    "polars": words("read_database read_database_uri Config"),
    "calendar": words("prmonth prcal"),
    "operator": words("methodcaller attrgetter"),
    **dict.fromkeys(
        words(
            "numpy.lib.stride_tricks numpy.lib.scimath pandas.api.types scipy.signal pyarrow.csv "
            "pyarrow.json polars.selectors mpl_toolkits "
            "altair math cmath statistics random decimal fractions numbers datetime time zoneinfo "
            "dateutil re string textwrap unicodedata difflib itertools functools collections "
            "heapq bisect array copy pprint enum dataclasses typing typing_extensions abc "
            "warnings uuid hashlib secrets struct base64 binascii os.path fnmatch urllib.parse "
            "html tqdm patsy PIL.ImageOps PIL.ImageFilter PIL.ImageEnhance"
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
#: Module functions and values allowed one by one (their namespaces are not pure).
ALLOWED = words(
    # os and sys: reading the file system and the process's own facts; the cell's own output
    "os.getcwd os.listdir os.scandir os.walk os.cpu_count os.getenv os.environ.get os.environ.keys "
    "os.environ.items os.environ.values os.environ.copy os.sep os.linesep os.pathsep os.curdir "
    "os.pardir os.name os.stat os.lstat os.getpid os.fspath os.fsdecode os.fsencode os.path "
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
    "logging.getLogger logging.basicConfig logging.info logging.debug logging.warning "
    "logging.error logging.critical logging.INFO logging.DEBUG logging.WARNING logging.ERROR "
    "platform.system platform.python_version platform.platform platform.machine "
    "platform.release platform.node platform.python_implementation contextlib.suppress "
    "contextlib.nullcontext contextlib.contextmanager contextlib.closing contextlib.ExitStack "
    "types.SimpleNamespace types.MappingProxyType"
)
#: Where the display module's names also live.
ALIASES = pairs("IPython.core.display=IPython.display")
#: Namespaces whose attributes and items a cell may set (options, not code).
CONFIG = words(
    "pandas.options matplotlib.rcParams matplotlib.pyplot.rcParams plotly.io.templates "
    "numpy.random warnings.filters"
)
#: Options that name a module to import (``pd.options.plotting.backend = 'name'``), and the
#: plotting backends that may be named.
BY_NAME = words("pandas.options.plotting.backend")
PLOT_BACKENDS = words("matplotlib plotly hvplot holoviews bokeh altair pandas_bokeh")
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
    "paramiko websocket websockets pycurl boto3 botocore webbrowser xmlrpc ssl"
)
#: Names a cell uses without importing them, read as what earlier cells conventionally import.
MODULE_NAMES = pairs(
    "np=numpy pd=pandas plt=matplotlib.pyplot mpl=matplotlib sns=seaborn sm=statsmodels.api "
    "smf=statsmodels.formula.api px=plotly.express go=plotly.graph_objects pl=polars pa=pyarrow "
    "pq=pyarrow.parquet stats=scipy.stats osp=os.path Path=pathlib.Path "
    "HTML=IPython.display.HTML Markdown=IPython.display.Markdown"
)
OUTSIDE_MODULES = words(
    "os sys shutil subprocess pickle json glob pathlib importlib ctypes socket requests urllib "
    "builtins signal threading multiprocessing asyncio webbrowser tempfile zipfile tarfile "
    "sqlite3 shelve marshal dill joblib io math statistics numpy pandas seaborn scipy "
    "matplotlib re datetime itertools functools collections operator warnings yaml runpy pty "
    "http inspect"
)

# -- calls with rules ------------------------------------------------------------------------

#: What a module function's result is, when its methods are checked against their own lists.
RESULT_KINDS = pairs(
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
#: Displays whose content must be a literal without script (the browser runs what they show).
HTML_DISPLAYS = words("IPython.display.HTML IPython.display.Markdown IPython.display.SVG")
ACTIVE_HTML = re.compile(
    r"<\s*(script|iframe|object|embed|meta|link|base|form|svg|img|video|audio)|\bon\w+\s*=|"
    r"javascript:|srcdoc",
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

# -- labels: the category of what was refused ------------------------------------------------

#: Dotted names (``*``: a prefix) by category.
QUAL_LABELS = {
    WRITES: words(
        "shutil.copy* shutil.move shutil.make_archive shutil.unpack_archive os.makedirs os.mkdir "
        "os.open os.rename os.renames os.replace os.symlink os.link os.chmod os.chown os.truncate "
        "os.write numpy.save* numpy.memmap pickle.dump json.dump joblib.dump torch.save "
        "tempfile.* csv.writer csv.DictWriter pandas.ExcelWriter pandas.HDFStore "
        "matplotlib.pyplot.savefig matplotlib.pyplot.imsave sqlite3.connect dbm.open shelve.open "
        "open io.open io.FileIO zipfile.ZipFile tarfile.open"
    ),
    DELETES: words(
        "os.remove os.unlink os.rmdir os.removedirs shutil.rmtree sklearn.datasets.clear_data_home"
    ),
    SHELL: words(
        "os.system os.popen os.posix_spawn* os.exec* os.spawn* pty.* subprocess.* "
        "asyncio.create_subprocess_* platform.architecture"
    ),
    NETWORK: words(
        "requests.* httpx.* urllib.request.* urllib3.* aiohttp.* socket.* http.* ftplib.* "
        "smtplib.* webbrowser.* xmlrpc.* seaborn.load_dataset seaborn.get_dataset_names "
        "sklearn.datasets.fetch_* statsmodels.datasets.get_rdataset statsmodels.datasets.webuse "
        "numpy.DataSource IPython.display.IFrame"
    ),
    OTHER_CODE: words(
        "exec eval compile __import__ importlib.* runpy.* pickle.load* pickle.Unpickler dill.load* "
        "cloudpickle.load* joblib.load marshal.load* pandas.read_pickle pandas.read_hdf "
        "numpy.load torch.load yaml.load yaml.unsafe_load yaml.full_load ctypes.* cffi.* code.* "
        "types.FunctionType types.CodeType numpy.ctypeslib* scipy.LowLevelCallable pandas.eval "
        "IPython.display.Javascript timeit.* doctest.*"
    ),
    DYNAMIC: words(
        "getattr setattr delattr vars globals locals sys.modules sys._getframe builtins.* "
        "inspect.currentframe inspect.stack operator.methodcaller operator.attrgetter get_ipython"
    ),
    STATE: words(
        "os.chdir os.environ* os.putenv os.unsetenv sys.exit os._exit os.abort exit quit "
        "sys.settrace sys.setprofile sys.setrecursionlimit os.umask atexit.*"
    ),
    PROCESSES: words(
        "os.kill os.killpg os.fork signal.* threading.* multiprocessing.* concurrent.* _thread.* "
        "asyncio.*"
    ),
}
