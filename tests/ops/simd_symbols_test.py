"""Checks that no ISA instruction can reach a CPU without that ISA.

Reads the AVX-512 and AVX2 compilations of the SIMD kernels (the object
files of //ops:simd_kernels_*, given as arguments: an ISA's name, then its
files) and fails
on any function that uses vector-extension instructions (VEX or EVEX
encoded: %ymm, %zmm, mask registers, v-prefixed mnemonics) but is not named
for that ISA (weft::avx2::..., weft::simd::Avx2, ...). Such a function is
an inline or template function of a shared header compiled inside a
WEFT_SIMD_BEGIN region: the linker keeps one copy of it for the whole
program, and if it keeps this one, an older CPU dies with SIGILL
(ops/cpu/simd_target.h). Prints the offenders, then 'N checked'.
"""
import re
import subprocess
import sys

VECTOR = re.compile(r"%[yz]mm|%k[0-7]\b|\tv[a-z0-9]+\s")
OWN = {
    "avx512": ("weft::avx512::", "weft::simd::Avx512"),
    "avx2": ("weft::avx2::", "weft::simd::Avx2"),
}


def functions(path):
    """Yields (name, uses_vector) for each function in an object or archive."""
    out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", path],
                         capture_output=True, text=True, check=True).stdout
    name, vector = None, False
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            if name is not None:
                yield name, vector
            name, vector = m.group(1), False
        elif name is not None and VECTOR.search(line):
            vector = True
    if name is not None:
        yield name, vector


def main(args):
    bad = checked = own_vector = 0
    isa = None
    for path in args:
        if path in OWN:
            isa = path
            continue
        if not path.endswith(".o"):
            continue
        for name, vector in functions(path):
            checked += 1
            mine = any(tag in name for tag in OWN[isa])
            if vector and not mine:
                print(f"{isa}: {name} uses {isa} instructions but is not named "
                      f"for {isa} ({path})")
                bad += 1
            own_vector += vector and mine
    print(f"{checked} checked, {own_vector} vector functions named for their ISA")
    if checked == 0 or own_vector == 0:
        print("found no functions: wrong paths?")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
