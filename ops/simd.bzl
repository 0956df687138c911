"""Sources compiled once per instruction set (ops/cpu/simd_target.h)."""

# (suffix, defines) of the ISA compilations.
_ISAS = [
    ("avx512", ["WEFT_SIMD_AVX512"]),
    ("avx2", ["WEFT_SIMD_AVX2"]),
]

def weft_simd_library(name, srcs, private_hdrs, deps):
    """A library of `srcs` compiled three times: `name`, for baseline x86-64
    (the dispatchers, runtime/core/cpu_isa.h, and the portable code), and
    `name`_avx512 and `name`_avx2, with WEFT_SIMD_AVX512 or WEFT_SIMD_AVX2
    defined.

    The ISA code of each source sits between WEFT_SIMD_BEGIN and
    WEFT_SIMD_END, so the whole build keeps the baseline flags and no ISA
    instruction escapes the functions that the CPU check guards.
    """
    # A multiply and an add are fused only where a kernel asks (Isa::Fma):
    # GCC would otherwise contract them wherever FMA is available (the ISA
    # compilations; the baseline one too under --config=native), and the
    # same loop would round differently there than on a CPU without FMA
    # (ops/cpu/simd_isa.h).
    copts = ["-ffp-contract=off"]
    for suffix, defines in _ISAS:
        native.cc_library(
            name = name + "_" + suffix,
            srcs = srcs + private_hdrs,
            copts = copts,
            local_defines = defines,
            deps = deps,
        )

    # The baseline compilation calls into the others: it depends on them,
    # so that static links see it first.
    native.cc_library(
        name = name,
        srcs = srcs + private_hdrs,
        copts = copts,
        deps = deps + [":" + name + "_" + suffix for suffix, _ in _ISAS],
    )
