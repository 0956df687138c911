"""Conformance: the string and printing ops, run by `weft run` against
TensorFlow 2.21 on the same GraphDefs, value for value: AsString over the
dtypes and format attrs, StringFormat, the hashes (Fingerprint64 on strings
of every length 0..130, the legacy Hash64, SipHash), Fingerprint, case,
length, strip, Substr (bytes and UTF-8, broadcast), the splits, ReduceJoin,
the regex ops, StringToNumber, base64, Add on strings; and what Print and
PrintV2 write to stderr/stdout. Strings that may not be UTF-8 are compared
through EncodeBase64 (itself checked on raw bytes).

usage: string_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import check, clip, compare_tf1_graph, run_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("string_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()
R = tf.raw_ops


rng = np.random.RandomState(7)
# Strings of every length 0..130 (the hash's length classes and the
# 64-byte loop), random bytes, plus text.
RAW = [bytes(rng.randint(0, 256, n).astype(np.uint8)) for n in range(131)]
TEXT = ["", "a", "hello", "Hello, World!", "h\u00e9llo w\u00f6rld", "\u4e2d\u6587\u5b57",
        "  padded  ", "\t\ttabs\n", "x" * 300, "\U0001f600 emoji", "MiXeD CaSe 123",
        "\u00df\u00e0\u00c9\u03a3\u0391\u03a3"]


def run_case(case, build, rtol=0.0, atol=0.0):
    """build() returns {name: tensor}; each is fetched through an Identity."""
    g = tf1.Graph()
    with g.as_default():
        outs = build()
        for name, t in outs.items():
            tf1.identity(t, name="out_" + name)
    compare_tf1_graph(WEFT, WORK, case, g, ["out_" + n for n in outs], (), 1, rtol, atol)


def b64(t):
    return R.EncodeBase64(input=t, pad=True)


def hashes():
    raw = tf1.constant(RAW)
    text = tf1.constant(TEXT)
    big = 2 ** 63 - 1
    return {
        "fast_raw": R.StringToHashBucketFast(input=raw, num_buckets=big),
        "fast_text": R.StringToHashBucketFast(input=text, num_buckets=1000),
        "legacy_raw": R.StringToHashBucket(string_tensor=raw, num_buckets=big),
        "legacy_text": R.StringToHashBucket(string_tensor=text, num_buckets=7),
        "strong_raw": R.StringToHashBucketStrong(input=raw, num_buckets=big, key=[1, 2]),
        "strong_neg": R.StringToHashBucketStrong(input=text, num_buckets=100,
                                                 key=[-5, 2 ** 62]),
        "fp_raw": R.Fingerprint(data=raw, method="farmhash64"),
        "fp_2d": R.Fingerprint(data=tf1.reshape(raw[:130], [13, 10]), method="farmhash64"),
        "fp_3d": R.Fingerprint(data=tf1.reshape(raw[:24], [2, 3, 4]), method="farmhash64"),
        "fp_int": R.Fingerprint(data=tf1.constant(np.arange(60, dtype=np.int32).reshape(5, 12)),
                                method="farmhash64"),
        "fp_float": R.Fingerprint(data=tf1.constant(rng.randn(4, 3).astype(np.float32)),
                                  method="farmhash64"),
        "fp_u8": R.Fingerprint(data=tf1.constant(np.arange(100, dtype=np.uint8)),
                               method="farmhash64"),
        "fp_empty": R.Fingerprint(data=tf1.zeros([0, 3]), method="farmhash64"),
        "fp_zero_cols": R.Fingerprint(data=tf1.zeros([3, 0]), method="farmhash64"),
    }


FLOATS = [0.0, -0.0, 1.5, -2.25, 1 / 3, 1e30, -1e-30, 123456789.0, 1e-7, np.inf, -np.inf,
          np.nan, 0.1, 65504.0]
INTS = [0, 1, -1, 42, -12345, 2 ** 31 - 1, -2 ** 31]


def as_string():
    out = {}
    f32 = tf1.constant(np.array(FLOATS, np.float32))
    f64 = tf1.constant(np.array(FLOATS, np.float64))
    f16 = tf1.constant(np.array(FLOATS, np.float16))
    bf16 = tf1.cast(f32, tf.bfloat16)
    attrs = [dict(), dict(shortest=True), dict(scientific=True), dict(precision=3),
             dict(precision=0, fill="#", width=6), dict(shortest=True, precision=10, width=20,
                                                         fill="-"),
             dict(scientific=True, precision=12, width=25, fill="+"),
             dict(width=15, fill="0"), dict(width=12, fill=" ", precision=2)]
    for k, a in enumerate(attrs):
        out[f"f32_{k}"] = R.AsString(input=f32, **a)
        out[f"f64_{k}"] = R.AsString(input=f64, **a)
    out["f16"] = R.AsString(input=f16)
    out["f16_short"] = R.AsString(input=f16, shortest=True)
    out["bf16"] = R.AsString(input=bf16, scientific=True)
    i_attrs = [dict(), dict(width=8), dict(width=8, fill="0"), dict(width=8, fill="-"),
               dict(width=8, fill="+"), dict(fill=" "), dict(width=3)]
    for k, a in enumerate(i_attrs):
        for dt in (np.int32, np.int64, np.int8, np.int16, np.uint8, np.uint16, np.uint32,
                   np.uint64):
            vals = np.array(INTS).astype(dt)
            out[f"{np.dtype(dt).name}_{k}"] = R.AsString(input=tf1.constant(vals), **a)
    big = tf1.constant(np.array([2 ** 63 - 1, -2 ** 63], np.int64))
    out["i64_edges"] = R.AsString(input=big, width=25)
    out["u64_max"] = R.AsString(input=tf1.constant(np.array([2 ** 64 - 1], np.uint64)))
    out["bool"] = R.AsString(input=tf1.constant([[True, False], [False, True]]), width=9)
    s = tf1.constant(["", "ab", "\u00e9t\u00e9"])
    out["str"] = b64(R.AsString(input=s))
    out["str_w"] = b64(R.AsString(input=s, width=6, precision=1))
    out["str_left"] = b64(R.AsString(input=s, width=6, fill="-"))
    out["empty"] = R.AsString(input=tf1.zeros([2, 0]))
    out["scalar"] = R.AsString(input=tf1.constant(7.25))
    return out


def formats():
    out = {}
    tensors = {
        "scalar_i": tf1.constant(5),
        "vec_f": tf1.constant(np.array(FLOATS, np.float32)),
        "vec_d": tf1.constant(np.array(FLOATS, np.float64)),
        "half": tf1.constant(np.array([0.1, 2, -3.5], np.float16)),
        "m": tf1.reshape(tf1.range(60), [3, 4, 5]),
        "b": tf1.constant([[True, False, True]]),
        "s": tf1.constant(["a", "b\nc", "q\"uote'", "\u00e9", "\x01"]),
        "s_scalar": tf1.constant("text"),
        "empty": tf1.zeros([0]),
        "empty2": tf1.zeros([3, 0, 2]),
        "u8": tf1.constant(np.arange(10, dtype=np.uint8)),
        "i64": tf1.constant(np.array([-2 ** 63, 2 ** 63 - 1], np.int64)),
    }
    for summarize in (-1, 0, 1, 2, 3, 10):
        for name, t in tensors.items():
            out[f"{name}_{summarize if summarize >= 0 else 'all'}"] = R.StringFormat(
                inputs=[t], template="<{}>", placeholder="{}", summarize=summarize)
    out["two"] = R.StringFormat(inputs=[tensors["scalar_i"], tensors["m"]],
                                template="x = {}, y = {}!", placeholder="{}")
    out["default_placeholder"] = R.StringFormat(inputs=[tensors["vec_f"]],
                                                template="v: %s", summarize=2)
    out["none"] = R.StringFormat(inputs=[], template="plain {} text", placeholder="%s")
    return out


def transforms():
    text = tf1.constant(TEXT)
    out = {
        "upper": R.StringUpper(input=text),
        "lower": R.StringLower(input=text),
        "upper_utf8": R.StringUpper(input=text, encoding="utf-8"),
        "lower_utf8": R.StringLower(input=text, encoding="utf-8"),
        "strip": R.StringStrip(input=tf1.constant([" \t a b \n\v\f\r", "", "   ", "x", " y"])),
        "len": R.StringLength(input=text),
        "len_utf8": R.StringLength(input=text, unit="UTF8_CHAR"),
        "len_raw": R.StringLength(input=tf1.constant(RAW[:40]), unit="UTF8_CHAR"),
        "b64": R.EncodeBase64(input=tf1.constant(RAW[:20])),
        "b64_pad": R.EncodeBase64(input=tf1.constant(RAW[:20]), pad=True),
        "b64_round": b64(R.DecodeBase64(input=R.EncodeBase64(input=tf1.constant(RAW[:40])))),
        "b64_decode": b64(R.DecodeBase64(input=tf1.constant(
            ["", "YQ", "YQ==", "YWI", "YWI=", "YWJj", "-_8", "_-_-", "SGVsbG8sIFdvcmxkIQ"]))),
        "add": R.Add(x=tf1.constant([["a"], ["b"]]), y=tf1.constant(["x", "y", "z"])),
        "add_scalar": R.Add(x=text, y=tf1.constant("!")),
    }
    words = tf1.constant([["hello", "w\u00f6rld", ""], ["abcdef", "\u4e2d\u6587\u5b57", "xy"]])
    for dt in (tf.int32, tf.int64):
        n = dt.name
        out[f"substr_{n}"] = b64(R.Substr(input=words, pos=tf1.constant(0, dt),
                                          len=tf1.constant(2, dt)))
        out[f"substr_neg_{n}"] = b64(R.Substr(input=words[1:], pos=tf1.constant(-2, dt),
                                              len=tf1.constant(5, dt)))
        out[f"substr_elem_{n}"] = b64(R.Substr(input=words, pos=tf1.constant([[1, 2, 0], [3, 0, 1]], dt),
                                               len=tf1.constant([[3, -1, 4], [1, 2, 0]], dt)))
        out[f"substr_bcast_{n}"] = b64(R.Substr(input=words[1], pos=tf1.constant([[0], [1]], dt),
                                                len=tf1.constant([[1], [2]], dt)))
        out[f"substr_utf8_{n}"] = R.Substr(input=words, pos=tf1.constant(0, dt),
                                           len=tf1.constant(2, dt), unit="UTF8_CHAR")
        out[f"substr_utf8_neg_{n}"] = R.Substr(input=words[1], pos=tf1.constant(-2, dt),
                                               len=tf1.constant(1, dt), unit="UTF8_CHAR")
        out[f"substr_utf8_elem_{n}"] = R.Substr(
            input=words[0], pos=tf1.constant([1, -3, 0], dt), len=tf1.constant([-1, 2, 5], dt),
            unit="UTF8_CHAR")
    return out


def splits():
    out = {}
    lines = tf1.constant(["a b  c", "", "d", "  lead and trail  ", "x,y;;z", "\u00e9 \u00e8"])
    cases = {
        "v1_space": dict(delimiter=" "),
        "v1_keep": dict(delimiter=" ", skip_empty=False),
        "v1_multi": dict(delimiter=",; "),
        "v1_multi_keep": dict(delimiter=",; ", skip_empty=False),
        "v1_chars": dict(delimiter=""),
    }
    for name, a in cases.items():
        i, v, s = R.StringSplit(input=lines, **a)
        out[name + "_i"], out[name + "_v"], out[name + "_s"] = i, b64(v), s
    cases2 = {
        "v2_ws": dict(sep=""),
        "v2_ws_max1": dict(sep="", maxsplit=1),
        "v2_ws_max0": dict(sep="", maxsplit=0),
        "v2_sep": dict(sep=" "),
        "v2_sep_max2": dict(sep=" ", maxsplit=2),
        "v2_multi": dict(sep=";;"),
    }
    for name, a in cases2.items():
        i, v, s = R.StringSplitV2(input=lines, **a)
        out[name + "_i"], out[name + "_v"], out[name + "_s"] = i, v, s
    i, v, s = R.StringSplitV2(input=tf1.constant([], tf.string), sep=",")
    out["v2_empty_i"], out["v2_empty_v"], out["v2_empty_s"] = i, v, s
    m = tf1.reshape(tf1.constant([str(k) for k in range(24)]), [2, 3, 4])
    for name, axes in {"r0": [0], "r1": [1], "r2": [-1], "r02": [0, 2], "rall": [2, 0, 1],
                       "rnone": np.zeros([0], np.int32), "rscalar": 1}.items():
        out["join_" + name] = R.ReduceJoin(inputs=m, reduction_indices=axes, separator="|")
        out["join_keep_" + name] = R.ReduceJoin(inputs=m, reduction_indices=axes,
                                                keep_dims=True)
    out["join_empty"] = R.ReduceJoin(inputs=tf1.reshape(tf1.constant([], tf.string), [2, 0]),
                                     reduction_indices=[1],
                                     separator=",")
    return out


def regexes():
    text = tf1.constant(TEXT + ["aaa bab", "foo123bar45", "2024-01-02"])
    return {
        "static": R.StaticRegexReplace(input=text, pattern="a(b)?", rewrite="<\\1>"),
        "static_first": R.StaticRegexReplace(input=text, pattern="[aeiou]", rewrite="_",
                                             replace_global=False),
        "static_empty": R.StaticRegexReplace(input=text[:4], pattern="", rewrite="-"),
        "static_digits": R.StaticRegexReplace(input=text, pattern="(\\d+)", rewrite="[\\1\\0]"),
        "static_unicode": R.StaticRegexReplace(input=text, pattern="\u00e9|\u00f6", rewrite="?"),
        "dynamic": R.RegexReplace(input=text, pattern=tf1.constant("l+"),
                                  rewrite=tf1.constant("L")),
        "dynamic_first": R.RegexReplace(input=text, pattern="\\s+", rewrite=" ",
                                        replace_global=False),
        "full": R.RegexFullMatch(input=text, pattern="[a-z ]*"),
        "full_date": R.RegexFullMatch(input=text, pattern="\\d{4}-\\d{2}-\\d{2}"),
        "full_dot": R.RegexFullMatch(input=text, pattern=".*\u00f6.*"),
    }


def numbers():
    fl = ["1.5", " 1.5", "1.5 ", "-0", "1e40", "1e-50", "inf", "-Infinity", "NaN", "0x10",
          "+3", ".5", "5.", "3.4028235e38", "1e-45", "-1.17549435e-38", "0.1", "123456789"]
    return {
        "f32": R.StringToNumber(string_tensor=fl),
        "f64": R.StringToNumber(string_tensor=fl + ["1e400", "1e-400", "2.2250738585072014e-308"],
                                out_type=tf.float64),
        "i32": R.StringToNumber(string_tensor=[" 12 ", "+5", "-2147483648", "2147483647", "0",
                                               "-0", "007"], out_type=tf.int32),
        "i64": R.StringToNumber(string_tensor=["9223372036854775807", "-9223372036854775808",
                                               " -42"], out_type=tf.int64),
        "u32": R.StringToNumber(string_tensor=["4294967295", "+1", "0"], out_type=tf.uint32),
        "u64": R.StringToNumber(string_tensor=["18446744073709551615", "+1", " 0"],
                                out_type=tf.uint64),
    }


run_case("hashes", hashes)
run_case("as_string", as_string)
run_case("string_format", formats)
run_case("transforms", transforms)
run_case("splits", splits)
run_case("regexes", regexes)
run_case("string_to_number", numbers)


# Errors: each graph fails in TensorFlow and in Weft, with TensorFlow's
# message in Weft's. hide(): a value TensorFlow's shape functions cannot
# see, so that the kernel is the one to fail.
def hide(value):
    return tf1.placeholder_with_default(tf1.constant(value), shape=None)


def expect_error(case, build, want):
    g = tf1.Graph()
    with g.as_default():
        tf1.identity(build(), name="out")
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    try:
        with tf1.Session(graph=g) as sess:
            sess.run("out:0")
        check(case + "/tf", False, "TensorFlow did not fail")
    except tf.errors.OpError as e:
        check(case + "/tf", want in e.message, e.message)
    proc = run_weft(WEFT, path, ["out"])
    check(case, proc.returncode != 0 and want in proc.stderr, clip(proc.stderr))


expect_error("err_substr", lambda: R.Substr(input=["hello", ""], pos=1, len=1),
             "pos 1 out of range for string b'' at index 1")
expect_error("err_substr_utf8", lambda: R.Substr(input=["h\u00e9"], pos=3, len=1,
                                                 unit="UTF8_CHAR"),
             "pos 3 out of range for string at index 0")
expect_error("err_number", lambda: R.StringToNumber(string_tensor=["1.5x"]),
             "StringToNumberOp could not correctly convert string: 1.5x")
expect_error("err_number_unsigned", lambda: R.StringToNumber(string_tensor=["-0"],
                                                             out_type=tf.uint64),
             "StringToNumberOp could not correctly convert string: -0")
expect_error("err_number_range", lambda: R.StringToNumber(string_tensor=["2147483648"],
                                                          out_type=tf.int32),
             "StringToNumberOp could not correctly convert string: 2147483648")
expect_error("err_regex", lambda: R.RegexReplace(input=["a"], pattern="(", rewrite="x"),
             "Invalid pattern: (, error: missing ): (")
expect_error("err_regex_full", lambda: R.RegexFullMatch(input=["a"], pattern="a[", ),
             "Invalid pattern: a[")
expect_error("err_base64", lambda: R.DecodeBase64(input=["YQ=a"]),
             "Invalid character found in base64.")
expect_error("err_base64_len", lambda: R.DecodeBase64(input=["abcde"]),
             "Base64 string length cannot be 1 modulo 4.")
expect_error("err_join", lambda: R.ReduceJoin(inputs=[["a"]], reduction_indices=hide([2])),
             "Invalid reduction dimension 2 for input with 2 dimension(s)")
expect_error("err_split", lambda: R.StringSplit(input=hide("a b"), delimiter=" ")[0],
             "input must be a vector, got shape: []")
expect_error("err_fingerprint", lambda: R.Fingerprint(data=["a"], method=hide("md5")),
             "Unsupported fingerprint method: md5")
expect_error("err_as_string", lambda: R.AsString(input=[1], precision=2),
             "precision not supported for datatype int32")

# Print and PrintV2: what lands on stderr (and stdout). TensorFlow's
# writes are caught at the file descriptor.
def tf_run_capturing(g, fetch, fd=2):
    tmp = tempfile.TemporaryFile()
    saved = os.dup(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(tmp.fileno(), fd)
    try:
        with tf1.Session(graph=g) as sess:
            value = sess.run(fetch)
    finally:
        os.dup2(saved, fd)
        os.close(saved)
    tmp.seek(0)
    return value, tmp.read().decode("utf-8", "replace")


def print_case(case, build, fd=2):
    g = tf1.Graph()
    with g.as_default():
        target = build()
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    _, tf_text = tf_run_capturing(g, target, fd)
    # TensorFlow's own log lines (I0000 ..., W0000 ...) are not the op's.
    want = "".join(line for line in tf_text.splitlines(True)
                   if not line[:1] in "IWE" or not line[1:5].isdigit())
    cmd = [WEFT, "run", "--graph", path, "--target", target.name.split(":")[0]]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    got = proc.stderr if fd == 2 else proc.stdout
    check(case, proc.returncode == 0 and want != "" and want in got,
          f"TF wrote {want!r}; weft (rc {proc.returncode}) wrote {clip(got)!r}")


def v1_print():
    x = tf1.constant([[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]])
    p = R.Print(input=x, data=[x, tf1.constant(["s", "t\n"]), tf1.constant(7),
                               tf1.reshape(tf1.range(24), [2, 3, 4])],
                message="values: ", summarize=5)
    return R.Print(input=p, data=[tf1.constant([True, False])], message="more ",
                   summarize=-1).op


def v2_print(stream, end="\n"):
    def build():
        s = R.StringFormat(inputs=[tf1.reshape(tf1.range(30), [5, 6]), tf1.constant("w")],
                           template="m={} s={}", placeholder="{}", summarize=2)
        return R.PrintV2(input=s, output_stream=stream, end=end)
    return build


print_case("print_v1", v1_print)
print_case("print_v2_stderr", v2_print("stderr"))
print_case("print_v2_end", v2_print("stderr", end=" <end>\n"))
print_case("print_v2_stdout", v2_print("stdout"), fd=1)


# Timestamp: a double of seconds since the epoch, near the clock's now.
g = tf1.Graph()
with g.as_default():
    tf1.identity(R.Timestamp(), name="ts")
path = os.path.join(WORK, "timestamp.pb")
with open(path, "wb") as f:
    f.write(g.as_graph_def().SerializeToString())
import json  # noqa: E402
import time  # noqa: E402
before = time.time()
proc = run_weft(WEFT, path, ["ts"])
after = time.time()
try:
    ts = float(json.loads(proc.stdout)["fetches"]["ts"]["values"][0])
    check("timestamp", before - 1 <= ts <= after + 1, f"{ts} not in [{before}, {after}]")
except Exception as e:  # noqa: BLE001
    check("timestamp", False, f"{e}: {clip(proc.stdout + proc.stderr)}")

sys.exit(summary_exit_code())
