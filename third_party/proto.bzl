"""weft_cc_proto: C++ code for .proto files from the system protoc.

Bazel 4.2.3's native proto rules want a downloaded protobuf repository;
offline, a genrule over Debian's protoc does the same job.
"""

def weft_cc_proto(name, srcs, deps = [], visibility = None):
    """Generates <file>.pb.{h,cc} for srcs and wraps them in a cc_library."""
    stems = [s[:-len(".proto")] for s in srcs]
    hdrs = [s + ".pb.h" for s in stems]
    ccs = [s + ".pb.cc" for s in stems]
    native.genrule(
        name = name + "_gen",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = hdrs + ccs,
        cmd = "protoc -I. --cpp_out=$(GENDIR) " + " ".join(
            ["$(location %s)" % s for s in srcs],
        ),
    )
    native.filegroup(name = name + "_srcs", srcs = srcs + [d + "_srcs" for d in deps])
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
    )
