"""Check the elementwise functors of ``rocm_array_kernels/elementwise/ops.h`` on the host, without a GPU.

Compiles every (row, dtype) of the elementwise table with the host's C++ compiler
(g++, through a shim that turns the HIP spellings into plain C++), then runs a pytest
selection with the cpu back of the elementwise functions replaced by those functors, so
the project's NumPy comparisons (tests/test_elementwise.py) check the kernels' arithmetic:

    python scripts/host_functors.py [pytest args, default: tests/test_elementwise.py -q]

A development aid: the GPU tests remain the proof.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHIM = """
#include <math.h>
#define int64_t ra_host_int64
#define uint64_t ra_host_uint64
#define __HIPCC_RTC__ 1
#define RA_WAVE_SIZE 64
#define __device__
#define __host__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(x)
#define __shared__ static
struct ra_dim3_ { unsigned x, y, z; };
static ra_dim3_ blockIdx, threadIdx, blockDim, gridDim;
unsigned long long __ballot(int);
int __popcll(unsigned long long);
template <class T> T __shfl(T, int, int);
template <class T> T __shfl_down(T, unsigned, int);
template <class T> T __shfl_up(T, unsigned, int);
template <class T> T __shfl_xor(T, int, int);
template <class T> T atomicAdd(T*, T);
unsigned atomicCAS(unsigned*, unsigned, unsigned);
inline void __builtin_amdgcn_wave_barrier() {}
unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
"""


def build() -> tuple[ctypes.CDLL, dict]:
    from rocm_array.dtypes import CATEGORIES
    from rocm_array_plugins.elementwise.table import UFUNCS
    from rocm_array_plugins.elementwise.front_ufunc import RESULT_RULES

    lines = ['#include "elementwise/elementwise.hip"']
    symbols = {}
    for u in UFUNCS:
        for d in sorted(CATEGORIES[u.category], key=lambda d: d.name):
            o = RESULT_RULES[u.result](d)
            sym = f"k_{u.name}_{d.name}"
            symbols[(u.name, d.name)] = sym
            if u.arity == 1:
                body = f"RaUnary<{u.functor}, {d.c_type}, {o.c_type}> f; for (long long i = 0; i < n; ++i) ((({o.c_type}*)out))[i] = f((({d.c_type}*)a)[i]);"
            else:
                body = (f"RaBinary<{u.functor}, {d.c_type}, {o.c_type}> f; for (long long i = 0; i < n; ++i) "
                        f"(({o.c_type}*)out)[i] = f((({d.c_type}*)a)[i], (({d.c_type}*)b)[i]);")
            lines.append(f'extern "C" void {sym}(void* out, const void* a, const void* b, long long n) {{ {body} }}')
    src = "\n".join(lines)
    kernels = ROOT / "rocm_array_kernels"
    digest = hashlib.sha256((SHIM + src + "".join(p.read_text() for p in sorted(kernels.rglob("*.h")))
                             + (kernels / "elementwise/elementwise.hip").read_text()).encode()).hexdigest()[:16]
    lib = Path(tempfile.gettempdir()) / f"ra_host_functors_{digest}.so"
    if not lib.exists():
        work = Path(tempfile.mkdtemp())
        (work / "shim.h").write_text(SHIM)
        (work / "all.cpp").write_text(src)
        subprocess.run(["g++", "-std=c++17", "-O1", "-w", "-include", str(work / "shim.h"), f"-I{kernels}",
                        "-shared", "-fPIC", str(work / "all.cpp"), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib)), symbols


def install() -> None:
    """Replace the cpu back of the elementwise functions by the host-compiled functors."""
    from rocm_array import memory
    from rocm_array.array import Array, wrap_numpy
    import rocm_array  # noqa: F401  (the plugins registered first, so the back set here is not replaced)
    from rocm_array_plugins.elementwise.backs import UFUNC

    lib, symbols = build()

    def back(fn, arrays, dtype, out_dtype, shape, into=None):  # type: ignore[no-untyped-def]
        arrays = [a if isinstance(a, Array) else a.array() for a in arrays]
        args = [np.ascontiguousarray(np.broadcast_to(a._np.astype(dtype.numpy), shape)) for a in arrays]
        out = np.empty(shape, out_dtype.numpy)
        ptrs = [a.ctypes.data for a in args] + [0] * (2 - len(args))
        getattr(lib, symbols[(fn.name, dtype.name)])(ctypes.c_void_p(out.ctypes.data), ctypes.c_void_p(ptrs[0]),
                                                     ctypes.c_void_p(ptrs[1]), ctypes.c_longlong(out.size))
        if into is None:
            return wrap_numpy(out, out_dtype)
        memory.copy_into(into, wrap_numpy(out, out_dtype))
        return into

    UFUNC["cpu"] = back


class _Plugin:
    def pytest_configure(self, config) -> None:  # type: ignore[no-untyped-def]
        install()


if __name__ == "__main__":
    import pytest

    os.chdir(ROOT)
    sys.exit(pytest.main(sys.argv[1:] or ["tests/test_elementwise.py", "-q", "-p", "no:cacheprovider"],
                         plugins=[_Plugin()]))
