"""Conformance: the optimizer update ops (Adagrad, RMSProp, Ftrl, AdaMax,
the proximal ones, AddSign/PowerSign, KerasMomentum, AdamWithAmsgrad,
AdagradDA) written by TensorFlow 2.21 in TF1 graph mode with tf.raw_ops,
run by `weft run`, compared with TensorFlow.

Each op runs in every form TensorFlow has: Apply* on ref variables,
ResourceApply* on resource variables, and the sparse forms with unsorted
indices naming a row twice. The inputs are read from the op's OpDef: its
ref/resource inputs become variables (accumulators start positive), grad a
constant with mixed signs and a zero, the scalars the values listed here.
Three steps run; the variable and every slot are compared to 1e-6
relative (float32; float64 to 1e-9). Attr variants: update_slots=False,
multiply_linear_by_lr, use_nesterov, lr_power other than -0.5, l1 = 0.

Then every form of these and of Momentum and Adam runs in each other dtype
TensorFlow's CPU kernels take for it (half, bfloat16, complex64,
complex128; read from TensorFlow's kernel registry), three steps again.
Weft computes half and bfloat16 updates in float and rounds the results
once, where Eigen's half rounds after every operation: they are compared
to a few units in the last place (half 4e-3, bfloat16 3e-2, relative and
absolute). Complex inputs have imaginary parts everywhere.

usage: optimizer_ops_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tf_compare import start_conformance  # noqa: E402
from tf_compare import compare_fetches, compare_tf1_graph  # noqa: E402
from tf_compare import run_tf1_and_weft, summary_exit_code  # noqa: E402

np, tf, WEFT, WORK = start_conformance("optimizer_ops")
from tensorflow.python.framework import op_def_registry  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()


# name -> (scalars, forms). Forms: a dense ref, r dense resource, s sparse
# ref, S sparse resource.
OPTIMIZERS = {
    "Adagrad": ({"lr": 0.1}, "arsS"),
    "AdagradV2": ({"lr": 0.1, "epsilon": 1e-7}, "arsS"),
    "RMSProp": ({"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7}, "arsS"),
    "CenteredRMSProp": ({"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7},
                        "arsS"),
    "Adadelta": ({"lr": 1.0, "rho": 0.95, "epsilon": 1e-6}, "arsS"),
    "AdaMax": ({"beta1_power": 0.9, "lr": 0.01, "beta1": 0.9, "beta2": 0.999,
                "epsilon": 1e-7}, "ar"),
    "Ftrl": ({"lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5}, "arsS"),
    "FtrlV2": ({"lr": 0.1, "l1": 0.01, "l2": 0.02, "l2_shrinkage": 0.05,
                "lr_power": -0.5}, "arsS"),
    "ProximalGradientDescent": ({"alpha": 0.1, "l1": 0.01, "l2": 0.02}, "arsS"),
    "ProximalAdagrad": ({"lr": 0.1, "l1": 0.01, "l2": 0.02}, "arsS"),
    "AddSign": ({"lr": 0.01, "alpha": 1.0, "sign_decay": 0.9, "beta": 0.9}, "ar"),
    "PowerSign": ({"lr": 0.01, "logbase": 1.0, "sign_decay": 0.9, "beta": 0.9}, "ar"),
    "KerasMomentum": ({"lr": 0.1, "momentum": 0.9}, "rS"),
    "AdamWithAmsgrad": ({"beta1_power": 0.9, "beta2_power": 0.999, "lr": 0.01,
                         "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7}, "r"),
    "AdagradDA": ({"lr": 0.1, "l1": 0.01, "l2": 0.02}, "arsS"),
}
PREFIX = {"a": "Apply", "r": "ResourceApply", "s": "SparseApply",
          "S": "ResourceSparseApply"}

SHAPE = (5, 3)
GRAD = np.array([[0.5, -1.0, 0.0], [2.0, 0.25, -0.75], [-3.0, 1.5, 0.125],
                 [0.0, -0.5, 4.0], [1.0, 1.0, -2.0]])
INDICES = [3, 0, 3, 1]  # unsorted, row 3 twice
SPARSE_GRAD = GRAD[[1, 4, 2, 0]]


def as_dtype(values, dtype):
    """values in dtype; complex dtypes get an imaginary part, half the
    values in reverse order."""
    if np.dtype(dtype).kind == "c":
        flipped = values.reshape(-1)[::-1].reshape(values.shape)
        return (values + 0.5j * flipped).astype(dtype)
    return values.astype(dtype)


def slot_init(name, i, dtype):
    """var: mixed signs; accumulators (every slot but linear, m, mg, mom,
    gradient_accumulator, which may be negative) positive."""
    base = (np.arange(15).reshape(SHAPE) - 7) / 10.0
    if name == "var":
        return as_dtype(base, dtype)
    if name in ("linear", "m", "mg", "mom", "gradient_accumulator"):
        return as_dtype(base * 0.3 + 0.01 * i, dtype)
    return as_dtype(np.abs(base) + 0.1 * i + 0.05, dtype)


def build(op_name, scalars, dtype, attrs):
    """The graph: variables, the op, and reads of every variable after it."""
    od = op_def_registry.get(op_name)
    resource = op_name.startswith("Resource")
    sparse = "Sparse" in op_name
    g = tf1.Graph()
    with g.as_default():
        args, variables = {}, []
        for i, arg in enumerate(od.input_arg):
            if arg.is_ref or arg.type == tf.resource.as_datatype_enum:
                v = tf1.Variable(slot_init(arg.name, i, dtype), name=arg.name,
                                 use_resource=resource)
                variables.append(v)
                args[arg.name] = v.handle if resource else v
            elif arg.name in ("grad", "delta"):
                args[arg.name] = tf1.constant(as_dtype(SPARSE_GRAD if sparse else GRAD,
                                                       dtype))
            elif arg.name == "indices":
                args[arg.name] = tf1.constant(INDICES, dtype=attrs.pop("_tindices", tf.int32))
            elif arg.name == "global_step":
                args[arg.name] = tf1.constant(3, dtype=tf.int64)
            else:
                args[arg.name] = tf1.constant(scalars[arg.name], dtype=dtype)
        args.update({k: v for k, v in attrs.items() if not k.startswith("_")})
        op = getattr(tf.raw_ops, op_name)(**args)
        init = tf1.global_variables_initializer()
        deps = [op if isinstance(op, tf1.Operation) else op.op]
        fetches = []
        with tf1.control_dependencies(deps):
            for v in variables:
                name = v.op.name + "_after"
                value = v.read_value()
                if tf.as_dtype(dtype) == tf.bfloat16:  # fetched as float32 (exact)
                    value = tf1.cast(value, tf.float32)
                tf1.identity(value, name=name)
                fetches.append(name)
    return g, init, fetches


TOL = {tf.float32: 1e-6, tf.float64: 1e-9, tf.float16: 4e-3,
       tf.bfloat16: 3e-2, tf.complex64: 1e-5, tf.complex128: 1e-12}


def run_case(case, op_name, scalars, dtype=np.float32, attrs=None):
    g, init, fetches = build(op_name, scalars, dtype, dict(attrs or {}))
    tol = TOL[tf.as_dtype(dtype)]
    if tf.as_dtype(dtype) in (tf.float16, tf.bfloat16):
        # Rounding differences scale with the largest values an update
        # combines, not with each result (Ftrl's linear subtracts terms
        # divided by lr): the absolute tolerance is relative to the
        # tensor's largest value.
        ref, proc = run_tf1_and_weft(WEFT, WORK, case, g, fetches, [init.name],
                                     steps=3)
        for name, want in zip(fetches, ref):
            scale = max(1.0, float(np.max(np.abs(want.astype(np.float64)))))
            compare_fetches(case, proc, [name], [want], tol, tol * scale)
        return
    compare_tf1_graph(WEFT, WORK, case, g, fetches, [init.name], steps=3,
                      rtol=tol, atol=tol)


for opt, (scalars, forms) in OPTIMIZERS.items():
    for form in forms:
        op_name = PREFIX[form] + opt
        run_case(op_name, op_name, scalars)
    # float64 and int64 indices: the first form, and the sparse resource one.
    run_case(f"{PREFIX[forms[0]]}{opt}_f64", PREFIX[forms[0]] + opt, scalars,
             np.float64)
    if "S" in forms:
        run_case(f"ResourceSparseApply{opt}_i64", "ResourceSparseApply" + opt,
                 scalars, attrs={"_tindices": tf.int64})

# Attr and scalar variants.
ADAGRAD = OPTIMIZERS["Adagrad"][0]
for form in "arsS":
    run_case(f"{PREFIX[form]}Adagrad_no_update_slots", PREFIX[form] + "Adagrad",
             ADAGRAD, attrs={"update_slots": False})
    run_case(f"{PREFIX[form]}AdagradV2_no_update_slots", PREFIX[form] + "AdagradV2",
             OPTIMIZERS["AdagradV2"][0], attrs={"update_slots": False})
for opt in ("Ftrl", "FtrlV2"):
    scalars = OPTIMIZERS[opt][0]
    for form in "arsS":
        op_name = PREFIX[form] + opt
        run_case(f"{op_name}_multiply_linear_by_lr", op_name, scalars,
                 attrs={"multiply_linear_by_lr": True})
        run_case(f"{op_name}_lr_power", op_name, dict(scalars, lr_power=-0.7))
        run_case(f"{op_name}_l1_zero", op_name, dict(scalars, l1=0.0))
for opt in ("ProximalGradientDescent", "ProximalAdagrad", "AdagradDA"):
    for form in "aS":
        op_name = PREFIX[form] + opt
        run_case(f"{op_name}_l1_zero", op_name, dict(OPTIMIZERS[opt][0], l1=0.0))
for form in "rS":
    op_name = PREFIX[form] + "KerasMomentum"
    run_case(f"{op_name}_nesterov", op_name, OPTIMIZERS["KerasMomentum"][0],
             attrs={"use_nesterov": True})

# Every form in each dtype beyond float and double that TensorFlow's CPU
# kernels take for it, with Momentum and Adam (training_apply.cc) too.
from tensorflow.python.framework import kernels  # noqa: E402

EXTRA_DTYPES = [tf.float16, tf.bfloat16, tf.complex64, tf.complex128]
MORE = dict(OPTIMIZERS)
MORE["Momentum"] = ({"lr": 0.1, "momentum": 0.9}, "arsS")
MORE["Adam"] = ({"beta1_power": 0.9, "beta2_power": 0.999, "lr": 0.01,
                 "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-3}, "ar")


def tf_cpu_dtypes(op_name):
    found = set()
    for k in kernels.get_registered_kernels_for_op(op_name).kernel:
        if k.device_type != "CPU":
            continue
        for c in k.constraint:
            if c.name == "T":
                found.update(tf.as_dtype(t) for t in c.allowed_values.list.type)
    return found


for opt, (scalars, forms) in MORE.items():
    for form in forms:
        op_name = PREFIX[form] + opt
        have = tf_cpu_dtypes(op_name)
        for dtype in EXTRA_DTYPES:
            if dtype in have:
                run_case(f"{op_name}_{dtype.name}", op_name, scalars,
                         dtype.as_numpy_dtype)
for dtype in EXTRA_DTYPES:
    for op_name in ("ApplyMomentum", "ResourceSparseApplyMomentum",
                    "ResourceApplyKerasMomentum", "ResourceApplyAdam"):
        if dtype in tf_cpu_dtypes(op_name):
            run_case(f"{op_name}_nesterov_{dtype.name}", op_name,
                     MORE[op_name.replace("ResourceSparseApply", "")
                          .replace("ResourceApply", "").replace("Apply", "")][0],
                     dtype.as_numpy_dtype, attrs={"use_nesterov": True})

sys.exit(summary_exit_code())
