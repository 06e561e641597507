// The linalg plugin's own kernels, beside the vendor BLAS and solvers:
// - int_gemm: integer matrix products (the vendor GEMMs have no integer types that
//   wrap as the standard's integers do), any strides, batched;
// - triangle: zero the strict upper (or lower) triangle of factors (cholesky, qr's R);
// - lu_det / lu_slogdet: determinants from getrf's LU factors and pivots.
#include "common/portability.h"
#include "common/types.h"

// ---- integer GEMM ----------------------------------------------------------------------------
// c[z] (m x n, contiguous) = a[z] (m x k) @ b[z] (k x n); operands at any element strides.
// Products accumulate modulo 2^64 in unsigned arithmetic (no signed overflow), and the
// result keeps the low bits of T: the wrap-around of the standard's fixed-width integers.
// RA_GEMM_TILE is a compile option, defined once in rocm_array_plugins/linalg/gpu.py (LINALG).
template <typename T>
__global__ void __launch_bounds__(RA_GEMM_TILE * RA_GEMM_TILE)
int_gemm(T* RA_RESTRICT c, const T* RA_RESTRICT a, const T* RA_RESTRICT b, ra_index_t m, ra_index_t n,
         ra_index_t k, ra_index_t batch, ra_index_t a_batch, ra_index_t a_row, ra_index_t a_col,
         ra_index_t b_batch, ra_index_t b_row, ra_index_t b_col) {
  typedef unsigned long long acc_t;
  __shared__ T ta[RA_GEMM_TILE][RA_GEMM_TILE + 1];
  __shared__ T tb[RA_GEMM_TILE][RA_GEMM_TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  // Every loop bound below is the same for the whole block, so __syncthreads is reached by all.
  for (ra_index_t z = blockIdx.z; z < batch; z += gridDim.z) {
    for (ra_index_t r0 = (ra_index_t)blockIdx.y * RA_GEMM_TILE; r0 < m; r0 += (ra_index_t)gridDim.y * RA_GEMM_TILE) {
      for (ra_index_t c0 = (ra_index_t)blockIdx.x * RA_GEMM_TILE; c0 < n; c0 += (ra_index_t)gridDim.x * RA_GEMM_TILE) {
        const ra_index_t row = r0 + ty, col = c0 + tx;
        acc_t acc = 0;
        for (ra_index_t k0 = 0; k0 < k; k0 += RA_GEMM_TILE) {
          ta[ty][tx] = row < m && k0 + tx < k ? a[z * a_batch + row * a_row + (k0 + tx) * a_col] : T(0);
          tb[ty][tx] = k0 + ty < k && col < n ? b[z * b_batch + (k0 + ty) * b_row + col * b_col] : T(0);
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < RA_GEMM_TILE; ++kk)
            acc += (acc_t)(long long)ta[ty][kk] * (acc_t)(long long)tb[kk][tx];
          __syncthreads();
        }
        if (row < m && col < n) c[z * m * n + row * n + col] = (T)acc;
      }
    }
  }
}

// ---- triangles -------------------------------------------------------------------------------
// Zero a[z, i, j] where j > i (keep_lower) or j < i (otherwise), for a batch of rows x cols matrices.
template <typename T>
__global__ void triangle(T* RA_RESTRICT x, ra_index_t batch, ra_index_t rows, ra_index_t cols,
                         ra_index_t s_batch, ra_index_t s_row, ra_index_t s_col, int keep_lower) {
  const ra_index_t total = batch * rows * cols;
  for (ra_index_t t = ra_thread_index(); t < total; t += ra_grid_stride()) {
    const ra_index_t j = t % cols, i = (t / cols) % rows, z = t / (rows * cols);
    if (keep_lower ? j > i : j < i) x[z * s_batch + i * s_row + j * s_col] = T(0);
  }
}

// ---- determinants from LU factors ------------------------------------------------------------
// lu: batch column-major n x n factors, contiguous; ipiv: n 1-based pivot rows per matrix.
RA_DEVICE float ra_magnitude(float x) { return fabsf(x); }
RA_DEVICE double ra_magnitude(double x) { return fabs(x); }
RA_DEVICE float ra_magnitude(complex64 x) { return hypotf(x.re, x.im); }
RA_DEVICE double ra_magnitude(complex128 x) { return hypot(x.re, x.im); }
// x / |x| for a non-zero x: its sign (real) or phase (complex).
template <typename T, typename R> RA_DEVICE T ra_phase(T x, R magnitude) {
  if constexpr (ra_is_complex<T>::value) return T(x.re / magnitude, x.im / magnitude);
  else return x < T(0) ? T(-1) : T(1);
}

template <typename I> RA_DEVICE bool ra_odd_permutation(const I* ipiv, ra_index_t n) {
  bool odd = false;
  for (ra_index_t i = 0; i < n; ++i) odd ^= (ra_index_t)ipiv[i] != i + 1;
  return odd;
}

template <typename T, typename I>
__global__ void lu_det(T* RA_RESTRICT det, const T* RA_RESTRICT lu, const I* RA_RESTRICT ipiv, ra_index_t n,
                       ra_index_t batch) {
  for (ra_index_t z = ra_thread_index(); z < batch; z += ra_grid_stride()) {
    const T* a = lu + z * n * n;
    T d = T(1);
    for (ra_index_t i = 0; i < n; ++i) d = d * a[i * (n + 1)];
    det[z] = ra_odd_permutation(ipiv + z * n, n) ? -d : d;
  }
}

template <typename T, typename R, typename I>
__global__ void lu_slogdet(T* RA_RESTRICT sign, R* RA_RESTRICT logabs, const T* RA_RESTRICT lu,
                           const I* RA_RESTRICT ipiv, ra_index_t n, ra_index_t batch) {
  for (ra_index_t z = ra_thread_index(); z < batch; z += ra_grid_stride()) {
    const T* a = lu + z * n * n;
    T s = ra_odd_permutation(ipiv + z * n, n) ? T(-1) : T(1);
    R total = R(0);
    bool singular = false;
    for (ra_index_t i = 0; i < n; ++i) {
      const R m = ra_magnitude(a[i * (n + 1)]);
      if (m == R(0)) singular = true;
      else s = s * ra_phase(a[i * (n + 1)], m);
      total += log(m);
    }
    sign[z] = singular ? T(0) : s;
    logabs[z] = singular ? -R(1) / R(0) : total;
  }
}
