#!/usr/bin/env python3
"""Checks that every op Weft registers has TensorFlow's OpDef.

Usage: op_def_compat_test.py --dump PATH_TO_dump_op_defs

Steps:
  1. Runs dump_op_defs, which prints Weft's registry as a text-format
     tensorflow.OpList, and parses it with TensorFlow's own OpList class.
  2. For every Weft op, looks up TensorFlow's OpDef of the same name
     (op_def_registry, i.e. what TF 2.x registers in this process) and
     compares:
       - input and output args, in order: name, fixed type, type_attr,
         number_attr, type_list_attr, is_ref;
       - attrs, by name: type, default value, minimum, allowed values
         (compared as sets: their order carries no meaning);
       - the flags is_stateful, is_commutative, is_aggregate,
         allows_uninitialized_input.
     A Weft op TensorFlow lacks is a failure, except internal ops (names
     starting with "_") that TF does not register under that name.
  3. Self-check: deliberately corrupted copies of a few Weft OpDefs (a renamed
     input, a dropped attr, a changed default, a lost allowed type, a lost
     ref) must each be reported, so the test cannot pass by comparing nothing.

Differences listed in ALLOW (key "Op" or "Op.detail", value a reason) are
accepted; an ALLOW entry that matches nothing is itself an error.

If TensorFlow cannot be imported, prints "SKIPPED: tensorflow not installed"
and exits 0.
"""

import argparse
import copy
import os
import subprocess
import sys

ALLOW = {
}

FLAGS = ("is_stateful", "is_commutative", "is_aggregate",
         "allows_uninitialized_input")


def arg_summary(arg, type_name):
    parts = []
    if arg.number_attr:
        parts.append(arg.number_attr + " * ")
    if arg.type_attr:
        parts.append(arg.type_attr)
    elif arg.type_list_attr:
        parts.append(arg.type_list_attr)
    else:
        parts.append(type_name(arg.type))
    text = "".join(parts)
    if arg.is_ref:
        text = "Ref(%s)" % text
    return "%s: %s" % (arg.name, text)


def value_text(value):
    """An AttrValue as a compact, order-preserving string."""
    from google.protobuf import text_format
    return text_format.MessageToString(value, as_one_line=True) or "<empty>"


def allowed_set(attr, type_name):
    lst = attr.allowed_values.list
    if attr.type in ("type", "list(type)"):
        return {type_name(t) for t in lst.type}
    return set(lst.s) | set(lst.i) | set(lst.f)


def compare_args(kind, ours, theirs, type_name):
    diffs = []
    if len(ours) != len(theirs):
        diffs.append((kind, "%d %s args [%s], TensorFlow has %d [%s]" % (
            len(ours), kind, ", ".join(arg_summary(a, type_name) for a in ours),
            len(theirs), ", ".join(arg_summary(a, type_name) for a in theirs))))
        return diffs
    for i, (a, b) in enumerate(zip(ours, theirs)):
        sa, sb = arg_summary(a, type_name), arg_summary(b, type_name)
        if sa != sb:
            diffs.append(("%s.%s" % (kind, b.name),
                          "%s %d is '%s', TensorFlow's is '%s'" % (kind, i, sa, sb)))
    return diffs


def compare_attrs(ours, theirs, type_name):
    diffs = []
    a = {x.name: x for x in ours}
    b = {x.name: x for x in theirs}
    for name in sorted(set(a) - set(b)):
        diffs.append(("attr." + name, "attr '%s' is not in TensorFlow's OpDef" % name))
    for name in sorted(set(b) - set(a)):
        diffs.append(("attr." + name, "missing attr '%s: %s'" % (name, b[name].type)))
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        key = "attr." + name
        if x.type != y.type:
            diffs.append((key, "attr '%s' has type %s, TensorFlow's %s" % (
                name, x.type, y.type)))
        if x.HasField("default_value") != y.HasField("default_value"):
            diffs.append((key, "attr '%s' default: ours %s, TensorFlow's %s" % (
                name,
                value_text(x.default_value) if x.HasField("default_value") else "none",
                value_text(y.default_value) if y.HasField("default_value") else "none")))
        elif x.HasField("default_value") and x.default_value != y.default_value:
            diffs.append((key, "attr '%s' default is %s, TensorFlow's %s" % (
                name, value_text(x.default_value), value_text(y.default_value))))
        if (x.has_minimum, x.minimum if x.has_minimum else 0) != \
                (y.has_minimum, y.minimum if y.has_minimum else 0):
            diffs.append((key, "attr '%s' minimum is %s, TensorFlow's %s" % (
                name, x.minimum if x.has_minimum else "none",
                y.minimum if y.has_minimum else "none")))
        if x.HasField("allowed_values") != y.HasField("allowed_values"):
            diffs.append((key, "attr '%s' allowed values: ours %s, TensorFlow's %s" % (
                name, sorted(allowed_set(x, type_name)) if x.HasField("allowed_values") else "any",
                sorted(allowed_set(y, type_name)) if y.HasField("allowed_values") else "any")))
        elif x.HasField("allowed_values"):
            sx, sy = allowed_set(x, type_name), allowed_set(y, type_name)
            if sx != sy:
                extra, missing = sorted(sx - sy), sorted(sy - sx)
                diffs.append((key, "attr '%s' allowed values differ:%s%s" % (
                    name,
                    " extra %s" % extra if extra else "",
                    " missing %s" % missing if missing else "")))
    return diffs


def compare_op(ours, theirs, type_name):
    """Returns [(detail_key, message)] for one op."""
    diffs = []
    diffs += compare_args("input", ours.input_arg, theirs.input_arg, type_name)
    diffs += compare_args("output", ours.output_arg, theirs.output_arg, type_name)
    diffs += compare_attrs(ours.attr, theirs.attr, type_name)
    for flag in FLAGS:
        if getattr(ours, flag) != getattr(theirs, flag):
            diffs.append((flag, "%s is %s, TensorFlow's is %s" % (
                flag, getattr(ours, flag), getattr(theirs, flag))))
    return diffs


def compare_all(weft_ops, tf_lookup, type_name):
    """Returns ({key: message}, number of ops compared)."""
    problems = {}
    compared = 0
    for op in weft_ops:
        theirs = tf_lookup(op.name)
        if theirs is None:
            if op.name.startswith("_"):
                continue  # an internal op TF does not register publicly
            problems[op.name] = "TensorFlow has no op '%s'" % op.name
            continue
        compared += 1
        for detail, message in compare_op(op, theirs, type_name):
            problems["%s.%s" % (op.name, detail)] = "%s: %s" % (op.name, message)
    return problems, compared


def self_check(weft_ops, tf_lookup, type_name):
    """Corrupts copies of a few ops; each corruption must be detected."""
    by_name = {op.name: op for op in weft_ops if tf_lookup(op.name) is not None}

    def first(pred):
        for op in by_name.values():
            if pred(op):
                return op
        return None

    corruptions = []

    def rename_input(op):
        op.input_arg[0].name += "_x"
    corruptions.append(("renamed input", lambda o: len(o.input_arg) > 0, rename_input))

    def drop_attr(op):
        del op.attr[-1]
    corruptions.append(("dropped attr", lambda o: len(o.attr) > 0, drop_attr))

    def change_default(op):
        for a in op.attr:
            if a.HasField("default_value") and a.type == "int":
                a.default_value.i += 1
                return
    corruptions.append((
        "changed default",
        lambda o: any(a.HasField("default_value") and a.type == "int" for a in o.attr),
        change_default))

    def drop_allowed(op):
        for a in op.attr:
            if len(a.allowed_values.list.type) > 1:
                del a.allowed_values.list.type[0]
                return
    corruptions.append((
        "lost allowed type",
        lambda o: any(len(a.allowed_values.list.type) > 1 for a in o.attr),
        drop_allowed))

    def drop_ref(op):
        for a in list(op.input_arg) + list(op.output_arg):
            if a.is_ref:
                a.is_ref = False
                return
    corruptions.append((
        "lost ref",
        lambda o: any(a.is_ref for a in list(o.input_arg) + list(o.output_arg)),
        drop_ref))

    def flip_stateful(op):
        op.is_stateful = not op.is_stateful
    corruptions.append(("flipped is_stateful", lambda o: True, flip_stateful))

    caught = 0
    for label, applies, corrupt in corruptions:
        op = first(applies)
        if op is None:
            print("self-check: no op to apply '%s' to; skipped" % label)
            caught += 1
            continue
        bad = copy.deepcopy(op)
        corrupt(bad)
        if compare_op(bad, tf_lookup(op.name), type_name):
            caught += 1
        else:
            print("SELF-CHECK FAILED: '%s' on %s went unnoticed" % (label, op.name))
    return caught, len(corruptions)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", required=True, help="path to dump_op_defs")
    args = parser.parse_args()

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow  # noqa: F401
        from tensorflow.core.framework import op_def_pb2, types_pb2
        from tensorflow.python.framework import op_def_registry
        from google.protobuf import text_format
    except Exception as e:  # pylint: disable=broad-except
        print("SKIPPED: tensorflow not installed (%s: %s)" % (type(e).__name__, e))
        return 0

    def type_name(t):
        try:
            return types_pb2.DataType.Name(t)
        except ValueError:
            return "type%d" % t

    dump = subprocess.run([args.dump], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    if dump.returncode != 0:
        print("FAIL: dump_op_defs exited %d:\n%s" % (dump.returncode, dump.stderr))
        return 1
    weft = op_def_pb2.OpList()
    text_format.Parse(dump.stdout, weft)
    if not weft.op:
        print("FAIL: dump_op_defs printed no ops")
        return 1

    def tf_lookup(name):
        return op_def_registry.get(name)

    problems, compared = compare_all(weft.op, tf_lookup, type_name)

    failures = []
    matched_allow = set()
    for key in sorted(problems):
        allowed = [k for k in ALLOW if key == k or key.startswith(k + ".")]
        if allowed:
            matched_allow.update(allowed)
            continue
        failures.append(problems[key])
    for key in sorted(set(ALLOW) - matched_allow):
        failures.append("ALLOW entry '%s' matches no difference; remove it" % key)

    caught, total = self_check(weft.op, tf_lookup, type_name)

    print("%d Weft ops, %d compared with TensorFlow %s" % (
        len(weft.op), compared, tensorflow.__version__))
    print("%d/%d self-check corruptions detected" % (caught, total))
    if failures or caught != total:
        print("\n%d difference(s):" % len(failures))
        for f in failures:
            print("  " + f)
        print("FAIL")
        return 1
    print("PASS: every Weft OpDef matches TensorFlow's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
