"""Conformance: binary arithmetic on float16, run by `weft run` against
TensorFlow 2.21 on the same GraphDef, bit for bit: Add, AddV2, Sub, Mul,
RealDiv, Div, Maximum, Minimum, FloorDiv, FloorMod, Pow, SquaredDifference
and the comparisons, with broadcasting, over values that round
(large, small, subnormal, inf and NaN operands).

usage: half_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_tf1_graph, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("half_ops")

tf1 = tf.compat.v1
tf1.disable_eager_execution()


rng = np.random.RandomState(3)
x_values = np.concatenate([
    rng.uniform(-100, 100, 12), [65504.0, -65504.0, 6e-8, -3e-5, 0.0, -0.0,
                                  np.inf, np.nan, 1.0 / 3, 2049.0, 0.1, 7.0]
]).astype(np.float16).reshape(4, 6)
y_values = np.array([3.0, -0.7, 1e-4, 65504.0, 0.0, np.nan], np.float16)  # [6]

g = tf1.Graph()
with g.as_default():
    x = tf1.constant(x_values)
    y = tf1.constant(y_values)
    ops = {
        "add": tf.raw_ops.Add(x=x, y=y),
        "addv2": tf.raw_ops.AddV2(x=x, y=y),
        "sub": tf.raw_ops.Sub(x=x, y=y),
        "mul": tf.raw_ops.Mul(x=x, y=y),
        "realdiv": tf.raw_ops.RealDiv(x=x, y=y),
        "div": tf.raw_ops.Div(x=x, y=y),
        "maximum": tf.raw_ops.Maximum(x=x, y=y),
        "minimum": tf.raw_ops.Minimum(x=x, y=y),
        "floordiv": tf.raw_ops.FloorDiv(x=x, y=y),
        "floormod": tf.raw_ops.FloorMod(x=x, y=y),
        "pow": tf.raw_ops.Pow(x=x, y=tf1.constant(np.array([2, -1, 0.5, 3, 0, 1.5], np.float16))),
        "squared_difference": tf.raw_ops.SquaredDifference(x=x, y=y),
        "scalar": tf.raw_ops.Mul(x=x, y=tf1.constant(np.float16(0.5))),
        "greater": tf.raw_ops.Greater(x=x, y=y),
        "greater_equal": tf.raw_ops.GreaterEqual(x=x, y=y),
        "less": tf.raw_ops.Less(x=x, y=y),
        "less_equal": tf.raw_ops.LessEqual(x=x, y=y),
        "equal": tf.raw_ops.Equal(x=x, y=x[0]),
        "not_equal": tf.raw_ops.NotEqual(x=x, y=y),
        "equal_mismatch": tf.raw_ops.Equal(x=x, y=tf1.constant(np.ones(4, np.float16)),
                                           incompatible_shape_error=False),
    }
    for name, t in ops.items():
        tf1.identity(t, name="out_" + name)
# Bit for bit (NaN matches NaN).
compare_tf1_graph(WEFT, WORK, "half_binary", g, ["out_" + n for n in ops], (), 1, 0.0, 0.0)

sys.exit(summary_exit_code())
