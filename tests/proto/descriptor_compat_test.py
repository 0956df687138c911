#!/usr/bin/env python3
"""Checks that Weft's proto/*.proto are wire-identical to TensorFlow's.

Usage: descriptor_compat_test.py [--root DIR] [--protoc PATH] [PROTO ...]

  --root    directory the .proto paths are relative to (imports are
            workspace-relative, "proto/x.proto"); default: current directory.
  PROTO     .proto files to check; default: every DIR/proto/*.proto.

Steps:
  1. protoc --include_imports --descriptor_set_out turns our files into a
     FileDescriptorSet, loaded into a private DescriptorPool.
  2. TensorFlow's *_pb2 modules are imported; their descriptors sit in the
     default pool under the same full names (tensorflow.GraphDef, ...).
  3. Every message and enum we define (nested ones included) is compared with
     TensorFlow's of the same full name: per field the name, number, wire type,
     label, referenced type (by full name), real-oneof membership, effective
     packedness and presence, map-entry-ness; per enum every name and number.
     Differences in either direction fail unless listed in ALLOW below.
     Top-level messages/enums of a TensorFlow file we mirror (one holding any
     symbol we define) that we do not define also fail unless listed.
  4. Wire round trip: for every message we define, a populated instance is
     built from our descriptor, serialized, parsed with TensorFlow's class,
     and must re-serialize to the same bytes with no unknown fields.
  5. Self-check: a few deliberately corrupted copies of our descriptors
     (wrong field number, wrong type, renamed enum value, dropped field) must
     each be caught, so this test cannot silently pass by comparing nothing.

If TensorFlow cannot be imported, prints "SKIPPED: tensorflow not installed"
and exits 0.
"""

import argparse
import copy
import glob
import os
import shutil
import subprocess
import sys
import tempfile

# Known, accepted differences: key -> one-line reason. Keys are full names:
#   "tensorflow.Msg.field"   a field present on only one side or differing,
#   "tensorflow.Msg"         a message/enum present on only one side,
#   "tensorflow.Enum.VALUE"  an enum value present on only one side.
# An entry that matches no difference is itself an error (keeps this exact).
# Currently empty: every TF message in the files we mirror is defined in full
# (RewriterConfig/VerifierConfig, RPCOptions and CoordinationServiceConfig
# included, so GraphOptions.rewrite_options and
# ConfigProto.Experimental.coordination_config are real fields, not gaps).
ALLOW = {
}

TF_MODULES = [
    "tensorflow.core.example.example_pb2",
    "tensorflow.core.example.feature_pb2",
    "tensorflow.core.framework.allocation_description_pb2",
    "tensorflow.core.framework.attr_value_pb2",
    "tensorflow.core.framework.cost_graph_pb2",
    "tensorflow.core.framework.device_attributes_pb2",
    "tensorflow.core.framework.full_type_pb2",
    "tensorflow.core.framework.function_pb2",
    "tensorflow.core.framework.graph_debug_info_pb2",
    "tensorflow.core.framework.graph_pb2",
    "tensorflow.core.framework.kernel_def_pb2",
    "tensorflow.core.framework.node_def_pb2",
    "tensorflow.core.framework.op_def_pb2",
    "tensorflow.core.framework.resource_handle_pb2",
    "tensorflow.core.framework.step_stats_pb2",
    "tensorflow.core.framework.tensor_description_pb2",
    "tensorflow.core.framework.tensor_pb2",
    "tensorflow.core.framework.tensor_shape_pb2",
    "tensorflow.core.framework.types_pb2",
    "tensorflow.core.framework.versions_pb2",
    "tensorflow.core.protobuf.cluster_pb2",
    "tensorflow.core.protobuf.config_pb2",
    "tensorflow.core.protobuf.debug_pb2",
    "tensorflow.core.protobuf.device_filters_pb2",
    "tensorflow.core.protobuf.error_codes_pb2",
    "tensorflow.core.protobuf.named_tensor_pb2",
    "tensorflow.core.protobuf.rewriter_config_pb2",
    "tensorflow.core.protobuf.rpc_options_pb2",
    "tensorflow.core.protobuf.tensorflow_server_pb2",
    "tensorflow.core.protobuf.verifier_config_pb2",
]


# TensorFlow's pip package has no _pb2 module for these, but its C++ library
# embeds each one's serialized FileDescriptorProto (as every protoc-generated
# .pb.cc does); load_embedded_files() reads them from there.
EMBEDDED_FILES = [
    "tensorflow/core/protobuf/master.proto",
    "tensorflow/core/protobuf/worker.proto",
]


def find_embedded_file(blob, name):
    """The serialized FileDescriptorProto named `name` inside `blob`, or None.

    It starts with field 1 (the file name); its end is where the bytes stop
    parsing as FileDescriptorProto's top-level fields (numbers 1-14, varint
    or length-delimited)."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.internal.decoder import _DecodeVarint
    encoded = name.encode()
    needle = b"\n" + bytes([len(encoded)]) + encoded
    start = 0
    while True:
        i = blob.find(needle, start)
        if i < 0:
            return None
        start = i + 1
        pos = i
        try:
            while pos < len(blob):
                tag, p = _DecodeVarint(blob, pos)
                number, wire = tag >> 3, tag & 7
                if not 1 <= number <= 14 or wire not in (0, 2):
                    break
                if wire == 0:
                    _, p = _DecodeVarint(blob, p)
                else:
                    length, p = _DecodeVarint(blob, p)
                    p += length
                    if p > len(blob):
                        break
                pos = p
            fdp = descriptor_pb2.FileDescriptorProto()
            fdp.ParseFromString(blob[i:pos])
        except Exception:  # not a descriptor after all: keep looking
            continue
        if fdp.name == name and fdp.message_type:
            return blob[i:pos]


def load_embedded_files(pool):
    """Adds EMBEDDED_FILES to `pool` from TensorFlow's C++ library; returns
    notes on the ones it could not find (their messages then fail as ours
    only)."""
    import tensorflow
    from google.protobuf import any_pb2  # noqa: F401 (worker.proto's import)
    tf_dir = os.path.dirname(tensorflow.__file__)
    libs = sorted(glob.glob(os.path.join(tf_dir, "libtensorflow_cc.so*")) +
                  glob.glob(os.path.join(tf_dir, "libtensorflow_framework.so*")))
    blobs = []
    for lib in libs:
        with open(lib, "rb") as f:
            blobs.append(f.read())
    notes = []
    for name in EMBEDDED_FILES:
        try:
            pool.FindFileByName(name)
            continue
        except KeyError:
            pass
        found = None
        for blob in blobs:
            found = find_embedded_file(blob, name)
            if found is not None:
                break
        if found is None:
            notes.append("%s not found in %s" % (name, ", ".join(libs) or
                                                 "(no TensorFlow C++ library)"))
            continue
        pool.AddSerializedFile(found)
    return notes


def import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        print("SKIPPED: tensorflow not installed (%s: %s)" % (type(e).__name__, e))
        sys.exit(0)
    import importlib
    missing = []
    for m in TF_MODULES:
        try:
            importlib.import_module(m)
        except ImportError as e:
            missing.append("%s (%s)" % (m, e))
    return missing


def build_descriptor_set(protoc, root, protos):
    out_dir = tempfile.mkdtemp(prefix="weft_desc_")
    try:
        out = os.path.join(out_dir, "ours.pb")
        cmd = [protoc, "-I" + root, "--include_imports",
               "--descriptor_set_out=" + out] + protos
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: protoc failed:\n" + " ".join(cmd) + "\n" + r.stderr)
            sys.exit(1)
        from google.protobuf import descriptor_pb2
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
        return fds
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def make_pool(fds):
    from google.protobuf import descriptor_pool
    pool = descriptor_pool.DescriptorPool()
    for fdp in fds.file:
        pool.Add(fdp)
    return pool


def our_symbols(fds):
    """(kind, full_name) of every message/enum in our files, nested included."""
    syms = []

    def walk_msg(prefix, m):
        name = prefix + m.name
        syms.append(("message", name))
        for n in m.nested_type:
            walk_msg(name + ".", n)
        for e in m.enum_type:
            syms.append(("enum", name + "." + e.name))

    for fdp in fds.file:
        prefix = fdp.package + "." if fdp.package else ""
        for m in fdp.message_type:
            walk_msg(prefix, m)
        for e in fdp.enum_type:
            syms.append(("enum", prefix + e.name))
    return syms


_TYPE_NAMES = None


def type_name(t):
    global _TYPE_NAMES
    if _TYPE_NAMES is None:
        from google.protobuf.descriptor import FieldDescriptor as F
        _TYPE_NAMES = {getattr(F, k): k[5:].lower()
                       for k in dir(F) if k.startswith("TYPE_")}
    return _TYPE_NAMES.get(t, str(t))


def field_summary(f, fproto):
    """Everything about a field that affects the wire or its interpretation."""
    if f.is_repeated:
        label = "repeated"
    elif f.is_required:
        label = "required"
    else:
        label = "optional"
    ref = ""
    if f.message_type is not None:
        ref = f.message_type.full_name
    elif f.enum_type is not None:
        ref = f.enum_type.full_name
    # Synthetic oneofs (proto3 "optional") only model presence; compare real
    # oneofs by name and presence separately.
    oneof = ""
    if f.containing_oneof is not None and not fproto.proto3_optional:
        oneof = f.containing_oneof.name
    default = repr(f.default_value) if f.has_default_value else ""
    return {
        "name": f.name,
        "number": f.number,
        "type": type_name(f.type),
        "label": label,
        "type_name": ref,
        "oneof": oneof,
        "packed": bool(f.is_packed),
        "presence": bool(f.has_presence),
        "default": default,
    }


def field_protos(desc):
    from google.protobuf import descriptor_pb2
    dp = descriptor_pb2.DescriptorProto()
    desc.CopyToProto(dp)
    return {fp.name: fp for fp in dp.field}


def is_map_entry(desc):
    return bool(desc.GetOptions().map_entry)


class Comparison(object):
    def __init__(self, allow):
        self.allow = allow
        self.used_allow = set()
        self.failures = []
        self.allowed = []
        self.n_messages = 0
        self.n_enums = 0
        self.n_fields = 0
        self.n_values = 0
        self.n_roundtrips = 0

    def diff(self, key, text):
        if key in self.allow:
            self.used_allow.add(key)
            self.allowed.append("%s: %s  [allowed: %s]" % (key, text, self.allow[key]))
        else:
            self.failures.append("%s: %s" % (key, text))


def compare_message(c, ours, tf):
    c.n_messages += 1
    name = ours.full_name
    if is_map_entry(ours) != is_map_entry(tf):
        c.diff(name, "map_entry ours=%s tf=%s" % (is_map_entry(ours), is_map_entry(tf)))
    ours_fp = field_protos(ours)
    tf_fp = field_protos(tf)
    ours_by_num = {f.number: f for f in ours.fields}
    tf_by_num = {f.number: f for f in tf.fields}
    for num in sorted(set(ours_by_num) | set(tf_by_num)):
        of = ours_by_num.get(num)
        tfield = tf_by_num.get(num)
        if of is None:
            c.diff("%s.%s" % (name, tfield.name),
                   "field %d missing from ours (TF: %s)" %
                   (num, field_summary(tfield, tf_fp[tfield.name])))
            continue
        if tfield is None:
            c.diff("%s.%s" % (name, of.name),
                   "field %d not in TensorFlow (ours: %s)" %
                   (num, field_summary(of, ours_fp[of.name])))
            continue
        c.n_fields += 1
        a = field_summary(of, ours_fp[of.name])
        b = field_summary(tfield, tf_fp[tfield.name])
        if is_map_entry(ours) and is_map_entry(tf):
            # Map entries always carry key and value on the wire, whatever the
            # file's syntax, and their presence is not observable: TF's
            # proto2 graph_debug_info maps vs our proto3 ones differ only here.
            a["presence"] = b["presence"] = None
        for k in a:
            if a[k] != b[k]:
                c.diff("%s.%s" % (name, tfield.name),
                       "field %d %s differs: ours=%r tf=%r" % (num, k, a[k], b[k]))
    # Same field name used with different numbers is covered above (it shows
    # up as a name mismatch or a missing/extra number).
    for kind, ours_names, tf_names in (
            ("nested message", {n.name for n in ours.nested_types},
             {n.name for n in tf.nested_types}),
            ("nested enum", {e.name for e in ours.enum_types},
             {e.name for e in tf.enum_types})):
        for n in sorted(tf_names - ours_names):
            c.diff("%s.%s" % (name, n), "%s missing from ours" % kind)
        for n in sorted(ours_names - tf_names):
            c.diff("%s.%s" % (name, n), "%s not in TensorFlow" % kind)


def compare_enum(c, ours, tf):
    c.n_enums += 1
    name = ours.full_name
    ov = {v.name: v.number for v in ours.values}
    tv = {v.name: v.number for v in tf.values}
    for v in sorted(set(ov) | set(tv)):
        key = "%s.%s" % (name, v)
        if v not in ov:
            c.diff(key, "enum value %d missing from ours" % tv[v])
        elif v not in tv:
            c.diff(key, "enum value %d not in TensorFlow" % ov[v])
        else:
            c.n_values += 1
            if ov[v] != tv[v]:
                c.diff(key, "enum value number ours=%d tf=%d" % (ov[v], tv[v]))


def sample_value(f, depth, seed):
    """A deterministic non-default value for a singular field."""
    from google.protobuf.descriptor import FieldDescriptor as F
    t = f.type
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return -(f.number + seed) if seed % 2 else f.number + seed + 1
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
        return -(1 << 40) - f.number - seed if seed % 2 else (1 << 33) + f.number + seed
    if t in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return 0xF0000000 + f.number + seed
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return (1 << 63) + f.number + seed
    if t in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return 1.5 + f.number + seed
    if t == F.TYPE_BOOL:
        return True
    if t == F.TYPE_STRING:
        return "%s-%d" % (f.name, seed)
    if t == F.TYPE_BYTES:
        return b"\x00\xff" + f.name.encode() + bytes([seed])
    if t == F.TYPE_ENUM:
        vals = f.enum_type.values
        return vals[(1 + seed) % len(vals)].number
    raise ValueError("no sample for %s" % f.full_name)


def populate(msg, depth):
    """Sets every field (every oneof member in turn; the last one stays)."""
    from google.protobuf.descriptor import FieldDescriptor as F
    if depth <= 0:
        return
    for f in msg.DESCRIPTOR.fields:
        is_msg = f.type == F.TYPE_MESSAGE
        if f.is_repeated and is_msg and is_map_entry(f.message_type):
            kf = f.message_type.fields_by_name["key"]
            vf = f.message_type.fields_by_name["value"]
            m = getattr(msg, f.name)
            for seed in range(2):
                k = sample_value(kf, depth, seed)
                if vf.type == F.TYPE_MESSAGE:
                    populate(m[k], depth - 1)
                else:
                    m[k] = sample_value(vf, depth, seed)
        elif f.is_repeated:
            r = getattr(msg, f.name)
            for seed in range(2):
                if is_msg:
                    populate(r.add(), depth - 1)
                else:
                    r.append(sample_value(f, depth, seed))
        elif is_msg:
            sub = getattr(msg, f.name)
            sub.SetInParent()
            populate(sub, depth - 1)
        else:
            setattr(msg, f.name, sample_value(f, depth, 0))


def count_unknown(msg):
    from google.protobuf import unknown_fields
    from google.protobuf.descriptor import FieldDescriptor as F
    n = len(unknown_fields.UnknownFieldSet(msg))
    for f, v in msg.ListFields():
        if f.type != F.TYPE_MESSAGE:
            continue
        if f.is_repeated and is_map_entry(f.message_type):
            if f.message_type.fields_by_name["value"].type == F.TYPE_MESSAGE:
                for sub in v.values():
                    n += count_unknown(sub)
        elif f.is_repeated:
            for sub in v:
                n += count_unknown(sub)
        else:
            n += count_unknown(v)
    return n


def roundtrip(c, ours, tf):
    from google.protobuf import message_factory, text_format
    ours_cls = message_factory.GetMessageClass(ours)
    tf_cls = message_factory.GetMessageClass(tf)
    m = ours_cls()
    populate(m, 3)
    data = m.SerializeToString(deterministic=True)
    try:
        t = tf_cls.FromString(data)
    except Exception as e:
        c.diff(ours.full_name, "TensorFlow cannot parse our bytes: %s" % e)
        return
    unknown = count_unknown(t)
    if unknown:
        c.diff(ours.full_name,
               "TensorFlow parses our bytes with %d unknown field(s)" % unknown)
    back = t.SerializeToString(deterministic=True)
    if back != data:
        c.diff(ours.full_name, "bytes differ after a trip through TensorFlow")
    if text_format.MessageToString(m) != text_format.MessageToString(t):
        c.diff(ours.full_name, "text format differs after a trip through TensorFlow")
    c.n_roundtrips += 1


def compare_all(fds, tf_pool, allow, do_roundtrip=True):
    c = Comparison(allow)
    pool = make_pool(fds)
    syms = our_symbols(fds)
    ours_names = {n for _, n in syms}
    tf_files = {}
    for kind, name in syms:
        if kind == "message":
            ours = pool.FindMessageTypeByName(name)
            try:
                tf = tf_pool.FindMessageTypeByName(name)
            except KeyError:
                c.diff(name, "message not in TensorFlow")
                continue
            compare_message(c, ours, tf)
            if do_roundtrip and not is_map_entry(ours):
                roundtrip(c, ours, tf)
        else:
            ours = pool.FindEnumTypeByName(name)
            try:
                tf = tf_pool.FindEnumTypeByName(name)
            except KeyError:
                c.diff(name, "enum not in TensorFlow")
                continue
            compare_enum(c, ours, tf)
        if "." not in name[len(tf.file.package) + 1:]:
            tf_files[tf.file.name] = tf.file
    # Top-level symbols of the TensorFlow files we mirror that we lack.
    for fname in sorted(tf_files):
        fd = tf_files[fname]
        for kind, table in (("message", fd.message_types_by_name),
                            ("enum", fd.enum_types_by_name)):
            for d in table.values():
                if d.full_name not in ours_names:
                    c.diff(d.full_name, "%s (from %s) missing from ours" % (kind, fname))
    for key in sorted(set(allow) - c.used_allow):
        c.failures.append("%s: allow-list entry matches no difference (stale)" % key)
    return c, tf_files


def find_field(fds, msg_full_name, field_name):
    for fdp in fds.file:
        prefix = fdp.package + "."
        todo = [(prefix + m.name, m) for m in fdp.message_type]
        while todo:
            name, m = todo.pop()
            if name == msg_full_name:
                for fp in m.field:
                    if fp.name == field_name:
                        return fdp, m, fp
            todo.extend((name + "." + n.name, n) for n in m.nested_type)
    raise KeyError("%s.%s" % (msg_full_name, field_name))


def self_check(fds, tf_pool):
    """Corrupts our descriptors in known ways; each must be reported."""
    from google.protobuf import descriptor_pb2 as P

    def wrong_number(s):
        find_field(s, "tensorflow.NodeDef", "device")[2].number = 40

    def wrong_type(s):
        find_field(s, "tensorflow.DeviceAttributes", "incarnation")[2].type = \
            P.FieldDescriptorProto.TYPE_UINT64

    def unpacked(s):
        find_field(s, "tensorflow.TensorProto", "float_val")[2].options.packed = False

    def dropped_field(s):
        _, m, fp = find_field(s, "tensorflow.GraphDef", "library")
        m.field.remove(fp)

    def renamed_enum_value(s):
        for fdp in s.file:
            for e in fdp.enum_type:
                if e.name == "DataType":
                    for v in e.value:
                        if v.name == "DT_UINT2_REF":
                            v.name = "DT_UINT2_REFX"
                            return
        raise KeyError("DataType")

    cases = [("wrong field number", wrong_number, "tensorflow.NodeDef"),
             ("wrong field type", wrong_type, "tensorflow.DeviceAttributes"),
             ("lost packing", unpacked, "tensorflow.TensorProto"),
             ("dropped field", dropped_field, "tensorflow.GraphDef"),
             ("renamed enum value", renamed_enum_value, "tensorflow.DataType")]
    bad = []
    for label, mutate, expect in cases:
        s = copy.deepcopy(fds)
        mutate(s)
        c, _ = compare_all(s, tf_pool, {}, do_roundtrip=False)
        if not any(f.startswith(expect) for f in c.failures):
            bad.append("self-check '%s' was not detected" % label)
    return len(cases), bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--protoc", default=shutil.which("protoc") or "/usr/bin/protoc")
    ap.add_argument("protos", nargs="*")
    args = ap.parse_args()

    root = os.path.abspath(args.root)
    protos = args.protos or sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "proto", "*.proto")))
    if not protos:
        print("FAIL: no .proto files found under %s/proto" % root)
        return 1

    missing_modules = import_tensorflow()
    from google.protobuf import descriptor_pool
    import tensorflow
    tf_pool = descriptor_pool.Default()
    missing_modules += load_embedded_files(tf_pool)
    print("TensorFlow %s, protobuf runtime %s" % (
        tensorflow.__version__, __import__("google.protobuf").protobuf.__version__))
    for m in missing_modules:
        print("note: could not import %s" % m)

    fds = build_descriptor_set(args.protoc, root, protos)
    c, tf_files = compare_all(fds, tf_pool, ALLOW)
    n_self, self_bad = self_check(fds, tf_pool)
    c.failures.extend(self_bad)

    print("Compared %d .proto files against %d TensorFlow files:" % (
        len(protos), len(tf_files)))
    print("  %d messages, %d fields" % (c.n_messages, c.n_fields))
    print("  %d enums, %d enum values" % (c.n_enums, c.n_values))
    print("  %d messages round-tripped through TensorFlow's classes" % c.n_roundtrips)
    print("  %d/%d self-check corruptions detected" % (n_self - len(self_bad), n_self))
    for a in c.allowed:
        print("ALLOWED " + a)
    if c.failures:
        for f in c.failures:
            print("FAIL " + f)
        print("%d difference(s) from TensorFlow" % len(c.failures))
        return 1
    print("PASS: wire-compatible with TensorFlow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
