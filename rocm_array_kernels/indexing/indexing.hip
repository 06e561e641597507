// Integer-array and boolean-mask indexing (rocm_array_plugins/elementwise/gpu_indexing.py).
//
// Gathers and scatters see the canonical form of the front (indexing.py): the leading k
// axes of a view, indexed by k index arrays of one shape (m elements each), laid out as one
// (k, m) int64 array. index_offsets checks every index against its axis on the device
// (the host reads the flag once and raises IndexError) and turns each row of k indices
// into one element offset; gather and scatter then move whole trailing blocks.
#include "common/portability.h"
#include "common/types.h"
#include "common/indexing.h"

// Every kernel is a template (here on the index or mask element type, int64_t or bool): a plain
// __global__ function is compiled into every program of its file.

// offsets[p] = sum over axes a of (idx[a, p] wrapped into [0, size_a)) * stride_a, where
// axes = {size_0..size_{k-1}, stride_0..stride_{k-1}}. An index outside [-size, size) is
// reported (ra_report_index) with the tag 1 + its axis (any one of them, when several are).
template <typename I>
__global__ void index_offsets(I* RA_RESTRICT offsets, const I* RA_RESTRICT idx, ra_index_t m,
                              int k, const I* RA_RESTRICT axes, unsigned long long* RA_RESTRICT bad) {
  for (ra_index_t p = ra_thread_index(); p < m; p += ra_grid_stride()) {
    I off = 0;
    for (int a = 0; a < k; ++a) {
      const I n = axes[a], v = idx[(ra_index_t)a * m + p];
      if (v < -n || v >= n) ra_report_index(bad, (unsigned long long)a + 1, (long long)v);
      off += (v < 0 ? v + n : v) * axes[k + a];
    }
    offsets[p] = off;
  }
}

// out[p, r] = v[offsets[p] + rest(r)], where rest is the offset of the trailing block's
// element r (the view's axes after the k indexed ones, dimensions merged).
template <typename T>
__global__ void gather(T* RA_RESTRICT out, const T* RA_RESTRICT v, const long long* RA_RESTRICT offsets,
                       ra_index_t m, ra_index_t inner, ra_geometry<1> rest) {
  const ra_index_t n = m * inner;
  for (ra_index_t j = ra_thread_index(); j < n; j += ra_grid_stride()) {
    const ra_index_t p = j / inner, r = j - p * inner;
    ra_index_t off[1];
    ra_offsets<1>(rest, r, off);
    out[j] = v[offsets[p] + off[0]];
  }
}

// v[offsets[p] + rest(r)] = value[p, r] (value contiguous); with repeated indices, one of
// the values lands.
template <typename T>
__global__ void scatter(T* RA_RESTRICT v, const T* RA_RESTRICT value, const long long* RA_RESTRICT offsets,
                        ra_index_t m, ra_index_t inner, ra_geometry<1> rest) {
  const ra_index_t n = m * inner;
  for (ra_index_t j = ra_thread_index(); j < n; j += ra_grid_stride()) {
    const ra_index_t p = j / inner, r = j - p * inner;
    ra_index_t off[1];
    ra_offsets<1>(rest, r, off);
    v[offsets[p] + off[0]] = value[j];
  }
}

// ---- boolean masks: the flat positions of the True elements, in order (two passes) ----------
// RA_MASK_BLOCK and RA_MASK_ITEMS are compile options, defined once in rocm_array_plugins/elementwise/gpu_indexing.py.
#define RA_MASK_CHUNK (RA_MASK_BLOCK * RA_MASK_ITEMS)

// Per thread: how many of its RA_MASK_ITEMS consecutive elements of block b's chunk are True.
RA_DEVICE int ra_mask_count(const bool* mask, ra_index_t n, ra_index_t first) {
  int c = 0;
#pragma unroll
  for (int j = 0; j < RA_MASK_ITEMS; ++j) c += (first + j < n && mask[first + j]) ? 1 : 0;
  return c;
}

// An exclusive scan of one value per thread of the block; *total gets the block's sum.
RA_DEVICE int ra_block_exclusive_scan(int v, int* total) {
  __shared__ int s[RA_MASK_BLOCK];
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (int d = 1; d < RA_MASK_BLOCK; d *= 2) {
    const int add = t >= d ? s[t - d] : 0;
    __syncthreads();
    s[t] += add;
    __syncthreads();
  }
  *total = s[RA_MASK_BLOCK - 1];
  return s[t] - v;
}

// counts[b] = the number of True elements in chunk b (M: bool).
template <typename M>
__global__ void __launch_bounds__(RA_MASK_BLOCK)
mask_count(long long* RA_RESTRICT counts, const M* RA_RESTRICT mask, ra_index_t n) {
  const ra_index_t first = (ra_index_t)blockIdx.x * RA_MASK_CHUNK + (ra_index_t)threadIdx.x * RA_MASK_ITEMS;
  int total;
  ra_block_exclusive_scan(ra_mask_count(mask, n, first), &total);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// flat[starts[b] + k] = the position of chunk b's k-th True element (M: bool).
template <typename M>
__global__ void __launch_bounds__(RA_MASK_BLOCK)
mask_positions(long long* RA_RESTRICT flat, const M* RA_RESTRICT mask, ra_index_t n,
               const long long* RA_RESTRICT starts) {
  const ra_index_t first = (ra_index_t)blockIdx.x * RA_MASK_CHUNK + (ra_index_t)threadIdx.x * RA_MASK_ITEMS;
  int total;
  long long at = starts[blockIdx.x] + ra_block_exclusive_scan(ra_mask_count(mask, n, first), &total);
#pragma unroll
  for (int j = 0; j < RA_MASK_ITEMS; ++j)
    if (first + j < n && mask[first + j]) flat[at++] = first + j;
}
