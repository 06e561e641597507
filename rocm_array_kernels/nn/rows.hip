// Row kernels of rocm_array.nn over contiguous rows (the front moves the axis last):
// softmax / log_softmax and layer_norm / rms_norm (optional weight and bias of the row's
// length). blockDim.x threads per row: a multiple of the wave (a row per block, reduced through
// shared memory) or a power of two up to the wave (blockDim.y rows per block, reduced by
// shuffles, no barriers); grid-striding over rows; accumulation in nn_acc<T>.
//
// Rows move as V-element vectors (V = 16 / sizeof(T) where the rows and arrays are 16-byte
// aligned, else 1). A row of at most NN_HOLD_BYTES per thread is held in registers: read
// from memory once, written once (the back sizes the block for that). A longer row is
// streamed by each pass, the later passes mostly from the cache.
#include "common/portability.h"
#include "common/block.h"
#include "nn/nn.h"

// NN_HOLD_BYTES, NN_HOLD_LOADS and NN_ROWS_BLOCK (the most threads a block) are compile options,
// defined once in rocm_array_plugins/nn/gpu.py (ROWS).

// A thread's share of a held row of nv vectors: vector threadIdx.x + l * blockDim.x in v[l]
// for l < mine (32-bit offsets keep the registers for the values).
template <typename T, int V> struct NnHeld {
  static constexpr int LOADS = NN_HOLD_BYTES / (V * (int)sizeof(T)) < NN_HOLD_LOADS
                                   ? NN_HOLD_BYTES / (V * (int)sizeof(T)) : NN_HOLD_LOADS;
  typedef ra_vec<T, V> Vec;
  Vec v[LOADS];
  int mine;

  static RA_DEVICE int at(int l) { return threadIdx.x + l * blockDim.x; }

  RA_DEVICE void fetch(const Vec* RA_RESTRICT row, int nv) {
    const int t = threadIdx.x;
    mine = nv > t ? (nv - t + blockDim.x - 1) / blockDim.x : 0;
#pragma unroll
    for (int l = 0; l < LOADS; ++l)
      if (l < mine) v[l] = row[at(l)];
  }
};

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

// The total of v over the threads of the row, in every one of them (a butterfly within a
// wave: op must be commutative, so that every thread gets the same value).
template <typename T, typename Op> RA_DEVICE T nn_row_all(T v, Op op) {
  if (blockDim.x > RA_WAVE_SIZE) return nn_block_all(v, op);
  for (int d = blockDim.x / 2; d > 0; d /= 2) {
    RaWords<T> u;
    u.value = v;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(u.w) / 4); ++k) u.w[k] = ra_shfl_xor(u.w[k], d);
    v = op(v, u.value);
  }
  return v;
}

// softmax (LOG: log_softmax) of one vector, given the row's max and sum.
template <typename T, bool LOG, int V, typename C>
RA_DEVICE ra_vec<T, V> nn_softmax_out(ra_vec<T, V> a, C m, C log_s, C inv_s) {
  ra_vec<T, V> y;
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const C d = C(a.v[e]) - m;
    y.v[e] = T(LOG ? d - log_s : ra_exp(d) * inv_s);
  }
  return y;
}

// The max of a vector's elements (NaN wins) folded into m.
template <typename T, int V, typename C> RA_DEVICE C nn_max(ra_vec<T, V> a, C m) {
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const C v = C(a.v[e]);
    m = (v > m || v != v) ? v : m;
  }
  return m;
}

// The sum of exp(element - m) of a vector.
template <typename T, int V, typename C> RA_DEVICE C nn_exp_sum(ra_vec<T, V> a, C m) {
  C s = C(0);
#pragma unroll
  for (int e = 0; e < V; ++e) s += ra_exp(C(a.v[e]) - m);
  return s;
}

template <typename T, bool LOG, int V>
__global__ void __launch_bounds__(NN_ROWS_BLOCK)
softmax_rows(T* RA_RESTRICT out, const T* RA_RESTRICT x, ra_index_t rows, ra_index_t n) {
  typedef typename nn_acc<T>::type C;
  typedef NnHeld<T, V> Held;
  typedef typename Held::Vec Vec;
  const C neg_inf = -ra_inf<C>();
  const ra_index_t nv = n / V;
  const bool held = nv <= (ra_index_t)Held::LOADS * blockDim.x;
  NnSoftmaxCombine<C> combine;
  Held t;
  const ra_index_t stride = (ra_index_t)gridDim.x * blockDim.y;
  for (ra_index_t r0 = (ra_index_t)blockIdx.x * blockDim.y; r0 < rows; r0 += stride) {
    // The whole wave takes part in the shuffles: a row past the end is an empty one.
    const ra_index_t r = r0 + threadIdx.y, len = r < rows ? nv : 0;
    const Vec* xr = reinterpret_cast<const Vec*>(x + r * n);
    Vec* yr = reinterpret_cast<Vec*>(out + r * n);
    NnSoftmaxAcc<C> acc = {neg_inf, C(0)};
    if (held) {
      t.fetch(xr, (int)len);
      C m = neg_inf, s = C(0);
#pragma unroll
      for (int l = 0; l < Held::LOADS; ++l)
        if (l < t.mine) m = nn_max(t.v[l], m);
      if (m == neg_inf) {
        s = C(t.mine * V);  // only -inf (or nothing): counted, as combine counts them
      } else {
#pragma unroll
        for (int l = 0; l < Held::LOADS; ++l)
          if (l < t.mine) s += nn_exp_sum(t.v[l], m);
      }
      acc = {m, s};
    } else {
      for (ra_index_t j = threadIdx.x; j < len; j += blockDim.x) {
        const Vec a = xr[j];
        const C m = nn_max(a, neg_inf);
        acc = combine(acc, {m, m == neg_inf ? C(V) : nn_exp_sum(a, m)});
      }
    }
    acc = nn_row_all(acc, combine);
    const C m = acc.m, log_s = ra_log(acc.s), inv_s = C(1) / acc.s;
    if (held) {
#pragma unroll
      for (int l = 0; l < Held::LOADS; ++l)
        if (l < t.mine) yr[Held::at(l)] = nn_softmax_out<T, LOG>(t.v[l], m, log_s, inv_s);
    } else {
      for (ra_index_t j = threadIdx.x; j < len; j += blockDim.x)
        yr[j] = nn_softmax_out<T, LOG>(xr[j], m, log_s, inv_s);
    }
  }
}

// One vector normalized: (x - mean) * rstd * w + b (w, b: the row's weight and bias, or null).
template <typename T, int V, typename C>
RA_DEVICE ra_vec<T, V> nn_norm_out(ra_vec<T, V> a, C mean, C rstd, const ra_vec<T, V>* RA_RESTRICT w,
                                   const ra_vec<T, V>* RA_RESTRICT b, ra_index_t j) {
  ra_vec<T, V> y, wj, bj;
  if (w) wj = w[j];
  if (b) bj = b[j];
#pragma unroll
  for (int e = 0; e < V; ++e) {
    C v = (C(a.v[e]) - mean) * rstd;
    if (w) v *= C(wj.v[e]);
    if (b) v += C(bj.v[e]);
    y.v[e] = T(v);
  }
  return y;
}

// The sum of a vector's elements less c, each raised to the power P (1 or 2).
template <int P, typename T, int V, typename C> RA_DEVICE C nn_sum(ra_vec<T, V> a, C c) {
  C s = C(0);
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const C d = C(a.v[e]) - c;
    s += P == 1 ? d : d * d;
  }
  return s;
}

// RMS: y = x / sqrt(mean(x^2) + eps) * w + b; otherwise y = (x - mean) / sqrt(var + eps) * w + b
// (the variance from the deviations, after the mean, for accuracy).
template <typename T, bool RMS, int V>
__global__ void __launch_bounds__(NN_ROWS_BLOCK)
norm_rows(T* RA_RESTRICT out, const T* RA_RESTRICT x, const T* RA_RESTRICT weight,
          const T* RA_RESTRICT bias, ra_index_t rows, ra_index_t n, double eps) {
  typedef typename nn_acc<T>::type C;
  typedef NnHeld<T, V> Held;
  typedef typename Held::Vec Vec;
  const ra_index_t nv = n / V;
  const bool held = nv <= (ra_index_t)Held::LOADS * blockDim.x;
  const Vec* w = reinterpret_cast<const Vec*>(weight);
  const Vec* b = reinterpret_cast<const Vec*>(bias);
  const C inv_n = C(1) / C(n), c_eps = C(eps);
  NnSum<C> sum;
  Held t;
  const ra_index_t stride = (ra_index_t)gridDim.x * blockDim.y;
  for (ra_index_t r0 = (ra_index_t)blockIdx.x * blockDim.y; r0 < rows; r0 += stride) {
    // The whole wave takes part in the shuffles: a row past the end is an empty one.
    const ra_index_t r = r0 + threadIdx.y, len = r < rows ? nv : 0;
    const Vec* xr = reinterpret_cast<const Vec*>(x + r * n);
    Vec* yr = reinterpret_cast<Vec*>(out + r * n);
    if (held) t.fetch(xr, (int)len);
    C mean = C(0), s = C(0), q = C(0);
    if (!RMS) {
      if (held) {
#pragma unroll
        for (int l = 0; l < Held::LOADS; ++l)
          if (l < t.mine) s += nn_sum<1>(t.v[l], C(0));
      } else {
        for (ra_index_t j = threadIdx.x; j < len; j += blockDim.x) s += nn_sum<1>(xr[j], C(0));
      }
      mean = nn_row_all(s, sum) * inv_n;
    }
    if (held) {
#pragma unroll
      for (int l = 0; l < Held::LOADS; ++l)
        if (l < t.mine) q += nn_sum<2>(t.v[l], mean);
    } else {
      for (ra_index_t j = threadIdx.x; j < len; j += blockDim.x) q += nn_sum<2>(xr[j], mean);
    }
    const C rstd = C(1) / ra_sqrt(nn_row_all(q, sum) * inv_n + c_eps);
    if (held) {
#pragma unroll
      for (int l = 0; l < Held::LOADS; ++l)
        if (l < t.mine) yr[Held::at(l)] = nn_norm_out(t.v[l], mean, rstd, w, b, Held::at(l));
    } else {
      for (ra_index_t j = threadIdx.x; j < len; j += blockDim.x)
        yr[j] = nn_norm_out(xr[j], mean, rstd, w, b, j);
    }
  }
}
