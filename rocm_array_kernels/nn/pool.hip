// Pooling and nearest upsampling of rocm_array.nn on contiguous (planes, H, W) arrays
// (planes = N * C; the 1-D forms have H = 1), accumulation in nn_acc<T>. Pooling: the
// general kernel makes one output per thread, reading its window directly (adjacent
// threads read adjacent columns); pool2d_tiled serves non-overlapping windows with
// vector loads.
#include "common/portability.h"
#include "nn/nn.h"

struct NnPool {
  ra_index_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

// MAX: NaN propagates (as torch.max_pool2d); AVG: divided by the window's size, counting
// padding when include_pad, else by the number of input elements it covers. I is the index
// type: 32-bit where the sizes allow (64-bit division costs several times more).
template <typename T, bool MAX, typename I>
RA_DEVICE void nn_pool_body(T* RA_RESTRICT out, const T* RA_RESTRICT x, const NnPool& q, int include_pad) {
  typedef typename nn_acc<T>::type C;
  const I ow = (I)q.ow, oh = (I)q.oh, h = (I)q.h, w = (I)q.w, kh = (I)q.kh, kw = (I)q.kw;
  const I n = (I)(q.planes * q.oh * q.ow);
  for (I i = (I)ra_thread_index(); i < n; i += (I)ra_grid_stride()) {
    const I ox = i % ow, rest = i / ow, oy = rest % oh, plane = rest / oh;
    const T* xp = x + (ra_index_t)plane * h * w;
    const I y0 = oy * (I)q.sh - (I)q.ph, x0 = ox * (I)q.sw - (I)q.pw;
    C acc = MAX ? -ra_inf<C>() : C(0);
    I count = 0;
    for (I dy = 0; dy < kh; ++dy) {
      const I yy = y0 + dy;
      if (yy < 0 || yy >= h) continue;
      for (I dx = 0; dx < kw; ++dx) {
        const I xx = x0 + dx;
        if (xx < 0 || xx >= w) continue;
        const C v = C(xp[yy * w + xx]);
        if (MAX) acc = (v > acc || v != v) ? v : acc;
        else acc += v;
        ++count;
      }
    }
    if (!MAX) {
      if (include_pad) {  // the window clipped to the padded input, as torch counts it
        const I y1 = y0 + kh < h + (I)q.ph ? y0 + kh : h + (I)q.ph;
        const I x1 = x0 + kw < w + (I)q.pw ? x0 + kw : w + (I)q.pw;
        count = (y1 - y0) * (x1 - x0);
      }
      acc = acc / C(count);
    }
    out[i] = T(acc);
  }
}

template <typename T, bool MAX>
__global__ void pool2d(T* RA_RESTRICT out, const T* RA_RESTRICT x, NnPool p, int include_pad) {
  if (p.planes * p.h * p.w < 0x7fffffffLL && p.planes * p.oh * p.ow < 0x7fffffffLL)
    nn_pool_body<T, MAX, int>(out, x, p, include_pad);
  else
    nn_pool_body<T, MAX, ra_index_t>(out, x, p, include_pad);
}

// The common case kernel == stride == K, no padding, with the input and output rows
// V-aligned: a thread makes V adjacent outputs of one output row from K vector loads of
// each of its K input rows, and stores them as one vector. The loads stream (the input
// is read once: about 3% faster on an H200 for an input from DRAM). 32-bit indices (the
// back checks the input fits).
template <typename T, bool MAX, int K, int V>
__global__ void pool2d_tiled(T* RA_RESTRICT out, const T* RA_RESTRICT x, NnPool p) {
  typedef typename nn_acc<T>::type C;
  typedef ra_vec<T, V> Vec;
  const int ov = (int)p.ow / V, oh = (int)p.oh, h = (int)p.h, wv = (int)p.w / V;
  const int n = (int)p.planes * oh * ov;
  for (int i = (int)ra_thread_index(); i < n; i += (int)ra_grid_stride()) {
    const int g = i % ov, row = i / ov, oy = row % oh, plane = row / oh;
    const Vec* src = reinterpret_cast<const Vec*>(x) + (plane * h + oy * K) * wv + g * K;
    C acc[V];
#pragma unroll
    for (int o = 0; o < V; ++o) acc[o] = MAX ? -ra_inf<C>() : C(0);
#pragma unroll
    for (int dy = 0; dy < K; ++dy) {
#pragma unroll
      for (int c = 0; c < K; ++c) {
        const Vec a = ra_load_once(src + dy * wv + c);  // each input element is read once
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const int o = (c * V + e) / K;  // the input column's output (constant once unrolled)
          const C v = C(a.v[e]);
          if (MAX) acc[o] = (v > acc[o] || v != v) ? v : acc[o];
          else acc[o] += v;
        }
      }
    }
    Vec y;
#pragma unroll
    for (int o = 0; o < V; ++o) y.v[o] = T(MAX ? acc[o] : acc[o] / C(K * K));
    reinterpret_cast<Vec*>(out)[i] = y;
  }
}

// out[plane, y, x] = in[plane, floor(y * sy), floor(x * sx)] with float scales, as torch computes them.
template <typename T>
__global__ void upsample_nearest(T* RA_RESTRICT out, const T* RA_RESTRICT x, NnPool p, float sy, float sx) {
  const ra_index_t n = p.planes * p.oh * p.ow;
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    const ra_index_t ox = i % p.ow, oy = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    ra_index_t yy = (ra_index_t)floorf((float)oy * sy), xx = (ra_index_t)floorf((float)ox * sx);
    yy = yy < p.h - 1 ? yy : p.h - 1;
    xx = xx < p.w - 1 ? xx : p.w - 1;
    out[i] = x[(plane * p.h + yy) * p.w + xx];
  }
}
