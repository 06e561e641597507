"""The simulator (platform ``sim``) itself, at wave 64 and 32, without ROCM_ARRAY_PLATFORM:
lane-exact shuffles and ballots, shared memory and ``__syncthreads``, atomics, through
rocm_array_kernels/check/portability.hip; and the errors it reports for kernels that break the rules."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator

import numpy as np
import pytest

from rocm_array.runtime.compiler import Compiler, compile_program
from rocm_array.runtime import sim
from rocm_array.runtime.protocol import DriverError

SOURCE = "check/portability.hip"
NAMES = ("wave_sum<float>", "wave_shuffles<int>", "block_scan_reverse<int>", "atomic_sum<double>",
         "atomic_sum<long long>", "atomic_max<float>")

try:
    sim.find_compiler()
    _MISSING = ""
except DriverError as exc:
    _MISSING = str(exc)
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"no simulator: {_MISSING}")


class Device:
    """A simulated device at one wave size, with the few calls the tests need."""

    def __init__(self, wave: int, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.driver = sim.SimDriver(wave, reverse=False, memory=sim.MEMORY)
        self.wave = wave
        self.compiler = Compiler(self.driver.rtc(), self.driver.properties.arch, wave,
                                 cache=tmp_path_factory.mktemp(f"sim{wave}"))
        program = self.compiler.compile(SOURCE, NAMES)
        module = self.driver.module_load(program.code)
        self.functions = {e: self.driver.module_function(module, lowered) for e, lowered in program.lowered.items()}
        self._module = module

    def up(self, a: np.ndarray) -> int:
        ptr = self.driver.malloc_async(max(a.nbytes, 1))
        self.driver.memcpy(ptr, a.ctypes.data, a.nbytes, "htod")
        return ptr

    def down(self, ptr: int, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        self.driver.memcpy(out.ctypes.data, ptr, out.nbytes, "dtoh")
        return out

    def launch(self, name: str, grid: int, block: int, args: list, shared: int = 0) -> None:
        values = [ctypes.c_void_p(a) if isinstance(a, int) else a for a in args]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        self.driver.sender(self.functions[name], (block, 1, 1), shared)((grid, 1, 1), ctypes.addressof(params))


@pytest.fixture(scope="module", params=[64, 32])
def dev(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Device:
    return Device(request.param, tmp_path_factory)


def test_properties(dev: Device) -> None:
    p = dev.driver.properties
    assert (p.platform, p.arch, p.wave_size) == ("sim", f"sim{dev.wave}", dev.wave)
    assert dev.compiler.rtc.target_options(p.arch, dev.wave) != \
        dev.compiler.rtc.target_options(p.arch, 96 - dev.wave)  # the wave is in the cache key


def test_lanes_sums_and_ballots(dev: Device) -> None:
    w, n = dev.wave, 4 * dev.wave
    host = (np.arange(n, dtype=np.float32) * 7 % 11) - 5
    sums, masks, lanes = np.zeros(4, np.float32), np.zeros(4, np.uint64), np.zeros(n, np.int32)
    ps, pm, pl = dev.up(sums), dev.up(masks), dev.up(lanes)
    dev.launch("wave_sum<float>", 1, n, [ps, pm, pl, dev.up(host)])
    np.testing.assert_array_equal(dev.down(pl, lanes), np.arange(n) % w)
    np.testing.assert_array_equal(dev.down(ps, sums), host.reshape(4, w).sum(axis=1))
    want = [sum(1 << k for k in range(w) if row[k] > 0) for row in host.reshape(4, w)]
    np.testing.assert_array_equal(dev.down(pm, masks), np.array(want, np.uint64))


@pytest.mark.parametrize("delta", [1, 3, 16, 31])
def test_shuffles_lane_exact(dev: Device, delta: int) -> None:
    w, n = dev.wave, 3 * dev.wave
    host = np.arange(n, dtype=np.int32) * 10 + 1
    out = np.zeros(4 * n, np.int32)
    po = dev.up(out)
    dev.launch("wave_shuffles<int>", 1, n, [po, dev.up(host), ctypes.c_int(delta)])
    got = dev.down(po, out).reshape(4, n)
    i = np.arange(n)
    base, lane = i - i % w, i % w
    np.testing.assert_array_equal(got[0], host[base + (lane + delta) % w])
    np.testing.assert_array_equal(got[1], np.where(lane >= delta, host[i - delta], host))
    np.testing.assert_array_equal(got[2], np.where(lane + delta < w, host[np.minimum(i + delta, n - 1)], host))
    np.testing.assert_array_equal(got[3], host[base + (lane ^ delta)])


@pytest.mark.parametrize("block", [64, 256, 1024])
def test_block_scan_and_shared_memory(dev: Device, block: int) -> None:
    host = (np.arange(block, dtype=np.int32) * 5) % 17 - 8
    out = np.zeros(4 * block, np.int32)
    po = dev.up(out)
    dev.launch("block_scan_reverse<int>", 1, block, [po, dev.up(host)], shared=4 * block)
    got = dev.down(po, out).reshape(4, block)
    scan = np.cumsum(host)
    np.testing.assert_array_equal(got[0], scan)
    np.testing.assert_array_equal(got[1], scan - host)
    np.testing.assert_array_equal(got[2], np.full(block, scan[-1]))
    np.testing.assert_array_equal(got[3], host[::-1])


@pytest.mark.parametrize("kind", ["atomic_sum<double>", "atomic_sum<long long>", "atomic_max<float>"])
def test_atomics(dev: Device, kind: str) -> None:
    dtype = {"double": np.float64, "long long": np.int64, "float": np.float32}[kind.split("<")[1][:-1]]
    host = (np.arange(100_000) % 1000 - 300).astype(dtype)
    acc = np.array(-1e30 if kind.startswith("atomic_max") else 0, dtype)
    pa = dev.up(acc)
    dev.launch(kind, 8, 256, [pa, dev.up(host), ctypes.c_int64(host.size)])
    assert dev.down(pa, acc)[()] == (host.max() if kind.startswith("atomic_max") else host.sum())


# -- kernels that break the rules: the simulator says so ----------------------------------------------
BROKEN = """
#include "common/portability.h"
// Lanes of one wave at different synchronization points: a deadlock on the hardware.
__global__ void split(int* out) {
  if (ra_lane() == 0) __syncthreads();
  else out[threadIdx.x] = (int)ra_ballot(true);
}
// Lanes of one wave at different wave operations.
__global__ void divergent(int* out) {
  if (ra_lane() % 2) out[threadIdx.x] = (int)ra_ballot(true);
  else out[threadIdx.x] = ra_shfl_down((int)threadIdx.x, 1);
}
// Reads a lane that has exited: the value is garbage on the hardware, poison here.
__global__ void exited(unsigned int* out) {
  if (ra_lane() == 1) return;
  out[threadIdx.x] = ra_shfl((unsigned int)threadIdx.x, 1);
}
"""


@pytest.fixture(scope="module")
def broken(dev: Device) -> dict:
    code, lowered = compile_program(dev.compiler.rtc, BROKEN, "broken.hip", ["split", "divergent", "exited"],
                                    dev.compiler.options(), dev.compiler.target)
    module = dev.driver.module_load(code)
    return {"module": module, **{e: dev.driver.module_function(module, n) for e, n in lowered.items()}}


def _run(dev: Device, fn, block: int) -> np.ndarray:
    out = np.zeros(block, np.uint32)
    po = dev.up(out)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(ptr := ctypes.c_void_p(po)))
    dev.driver.sender(fn, (block, 1, 1), 0)((1, 1, 1), ctypes.addressof(params))
    return dev.down(po, out)


def test_deadlock_is_reported(dev: Device, broken: dict) -> None:
    with pytest.raises(DriverError, match=r"split: block \(0, 0, 0\): deadlock.*wave 0: 1 at __syncthreads"):
        _run(dev, broken["split"], dev.wave)


def test_divergent_wave_operations_are_reported(dev: Device, broken: dict) -> None:
    with pytest.raises(DriverError, match="divergent: .*different wave operations"):
        _run(dev, broken["divergent"], dev.wave)


def test_exited_lane_reads_poison(dev: Device, broken: dict) -> None:
    got = _run(dev, broken["exited"], 2 * dev.wave)
    live = np.arange(2 * dev.wave) % dev.wave != 1
    assert (got[live] == 0xdeadbeef).all() and (got[~live] == 0).all()


def test_invalid_launch_is_reported(dev: Device, broken: dict) -> None:
    with pytest.raises(DriverError, match="a block holds 1 to 1024 threads"):
        _run(dev, broken["split"], 1025)


# -- block orders: a kernel must not depend on which block runs or finishes last ------------------------
ORDERS = """
#include "common/portability.h"
// arrival[k]: the block that came k-th to the counter; seen[block * blockDim.x + thread]: the block
// index each thread reads back from shared memory after a barrier (another block's is a leak).
__global__ void arrival(unsigned int* counter, unsigned int* arrival, unsigned int* seen) {
  __shared__ unsigned int mine;
  if (threadIdx.x == 0) mine = blockIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) arrival[atomicAdd(counter, 1u)] = blockIdx.x;
  __syncthreads();
  seen[blockIdx.x * blockDim.x + threadIdx.x] = mine;
}
// Block b writes part[b]; the block of the last index (not the last to finish) sums them: right
// only when blocks finish in index order.
__global__ void fold_by_index(int* part, int* out) {
  if (threadIdx.x == 0) part[blockIdx.x] = (int)blockIdx.x + 1;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) {
    int s = 0;
    for (unsigned int b = 0; b < gridDim.x; ++b) s += part[b];
    *out = s;
  }
}
"""


@pytest.fixture(scope="module")
def orders(dev: Device) -> Iterator[dict]:
    code, lowered = compile_program(dev.compiler.rtc, ORDERS, "orders.hip", ["arrival", "fold_by_index"],
                                    dev.compiler.options(), dev.compiler.target)
    module = dev.driver.module_load(code)
    yield {"module": module, **{e: dev.driver.module_function(module, n) for e, n in lowered.items()}}
    dev.driver.set_blocks("forward")


def _launch(dev: Device, fn, grid: int, block: int, pointers: list[int]) -> None:
    values = [ctypes.c_void_p(p) for p in pointers]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    dev.driver.sender(fn, (block, 1, 1), 0)((grid, 1, 1), ctypes.addressof(params))


@pytest.mark.parametrize("spec", ["forward", "reverse", "shuffle", "shuffle:7", "interleave", "interleave:7"])
def test_block_orders(dev: Device, orders: dict, spec: str) -> None:
    grid, block = 13, 2 * dev.wave
    dev.driver.set_blocks(spec)
    counter, arrival, seen = np.zeros(1, np.uint32), np.zeros(grid, np.uint32), np.zeros(grid * block, np.uint32)
    pc, pa, ps = dev.up(counter), dev.up(arrival), dev.up(seen)
    _launch(dev, orders["arrival"], grid, block, [pc, pa, ps])
    got = dev.down(pa, arrival)
    assert sorted(got) == list(range(grid))  # each block once
    want = {"forward": list(range(grid)), "reverse": list(range(grid))[::-1]}.get(spec)
    if want is None:  # drawn: not index order, and the same draw from the same seed
        assert list(got) != list(range(grid))
        _launch(dev, orders["arrival"], grid, block, [dev.up(counter), pa, ps])
        np.testing.assert_array_equal(dev.down(pa, arrival), got)
    else:
        assert list(got) == want
    np.testing.assert_array_equal(dev.down(ps, seen), np.repeat(np.arange(grid), block))  # shared memory a block's


@pytest.mark.parametrize("spec", ["reverse", "shuffle:3", "interleave:3"])
def test_a_fold_by_the_last_index_is_wrong_in_another_order(dev: Device, orders: dict, spec: str) -> None:
    grid, out = 9, np.zeros(1, np.int32)
    total = grid * (grid + 1) // 2
    for order, right in (("forward", True), (spec, False)):
        dev.driver.set_blocks(order)
        part, po = dev.up(np.zeros(grid, np.int32)), dev.up(out)
        _launch(dev, orders["fold_by_index"], grid, dev.wave, [part, po])
        assert (dev.down(po, out)[0] == total) == right


@pytest.mark.parametrize("spec", ["sideways", "reverse:3", "shuffle:x", "interleave:-1", f"shuffle:{2**32}"])
def test_a_wrong_block_order_is_an_error(spec: str) -> None:
    with pytest.raises(DriverError, match="ROCM_ARRAY_SIM_BLOCKS=.*expected forward, reverse"):
        sim.block_order(spec)


def test_never_found_by_default() -> None:
    from rocm_array import runtime

    assert "sim" in runtime.ON_REQUEST and "sim" not in runtime.PLATFORMS
