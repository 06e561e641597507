// Batched products of small float32 matrices, one product a block:
// c[z] (m x n, contiguous) = a[z] (m x k) @ b[z] (k x n), with m, n, k at most TILE.
//
// A block fetches both operands whole, as CHUNKS groups of asynchronous copies (portability.h),
// chunk q holding a's columns and b's rows q*KC .. q*KC + KC - 1, and multiplies chunk q as soon
// as it has landed while the later ones are still in flight. With every product of a batch of a
// few hundred resident at once, the loads of the whole batch are in flight from the start; the
// vendor GEMMs' kernels stream k through a few stages instead and wait on memory at each.
// Each thread sums a TM x TN block of c in registers from 16-byte reads of shared memory.
//
// The plan (rocm_array_plugins/linalg/small_gemm.py) launches it with 16-byte aligned rows: a, b, the row
// strides lda and ldb, the batch strides sa and sb, n and k all multiples of 4 floats.
#include "common/portability.h"
#include "common/types.h"

template <int TILE, int TM, int TN, int KC>
__global__ void __launch_bounds__((TILE / TM) * (TILE / TN))
small_gemm(float* RA_RESTRICT c, const float* RA_RESTRICT a, const float* RA_RESTRICT b, int m, int n, int k,
           ra_index_t sa, int lda, ra_index_t sb, int ldb) {
  constexpr int THREADS = (TILE / TM) * (TILE / TN), CHUNKS = TILE / KC, NX = TILE / TN;
  constexpr int PIECES = TILE * KC / 4;  // 16-byte pieces of each operand in a chunk
  constexpr int LD = TILE + 4;  // 4 floats of padding: the rows of a chunk's copies start on different banks
  static_assert(KC % 4 == 0 && TILE % KC == 0 && TN % 4 == 0 && TM % 4 == 0, "16-byte pieces");
  static_assert(PIECES % THREADS == 0, "each thread copies as many pieces of a chunk");
  __shared__ RA_ALIGN(16) float as[TILE * LD];  // as[row * LD + col]: a's rows as they lie in memory
  __shared__ RA_ALIGN(16) float bs[TILE * LD];  // bs[row * LD + col]: b's rows
  const ra_index_t z = blockIdx.x;
  a += z * sa;
  b += z * sb;
  c += z * (ra_index_t)m * n;
  const int t = threadIdx.x;
  // Every chunk is a group, so that the waits below count in constants; a chunk past k reads
  // nothing (its copies write zeros) and is not summed.
#pragma unroll
  for (int q = 0; q < CHUNKS; ++q) {
#pragma unroll
    for (int p = 0; p < PIECES / THREADS; ++p) {
      const int i = t + p * THREADS, row = i / (KC / 4), col = q * KC + i % (KC / 4) * 4;
      const bool valid = row < m && col < k;  // zeros beyond the matrix: they add nothing to the sums
      ra_copy16_async(&as[row * LD + col], valid ? a + (ra_index_t)row * lda + col : a, valid);
    }
#pragma unroll
    for (int p = 0; p < PIECES / THREADS; ++p) {
      const int i = t + p * THREADS, row = q * KC + i / (TILE / 4), col = i % (TILE / 4) * 4;
      const bool valid = row < k && col < n;
      ra_copy16_async(&bs[row * LD + col], valid ? b + (ra_index_t)row * ldb + col : b, valid);
    }
    ra_async_commit();
  }
  const int tx = t % NX, ty = t / NX;
  const bool rows = ty * TM < m;  // a thread whose rows are all past m has nothing to sum
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  typedef ra_vec<float, 4> V;
#pragma unroll
  for (int q = 0; q < CHUNKS; ++q) {
    if (q * KC >= k) break;  // the same for the whole block: every thread reaches each barrier
    ra_async_wait_at_most<CHUNKS - 1>(CHUNKS - 1 - q);
    __syncthreads();
    if (!rows) continue;
#pragma unroll
    for (int kk = q * KC; kk < q * KC + KC; kk += 4) {
      V av[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i) av[i] = *reinterpret_cast<const V*>(&as[(ty * TM + i) * LD + kk]);
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        V bv[TN / 4];
#pragma unroll
        for (int j = 0; j < TN / 4; ++j) bv[j] = *reinterpret_cast<const V*>(&bs[(kk + s) * LD + tx * TN + 4 * j]);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += av[i].v[s] * bv[j / 4].v[j % 4];  // one fma each (contracted)
      }
    }
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = ty * TM + i;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int col = tx * TN + j;
      if (row < m && col < n) {
        V v;
#pragma unroll
        for (int e = 0; e < 4; ++e) v.v[e] = acc[i][j + e];
        *reinterpret_cast<V*>(&c[(ra_index_t)row * n + col]) = v;
      }
    }
  }
}
