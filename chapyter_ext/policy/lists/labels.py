"""The category of a refused dotted name (``QUAL_LABELS``): what names the harm in a reason
("deletes files: os.remove('x')") instead of "not known to be safe". The first category whose
names match wins, so the probes come first (``os.getpid`` inspects the process before ``os``
does anything else); a name ending in ``*`` is a prefix.

Grouped by what the analysis must close as a class, not by example: whatever unpickles or
loads native code runs other code; whatever posts, resolves or serves opens the network;
archives extract by writing files; tracing, frames, threads and process ids tell a confined
trial from the real run.
"""

from __future__ import annotations

from ..categories import (
    DELETES,
    DYNAMIC,
    NETWORK,
    OTHER_CODE,
    PROBES,
    PROCESSES,
    SECRETS,
    SHELL,
    STATE,
    WRITES,
)
from . import words

#: Names that inspect the process (what a trial's fork would answer differently) or reach the
#: trial's own machinery.
PROBE_NAMES = words(
    "os.getpid os.getppid os.getpgid os.getpgrp os.getsid os.times os.getloadavg os.fstat "
    "os.isatty os.ttyname os.readlink os.sched_getaffinity os.get_blocking os.pidfd_open "
    "os.waitpid os.wait os.wait3 os.wait4 resource.* prctl.* psutil.* chapyter_ext* "
    "threading.active_count threading.activeCount threading.enumerate threading.current_thread "
    "threading.currentThread threading.main_thread threading.get_ident threading.get_native_id "
    "threading.settrace* threading.setprofile* threading.gettrace threading.getprofile "
    "threading._* _thread.get_ident _thread.get_native_id _thread._count sys._current_frames "
    "sys._current_exceptions sys._getframe* sys.addaudithook sys.audit sys.settrace "
    "sys.setprofile sys.gettrace sys.getprofile sys.monitoring* sys.call_tracing "
    "sys.getrefcount sys.getallocatedblocks sys.is_finalizing sys.remote_exec sys._* gc.* "
    "inspect.currentframe inspect.stack inspect.trace inspect.getouterframes "
    "inspect.getinnerframes inspect.getframeinfo inspect.getgeneratorlocals "
    "inspect.getcoroutinelocals faulthandler.* tracemalloc.* multiprocessing.current_process "
    "multiprocessing.parent_process multiprocessing.active_children _ctypes.* "
    "signal.getitimer signal.pthread_kill signal.pthread_sigmask signal.sigpending"
)
#: Whatever loads saved objects by unpickling them (which runs the code they name), and
#: whatever loads native or Python code from files: plugins, extensions, libraries.
LOADERS = words(
    "pickle.load* pickle.Unpickler _pickle.* copyreg.* dill.* cloudpickle.* joblib.load* "
    "jsonpickle.* marshal.load* shelve.* dbm.* yaml.load* yaml.unsafe_load* yaml.full_load* "
    "yaml.Loader yaml.UnsafeLoader yaml.FullLoader yaml.CLoader yaml.CUnsafeLoader "
    "yaml.add_constructor yaml.add_multi_constructor numpy.load numpy.lib.format.read_array "
    "pandas.read_pickle pandas.read_hdf pandas.HDFStore.select pandas.io.pytables.* "
    "torch.load torch.jit.load torch.hub.* torch.package.* torch.ops.load_library "
    "torch.classes.load_library tensorflow.keras.models.load_model tensorflow.saved_model.load "
    "tensorflow.load_op_library tensorflow.load_library keras.models.load_model "
    "keras.saving.load_model keras.saving.load_weights skops.io.load* statsmodels.iolib.* "
    "statsmodels.api.load* gensim.utils.unpickle nltk.data.load spacy.load mlflow.*.load_model "
    "sklearn.externals.* numpy.ctypeslib* ctypes.* cffi.* scipy.LowLevelCallable importlib.* "
    "imp.* zipimport.* pkgutil.* runpy.* code.* os.add_dll_directory "
    "duckdb.load_extension pyarrow.jvm* pyarrow.cffi* pyarrow.substrait*"
)
#: Whatever archives extract (files written where the archive says).
EXTRACTORS = words(
    "shutil.unpack_archive shutil.register_unpack_format tarfile.TarFile.extract* "
    "zipfile.ZipFile.extract* zipfile.Path py7zr.* patoolib.* rarfile.* pyunpack.*"
)
#: Whatever posts, resolves, serves or opens a browser: loggers and progress bars that post to
#: services, name lookups that carry data, plotting servers.
POSTERS = words(
    "logging.handlers.HTTPHandler logging.handlers.SMTPHandler logging.handlers.SocketHandler "
    "logging.handlers.DatagramHandler logging.handlers.SysLogHandler "
    "logging.handlers.QueueHandler logging.handlers.QueueListener "
    "logging.handlers.NTEventLogHandler logging.config.listen logging.config.* "
    "tqdm.contrib.telegram* tqdm.contrib.slack* tqdm.contrib.discord* socket.* dns.* "
    "email.utils.make_msgid bokeh.io.show bokeh.plotting.show "
    "bokeh.server.* bokeh.io.output_notebook panel.serve altair.renderers* "
    "IPython.display.IFrame IPython.display.YouTubeVideo IPython.display.VimeoVideo "
    "IPython.display.ScribdDocument"
)

#: Whatever reads a secret store: dotenv files, the OS keyring, netrc, Colab's and Kaggle's
#: notebook secrets (the environment and credentials files are :mod:`..secrets`' rules).
SECRET_READERS = words(
    "dotenv.* netrc.* keyring.get_password keyring.get_credential keyring.core.get_* "
    "google.colab.userdata* kaggle_secrets.*"
)

#: The category of a refused name of these modules that no label above names: the process's own
#: modules inspect it (``sys.stdout.isatty()``, ``sys.flags``, ``inspect.getouterframes``).
MODULE_LABELS = {"sys": PROBES, "inspect": PROBES, "faulthandler": PROBES, "gc": PROBES}

#: Dotted names (``*``: a prefix) by category; the first that matches names the category.
QUAL_LABELS = {
    PROBES: PROBE_NAMES,
    SECRETS: SECRET_READERS,
    WRITES: EXTRACTORS
    | words(
        "shutil.copy* shutil.move shutil.make_archive os.makedirs os.mkdir os.open os.rename "
        "os.renames os.replace os.symlink os.link os.chmod os.chown os.truncate os.write "
        "numpy.save* numpy.memmap pickle.dump json.dump joblib.dump torch.save tempfile.* "
        "csv.writer csv.DictWriter pandas.ExcelWriter pandas.HDFStore matplotlib.pyplot.savefig "
        "matplotlib.pyplot.imsave sqlite3.connect open io.open io.FileIO zipfile.ZipFile "
        "tarfile.open logging.FileHandler logging.handlers.RotatingFileHandler "
        "logging.handlers.TimedRotatingFileHandler logging.handlers.WatchedFileHandler "
        "bokeh.io.output_file bokeh.plotting.output_file bokeh.io.save"
    ),
    DELETES: words(
        "os.remove os.unlink os.rmdir os.removedirs shutil.rmtree sklearn.datasets.clear_data_home"
    ),
    SHELL: words(
        "os.system os.popen os.posix_spawn* os.exec* os.spawn* pty.* subprocess.* "
        "asyncio.create_subprocess_* platform.architecture"
    ),
    NETWORK: POSTERS
    | words(
        "requests.* httpx.* urllib.request.* urllib3.* aiohttp.* http.* ftplib.* smtplib.* "
        "webbrowser.* xmlrpc.* seaborn.load_dataset seaborn.get_dataset_names "
        "sklearn.datasets.fetch_* statsmodels.datasets.get_rdataset statsmodels.datasets.webuse "
        "numpy.DataSource asyncio.open_connection asyncio.start_server "
        "asyncio.open_unix_connection duckdb.install_extension"
    ),
    OTHER_CODE: LOADERS
    | words(
        "exec eval compile __import__ types.FunctionType types.CodeType pandas.eval "
        "IPython.display.Javascript IPython.display.publish_display_data timeit.* doctest.*"
    ),
    DYNAMIC: words(
        "getattr setattr delattr vars globals locals sys.modules builtins.* "
        "operator.methodcaller operator.attrgetter get_ipython"
    ),
    STATE: words(
        "os.chdir os.environ* os.putenv os.unsetenv sys.exit os._exit os.abort exit quit "
        "sys.setrecursionlimit sys.setswitchinterval sys.path.* sys.meta_path* sys.path_hooks* "
        "sys.excepthook sys.displayhook site.* os.umask atexit.* warnings.showwarning "
        "pandas.api.extensions.register_*"
    ),
    PROCESSES: words(
        "os.kill os.killpg os.fork signal.* threading.* multiprocessing.* concurrent.* _thread.* "
        "asyncio.*"
    ),
}
