// The elementwise kernels: one templated kernel per arity and layout, for every functor of
// elementwise/ops.h (rocm_array_plugins/elementwise/gpu.py launches them), plus where, the sequence
// fills of arange/linspace and the triangle of tril/triu.
//
// Layouts (chosen on the host after broadcasting and merging dimensions):
// - *_contiguous: every operand row-major contiguous; 16-byte vector loads and stores
//   when the pointers allow, two vectors in flight per thread;
// - *_strided: any strides (0 for broadcast operands), ra_geometry addressing, 32-bit
//   index arithmetic where the host says counts and extents allow it (`narrow`);
// - binary_rows: a row-major 2-D result whose operands are each full, a row or a column
//   broadcast (a matrix plus a vector): 16-byte accesses, no index division;
// - binary_tiles: a row-major 2-D result with an operand across it (a transpose), read through
//   shared-memory tiles.
// A binary kernel's S says which operand is a Python scalar passed by value (0: none,
// 1: the first, 2: the second): no device memory and no fill for it.
// RA_BLOCK (the most threads a block of the 1-D kernels) is a compile option of the elementwise
// family and of the fused programs (rocm_array_plugins/elementwise/gpu.py, fused.py).
#include "common/portability.h"
#include "common/types.h"
#include "common/cast.h"
#include "common/indexing.h"
#include "elementwise/ops.h"

// float16 and bfloat16 compute in float (one rounding, at the end) unless the functor steps
// in the dtype itself.
template <typename T, bool Widen> struct ra_compute { typedef T type; };
template <> struct ra_compute<float16, true> { typedef float type; };
template <> struct ra_compute<bfloat16, true> { typedef float type; };

template <typename Op, typename T, typename O> struct RaUnary {
  typedef typename ra_compute<T, Op::widen>::type C;
  RA_DEVICE O operator()(T a) const { return ra_cast<O>(Op()(ra_cast<C>(a))); }
};

template <typename Op, typename T, typename O> struct RaBinary {
  typedef typename ra_compute<T, Op::widen>::type C;
  RA_DEVICE O operator()(T a, T b) const { return ra_cast<O>(Op()(ra_cast<C>(a), ra_cast<C>(b))); }
};

// A row with parameters (table.py's ParamUfunc: elu's alpha, affine's scale and shift): its functor
// takes the element and two parameters (0 where the row has one), held in the compute type. The
// unary_params_* kernels take them as doubles; a fused expression's struct, in the compute type.
template <typename Op, typename T, typename O> struct RaParams {
  typedef typename ra_compute<T, Op::widen>::type C;
  C p0, p1;
  RA_DEVICE O operator()(T a) const { return ra_cast<O>(Op()(ra_cast<C>(a), p0, p1)); }
};

// Elements per 16-byte access of the wider of input and output.
template <typename T, typename O> struct RaWidth {
  static constexpr int size = sizeof(T) > sizeof(O) ? sizeof(T) : sizeof(O);
  static constexpr int value = size >= 16 ? 1 : 16 / size;
};

RA_DEVICE bool ra_aligned(const void* p, unsigned long long bytes) {
  return (unsigned long long)p % bytes == 0;
}

// The element offsets of flat index i. `narrow` (set by the host when the element count and
// every operand's extent are below 2^31: the common case) does it all in 32-bit arithmetic,
// several times cheaper than 64-bit divisions and products.
template <int N> RA_DEVICE void ra_ew_offsets(const ra_geometry<N>& g, ra_index_t i, bool narrow,
                                              ra_index_t (&off)[N]) {
  if (!narrow) {
    ra_offsets<N>(g, i, off);
    return;
  }
  int o[N];
#pragma unroll
  for (int k = 0; k < N; ++k) o[k] = 0;
  unsigned int j = (unsigned int)i;
#pragma unroll
  for (int d = RA_MAX_DIMS - 1; d >= 0; --d) {
    if (d < g.ndim) {
      const unsigned int n = (unsigned int)g.shape[d];
      const unsigned int q = j / n;
      const int c = (int)(j - q * n);
      j = q;
#pragma unroll
      for (int k = 0; k < N; ++k) o[k] += c * (int)g.strides[k][d];
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = o[k];
}

// ---- unary ----------------------------------------------------------------------------------
// The loops of the unary kernels, over f (a RaUnary or a RaParams).
template <typename F, typename T, typename O>
RA_DEVICE void ra_unary_contiguous(const F f, O* RA_RESTRICT out, const T* RA_RESTRICT a, ra_index_t n) {
  constexpr int V = RaWidth<T, O>::value;
  const ra_index_t stride = ra_grid_stride();
  ra_index_t head = 0;
  if (V > 1 && ra_aligned(out, V * sizeof(O)) && ra_aligned(a, V * sizeof(T))) {
    const ra_index_t nv = n / V;
    const ra_vec<T, V>* av = (const ra_vec<T, V>*)a;
    ra_vec<O, V>* ov = (ra_vec<O, V>*)out;
    ra_index_t i = ra_thread_index();
    for (; i + stride < nv; i += 2 * stride) {
      const ra_vec<T, V> x0 = av[i], x1 = av[i + stride];
      ra_vec<O, V> y0, y1;
#pragma unroll
      for (int k = 0; k < V; ++k) y0.v[k] = f(x0.v[k]), y1.v[k] = f(x1.v[k]);
      ov[i] = y0, ov[i + stride] = y1;
    }
    if (i < nv) {
      const ra_vec<T, V> x0 = av[i];
      ra_vec<O, V> y0;
#pragma unroll
      for (int k = 0; k < V; ++k) y0.v[k] = f(x0.v[k]);
      ov[i] = y0;
    }
    head = nv * V;
  }
  for (ra_index_t i = head + ra_thread_index(); i < n; i += stride) out[i] = f(a[i]);
}

template <typename F, typename T, typename O>
RA_DEVICE void ra_unary_strided(const F f, O* RA_RESTRICT out, const T* RA_RESTRICT a, ra_index_t n,
                                const ra_geometry<2>& g, int narrow) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    ra_index_t off[2];
    ra_ew_offsets<2>(g, i, narrow, off);
    out[off[0]] = f(a[off[1]]);
  }
}

template <typename Op, typename T, typename O>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
unary_contiguous(O* RA_RESTRICT out, const T* RA_RESTRICT a, ra_index_t n) {
  ra_unary_contiguous(RaUnary<Op, T, O>(), out, a, n);
}

template <typename Op, typename T, typename O>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
unary_strided(O* RA_RESTRICT out, const T* RA_RESTRICT a, ra_index_t n, ra_geometry<2> g,
              int narrow) {
  ra_unary_strided(RaUnary<Op, T, O>(), out, a, n, g, narrow);
}

template <typename Op, typename T, typename O>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
unary_params_contiguous(O* RA_RESTRICT out, const T* RA_RESTRICT a, double p0, double p1, ra_index_t n) {
  typedef typename RaParams<Op, T, O>::C C;
  ra_unary_contiguous(RaParams<Op, T, O>{C(p0), C(p1)}, out, a, n);
}

template <typename Op, typename T, typename O>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
unary_params_strided(O* RA_RESTRICT out, const T* RA_RESTRICT a, double p0, double p1, ra_index_t n,
                     ra_geometry<2> g, int narrow) {
  typedef typename RaParams<Op, T, O>::C C;
  ra_unary_strided(RaParams<Op, T, O>{C(p0), C(p1)}, out, a, n, g, narrow);
}

// ---- binary ---------------------------------------------------------------------------------
template <int S, typename T> RA_DEVICE T ra_pick(const T* p, ra_index_t i, T s, bool first) {
  return S == (first ? 1 : 2) ? s : p[i];
}

template <typename Op, typename T, typename O, int S>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
binary_contiguous(O* RA_RESTRICT out, const T* RA_RESTRICT a, const T* RA_RESTRICT b,
                  T s, ra_index_t n) {
  constexpr int V = RaWidth<T, O>::value;
  const RaBinary<Op, T, O> f;
  const ra_index_t stride = ra_grid_stride();
  ra_index_t head = 0;
  if (V > 1 && ra_aligned(out, V * sizeof(O)) && (S == 1 || ra_aligned(a, V * sizeof(T))) &&
      (S == 2 || ra_aligned(b, V * sizeof(T)))) {
    const ra_index_t nv = n / V;
    const ra_vec<T, V>* av = (const ra_vec<T, V>*)a;
    const ra_vec<T, V>* bv = (const ra_vec<T, V>*)b;
    ra_vec<O, V>* ov = (ra_vec<O, V>*)out;
    ra_vec<T, V> sv;
#pragma unroll
    for (int k = 0; k < V; ++k) sv.v[k] = s;
    ra_index_t i = ra_thread_index();
    for (; i + stride < nv; i += 2 * stride) {
      const ra_vec<T, V> a0 = S == 1 ? sv : av[i], a1 = S == 1 ? sv : av[i + stride];
      const ra_vec<T, V> b0 = S == 2 ? sv : bv[i], b1 = S == 2 ? sv : bv[i + stride];
      ra_vec<O, V> y0, y1;
#pragma unroll
      for (int k = 0; k < V; ++k) y0.v[k] = f(a0.v[k], b0.v[k]), y1.v[k] = f(a1.v[k], b1.v[k]);
      ov[i] = y0, ov[i + stride] = y1;
    }
    if (i < nv) {
      const ra_vec<T, V> a0 = S == 1 ? sv : av[i], b0 = S == 2 ? sv : bv[i];
      ra_vec<O, V> y0;
#pragma unroll
      for (int k = 0; k < V; ++k) y0.v[k] = f(a0.v[k], b0.v[k]);
      ov[i] = y0;
    }
    head = nv * V;
  }
  for (ra_index_t i = head + ra_thread_index(); i < n; i += stride)
    out[i] = f(ra_pick<S>(a, i, s, true), ra_pick<S>(b, i, s, false));
}

template <typename Op, typename T, typename O, int S>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
binary_strided(O* RA_RESTRICT out, const T* RA_RESTRICT a, const T* RA_RESTRICT b, T s,
               ra_index_t n, ra_geometry<3> g, int narrow) {
  const RaBinary<Op, T, O> f;
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    ra_index_t off[3];
    ra_ew_offsets<3>(g, i, narrow, off);
    out[off[0]] = f(ra_pick<S>(a, off[1], s, true), ra_pick<S>(b, off[2], s, false));
  }
}

// A binary operand's place in binary_rows (2 bits each of `kinds`, the first operand's lowest).
enum RaRowKind { RA_FULL = 0, RA_ROW = 1, RA_COLUMN = 2 };

// Operand p's V elements at column vector c of row r: its own (RA_FULL: of the result's shape), the
// row's (RA_ROW: one row, strides (0, 1)) or the row's one value (RA_COLUMN: strides (1, 0)).
template <typename T, int V>
RA_DEVICE ra_vec<T, V> ra_row_load(const T* p, int kind, ra_index_t r, ra_index_t c, ra_index_t vcols) {
  if (kind == RA_COLUMN) {
    ra_vec<T, V> v;
    const T x = p[r];
#pragma unroll
    for (int k = 0; k < V; ++k) v.v[k] = x;
    return v;
  }
  return ((const ra_vec<T, V>*)p)[kind == RA_ROW ? c : r * vcols + c];
}

// A row-major (rows, cols) result of operands each full, a row or a column broadcast (the host
// checks: cols a multiple of V, every pointer 16-byte aligned): 16-byte accesses and no index
// division, where binary_strided divides each flat index (a (16384, 16384) + (16384,) float32
// sum ran at 53% of the H200's copy bandwidth through it, PyTorch's at 66%). Block rows walk the
// rows, two at a time in flight; a row's vectors are spread over the threads of gridDim.x blocks.
template <typename Op, typename T, typename O, int S>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
binary_rows(O* RA_RESTRICT out, const T* RA_RESTRICT a, const T* RA_RESTRICT b, T s,
            ra_index_t rows, ra_index_t cols, int kinds) {
  constexpr int V = RaWidth<T, O>::value;
  const RaBinary<Op, T, O> f;
  const int ka = kinds & 3, kb = (kinds >> 2) & 3;
  const ra_index_t vcols = cols / V, step = gridDim.y;
  ra_vec<T, V> sv;
#pragma unroll
  for (int k = 0; k < V; ++k) sv.v[k] = s;
  ra_vec<O, V>* ov = (ra_vec<O, V>*)out;
  for (ra_index_t c = (ra_index_t)blockIdx.x * blockDim.x + threadIdx.x; c < vcols;
       c += (ra_index_t)gridDim.x * blockDim.x) {
    ra_index_t r = blockIdx.y;
    for (; r + step < rows; r += 2 * step) {
      const ra_vec<T, V> a0 = S == 1 ? sv : ra_row_load<T, V>(a, ka, r, c, vcols),
                         a1 = S == 1 ? sv : ra_row_load<T, V>(a, ka, r + step, c, vcols);
      const ra_vec<T, V> b0 = S == 2 ? sv : ra_row_load<T, V>(b, kb, r, c, vcols),
                         b1 = S == 2 ? sv : ra_row_load<T, V>(b, kb, r + step, c, vcols);
      ra_vec<O, V> y0, y1;
#pragma unroll
      for (int k = 0; k < V; ++k) y0.v[k] = f(a0.v[k], b0.v[k]), y1.v[k] = f(a1.v[k], b1.v[k]);
      ov[r * vcols + c] = y0, ov[(r + step) * vcols + c] = y1;
    }
    if (r < rows) {
      const ra_vec<T, V> a0 = S == 1 ? sv : ra_row_load<T, V>(a, ka, r, c, vcols);
      const ra_vec<T, V> b0 = S == 2 ? sv : ra_row_load<T, V>(b, kb, r, c, vcols);
      ra_vec<O, V> y0;
#pragma unroll
      for (int k = 0; k < V; ++k) y0.v[k] = f(a0.v[k], b0.v[k]);
      ov[r * vcols + c] = y0;
    }
  }
}

// A row-major (rows, cols) result where operand k of the bits of `tiled` runs across it (fast
// along the rows, a transpose: a.T + b): each TILE x TILE tile of it goes through shared memory,
// read coalesced along its rows and used along the result's; the other operands are read at
// (r, c) through their strides, into registers before the barrier, so that both operands' loads
// are in flight at once (read after it, as copy_transpose's one stream is, the kernel took 2.45 ms
// for a 16384^2 float32 a.T + b on an H200, against 1.49 ms for a transposing copy and an add).
// RA_TILE and RA_TILE_ROWS as for copy_transpose: the elementwise family's options
// (rocm_array/runtime/layout.py); the programs that include this file for its functors (fused
// expressions) are compiled without them, and without this kernel.
#ifdef RA_TILE
template <typename Op, typename T, typename O, int S>
__global__ void __launch_bounds__(RA_TILE * RA_TILE_ROWS)
binary_tiles(O* RA_RESTRICT out, const T* RA_RESTRICT a, const T* RA_RESTRICT b, T s, ra_index_t rows,
             ra_index_t cols, ra_index_t a_row, ra_index_t a_col, ra_index_t b_row, ra_index_t b_col, int tiled) {
  constexpr int K = RA_TILE / RA_TILE_ROWS;  // the rows of a tile each thread handles
  __shared__ T ta[RA_TILE][RA_TILE + 1];
  __shared__ T tb[RA_TILE][RA_TILE + 1];
  const RaBinary<Op, T, O> f;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool tile_a = S != 1 && (tiled & 1), tile_b = S != 2 && (tiled & 2);
  for (ra_index_t c0 = (ra_index_t)blockIdx.x * RA_TILE; c0 < cols; c0 += (ra_index_t)gridDim.x * RA_TILE) {
    for (ra_index_t r0 = (ra_index_t)blockIdx.y * RA_TILE; r0 < rows; r0 += (ra_index_t)gridDim.y * RA_TILE) {
      T xa[K], xb[K];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int j = ty + k * RA_TILE_ROWS;
        const ra_index_t tr = r0 + tx, tc = c0 + j;  // (tr, tc) of the tiled operands into [j][tx]
        if (tr < rows && tc < cols) {
          if (tile_a) ta[j][tx] = a[tr * a_row + tc * a_col];
          if (tile_b) tb[j][tx] = b[tr * b_row + tc * b_col];
        }
        const ra_index_t r = r0 + j, c = c0 + tx;  // (r, c) of the others, this thread's result
        if (r < rows && c < cols) {
          if (S != 1 && !tile_a) xa[k] = a[r * a_row + c * a_col];
          if (S != 2 && !tile_b) xb[k] = b[r * b_row + c * b_col];
        }
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int j = ty + k * RA_TILE_ROWS;
        const ra_index_t r = r0 + j, c = c0 + tx;
        if (r < rows && c < cols) {
          const T x = S == 1 ? s : tile_a ? ta[tx][j] : xa[k];
          const T y = S == 2 ? s : tile_b ? tb[tx][j] : xb[k];
          out[r * cols + c] = f(x, y);
        }
      }
      __syncthreads();
    }
  }
}
#endif  // RA_TILE

// ---- where ----------------------------------------------------------------------------------
template <typename T>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
where_contiguous(T* RA_RESTRICT out, const bool* RA_RESTRICT c, const T* RA_RESTRICT a,
                 const T* RA_RESTRICT b, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) out[i] = c[i] ? a[i] : b[i];
}

template <typename T>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
where_strided(T* RA_RESTRICT out, const bool* RA_RESTRICT c, const T* RA_RESTRICT a,
              const T* RA_RESTRICT b, ra_index_t n, ra_geometry<4> g, int narrow) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    ra_index_t off[4];
    ra_ew_offsets<4>(g, i, narrow, off);
    out[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
  }
}

// ---- arange / linspace ------------------------------------------------------------------------
// Integers: start + i * step modulo 2^64, wrapped into T.
template <typename T>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
sequence_int(T* RA_RESTRICT out, ra_index_t n, unsigned long long start, unsigned long long step) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride())
    out[i] = (T)(start + (unsigned long long)i * step);
}

// start + step * i in double, cast to T.
template <typename T>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
sequence_real(T* RA_RESTRICT out, ra_index_t n, double start, double step) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride())
    out[i] = ra_cast<T>(start + step * (double)i);
}

template <typename T>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
sequence_complex(T* RA_RESTRICT out, ra_index_t n, complex128 start, complex128 step) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride())
    out[i] = ra_cast<T>(start + step * complex128((double)i, 0.0));
}

// ---- tril / triu ------------------------------------------------------------------------------
// out (contiguous, x's shape) = x where column - row >= k (upper) or <= k (lower), else 0.
template <typename T>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
triangle(T* RA_RESTRICT out, const T* RA_RESTRICT x, ra_index_t n, ra_index_t rows,
         ra_index_t cols, ra_index_t k, int upper, ra_geometry<1> g) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    const ra_index_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    ra_index_t off[1];
    ra_offsets<1>(g, i, off);
    out[i] = keep ? x[off[0]] : T(0);
  }
}
