// Exercises rocm_array_kernels/common/portability.h on a device: wave shuffles, ballots, lane
// numbering (which shows that RA_WAVE_SIZE is the hardware's), atomics, and the block
// collectives of block.h with shared memory. Used by the GPU tests and the simulator's
// (tests/test_sim.py), and compiled for every target by the compile check.
#include "common/portability.h"
#include "common/types.h"
#include "common/block.h"

// One block: out[w] = the sum of wave w's inputs (shuffles), masks[w] = its ballot of
// in > 0, lanes[i] = thread i's lane.
template <typename T>
__global__ void wave_sum(T* out, unsigned long long* masks, int* lanes, const T* in) {
  const int i = threadIdx.x;
  T v = in[i];
  for (int d = RA_WAVE_SIZE / 2; d > 0; d /= 2) v += ra_shfl_down(v, d);
  const ra_lanemask_t m = ra_ballot(in[i] > T(0));
  if (ra_lane() == 0) {
    out[i / RA_WAVE_SIZE] = v;
    masks[i / RA_WAVE_SIZE] = (unsigned long long)m;
  }
  lanes[i] = ra_lane();
}

template <typename T>
__global__ void atomic_sum(T* total, const T* in, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) ra_atomic_add(total, in[i]);
}

struct RaAdd {
  template <typename T> RA_DEVICE T operator()(T a, T b) const { return a + b; }
};

struct RaMax {
  template <typename T> RA_DEVICE T operator()(T a, T b) const { return a > b ? a : b; }
};

template <typename T>
__global__ void atomic_max(T* best, const T* in, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) ra_atomic_apply(best, in[i], RaMax());
}

// Thread i of a 1-D block of n: its value from ra_shfl (lane + delta), ra_shfl_up,
// ra_shfl_down and ra_shfl_xor (delta) in out[i], out[n + i], out[2n + i], out[3n + i].
template <typename T>
__global__ void wave_shuffles(T* out, const T* in, int delta) {
  const int i = threadIdx.x, n = blockDim.x;
  const T v = in[i];
  out[i] = ra_shfl(v, ra_lane() + delta);
  out[n + i] = ra_shfl_up(v, delta);
  out[2 * n + i] = ra_shfl_down(v, delta);
  out[3 * n + i] = ra_shfl_xor(v, delta);
}

// One block: the block scan of in (inclusive in out[i], exclusive in out[n + i], the total in
// out[2n + i]) and in reversed through dynamic shared memory (out[3n + i] = in[n - 1 - i]).
template <typename T>
__global__ void block_scan_reverse(T* out, const T* in) {
  const int i = threadIdx.x, n = blockDim.x;
  T before, total;
  out[i] = ra_block_scan(in[i], RaAdd(), T(0), &before, &total);
  out[n + i] = before;
  out[2 * n + i] = total;
  RA_DYNAMIC_SHARED(unsigned long long, raw);
  T* staged = reinterpret_cast<T*>(raw);
  staged[i] = in[i];
  __syncthreads();
  out[3 * n + i] = staged[n - 1 - i];
}
