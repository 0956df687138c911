"""The layers of the source tree, checked on every #include: a directory
may include from the directories its layer lists and from nothing above
them, so that the engine stays usable without the distributed runtime,
graphs never reach into kernels, and gRPC stays behind distributed/rpc.

  proto                      the wire and file formats
  runtime/core               tensors, shapes, status, devices' base
  runtime/gpu                the CUDA device (stubbed without a GPU)
  runtime/checkpoint, runtime/events   checkpoint and event files
  ops/framework              op and kernel registries, kernel API
  ops, ops/cpu, ops/data, ops/cuda     op definitions and kernels
  graph, graph/builder, graph/models   graphs, placement, partitioning,
                             the C++ builder and the built-in models
  runtime                    the executor and the local session
  distributed                master, worker, the client session (no gRPC)
  distributed/rpc            gRPC services and clients
  distributed/training       the between-graph trainer (weft train --cluster)
  tools, tools/compare       the weft command and its libraries

A directory's allowed list is exact: a new edge between layers means
editing LAYERS below, on purpose. Tests may include anything.

usage: layering_test.py FILE... (the sources, as Bazel lists them)
"""
import os
import re
import sys

# Each directory: the directories (besides itself) whose headers it may
# include.
BASE = {"proto", "runtime/core"}
KERNEL_DEPS = BASE | {"ops/framework", "ops/cuda", "runtime/gpu", "runtime/checkpoint"}
GRAPH = {"graph", "graph/builder", "graph/models"}
ENGINE = BASE | GRAPH | {"ops/framework", "runtime", "runtime/gpu", "runtime/checkpoint",
                         "runtime/events"}
LAYERS = {
    "runtime/core": {"proto"},
    "runtime/gpu": BASE,
    "runtime/checkpoint": BASE,
    "runtime/events": BASE | {"runtime/checkpoint"},
    "ops/framework": BASE,
    "ops/testing": BASE | {"ops/framework"},
    "ops/cuda": BASE | {"ops/framework", "runtime/gpu"},
    "ops": KERNEL_DEPS,
    "ops/cpu": KERNEL_DEPS | {"ops", "ops/data"},
    "ops/data": KERNEL_DEPS | {"ops", "ops/cpu"},
    "graph": BASE | {"ops/framework"},
    "graph/builder": BASE | {"ops/framework", "graph"},
    "graph/models": BASE | {"ops/framework", "graph", "graph/builder"},
    "runtime": BASE | {"ops/framework", "graph", "runtime/gpu", "runtime/checkpoint",
                       "runtime/events"},
    "distributed": ENGINE,
    "distributed/rpc": ENGINE | {"distributed"},
    "distributed/training": ENGINE | {"distributed", "distributed/rpc"},
    "tools/compare": BASE | {"distributed"},
    "tools": ENGINE | {"distributed", "distributed/rpc", "distributed/training",
                       "tools/compare"},
}
# System headers only one layer may use.
GUARDED = [
    (re.compile(r"^(grpc|grpcpp)/"), {"distributed/rpc"},
     "gRPC belongs to distributed/rpc"),
    (re.compile(r"^(cuda|cublas|cudnn|cuda_runtime)"), {"runtime/gpu", "ops/cuda"},
     "CUDA belongs to runtime/gpu and ops/cuda"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def directory_of(include):
    """The source directory a quoted include names, or None (generated
    protos and third-party headers are not layers)."""
    d = os.path.dirname(include)
    return d if d in LAYERS or d == "proto" else None


def problems_of(path):
    """Every include of `path` (workspace-relative) that crosses a layer."""
    home = os.path.dirname(path)
    if home not in LAYERS:
        return [f"{path}: directory '{home}' has no layer in "
                "tests/layering/layering_test.py (add it to LAYERS)"]
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, inc = m.groups()
            for pattern, allowed, why in GUARDED:
                if pattern.match(inc) and home not in allowed:
                    out.append(f"{path}:{n}: includes {inc}: {why}")
            d = directory_of(inc) if kind == '"' else None
            if d is not None and d != home and d not in LAYERS[home]:
                out.append(f"{path}:{n}: {home} may not include {inc} ({d} is not "
                           f"among its layers: {', '.join(sorted(LAYERS[home]))})")
    return out


def main(files):
    passed = failed = 0
    for path in files:
        problems = problems_of(path)
        for p in problems:
            print("FAIL", p)
        passed += not problems
        failed += bool(problems)
    if not files:
        print("FAIL no source files given")
        failed += 1
    print(f"checked the includes of {len(files)} files against {len(LAYERS)} layers")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
