// Pooling and nearest upsampling of rocm_array.nn on contiguous (planes, H, W) arrays
// (planes = N * C; the 1-D forms have H = 1): one thread per output element, the window
// read directly (adjacent threads read adjacent columns), accumulation in nn_acc<T>.
#include "common/portability.h"
#include "nn/nn.h"

struct NnPool {
  ra_index_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

// MAX: NaN propagates (as torch.max_pool2d); AVG: divided by the window's size, counting
// padding when include_pad, else by the number of input elements it covers.
template <typename T, bool MAX>
__global__ void pool2d(T* RA_RESTRICT out, const T* RA_RESTRICT x, NnPool p, int include_pad) {
  typedef typename nn_acc<T>::type C;
  const ra_index_t n = p.planes * p.oh * p.ow;
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    const ra_index_t ox = i % p.ow, oy = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    const T* xp = x + plane * p.h * p.w;
    const ra_index_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
    C acc = MAX ? -ra_inf<C>() : C(0);
    ra_index_t count = 0;
    for (ra_index_t dy = 0; dy < p.kh; ++dy) {
      const ra_index_t yy = y0 + dy;
      if (yy < 0 || yy >= p.h) continue;
      for (ra_index_t dx = 0; dx < p.kw; ++dx) {
        const ra_index_t xx = x0 + dx;
        if (xx < 0 || xx >= p.w) continue;
        const C v = C(xp[yy * p.w + xx]);
        if (MAX) acc = (v > acc || v != v) ? v : acc;
        else acc += v;
        ++count;
      }
    }
    if (!MAX) {
      if (include_pad) {  // the window clipped to the padded input, as torch counts it
        const ra_index_t y1 = y0 + p.kh < p.h + p.ph ? y0 + p.kh : p.h + p.ph;
        const ra_index_t x1 = x0 + p.kw < p.w + p.pw ? x0 + p.kw : p.w + p.pw;
        count = (y1 - y0) * (x1 - x0);
      }
      acc = acc / C(count);
    }
    out[i] = T(acc);
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
