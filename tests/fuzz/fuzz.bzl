"""weft_fuzz_target: one fuzz target and the regression test over its corpus.

Under --config=fuzz (clang, libFuzzer, ASan and UBSan; see .bazelrc) the
binary is a libFuzzer fuzzer; otherwise it links replay_main.cc, which runs
the target once per corpus file. Either way NAME_regression replays the
committed corpus in tests/fuzz/corpus/NAME/, and tools/fuzz.sh runs a
campaign.
"""

def weft_fuzz_target(name, srcs, deps = []):
    native.cc_binary(
        name = name,
        srcs = srcs,
        deps = deps + select({
            "//tests/fuzz:libfuzzer": [],
            "//conditions:default": ["//tests/fuzz:replay_main"],
        }),
        linkopts = select({
            "//tests/fuzz:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        testonly = True,
    )
    native.sh_test(
        name = name + "_regression",
        size = "small",
        srcs = ["replay_test.sh"],
        args = [
            "$(location :%s)" % name,
            "tests/fuzz/corpus/" + name,
        ],
        data = [":" + name] + native.glob(["corpus/%s/*" % name]),
    )
