"""Helpers for tests that run TensorFlow-written graphs with the weft CLI and
compare the fetches with TensorFlow's (tf_reference_test.py and the
conformance suites). numpy only: importing this needs no TensorFlow.
"""
import importlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

results = {"passed": 0, "failed": 0}


def start_conformance(name, also=()):
    """The start of a conformance test run as `<name>_test.py PATH_TO_WEFT`:
    imports numpy and TensorFlow (and the modules named in `also`), or
    prints 'SKIPPED: ...' and exits 0 when one is missing. Returns (numpy,
    tensorflow, the weft binary's absolute path, a fresh work directory
    under the test's TEST_TMPDIR)."""
    try:
        np_module = importlib.import_module("numpy")
        tf_module = importlib.import_module("tensorflow")
        for module in also:
            importlib.import_module(module)
    except ImportError as e:  # pragma: no cover
        print(f"SKIPPED: {', '.join(('numpy', 'tensorflow') + tuple(also))} not all "
              f"installed ({e})")
        sys.exit(0)
    weft = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix=f"weft_{name}_", dir=os.environ.get("TEST_TMPDIR"))
    return np_module, tf_module, weft, work


def check(case, ok, detail=""):
    if ok:
        results["passed"] += 1
        print(f"PASS {case}")
    else:
        results["failed"] += 1
        print(f"FAIL {case}: {detail}")


def summary_exit_code():
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


def feed_arg(name, value):
    """A --feed argument: name=JSON with dtype, shape and values."""
    value = np.asarray(value)
    flat = value.reshape(-1)
    values = ([[z.real, z.imag] for z in flat.tolist()] if value.dtype.kind == "c"
              else flat.tolist())  # complex as [real, imag] pairs
    spec = {"dtype": str(value.dtype), "shape": list(value.shape), "values": values}
    return f"{name}={json.dumps(spec)}"


def run_weft(weft, path, fetches, feeds=(), targets=(), init=(), steps=1):
    cmd = [weft, "run", "--graph", path, "--format", "json"]
    for f in fetches:
        cmd += ["--fetch", f]
    for t in targets:
        cmd += ["--target", t]
    for i in init:
        cmd += ["--init", i]
    for name, value in feeds:
        cmd += ["--feed", feed_arg(name, value)]
    if steps != 1:
        cmd += ["--steps", str(steps)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def run_built(weft, work, case, build, fetches, feeds=()):
    """Builds a TF1 graph with `build()`, writes it to `work` as `case`.pb
    and runs it with `weft run` (feeds as (name, array) pairs)."""
    import tensorflow as tf  # only the TensorFlow tests call this
    g = tf.compat.v1.Graph()
    with g.as_default():
        build()
    path = os.path.join(work, case + ".pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    return run_weft(weft, path, fetches, feeds=feeds)


def check_refused(case, proc, expect):
    """A finished `weft run` must have exited with an error (not a signal),
    INVALID_ARGUMENT and `expect` in its output."""
    text = proc.stdout + proc.stderr
    ok = proc.returncode > 0 and "INVALID_ARGUMENT" in text.upper().replace(" ", "_") and \
        expect in text
    check(case, ok, f"exit {proc.returncode}, want '{expect}': {clip(text)}")


def decode(entry):
    """A fetch of `weft run --format json` as a NumPy array (bfloat16, which
    NumPy lacks, as float32: every bfloat16 is one; complex values come as
    [real, imag] pairs)."""
    if entry["dtype"] == "string":
        return np.array(entry["values"], dtype=object).reshape(entry["shape"])
    if entry["dtype"] in ("complex64", "complex128"):  # [real, imag] pairs
        vals = [complex(float(re), float(im)) for re, im in entry["values"]]
        return np.array(vals, dtype=entry["dtype"]).reshape(entry["shape"])
    vals = [float(v) if isinstance(v, str) else v for v in entry["values"]]
    dtype = "float32" if entry["dtype"] == "bfloat16" else entry["dtype"]
    return np.array(vals, dtype=dtype).reshape(entry["shape"])


def weft_fetches(case, proc):
    """The fetches of a finished `weft run --format json` by name, or None
    (after a failed check naming `case`) when it exited non-zero."""
    if proc.returncode != 0:
        check(case, False, f"weft exited {proc.returncode}: {clip(proc.stderr)}")
        return None
    return json.loads(proc.stdout)["fetches"]


def clip(text, head=3000, tail=1000):
    """`text` or, when long, its start and end: an error's cause (a sanitizer
    report, say) comes first and its last lines say where it ended."""
    text = text.strip()
    if len(text) <= head + tail:
        return text
    return f"{text[:head]}\n[... {len(text) - head - tail} chars ...]\n{text[-tail:]}"


def ordered(v):
    """Float bits as integers that order like the floats (-0 == +0): the
    difference of two is their distance in ulps."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[v.dtype.itemsize]
    i = v.view(bits).astype(np.int64)
    mask = np.int64(np.iinfo(bits).max)
    return np.where(i < 0, -(i & mask), i)


def nonfinite_agree(have, want):
    """(ok, finite) for float arrays of one dtype: ok is False where NaN
    positions differ or an infinity is not matched exactly (sign included),
    True elsewhere; finite marks where both are finite, for the caller's
    own tolerance."""
    nan_h, nan_w = np.isnan(have), np.isnan(want)
    ok = nan_h == nan_w
    both = ~nan_h & ~nan_w
    inf = both & (np.isinf(have) | np.isinf(want))
    ok &= ~inf | (have == want)
    return ok, both & ~inf


def compare_fetches(case, proc, fetches, ref, rtol, atol):
    """Checks weft's JSON output (`proc`) against TensorFlow's values `ref`:
    floats to rtol/atol, everything else exactly."""
    got = weft_fetches(case, proc)
    if got is None:
        return
    for name, want in zip(fetches, ref):
        have = decode(got[name])
        want = np.asarray(want)
        if have.shape != want.shape:
            check(f"{case}/{name}", False, f"shape {have.shape} != TF {want.shape}")
        elif want.dtype.kind in "fc":
            close = np.allclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
            check(f"{case}/{name}", close,
                  f"max abs diff {np.max(np.abs(have - want)) if want.size else 0}")
        elif have.dtype == object:  # strings: TensorFlow's are bytes
            text = [w.decode() if isinstance(w, bytes) else w for w in want.reshape(-1)]
            check(f"{case}/{name}", list(have.reshape(-1)) == text,
                  f"{have} != TF {want}")
        else:
            check(f"{case}/{name}", np.array_equal(have, want.astype(have.dtype)),
                  f"{have} != TF {want}")


def run_tf1_and_weft(weft, work, case, graph, fetches, init=(), steps=1):
    """Runs a TF1 `graph` in TensorFlow (each init op once, in order, then
    `steps` runs of the fetches) and with `weft run` (the same), from its
    GraphDef written to `work`. Returns (TensorFlow's last values, weft's
    finished process)."""
    import tensorflow as tf  # only the TensorFlow tests call this
    tf1 = tf.compat.v1
    path = os.path.join(work, case + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    with tf1.Session(graph=graph) as sess:
        for i in init:
            sess.run(graph.get_operation_by_name(i))
        for _ in range(steps):
            ref = sess.run([graph.get_tensor_by_name(f + ":0") for f in fetches])
    return ref, run_weft(weft, path, fetches, init=init, steps=steps)


def compare_tf1_graph(weft, work, case, graph, fetches, init=(), steps=1,
                      rtol=1e-6, atol=1e-6):
    """run_tf1_and_weft, then compares the last run's values (rtol = atol =
    0: bit for bit)."""
    ref, proc = run_tf1_and_weft(weft, work, case, graph, fetches, init, steps)
    compare_fetches(case, proc, fetches, ref, rtol, atol)
