// Row kernels of rocm_array.nn over contiguous rows (the front moves the axis last):
// softmax / log_softmax (max and sum in one pass, an online rescaled sum) and
// layer_norm / rms_norm (optional weight and bias of the row's length). One block
// per row, grid-striding over rows; accumulation in nn_acc<T>.
#include "common/portability.h"
#include "common/block.h"
#include "nn/nn.h"

// A running (max, sum of exp(x - max)) pair.
template <typename C> struct NnSoftmaxAcc {
  C m, s;
};

template <typename C> struct NnSoftmaxCombine {
  RA_DEVICE NnSoftmaxAcc<C> operator()(NnSoftmaxAcc<C> a, NnSoftmaxAcc<C> b) const {
    if (b.m > a.m || b.m != b.m) { NnSoftmaxAcc<C> t = a; a = b; b = t; }  // a.m is the larger (NaN wins)
    if (b.s == C(0)) return a;  // b is empty: nothing to rescale
    if (a.m == -ra_inf<C>()) return {a.m, a.s + b.s};  // both -inf: exp(-inf - -inf) would be NaN
    return {a.m, a.s + b.s * ra_exp(b.m - a.m)};
  }
};

template <typename C> struct NnSum {
  RA_DEVICE C operator()(C a, C b) const { return a + b; }
};

// The block's total of v, in every thread.
template <typename T, typename Op> RA_DEVICE T nn_block_all(T v, Op op) {
  __shared__ unsigned long long slot_raw[(sizeof(T) + 7) / 8];
  T* slot = reinterpret_cast<T*>(slot_raw);
  v = ra_block_reduce(v, op);
  if (threadIdx.x == 0) *slot = v;
  __syncthreads();
  v = *slot;
  __syncthreads();  // the slot is rewritten by the next call
  return v;
}

// Rows of at most NN_ITEMS * blockDim.x elements stay in registers (one read of memory);
// longer rows are read twice (the second time mostly from the cache).
#define NN_ITEMS 8
template <typename T, bool LOG>
__global__ void softmax_rows(T* RA_RESTRICT out, const T* RA_RESTRICT x, ra_index_t rows, ra_index_t n) {
  typedef typename nn_acc<T>::type C;
  const C neg_inf = -ra_inf<C>();
  const bool held = n <= (ra_index_t)NN_ITEMS * blockDim.x;
  NnSoftmaxCombine<C> combine;
  for (ra_index_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = out + r * n;
    NnSoftmaxAcc<C> acc = {neg_inf, C(0)};
    C v[NN_ITEMS];
    if (held) {
#pragma unroll
      for (int k = 0; k < NN_ITEMS; ++k) {
        const ra_index_t j = threadIdx.x + (ra_index_t)k * blockDim.x;
        v[k] = j < n ? C(xr[j]) : neg_inf;
      }
      C m = neg_inf;
      int valid = 0;
#pragma unroll
      for (int k = 0; k < NN_ITEMS; ++k) {
        valid += threadIdx.x + (ra_index_t)k * blockDim.x < n;
        m = (v[k] > m || v[k] != v[k]) ? v[k] : m;
      }
      C s = C(0);
      if (m == neg_inf) {
        s = C(valid);  // only -inf (or nothing): counted, as combine counts them
      } else {
#pragma unroll
        for (int k = 0; k < NN_ITEMS; ++k) s += ra_exp(v[k] - m);  // the padding adds exp(-inf) = 0
      }
      acc = {m, s};
    } else {
      for (ra_index_t j = threadIdx.x; j < n; j += blockDim.x) acc = combine(acc, {C(xr[j]), C(1)});
    }
    acc = nn_block_all(acc, combine);
    const C m = acc.m, log_s = ra_log(acc.s), inv_s = C(1) / acc.s;
    if (held) {
#pragma unroll
      for (int k = 0; k < NN_ITEMS; ++k) {
        const ra_index_t j = threadIdx.x + (ra_index_t)k * blockDim.x;
        if (j < n) yr[j] = T(LOG ? v[k] - m - log_s : ra_exp(v[k] - m) * inv_s);
      }
    } else {
      for (ra_index_t j = threadIdx.x; j < n; j += blockDim.x) {
        const C d = C(xr[j]) - m;
        yr[j] = T(LOG ? d - log_s : ra_exp(d) * inv_s);
      }
    }
  }
}

// RMS: y = x / sqrt(mean(x^2) + eps) * w + b; otherwise y = (x - mean) / sqrt(var + eps) * w + b
// (the variance from a second pass over the row, which the cache holds, for accuracy).
template <typename T, bool RMS>
__global__ void norm_rows(T* RA_RESTRICT out, const T* RA_RESTRICT x, const T* RA_RESTRICT weight,
                          const T* RA_RESTRICT bias, ra_index_t rows, ra_index_t n, double eps) {
  typedef typename nn_acc<T>::type C;
  NnSum<C> sum;
  for (ra_index_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = out + r * n;
    C mean = C(0);
    if (!RMS) {
      C s = C(0);
      for (ra_index_t j = threadIdx.x; j < n; j += blockDim.x) s += C(xr[j]);
      mean = nn_block_all(s, sum) / C(n);
    }
    C q = C(0);
    for (ra_index_t j = threadIdx.x; j < n; j += blockDim.x) {
      const C d = C(xr[j]) - mean;
      q += d * d;
    }
    const C rstd = C(1) / ra_sqrt(nn_block_all(q, sum) / C(n) + C(eps));
    for (ra_index_t j = threadIdx.x; j < n; j += blockDim.x) {
      C y = (C(xr[j]) - mean) * rstd;
      if (weight) y *= C(weight[j]);
      if (bias) y += C(bias[j]);
      yr[j] = T(y);
    }
  }
}
