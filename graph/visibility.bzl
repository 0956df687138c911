"""Who may depend on graph/ and its subpackages: the layers above it.

graph/ sits above ops/ and runtime/core/, which never see it (the include
layers are checked by tests/layering).
"""

GRAPH_CLIENTS = [
    "//distributed:__subpackages__",
    "//graph:__subpackages__",
    "//runtime:__pkg__",
    "//tests:__subpackages__",
    "//tools:__subpackages__",
]
