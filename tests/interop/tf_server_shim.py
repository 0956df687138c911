"""Run TensorFlow's own distributed tests against `weft server` processes.

TensorFlow's distributed tests (server_lib_test.py,
session_clusterspec_prop_test.py, sync_replicas_optimizer_test.py, ...)
start their servers in the test process with
`tensorflow.python.training.server_lib.Server` (exported as
`tf.distribute.Server` and `tf.compat.v1.train.Server`),
`Server.create_local_server()` and `test_util.create_local_cluster()`
(`tf.test.create_local_cluster`). This module replaces those with objects
that start one `weft server` child process per task, so that the unchanged
test bodies talk gRPC to Weft's MasterService and WorkerService instead of
TensorFlow's in-process runtime.

What `install()` replaces, in every loaded TensorFlow module that refers
to the original object (so `from ... import Server` copies follow too):

  * `server_lib.Server` -> `WeftServer`. `WeftServer(cluster, job_name,
    task_index, protocol, config, start)` takes what TensorFlow's Server
    takes (ServerDef, ClusterDef, ClusterSpec or dict) and builds the same
    ServerDef with TensorFlow's own `server_lib._make_server_def`, so the
    same ValueError/TypeError come out of bad arguments. It starts exactly
    its own task, `weft server --cluster JSON --job J --task I`, with the
    whole cluster spec. `.target` is "grpc://127.0.0.1:PORT", `.server_def`
    is the ServerDef as given (TensorFlow keeps "localhost:0" there too),
    `.start()` starts the process (idempotent) and waits until its log says
    it is serving (at most WEFT_SHIM_START_TIMEOUT_S, default 60 s),
    `.join()` waits for the process, `.stop()` ends it.
  * `Server.create_local_server(config, start)` -> one task
    {"localhost": ["localhost:0"]}, as TensorFlow does.
  * `test_util.create_local_cluster(num_workers, num_ps, protocol,
    worker_config, ps_config)` -> the same (workers, ps_servers) tuple; all
    tasks are spawned before the shim waits for any of them.
  * `multi_worker_test_base` creates its servers through
    `server_lib.Server`, so it uses `WeftServer` without a patch of its own.

Addresses: every server listens on 127.0.0.1 only. In the spec given to
Weft, "localhost" becomes "127.0.0.1" and port 0 (TensorFlow's "pick a
port") becomes a free ephemeral port; addresses without a port are passed
on unchanged so that Weft reports them. Only `device_count` of the
server's default session config is forwarded (as --cpus/--gpus); the rest
of `config` is kept in `.server_def` only. Extra `weft server` flags can
be given in WEFT_SHIM_SERVER_FLAGS (shell words).

Errors: when `weft server` exits before serving, the shim raises the
`tf.errors.OpError` subclass for the status code Weft printed
("error: FAILED_PRECONDITION: ..." -> FailedPreconditionError; a usage
error -> InvalidArgumentError; anything else -> UnknownError), with
Weft's error line (or the end of the task's log) as the message.

Lifetime: like TensorFlow's in-process servers, which cannot be stopped
cleanly, a WeftServer's process is not ended when the object is dropped.
Cleanup: every process the shim started is ended at exit (atexit, SIGTERM
then SIGKILL, by pid); a server started from the main thread also gets
PR_SET_PDEATHSIG, so it dies with the test process even on SIGKILL. Logs
go to WEFT_SHIM_LOG_DIR (default: a new /tmp/weft-shim-* directory, kept
when WEFT_SHIM_KEEP_LOGS=1 or when a test failed, else removed).

Compatibility: the stored copies of TensorFlow's test files may be older
than the installed TensorFlow. The runner adds module-level aliases
when (and only when) the installed TensorFlow lacks them, in both modes,
and says so on stderr: `variables.VariableV1` (moved to `variable_v1`),
`config_pb2.RPCOptions` (moved to rpc_options.proto), `ops.RegisterShape`
(a no-op decorator) and `common_shapes.unknown_shape`.
Test bodies are never changed.

Runner:

  WEFT_BIN=/path/to/weft python3 tests/interop/tf_server_shim.py \\
      [--baseline] [--v1] [--sessions] [--isolate] [--test-timeout S] \\
      PATH_TO_TEST_FILE [Class | Class.method ...] [-k SUBSTRING ...]

  --baseline      do not install the shim: TensorFlow's own servers, the
                  same test file and runner (for comparison)
  --v1            tf.compat.v1.disable_v2_behavior() first (TensorFlow 1.x
                  graph mode, so @run_v1_only tests run instead of skipping)
  --isolate       run every test method in its own child process (its own
                  servers), killed with its process group after
                  --test-timeout seconds (default 300) and reported TIMEOUT
  -k SUBSTRING    only tests whose id contains SUBSTRING (repeatable)
  --sessions      also run sessions created without a target (the test
                  helpers' in-process sessions) on a local weft server
                  (route_local_sessions), so graph-mode kernel tests run
                  their ops on Weft; use with --v1

Only the test methods the file itself defines are run (not, e.g.,
TensorFlow's inherited `test_session` helper; benchmarks are not run).
It prints unittest's verbose per-method lines, then one
`RESULT <Class.method> PASS|FAIL|ERROR|SKIP|TIMEOUT` line per method and
a `SUMMARY` line; the exit status is 0 when nothing failed.
"""
import atexit
import ctypes
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

START_TIMEOUT_S = float(os.environ.get("WEFT_SHIM_START_TIMEOUT_S", "60"))

_lock = threading.Lock()
_procs = {}          # pid -> subprocess.Popen of every weft server started
_used_ports = set()  # ports this process handed out already
_log_dir = None
_keep_logs = os.environ.get("WEFT_SHIM_KEEP_LOGS") == "1"


# ---------------------------------------------------------------- processes

def _weft_bin():
    path = os.environ.get("WEFT_BIN")
    if not path:
        raise RuntimeError("tf_server_shim: set WEFT_BIN to the weft binary")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"tf_server_shim: WEFT_BIN={path} is not executable")
    return path


def log_dir():
    global _log_dir
    with _lock:
        if _log_dir is None:
            _log_dir = os.environ.get("WEFT_SHIM_LOG_DIR") or \
                tempfile.mkdtemp(prefix="weft-shim-")
            os.makedirs(_log_dir, exist_ok=True)
        return _log_dir


def free_port():
    """A free TCP port on 127.0.0.1 that this process has not handed out."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with _lock:
            if port not in _used_ports:
                _used_ports.add(port)
                return port
    raise RuntimeError("tf_server_shim: no free port found")


def _die_with_parent():
    # PR_SET_PDEATHSIG = 1: SIGTERM this child when the spawning thread ends.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except Exception:  # pragma: no cover - not Linux
        pass


def _end_process(proc, grace_s=5.0):
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass


def kill_all():
    """Ends every weft server this process started (by pid)."""
    with _lock:
        procs = list(_procs.values())
        _procs.clear()
    for p in procs:
        if p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.time() + 5
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _cleanup_at_exit():
    kill_all()
    if _log_dir and not _keep_logs and not os.environ.get("WEFT_SHIM_LOG_DIR"):
        shutil.rmtree(_log_dir, ignore_errors=True)


atexit.register(_cleanup_at_exit)


# ------------------------------------------------------------------ errors

def _op_error(code_name, message):
    """The tf.errors.OpError subclass for a status code name."""
    from tensorflow.core.lib.core import error_codes_pb2
    from tensorflow.python.framework import errors_impl
    try:
        code = error_codes_pb2.Code.Value(code_name)
        cls = errors_impl.exception_type_from_error_code(code)
    except (ValueError, KeyError):
        cls = errors_impl.UnknownError
    return cls(None, None, message)


def _startup_error(log_text, what):
    tail = "\n".join(log_text.strip().splitlines()[-6:])
    m = re.search(r"^error: ([A-Z_]+): (.*)$", log_text, re.M)
    if m:
        return _op_error(m.group(1), f"{what}: {m.group(1)}: {m.group(2)}")
    m = re.search(r"^usage error: (.*)$", log_text, re.M)
    if m:
        return _op_error("INVALID_ARGUMENT", f"{what}: {m.group(1)}")
    return _op_error("UNKNOWN", f"{what} did not start: {tail}")


# ---------------------------------------------------------------- addresses

def _weft_address(addr, pick_port):
    """`addr` as Weft should serve/call it: loopback by number, no port 0."""
    host, sep, port = addr.rpartition(":")
    if not sep:
        return addr  # no port: Weft reports it (TensorFlow's error has "port")
    if host in ("localhost", "[::1]", "::1", "127.0.0.1"):
        host = "127.0.0.1"
    if port == "0":
        port = str(pick_port())
    return f"{host}:{port}"


# ------------------------------------------------------------------ server

class WeftServer:
    """One task of a cluster, served by a `weft server` child process.

    A stand-in for `tf.distribute.Server` (see the module docstring)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None,
                 protocol=None, config=None, start=True):
        from tensorflow.python.training import server_lib
        make = getattr(server_lib, "_make_server_def")
        self._server_def = make(server_or_cluster_def, job_name, task_index,
                                protocol, config)
        self._job = self._server_def.job_name
        self._task = self._server_def.task_index
        self._proc = None
        self._log_path = None
        self._cluster = {}
        own_addr = None
        for job in self._server_def.cluster.job:
            tasks = {}
            for idx, addr in job.tasks.items():
                tasks[str(idx)] = _weft_address(addr, free_port)
                if job.name == self._job and idx == self._task:
                    own_addr = tasks[str(idx)]
            self._cluster[job.name] = tasks
        if own_addr is None:
            raise _op_error(
                "INVALID_ARGUMENT",
                f"task /job:{self._job}/task:{self._task} is not in the "
                f"cluster {dict(self._cluster)}")
        self._address = own_addr
        if start:
            self.start()

    # TensorFlow's Server API ------------------------------------------------
    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        return "grpc://" + self._address

    def start(self):
        if self._proc is None:
            self._spawn()
        self._wait_serving()

    def join(self):
        if self._proc is not None:
            self._proc.wait()

    @staticmethod
    def create_local_server(config=None, start=True):
        return WeftServer({"localhost": ["localhost:0"]}, protocol="grpc",
                          config=config, start=start)

    # Extras -------------------------------------------------------------------
    def stop(self):
        if self._proc is not None:
            _end_process(self._proc)
            with _lock:
                _procs.pop(self._proc.pid, None)

    @property
    def pid(self):
        return self._proc.pid if self._proc else None

    @property
    def log_path(self):
        return self._log_path

    def __repr__(self):
        return (f"WeftServer(/job:{self._job}/task:{self._task} at "
                f"{self._address}, pid {self.pid})")

    def _command(self):
        cmd = [_weft_bin(), "server",
               "--cluster", json.dumps(self._cluster, sort_keys=True),
               "--job", self._job, "--task", str(self._task)]
        counts = self._server_def.default_session_config.device_count
        if "CPU" in counts:
            cmd += ["--cpus", str(counts["CPU"])]
        if "GPU" in counts:
            cmd += ["--gpus", str(counts["GPU"])]
        cmd += shlex.split(os.environ.get("WEFT_SHIM_SERVER_FLAGS", ""))
        return cmd

    def _spawn(self):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", self._job)
        self._log_path = os.path.join(
            log_dir(), f"{safe}-{self._task}-{self._address.rsplit(':', 1)[-1]}"
            f"-{time.monotonic_ns()}.log")
        main = threading.current_thread() is threading.main_thread()
        with open(self._log_path, "wb") as log:
            self._proc = subprocess.Popen(
                self._command(), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent if main else None)
        with _lock:
            _procs[self._proc.pid] = self._proc

    def _read_log(self):
        try:
            with open(self._log_path, "r", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _wait_serving(self):
        what = f"weft server /job:{self._job}/task:{self._task} at " \
               f"{self._address} (log {self._log_path})"
        deadline = time.time() + START_TIMEOUT_S
        while True:
            text = self._read_log()
            if " serving " in text:
                return
            if self._proc.poll() is not None:
                with _lock:
                    _procs.pop(self._proc.pid, None)
                raise _startup_error(
                    text, f"{what} exited with status {self._proc.returncode}")
            if time.time() > deadline:
                self.stop()
                raise _op_error(
                    "DEADLINE_EXCEEDED",
                    f"{what} was not serving after {START_TIMEOUT_S:.0f} s")
            time.sleep(0.02)


def create_local_cluster(num_workers, num_ps, protocol="grpc",
                         worker_config=None, ps_config=None):
    """`test_util.create_local_cluster` on Weft: (workers, ps_servers)."""
    from tensorflow.python.training import server_lib
    spec = server_lib.ClusterSpec({
        "worker": [f"127.0.0.1:{free_port()}" for _ in range(num_workers)],
        "ps": [f"127.0.0.1:{free_port()}" for _ in range(num_ps)],
    })
    workers = [WeftServer(spec, job_name="worker", task_index=i,
                          protocol=protocol, config=worker_config, start=False)
               for i in range(num_workers)]
    ps = [WeftServer(spec, job_name="ps", task_index=i, protocol=protocol,
                     config=ps_config, start=False) for i in range(num_ps)]
    for s in workers + ps:   # spawn every task, then wait for each
        s._spawn()
    for s in workers + ps:
        s.start()
    return workers, ps


# ------------------------------------------------------------------ install

def _replace_everywhere(old, new):
    """Points every loaded tensorflow module attribute that is `old` at `new`
    (module dicts are read directly, so lazy API modules are not loaded)."""
    count = 0
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("tensorflow"):
            continue
        try:
            attrs = vars(mod)
        except TypeError:
            continue
        for attr, value in list(attrs.items()):
            if value is old:
                setattr(mod, attr, new)
                count += 1
    return count


def add_compat_aliases():
    """Module-level names that older copies of the tests import and the
    installed TensorFlow no longer has. Returns what was added."""
    added = []
    from tensorflow.python.framework import common_shapes, ops
    from tensorflow.python.ops import variables
    if not hasattr(variables, "VariableV1"):
        from tensorflow.python.ops import variable_v1
        variables.VariableV1 = variable_v1.VariableV1
        added.append("variables.VariableV1 = variable_v1.VariableV1")
    from tensorflow.core.protobuf import config_pb2
    if not hasattr(config_pb2, "RPCOptions"):
        # The class of ConfigProto.rpc_options (now in rpc_options.proto).
        config_pb2.RPCOptions = config_pb2.ConfigProto().rpc_options.__class__
        added.append("config_pb2.RPCOptions (ConfigProto.rpc_options' class)")
    if not hasattr(ops, "RegisterShape"):
        def register_shape(op_type):  # shape functions live in C++ now
            del op_type
            return lambda fn: fn
        ops.RegisterShape = register_shape
        added.append("ops.RegisterShape (no-op)")
    if not hasattr(common_shapes, "unknown_shape"):
        from tensorflow.python.framework import tensor_shape

        def unknown_shape(op):
            return [tensor_shape.unknown_shape() for _ in op.outputs]
        common_shapes.unknown_shape = unknown_shape
        added.append("common_shapes.unknown_shape")
    return added


_installed = False


def install():
    """Replaces TensorFlow's in-process servers with `weft server` tasks."""
    global _installed
    if _installed:
        return
    _weft_bin()  # fail early without WEFT_BIN
    import tensorflow  # noqa: F401  (loads the API modules to patch)
    from tensorflow.python.framework import test_util
    from tensorflow.python.training import server_lib
    _replace_everywhere(server_lib.Server, WeftServer)
    _replace_everywhere(test_util.create_local_cluster, create_local_cluster)
    _installed = True


_session_server = None


def route_local_sessions(cpus=2):
    """Makes every session created without a target (TensorFlow's
    in-process runtime: `tf.compat.v1.Session()`, and through it the test
    helpers `self.session()`, `cached_session()` and `evaluate()` in graph
    mode) a session on one local `weft server` task instead, started on
    first use with `cpus` CPU devices (job "localhost", as TensorFlow's
    local devices are named). So TensorFlow's graph-mode kernel tests run
    their ops on Weft, unchanged."""
    from tensorflow.python.client import session as session_lib
    original = session_lib.BaseSession.__init__

    def init(self, target="", graph=None, config=None):
        global _session_server
        if not target:
            if _session_server is None:
                from tensorflow.core.protobuf import config_pb2
                server_config = config_pb2.ConfigProto()
                server_config.device_count["CPU"] = cpus
                _session_server = WeftServer.create_local_server(config=server_config)
            target = _session_server.target
        original(self, target, graph, config)

    session_lib.BaseSession.__init__ = init


# ------------------------------------------------------------------- runner

class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.status = {}

    @staticmethod
    def _id(test):
        # A parameterized method's id ends in its parameters,
        # "Class.testValues0 (tf.float32)": the dots in those are not the
        # method's.
        name = test.id().split(" (", 1)[0]
        return ".".join(name.split(".")[-2:])

    def addSuccess(self, test):
        super().addSuccess(test)
        self.status.setdefault(self._id(test), "PASS")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.status[self._id(test)] = "FAIL"

    def addError(self, test, err):
        super().addError(test, err)
        self.status[self._id(test)] = "ERROR"

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.status[self._id(test)] = "SKIP"

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.status[self._id(test)] = "PASS"

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.status[self._id(test)] = "FAIL"

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self.status[self._id(test)] = "FAIL" if failed else "ERROR"


def _load_module(path):
    path = os.path.abspath(path)
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _test_ids(module):
    loader = unittest.TestLoader()
    ids = []
    for obj in vars(module).values():
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase) \
                and obj.__module__ == module.__name__:
            for m in loader.getTestCaseNames(obj):
                # Only methods the test file defines (not, e.g., TensorFlow's
                # deprecated TensorFlowTestCase.test_session helper).
                owner = next(c for c in obj.__mro__ if m in vars(c))
                if owner.__module__ == module.__name__:
                    ids.append(f"{obj.__name__}.{m}")
    return ids


def _select(ids, names, patterns):
    out = []
    for i in ids:
        if names and not any(i == n or i.startswith(n + ".") for n in names):
            continue
        if patterns and not any(p in i for p in patterns):
            continue
        out.append(i)
    return out


def _summary(status, order):
    counts = {}
    for i in order:
        s = status.get(i, "ERROR")
        counts[s] = counts.get(s, 0) + 1
        print(f"RESULT {i} {s}", flush=True)
    print("SUMMARY " + " ".join(f"{k.lower()}={v}" for k, v in
                                sorted(counts.items())), flush=True)
    bad = sum(v for k, v in counts.items() if k in ("FAIL", "ERROR", "TIMEOUT"))
    return 1 if bad else 0


def _run_isolated(argv0_flags, path, ids, timeout_s):
    status = {}
    for test_id in ids:
        cmd = [sys.executable, os.path.abspath(__file__)] + argv0_flags + \
              [path, test_id]
        env = dict(os.environ)
        if os.environ.get("WEFT_SHIM_LOG_DIR"):  # one log folder per test
            env["WEFT_SHIM_LOG_DIR"] = os.path.join(
                os.environ["WEFT_SHIM_LOG_DIR"], test_id)
        out = tempfile.TemporaryFile()
        start = time.time()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=env)
        try:
            child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            # The child's weft servers are in its process group.
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            status[test_id] = "TIMEOUT"
        out.seek(0)
        text = out.read().decode(errors="replace")
        out.close()
        m = re.search(r"^RESULT \S+ (\w+)$", text, re.M)
        if test_id not in status:
            status[test_id] = m.group(1) if m else "ERROR"
        print(f"===== {test_id}: {status[test_id]} "
              f"({time.time() - start:.1f} s)", flush=True)
        if status[test_id] not in ("PASS", "SKIP"):
            keep = [l for l in text.splitlines()
                    if not re.match(r"^(RESULT|SUMMARY) ", l)]
            print("\n".join(keep[-60:]), flush=True)
        else:
            for line in text.splitlines():
                if " ... " in line:
                    print(line, flush=True)
    return _summary(status, ids)


def main(argv):
    baseline = v1 = isolate = sessions = False
    timeout_s = 300.0
    names, patterns, rest = [], [], list(argv)
    path = None
    while rest:
        a = rest.pop(0)
        if a == "--baseline":
            baseline = True
        elif a == "--v1":
            v1 = True
        elif a == "--isolate":
            isolate = True
        elif a == "--sessions":
            sessions = True
        elif a == "--test-timeout":
            timeout_s = float(rest.pop(0))
        elif a == "-k":
            patterns.append(rest.pop(0))
        elif a in ("-v", "--verbose"):
            pass
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif path is None:
            path = a
        else:
            names.append(a)
    if path is None:
        print(__doc__, file=sys.stderr)
        return 2

    # SIGTERM (e.g. from `timeout`) ends the run through atexit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    import tensorflow as tf
    for alias in add_compat_aliases():
        print(f"tf_server_shim: compat alias added: {alias}", file=sys.stderr)
    if v1:
        tf.compat.v1.disable_v2_behavior()
    if not baseline:
        install()
        if sessions:
            route_local_sessions()
    from absl import flags
    if not flags.FLAGS.is_parsed():
        flags.FLAGS([sys.argv[0]])

    module = _load_module(path)
    ids = _select(_test_ids(module), names, patterns)
    mode = ("TensorFlow servers" if baseline else "weft servers") + \
        (", v1 graph mode" if v1 else ", TF2 behavior") + \
        (", local sessions on weft" if sessions and not baseline else "")
    print(f"tf_server_shim: {os.path.basename(path)}: {len(ids)} test(s), "
          f"{mode}" + ("" if baseline or isolate else f", logs {log_dir()}"),
          flush=True)
    if isolate:
        flags_for_child = (["--baseline"] if baseline else []) + \
            (["--v1"] if v1 else []) + (["--sessions"] if sessions else [])
        return _run_isolated(flags_for_child, path, ids, timeout_s)

    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromName(i, module) for i in ids)
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2,
                                     resultclass=_Result)
    result = runner.run(suite)
    code = _summary(result.status, ids)
    if code and _log_dir:
        global _keep_logs
        _keep_logs = True
        print(f"tf_server_shim: weft server logs kept in {_log_dir}",
              flush=True)
    return code


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    kill_all()
    # TensorFlow's atexit/threads can hang a normal exit after a failed
    # session; the weft servers are gone already.
    _cleanup_at_exit()
    os._exit(code)
