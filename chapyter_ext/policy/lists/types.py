"""What a value of a known type is (``known_types`` of :func:`~chapyter_ext.policy.analyse`):
the kind of object its methods are checked as, by the type's dotted name, and the category of
each kind's refused methods.

A type is ``"module.QualName"`` (``type(v).__module__`` and ``__qualname__``); the longest
listed prefix of its dotted name gives its kind. Data of the libraries the allow-list knows
(``data``) has its methods checked by name, as the values a cell makes; a path, a file, a
buffer or a PIL image by their own lists (:data:`~.methods.KIND_METHODS`); a network client,
a database, a store, a logger, a process, IPython's shell or chapyter-ext's own objects by the
lists below. An instance of a class the notebook defined (``__main__``) is ``own``: its
methods are the notebook's own code, consented to when their cell ran (a call is for a trial to
see). A type listed nowhere is ``typed``: its methods are not known to be safe.
"""

from __future__ import annotations

from ..categories import DELETES, DYNAMIC, NETWORK, OTHER_CODE, PROBES, PROCESSES, STATE, WRITES
from . import pairs, words

_DATA = words(
    "pandas numpy matplotlib mpl_toolkits seaborn scipy sklearn statsmodels patsy plotly "
    "altair polars pyarrow xarray tqdm collections datetime decimal fractions re uuid "
    "zoneinfo dateutil PIL.ImageDraw PIL.ImageFont IPython.core.display IPython.lib.display "
    "IPython.display "
    "builtins.dict builtins.list builtins.tuple builtins.set builtins.frozenset builtins.str "
    "builtins.bytes builtins.bytearray builtins.int builtins.float builtins.complex "
    "builtins.bool builtins.NoneType builtins.range builtins.slice builtins.memoryview "
    "builtins.dict_keys builtins.dict_values builtins.dict_items"
)
_NETWORK = words(
    "requests httpx urllib3 urllib.request http.client socket ssl aiohttp smtplib ftplib "
    "imaplib poplib telnetlib xmlrpc websocket websockets paramiko boto3 botocore dns "
    "webbrowser multiprocessing.connection logging.handlers tqdm.contrib.telegram "
    "tqdm.contrib.slack tqdm.contrib.discord slack_sdk telegram discord"
)
#: Dotted-name prefixes of types (longest first wins) -> the kind their objects are.
TYPE_KINDS = {
    **dict.fromkeys(_DATA, "data"),
    **dict.fromkeys(_NETWORK, "network"),
    **pairs(
        "pathlib=path _io.TextIOWrapper=file _io.BufferedReader=file _io.BufferedWriter=file "
        "_io.BufferedRandom=file _io.FileIO=file gzip=file bz2=file lzma=file tarfile=file "
        "zipfile=file _io.StringIO=buffer _io.BytesIO=buffer PIL=image "
        "requests.models.Response=response httpx._models.Response=response "
        "requests.structures=data "
        "sqlite3=sql duckdb=sql sqlalchemy=sql psycopg2=sql pymysql=sql pandas.io.sql=sql "
        "pandas.io.pytables=store pandas.io.excel=store shelve=store dbm=store h5py=store "
        "tables=store zarr=store "
        "logging=logger threading=process multiprocessing=process concurrent=process "
        "subprocess=process asyncio=process _thread=process "
        "IPython=shell ipykernel=shell jupyter_client=shell chapyter_ext=trial __main__=own"
    ),
}
#: The methods of the kinds not in :data:`~.methods.KIND_METHODS` that only read.
KIND_READS = {
    "response": words("json raise_for_status close"),
    "sql": words("cursor fetchone fetchall fetchmany close rollback"),
    "store": words("keys info groups walk get_node get_storer close is_open"),
    "logger": words(
        "debug info warning warn error exception critical log isEnabledFor getEffectiveLevel "
        "getChild hasHandlers setLevel"
    ),
    "process": words("is_alive done running cancelled result exception join"),
}
#: The category of a kind's refused methods: by name, or ``*`` for any other.
KIND_LABELS = {
    "network": {"*": NETWORK},
    "response": pairs("iter_content=N iter_lines=N"),
    "sql": pairs(
        "execute=C executemany=C executescript=C load_extension=C enable_load_extension=C "
        "sql=C query=C install_extension=N commit=W"
    ),
    "store": pairs(
        "put=W append=W append_to_multiple=W remove=W create_table_index=W flush=W "
        "get=C select=C select_as_multiple=C select_column=C"
    ),
    "image": pairs("show=P save=W"),
    "path": pairs(
        "rename=W replace=W touch=W chmod=W lchmod=W symlink_to=W hardlink_to=W link_to=W "
        "write_text=W write_bytes=W mkdir=W unlink=D rmdir=D"
    ),
    "logger": pairs(
        "addHandler=S removeHandler=S addFilter=S removeFilter=S handle=N callHandlers=N"
    ),
    "process": {"*": PROCESSES},
    "shell": {"*": DYNAMIC},
    "trial": {"*": PROBES},
}
_LETTERS = {"N": NETWORK, "C": OTHER_CODE, "W": WRITES, "D": DELETES, "P": PROCESSES, "S": STATE}
KIND_LABELS = {
    kind: {m: _LETTERS.get(c, c) for m, c in labels.items()} for kind, labels in KIND_LABELS.items()
}
#: Kinds whose attributes a cell may set (``df.columns = [...]``); on the others it asks.
SETTABLE_KINDS = words("data path buffer image")
