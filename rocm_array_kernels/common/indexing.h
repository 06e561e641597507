// Strided addressing of N operands that share one iteration shape.
//
// The host merges dimensions first (runtime/layout.py: merge_dims), so most
// arrays arrive here as 1-D or 2-D; RA_MAX_DIMS bounds what is left. The layout
// of ra_geometry<N> is mirrored by runtime/layout.py: geometry_struct(N).
#pragma once
#include "common/portability.h"

#define RA_MAX_DIMS 8

template <int N> struct ra_geometry {
  ra_index_t shape[RA_MAX_DIMS];      // outermost first
  ra_index_t strides[N][RA_MAX_DIMS];  // in elements; 0 along broadcast dimensions
  int ndim;
};

// The element offset of each operand for the flat (row-major) index i.
template <int N> RA_DEVICE void ra_offsets(const ra_geometry<N>& g, ra_index_t i, ra_index_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
  for (int d = RA_MAX_DIMS - 1; d >= 0; --d) {
    if (d < g.ndim) {
      ra_index_t n = g.shape[d];
      ra_index_t q = i / n;
      ra_index_t c = i - q * n;
      i = q;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += c * g.strides[k][d];
    }
  }
}

// An out-of-range index for the host's IndexError: the first thread to claim report[0] writes its
// tag there (nonzero: which axis, say) and the index in report[1], so the two always belong together.
RA_DEVICE void ra_report_index(unsigned long long* report, unsigned long long tag, long long v) {
  if (ra_atomic_cas(report, 0ull, tag) == 0ull) report[1] = (unsigned long long)v;
}
