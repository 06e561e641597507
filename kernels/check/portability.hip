// Exercises kernels/common/portability.h on a device: wave shuffles, ballots, lane
// numbering (which shows that RA_WAVE_SIZE is the hardware's) and atomics. Used by
// the GPU tests, and compiled for every target by the compile check.
#include "common/portability.h"
#include "common/types.h"

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

struct RaMax {
  template <typename T> RA_DEVICE T operator()(T a, T b) const { return a > b ? a : b; }
};

template <typename T>
__global__ void atomic_max(T* best, const T* in, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) ra_atomic_apply(best, in[i], RaMax());
}
