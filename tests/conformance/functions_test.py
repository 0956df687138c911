"""Conformance: the graphs TensorFlow 2.x writes, run by `weft run`.

TensorFlow 2.21 builds each graph the way users make them: raw tf.function
graphs (nested calls, cond, while, case: function libraries with
PartialCall, StatelessIf, StatelessWhile, Case), the same frozen with and
without lowering, a SavedModel's serving signature loaded and frozen, Keras
LSTM/GRU/SimpleRNN (stacked, bidirectional, masked: While loops over
TensorLists), tf.compat.v1.nn.dynamic_rnn under both control-flow versions
(TensorArrayV3 inside v1 frames, TensorLists inside a While), tf.while_loop
over TensorArrays with its gradient, and functional control flow placed on a
second CPU device. Each GraphDef is written into TEST_TMPDIR; TensorFlow runs
it in a Session and the weft CLI runs the same file with the same feeds, and
every fetched tensor is compared: float32 to 1e-4 relative and absolute,
integers and bools exactly.

usage: functions_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import (check, clip, compare_fetches, feed_arg, run_weft,  # noqa: E402
                        summary_exit_code)

np, tf, WEFT, WORK = start_conformance("functions")
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2)
from tensorflow.python.ops import control_flow_util  # noqa: E402

tf1 = tf.compat.v1
keras = tf.keras
FUNCTIONAL = {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf",
              "While", "StatelessWhile", "Case", "StatelessCase"}
WHILE = ("While", "StatelessWhile")
RTOL = ATOL = 1e-4
rng = np.random.RandomState(0)
f32 = np.float32


def all_ops(gd):
    ops = {n.op for n in gd.node}
    for f in gd.library.function:
        ops |= {n.op for n in f.node_def}
    return ops


def tf_session_run(gd, fetches, feeds, init=(), cpus=1):
    """TensorFlow's values for `fetches` of GraphDef `gd` (a v1 Session)."""
    g = tf.Graph()
    with g.as_default():
        tf1.import_graph_def(gd, name="")
    config = tf1.ConfigProto(device_count={"CPU": cpus})
    with tf1.Session(graph=g, config=config) as sess:
        for i in init:
            sess.run(g.get_operation_by_name(i))
        name = lambda t: t if ":" in t else t + ":0"  # noqa: E731
        return sess.run([name(f) for f in fetches],
                        {name(n): v for n, v in feeds})


def compare(case, gd, fetches, feeds=(), init=(), want_ops=(), ref=None, cpus=1):
    """Writes `gd`, runs it in TensorFlow (unless `ref` is given) and in
    weft, compares the fetches. `want_ops`: ops the graph must contain (a
    tuple: one of them), so a case cannot pass by exercising nothing."""
    have = all_ops(gd)
    missing = [w for w in want_ops
               if not (set(w) & have if isinstance(w, tuple) else w in have)]
    if missing:
        check(f"{case}/uses_ops", False, f"graph lacks {sorted(missing)}")
        return
    path = os.path.join(WORK, case + ".pb")
    with open(path, "wb") as f:
        f.write(gd.SerializeToString())
    if ref is None:
        ref = tf_session_run(gd, fetches, feeds, init, cpus)
    if cpus == 1:
        proc = run_weft(WEFT, path, fetches, feeds, init=init)
    else:
        proc = run_weft_devices(path, fetches, feeds, cpus)
    compare_fetches(case, proc, fetches, ref, RTOL, ATOL)
    return proc


def run_weft_devices(path, fetches, feeds, cpus):
    cmd = [WEFT, "run", "--graph", path, "--format", "json",
           "--cpu-devices", str(cpus), "--log-device-placement"]
    for f in fetches:
        cmd += ["--fetch", f]
    for name, value in feeds:
        cmd += ["--feed", feed_arg(name, value)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def outputs_of(fn):
    return [t.name.split(":")[0] if t.name.endswith(":0") else t.name
            for t in fn.outputs]


def frozen(cf, lower):
    return convert_variables_to_constants_v2(cf, lower_control_flow=lower)


# --- Raw tf.function graphs: nested calls, cond, while, case. -------------
@tf.function
def affine(a, b):
    return tf.matmul(a, b) + 1.0


@tf.function
def twice_affine(a):
    return affine(affine(a, a), a) * 0.5  # a call inside a call


@tf.function
def program(x, n, k):
    y = twice_affine(x)
    y = tf.cond(n > 2, lambda: y * 2.0, lambda: y - 1.0)

    def body(i, y):
        return i + 1, tf.tanh(y) + tf.cast(i, tf.float32) * 0.1

    i, y = tf.while_loop(lambda i, y: i < n, body, [tf.constant(0), y])
    z = tf.switch_case(k, [lambda: y + 1.0, lambda: y * y, lambda: -y])
    # A cond on a float predicate's comparison, with an int output too.
    w, j = tf.cond(tf.reduce_sum(z) > 0.0, lambda: (z, i * 2), lambda: (-z, i))
    return w, j, i


cf = program.get_concrete_function(tf.TensorSpec([2, 2], tf.float32, name="x"),
                                   tf.TensorSpec([], tf.int32, name="n"),
                                   tf.TensorSpec([], tf.int32, name="k"))
xv = rng.randn(2, 2).astype(f32) * 0.5
raw = cf.graph.as_graph_def()
program_cases = [(3, 0), (1, 1), (0, 2), (5, 7)]  # k = 7: Case's default branch
for low_name, gd in [("raw", raw), ("frozen", frozen(cf, False).graph.as_graph_def()),
                     ("lowered", frozen(cf, True).graph.as_graph_def())]:
    fetches = outputs_of(cf) if low_name == "raw" else outputs_of(frozen(cf, False))
    want = (["PartitionedCall", "StatelessIf", "StatelessWhile", "StatelessCase"]
            if low_name == "raw" else [])
    if low_name == "lowered" and all_ops(gd) & FUNCTIONAL - {"PartitionedCall"}:
        check("tf_function_lowered/is_lowered", False,
              f"still has {sorted(all_ops(gd) & FUNCTIONAL)}")
    for n, k in program_cases:
        compare(f"tf_function_{low_name}_n{n}_k{k}", gd, fetches,
                feeds=[("x", xv), ("n", np.int32(n)), ("k", np.int32(k))],
                want_ops=want)


# --- A SavedModel signature, loaded and frozen. ---------------------------
class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(rng.randn(4, 3).astype(f32), name="w")
        self.b = tf.Variable(rng.randn(3).astype(f32), name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="features")])
    def __call__(self, features):
        logits = tf.matmul(features, self.w) + self.b
        # A data-dependent loop: scale down until the largest logit < 1.
        def body(t):
            return [t * 0.5]
        logits = tf.while_loop(lambda t: tf.reduce_max(tf.abs(t)) >= 1.0, body, [logits])[0]
        return {"probs": tf.nn.softmax(logits), "label": tf.argmax(logits, axis=1)}


saved_dir = os.path.join(WORK, "saved_model")
tf.saved_model.save(Scorer(), saved_dir)
loaded = tf.saved_model.load(saved_dir)  # kept: the signature uses its variables
serving = loaded.signatures["serving_default"]
sm = frozen(serving, False)
sm_gd = sm.graph.as_graph_def()
feat = (rng.randn(5, 4) * 3).astype(f32)
sm_in = sm.inputs[0].name.split(":")[0]
sm_fetches = outputs_of(sm)
compare("saved_model_signature", sm_gd, sm_fetches, feeds=[(sm_in, feat)],
        want_ops=[WHILE])


# --- Keras recurrent layers, unlowered and lowered. -----------------------
def keras_case(name, layers, steps=6, width=3, mask=False):
    tf.random.set_seed(1)
    model = keras.Sequential([keras.Input((steps, width))] + layers)
    spec = tf.TensorSpec([4, steps, width], tf.float32, name="seq")
    cfk = tf.function(lambda s: model(s)).get_concrete_function(spec)
    seq = rng.randn(4, steps, width).astype(f32)
    if mask:
        seq[1, 3:] = 0.0  # masked tail
        seq[3, 1:] = 0.0
    for lower in (False, True):
        fz = frozen(cfk, lower)
        gd = fz.graph.as_graph_def()
        want = ["TensorListReserve", "TensorListSetItem", "TensorListStack"]
        want += [] if lower else [WHILE]
        compare(f"keras_{name}_{'lowered' if lower else 'functional'}", gd,
                outputs_of(fz), feeds=[("seq", seq)], want_ops=want)


keras_case("lstm", [keras.layers.LSTM(8)])
keras_case("gru", [keras.layers.GRU(8)])
keras_case("simple_rnn", [keras.layers.SimpleRNN(8)])
keras_case("stacked_lstm", [keras.layers.LSTM(8, return_sequences=True),
                            keras.layers.LSTM(5)])
keras_case("bidirectional_gru",
           [keras.layers.Bidirectional(keras.layers.GRU(6, return_sequences=True))])
keras_case("masked_lstm", [keras.layers.Masking(0.0), keras.layers.LSTM(7)], mask=True)


# --- tf.compat.v1: dynamic_rnn and while_loop over TensorArrays, both
# control-flow versions, gradients included. ------------------------------
def v1_graph(build, v2_control_flow):
    old = control_flow_util.ENABLE_CONTROL_FLOW_V2
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = v2_control_flow
    try:
        g = tf.Graph()
        with g.as_default():
            tf1.set_random_seed(2)
            build()
            tf1.variables_initializer(tf1.global_variables(), name="init")
        return g.as_graph_def()
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = old


class LSTMCell:
    """The RNNCell interface dynamic_rnn takes (TensorFlow 2.21's own
    LSTMCell needs Keras 2), with an LSTM's arithmetic in tf1 variables."""

    def __init__(self, units):
        self.units = units

    @property
    def state_size(self):
        return (self.units, self.units)

    @property
    def output_size(self):
        return self.units

    def zero_state(self, batch, dtype):
        return (tf.zeros([batch, self.units], dtype), tf.zeros([batch, self.units], dtype))

    def __call__(self, inputs, state):
        c, h = state
        with tf1.variable_scope("lstm_cell", reuse=tf1.AUTO_REUSE):
            w = tf1.get_variable("kernel", [inputs.shape[-1] + self.units, 4 * self.units])
            b = tf1.get_variable("bias", [4 * self.units], initializer=tf1.zeros_initializer())
        i, j, f, o = tf.split(tf.matmul(tf.concat([inputs, h], 1), w) + b, 4, axis=1)
        c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, (c, h)


def build_dynamic_rnn():
    x = tf1.placeholder(tf.float32, [3, 7, 4], name="x")
    lengths = tf1.placeholder(tf.int32, [3], name="lengths")
    out, state = tf1.nn.dynamic_rnn(LSTMCell(5), x, sequence_length=lengths,
                                    dtype=tf.float32)
    tf.identity(out, name="outputs")
    tf.identity(state[1], name="h")
    loss = tf.reduce_sum(out * out)
    tf.identity(tf.gradients(loss, x)[0], name="dx")


def build_ta_loop():
    x = tf1.placeholder(tf.float32, [6, 3], name="x")
    ta_in = tf.TensorArray(tf.float32, size=6).unstack(x)
    ta_out = tf.TensorArray(tf.float32, size=6, clear_after_read=False)

    def body(i, acc, ta):
        acc = acc * 0.9 + tf.tanh(ta_in.read(i))
        return i + 1, acc, ta.write(i, acc)

    _, acc, ta_out = tf1.while_loop(lambda i, *_: i < 6, body,
                                    [tf.constant(0), tf.zeros([3]), ta_out])
    stacked = ta_out.stack()
    tf.identity(stacked, name="stacked")
    tf.identity(ta_out.concat(), name="concat")
    tf.identity(tf.gradients(tf.reduce_sum(stacked * stacked), x)[0], name="dx")


xr = rng.randn(3, 7, 4).astype(f32)
lens = np.array([7, 3, 5], np.int32)
xt = rng.randn(6, 3).astype(f32)
for v2 in (False, True):
    version = "v2" if v2 else "v1"
    gd = v1_graph(build_dynamic_rnn, v2)
    want = [WHILE, "TensorListSetItem"] if v2 else ["Enter", "TensorArrayV3",
                                                      "TensorArrayGradV3"]
    compare(f"dynamic_rnn_control_flow_{version}", gd, ["outputs", "h", "dx"],
            feeds=[("x", xr), ("lengths", lens)], init=["init"], want_ops=want)
    gd = v1_graph(build_ta_loop, v2)
    want = [WHILE, "TensorListFromTensor"] if v2 else ["TensorArrayScatterV3",
                                                         "TensorArrayReadV3"]
    compare(f"while_loop_tensor_arrays_{version}", gd, ["stacked", "concat", "dx"],
            feeds=[("x", xt)], want_ops=want)


# --- The batched list ops pfor writes, and a TensorArray gradient whose
# elements have a shape prepended. ----------------------------------------
def build_batched_lists():
    x = tf1.placeholder(f32, [2, 3], name="x")
    empty = tf.raw_ops.EmptyTensorList(element_shape=[3], max_num_elements=-1,
                                       element_dtype=f32)
    handles = tf.stack([empty, empty])
    pushed = tf.raw_ops.TensorListPushBackBatch(input_handles=handles, tensor=x)
    pushed = tf.raw_ops.TensorListPushBackBatch(input_handles=pushed, tensor=x * 2.0)
    joined = tf.raw_ops.TensorListConcatLists(input_a=pushed, input_b=pushed,
                                              element_dtype=f32)
    for i, h in enumerate(tf.unstack(joined)):
        tf.identity(tf.raw_ops.TensorListStack(input_handle=h, element_shape=[3],
                                               element_dtype=f32), name=f"list{i}")
    ta = tf.raw_ops.TensorArrayV3(size=2, dtype=f32, element_shape=[3])
    grad, flow = tf.raw_ops.TensorArrayGradWithShape(
        handle=ta[0], flow_in=ta[1], shape_to_prepend=[2], source="g")
    flow = tf.raw_ops.TensorArrayWriteV3(handle=grad, index=0, value=x, flow_in=flow)
    tf.identity(tf.raw_ops.TensorArrayReadV3(handle=grad, index=0, flow_in=flow,
                                             dtype=f32), name="written")
    tf.identity(tf.raw_ops.TensorArrayReadV3(handle=grad, index=1, flow_in=flow,
                                             dtype=f32), name="unwritten")


compare("batched_lists_and_grad_with_shape", v1_graph(build_batched_lists, False),
        ["list0", "list1", "written", "unwritten"], feeds=[("x", xt[:2])],
        want_ops=["TensorListPushBackBatch", "TensorListConcatLists",
                  "TensorArrayGradWithShape"])


# --- Functional control flow on two devices. ------------------------------
# A While whose body runs on /cpu:1, and a function call placed on /cpu:1;
# TensorFlow's one-device values are the reference, and weft must place the
# body's and the callee's nodes on /cpu:1.
def two_device_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [3], name="x")

        @tf.function
        def callee(v):
            return tf.tanh(v) * 3.0

        with tf.device("/cpu:1"):
            called = tf.identity(callee(x), name="called")

        def body(i, v):
            with tf.device("/cpu:1"):
                v = tf.sigmoid(v) + 1.0
            return i + 1, v

        _, looped = tf.while_loop(lambda i, v: i < 4, body, [tf.constant(0), called])
        tf.identity(looped, name="out")
    return g.as_graph_def()


gd = two_device_graph()
xd = rng.randn(3).astype(f32)
one_device = tf_session_run(gd, ["out", "called"], [("x", xd)], cpus=2)
proc = compare("two_devices", gd, ["out", "called"], feeds=[("x", xd)],
               want_ops=[WHILE, "PartitionedCall"], ref=one_device, cpus=2)
if proc is not None and proc.returncode == 0:
    # --log-device-placement: "name (Op): /job:.../device:CPU:1" per node.
    placed = [line for line in proc.stderr.splitlines() if line.endswith("CPU:1")]
    body_on_1 = any("while/" in line and "(Sigmoid)" in line for line in placed)
    callee_on_1 = any("(Tanh)" in line for line in placed)
    check("two_devices/body_on_cpu1", body_on_1, clip(proc.stderr))
    check("two_devices/callee_on_cpu1", callee_on_1, clip(proc.stderr))


# --- An unused variant placeholder (frozen graphs keep them) is pruned. ----
spare = tf1.GraphDef()
spare.CopyFrom(raw)
node = spare.node.add()
node.name, node.op = "unused_list", "Placeholder"
node.attr["dtype"].type = tf.variant.as_datatype_enum
compare("unused_variant_placeholder", spare, outputs_of(cf),
        feeds=[("x", xv), ("n", np.int32(2)), ("k", np.int32(1))])


# --- Errors: a call of a function the library lacks names it. -------------
bad = tf1.GraphDef()
bad.CopyFrom(raw)
for node in bad.node:
    if node.op == "PartitionedCall":
        node.attr["f"].func.name = "no_such_function"
        break
path = os.path.join(WORK, "bad_call.pb")
with open(path, "wb") as f:
    f.write(bad.SerializeToString())
proc = run_weft(WEFT, path, outputs_of(cf),
                [("x", xv), ("n", np.int32(1)), ("k", np.int32(0))])
check("unknown_function_is_an_error",
      proc.returncode != 0 and "no_such_function" in proc.stderr
      and "Traceback" not in proc.stderr, clip(proc.stderr))

sys.exit(summary_exit_code())
