// The own-kernel convolutions of rocm_array.nn: im2col (a convolution becomes a GEMM
// the linalg plugin runs) and its adjoint col2im (a transposed convolution is a GEMM
// then col2im). Both relate an image pixel to a grid position and a kernel tap by
//   img = grid * stride - padding + tap * dilation   (per spatial axis; 1-D has H = 1).
// cols is (N, C * KH * KW, GH * GW), contiguous; images are (N, C, IH, IW), contiguous.
#include "common/portability.h"
#include "nn/nn.h"

struct NnConv {
  ra_index_t n, c, ih, iw, gh, gw, kh, kw, sh, sw, ph, pw, dh, dw;
};

template <typename T>
__global__ void im2col(T* RA_RESTRICT cols, const T* RA_RESTRICT img, NnConv g) {
  const ra_index_t grid = g.gh * g.gw, taps = g.kh * g.kw;
  const ra_index_t total = g.n * g.c * taps * grid;
  for (ra_index_t i = ra_thread_index(); i < total; i += ra_grid_stride()) {
    const ra_index_t l = i % grid, row = (i / grid) % (g.c * taps), b = i / (grid * g.c * taps);
    const ra_index_t c = row / taps, tap = row % taps;
    const ra_index_t y = (l / g.gw) * g.sh - g.ph + (tap / g.kw) * g.dh;
    const ra_index_t x = (l % g.gw) * g.sw - g.pw + (tap % g.kw) * g.dw;
    const bool inside = y >= 0 && y < g.ih && x >= 0 && x < g.iw;
    cols[i] = inside ? img[((b * g.c + c) * g.ih + y) * g.iw + x] : T(0.0f);
  }
}

// Every image pixel gathers the columns that im2col would have copied it to (no atomics).
template <typename T>
__global__ void col2im(T* RA_RESTRICT img, const T* RA_RESTRICT cols, NnConv g) {
  typedef typename nn_acc<T>::type C;
  const ra_index_t pixels = g.ih * g.iw, grid = g.gh * g.gw, taps = g.kh * g.kw;
  const ra_index_t total = g.n * g.c * pixels;
  for (ra_index_t i = ra_thread_index(); i < total; i += ra_grid_stride()) {
    const ra_index_t x = i % g.iw, y = (i / g.iw) % g.ih, bc = i / pixels;
    const T* col = cols + bc * taps * grid;  // rows (c, tap) of image b, channel c
    C acc = C(0);
    for (ra_index_t ty = 0; ty < g.kh; ++ty) {
      const ra_index_t sy = y + g.ph - ty * g.dh;
      if (sy < 0 || sy % g.sh) continue;
      const ra_index_t gy = sy / g.sh;
      if (gy >= g.gh) continue;
      for (ra_index_t tx = 0; tx < g.kw; ++tx) {
        const ra_index_t sx = x + g.pw - tx * g.dw;
        if (sx < 0 || sx % g.sw) continue;
        const ra_index_t gx = sx / g.sw;
        if (gx >= g.gw) continue;
        acc += C(col[(ty * g.kw + tx) * grid + gy * g.gw + gx]);
      }
    }
    img[i] = T(acc);
  }
}
