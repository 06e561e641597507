// The copy kernels behind rocm_array.memory: fill, contiguous cast copy
// (vector loads and stores), strided cast copy (any strides on either side,
// broadcast sources with stride 0) and a tiled 2-D transposing copy.
// Instantiated per dtype (fill) or per (source, destination) dtype pair.
#include "common/portability.h"
#include "common/types.h"
#include "common/cast.h"
#include "common/indexing.h"

// Elements per vector access: 16 bytes of the wider of the two types (at least 1).
template <typename S, typename D> struct RaCopyVec {
  static constexpr int size = sizeof(S) > sizeof(D) ? sizeof(S) : sizeof(D);
  static constexpr int value = size >= 16 ? 1 : 16 / size;
};

// 16-byte stores where dst is aligned to them: element stores ran at 0.79x PyTorch's fill of
// 2^28 float32 on an H200 (the loop's index arithmetic, not the memory, was the limit).
template <typename T>
__global__ void fill(T* RA_RESTRICT dst, ra_index_t n, T value) {
  constexpr int V = RaCopyVec<T, T>::value;
  ra_index_t head = 0;
  if (V > 1 && (unsigned long long)dst % (V * sizeof(T)) == 0) {  // uniform: one dst for all threads
    ra_vec<T, V> v;
#pragma unroll
    for (int k = 0; k < V; ++k) v.v[k] = value;
    const ra_index_t nv = n / V;
    for (ra_index_t i = ra_thread_index(); i < nv; i += ra_grid_stride()) reinterpret_cast<ra_vec<T, V>*>(dst)[i] = v;
    head = nv * V;
  }
  for (ra_index_t i = head + ra_thread_index(); i < n; i += ra_grid_stride()) dst[i] = value;
}

template <typename S, typename D>
__global__ void copy_contiguous(D* RA_RESTRICT dst, const S* RA_RESTRICT src, ra_index_t n) {
  constexpr int V = RaCopyVec<S, D>::value;
  ra_index_t head = 0;
  // Both pointers are the same for every thread: the branch is uniform.
  if (V > 1 && (unsigned long long)src % (V * sizeof(S)) == 0 &&
      (unsigned long long)dst % (V * sizeof(D)) == 0) {
    const ra_index_t nv = n / V;
    const ra_vec<S, V>* s = (const ra_vec<S, V>*)src;
    ra_vec<D, V>* d = (ra_vec<D, V>*)dst;
    for (ra_index_t i = ra_thread_index(); i < nv; i += ra_grid_stride()) {
      ra_vec<S, V> in = s[i];
      ra_vec<D, V> out;
#pragma unroll
      for (int k = 0; k < V; ++k) out.v[k] = ra_cast<D>(in.v[k]);
      d[i] = out;
    }
    head = nv * V;
  }
  for (ra_index_t i = head + ra_thread_index(); i < n; i += ra_grid_stride()) dst[i] = ra_cast<D>(src[i]);
}

template <typename S, typename D>
__global__ void copy_strided(D* RA_RESTRICT dst, const S* RA_RESTRICT src, ra_index_t n, ra_geometry<2> g) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    ra_index_t off[2];
    ra_offsets<2>(g, i, off);
    dst[off[0]] = ra_cast<D>(src[off[1]]);
  }
}

// dst[r, c] = src[r, c] where src is fast along r and dst along c: a tile goes
// through shared memory so that both the reads and the writes are coalesced.
// RA_TILE and RA_TILE_ROWS are compile options, defined once in rocm_array/memory/copies.py.
template <typename S, typename D>
__global__ void __launch_bounds__(RA_TILE * RA_TILE_ROWS)
copy_transpose(D* RA_RESTRICT dst, const S* RA_RESTRICT src, ra_index_t rows, ra_index_t cols,
               ra_index_t src_row, ra_index_t src_col, ra_index_t dst_row, ra_index_t dst_col) {
  __shared__ D tile[RA_TILE][RA_TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (ra_index_t c0 = (ra_index_t)blockIdx.x * RA_TILE; c0 < cols; c0 += (ra_index_t)gridDim.x * RA_TILE) {
    for (ra_index_t r0 = (ra_index_t)blockIdx.y * RA_TILE; r0 < rows; r0 += (ra_index_t)gridDim.y * RA_TILE) {
      for (int j = ty; j < RA_TILE; j += RA_TILE_ROWS) {
        ra_index_t r = r0 + tx, c = c0 + j;
        if (r < rows && c < cols) tile[j][tx] = ra_cast<D>(src[r * src_row + c * src_col]);
      }
      __syncthreads();
      for (int j = ty; j < RA_TILE; j += RA_TILE_ROWS) {
        ra_index_t r = r0 + j, c = c0 + tx;
        if (r < rows && c < cols) dst[r * dst_row + c * dst_col] = tile[tx][j];
      }
      __syncthreads();
    }
  }
}
