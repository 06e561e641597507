// Reductions and scans with identity / map / combine / finalize slots.
//
// A reduction row of rocm_array_plugins/reduction/table.py names three functors of this file:
// `map` turns an element (and its index along the reduced axes) into an accumulator
// of compute type C, `combine` joins two accumulators (and gives the identity), and
// `finalize` turns the accumulator into the output type (welford_op also folds the elements a
// thread loaded together at once: ra_fold). Kernels are instantiated as
// reduce_inner<In, C, Out, Map, Combine, Finalize> and likewise, the functors by their names in
// namespace ra_red (ra_red::add_op): a reduction of a fused expression compiles this file after
// elementwise/ops.h, whose add_op, mul_op, and_op, or_op and ra_isnan share their names.
//
// Two layouts, each one pass or two (the host decides, see rocm_array_plugins/reduction/gpu.py):
// - reduce_inner (a contiguous run per output: 16-byte vector loads) and
//   reduce_inner_strided: one block per output (the reduced elements of one output are
//   close together); long rows are cut into `splits` chunks whose accumulators a second
//   launch, reduce_partial_rows, combines.
// - reduce_outer and reduce_outer_vector (each thread takes 16 bytes of neighbouring
//   columns): one thread per output column (neighbouring outputs are neighbours in
//   memory, so a wave's loads are coalesced), the block's rows of threads combined
//   through shared memory; long columns are cut into chunks likewise, combined by
//   reduce_partial_columns.
// Flag: RA_PARTIAL_OUT (a first pass writes accumulators, not finalized values).
#include "common/portability.h"
#include "common/types.h"
#include "common/cast.h"
#include "common/indexing.h"
#include "common/block.h"

// RA_PARTIAL_OUT and RA_BLOCK (the most threads a block of the kernels but scan_tiles) are compile
// options, defined once in rocm_array_plugins/reduction/gpu.py.

namespace ra_red {

// ---- limits and NaN tests --------------------------------------------------------------
template <typename T> struct RaLimits {
  RA_DEVICE static T lowest() { return T(0); }
  RA_DEVICE static T highest() { return T(0); }
};
#define RA_LIMITS(T, LO, HI) \
  template <> struct RaLimits<T> { RA_DEVICE static T lowest() { return LO; } RA_DEVICE static T highest() { return HI; } };
RA_LIMITS(int8_t, -128, 127)
RA_LIMITS(int16_t, -32768, 32767)
RA_LIMITS(int32_t, -2147483647 - 1, 2147483647)
RA_LIMITS(int64_t, -9223372036854775807LL - 1, 9223372036854775807LL)
RA_LIMITS(uint8_t, 0, 255)
RA_LIMITS(uint16_t, 0, 65535)
RA_LIMITS(uint32_t, 0u, 4294967295u)
RA_LIMITS(uint64_t, 0ull, 18446744073709551615ull)
RA_LIMITS(float, -ra_bit_cast<float>(0x7f800000u), ra_bit_cast<float>(0x7f800000u))
RA_LIMITS(double, -ra_bit_cast<double>(0x7ff0000000000000ull), ra_bit_cast<double>(0x7ff0000000000000ull))
#undef RA_LIMITS

template <typename T> RA_DEVICE bool ra_isnan(T v) {
  if constexpr (ra_is_complex<T>::value) return v.re != v.re || v.im != v.im;
  else return v != v;
}

// ---- accumulators --------------------------------------------------------------------------
template <typename C> struct RaCount { C sum; ra_index_t n; };             // mean
template <typename C> struct RaWelford { ra_index_t n; C mean, m2; };      // var, std
template <typename C> struct RaArg { C v; ra_index_t i; };                 // argmax, argmin

// ---- map slots: element (and its index along the reduced axes) -> accumulator --------------
struct identity_op {
  template <typename C> using acc = C;
  template <typename C, typename In> RA_DEVICE static C map(In x, ra_index_t) { return ra_cast<C>(x); }
  template <typename Out, typename A> RA_DEVICE static Out finalize(A a, double) { return ra_cast<Out>(a); }
};
struct nonzero_op {  // all, any: C is bool
  template <typename C> using acc = C;
  template <typename C, typename In> RA_DEVICE static C map(In x, ra_index_t) { return ra_cast<bool>(x); }
};
struct nonzero_index_op {  // count_nonzero, and the positions of nonzero (a scan)
  template <typename C> using acc = C;
  template <typename C, typename In> RA_DEVICE static C map(In x, ra_index_t) { return C(ra_cast<bool>(x) ? 1 : 0); }
};
struct count_op {
  template <typename C> using acc = RaCount<C>;
  template <typename C, typename In> RA_DEVICE static RaCount<C> map(In x, ra_index_t) { return {ra_cast<C>(x), 1}; }
};
// The sum of N values (a power of two): four running partials (element i into partial i % 4), then
// their pairs; a short dependency chain.
template <typename C, int N> RA_DEVICE C ra_sum_four(const C (&v)[N]) {
  constexpr int P = N < 4 ? N : 4;
  C p[P];
#pragma unroll
  for (int i = 0; i < N; ++i) p[i % P] = i < P ? v[i] : p[i % P] + v[i];
#pragma unroll
  for (int w = 1; w < P; w *= 2)
#pragma unroll
    for (int j = 0; j + w < P; j += 2 * w) p[j] = p[j] + p[j + w];
  return p[0];
}
struct welford_op {
  template <typename C> using acc = RaWelford<C>;
  // m2 starts at v - v: 0 for a number, NaN for NaN or inf, so one such element still poisons var/std.
  template <typename C, typename In> RA_DEVICE static RaWelford<C> map(In x, ra_index_t) {
    const C v = ra_cast<C>(x);
    return {1, v, v - v};
  }
  // The most elements a run (see fold): four vectors of float32 or double, one of the 8- and 16-element
  // vectors of 16-bit and 8-bit types (64 doubles of int8 at once would take their registers).
  static constexpr int RUN = 16;
  // U vectors of K elements (ra_fold): one run of all of them into acc[0], or past RUN one run a
  // vector, vector u's into acc[u]; a run joins its accumulator by Chan's combine. Per element that
  // is two passes over registers, not a division (and two early-outs) as map and combine cost.
  template <typename C, typename Combine, int U, int K, typename In>
  RA_DEVICE static void fold(RaWelford<C>* acc, const ra_vec<In, K> (&x)[U]) {
    const Combine op;
    if constexpr (U * K <= RUN) {
      C v[U * K];
#pragma unroll
      for (int i = 0; i < U * K; ++i) v[i] = ra_cast<C>(x[i / K].v[i % K]);
      acc[0] = op(acc[0], run<C, U * K>(v));
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        C v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = ra_cast<C>(x[u].v[k]);
        acc[u] = op(acc[u], run<C, K>(v));
      }
    }
  }
  // N values' count, mean and m2 (N a power of two, so x * (1/N) is exact: the mean is the sum's
  // rounding divided by N, and it cannot overflow where the sum would). m2 sums the squared
  // deviations from that mean (NumPy's two passes): a NaN or inf still makes it NaN.
  template <typename C, int N> RA_DEVICE static RaWelford<C> run(const C (&v)[N]) {
    static_assert((N & (N - 1)) == 0, "a run is a power of two elements");
    constexpr C scale = C(1) / C(N);
    C d[N];
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] = v[i] * scale;
    const C mean = ra_sum_four(d);
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] = (v[i] - mean) * (v[i] - mean);
    return {N, mean, ra_sum_four(d)};
  }
};
struct value_index_op {
  template <typename C> using acc = RaArg<C>;
  template <typename C, typename In> RA_DEVICE static RaArg<C> map(In x, ra_index_t i) { return {ra_cast<C>(x), i}; }
};

// ---- combine slots: identity and an associative join -----------------------------------------
struct add_op {
  template <typename A> RA_DEVICE static A identity() { return A(0); }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return a + b; }
};
struct mul_op {
  template <typename A> RA_DEVICE static A identity() { return A(1); }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return a * b; }
};
struct and_op {
  template <typename A> RA_DEVICE static A identity() { return true; }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return a && b; }
};
struct or_op {
  template <typename A> RA_DEVICE static A identity() { return false; }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return a || b; }
};
// max and min propagate NaN, as the standard asks.
struct max_op {
  template <typename A> RA_DEVICE static A identity() { return RaLimits<A>::lowest(); }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return ra_isnan(a) || a > b ? a : b; }
};
struct min_op {
  template <typename A> RA_DEVICE static A identity() { return RaLimits<A>::highest(); }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return ra_isnan(a) || a < b ? a : b; }
};
struct count_add_op {
  template <typename A> RA_DEVICE static A identity() { return {0, 0}; }
  template <typename A> RA_DEVICE A operator()(A a, A b) const { return {a.sum + b.sum, a.n + b.n}; }
};
// Chan et al.'s pairwise update: exact counts, no cancellation between the partial sums.
struct welford_combine_op {
  template <typename A> RA_DEVICE static A identity() { return {0, 0, 0}; }
  template <typename A> RA_DEVICE A operator()(A a, A b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    typedef decltype(a.mean) C;
    const ra_index_t n = a.n + b.n;
    const C delta = b.mean - a.mean, wb = C(b.n) / C(n);
    return {n, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * (C(a.n) * wb)};
  }
};
// argmax / argmin: NaN beats every number (NumPy's first NaN); ties go to the first index.
// The winner is chosen field by field: choosing between the two structs whole, hiprtc kept them
// in 40 bytes of scratch a lane (gfx90a, gfx942, gfx1030) for the floating types.
template <bool MAX> struct RaArgCombine {
  template <typename A> RA_DEVICE static A identity() {
    typedef decltype(A().v) C;
    return {MAX ? RaLimits<C>::lowest() : RaLimits<C>::highest(), RaLimits<int64_t>::highest()};
  }
  template <typename A> RA_DEVICE A operator()(A a, A b) const {
    const bool an = ra_isnan(a.v), bn = ra_isnan(b.v);
    const bool first = an || bn ? an && (!bn || a.i < b.i)
                       : a.v == b.v ? a.i < b.i : (MAX ? a.v > b.v : a.v < b.v);
    return {first ? a.v : b.v, first ? a.i : b.i};
  }
};
struct argmax_op : RaArgCombine<true> {};
struct argmin_op : RaArgCombine<false> {};

// ---- finalize slots: accumulator -> output (param: var/std's correction) ---------------------
template <typename C> RA_DEVICE C ra_div_count(C s, ra_index_t n) {
  if constexpr (ra_is_complex<C>::value) {
    typedef typename C::value_type R;
    return C(s.re / R(n), s.im / R(n));
  } else {
    return s / C(n);
  }
}
struct mean_op {
  template <typename Out, typename A> RA_DEVICE static Out finalize(A a, double) { return ra_cast<Out>(ra_div_count(a.sum, a.n)); }
};
struct var_op {
  template <typename Out, typename A> RA_DEVICE static Out finalize(A a, double correction) {
    typedef decltype(a.mean) C;
    return ra_cast<Out>(a.m2 / (C(a.n) - C(correction)));
  }
};
struct std_op {
  template <typename Out, typename A> RA_DEVICE static Out finalize(A a, double correction) {
    typedef decltype(a.mean) C;
    return ra_cast<Out>(sqrt(a.m2 / (C(a.n) - C(correction))));
  }
};
struct index_op {
  template <typename Out, typename A> RA_DEVICE static Out finalize(A a, double) { return ra_cast<Out>(a.i); }
};

}  // namespace ra_red

// ---- folds: the elements a thread loaded together, into its accumulators -----------------------
// U vectors of K elements, element (u, k) at index at(u, k), folded into acc[0..U): vector u into
// acc[u], element after element (map, then combine); a Map that folds them its own way says so here
// (welford_op::fold). The eager kernels and the row kernels (elementwise/rows.hip) fold through it,
// so they fold alike.
template <typename Map> struct RaFoldsRuns { static constexpr bool value = false; };
template <> struct RaFoldsRuns<ra_red::welford_op> { static constexpr bool value = true; };
template <typename C, typename Map, typename Combine, int U, int K, typename In, typename At>
RA_DEVICE void ra_fold(typename Map::template acc<C>* acc, const ra_vec<In, K> (&x)[U], At at) {
  if constexpr (RaFoldsRuns<Map>::value) {
    Map::template fold<C, Combine>(acc, x);
  } else {
    const Combine op;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < K; ++k) acc[u] = op(acc[u], Map::template map<C>(x[u].v[k], at(u, k)));
  }
}

// ---- reduction kernels ---------------------------------------------------------------------
// Each kernel holds one code path, so a first call compiles only the path it runs (one
// kernel with every path took NVRTC 0.5-1 s; the contiguous first pass alone, 0.1-0.2 s).
// The first passes read elements (mapped); the second passes read the first passes'
// accumulators, laid out as rows of `len` (reduce_partial_rows: row r's at r * len) or as
// `len` rows of columns (reduce_partial_columns: column c's at c + s * cols).

// Where element r of a range lies: as a geometry says (first passes) or at r * stride.
struct RaGeometryAt {
  const ra_geometry<1>& g;
  RA_DEVICE ra_index_t operator()(ra_index_t r) const {
    if (g.ndim == 1) return r * g.strides[0][0];
    ra_index_t off[1];
    ra_offsets<1>(g, r, off);
    return off[0];
  }
};
struct RaLinearAt {
  ra_index_t stride;
  RA_DEVICE ra_index_t operator()(ra_index_t r) const { return r * stride; }
};

// The value at p, read through volatile words: from L2, never a line an SM's L1 kept from
// before another block's write (the last block of reduce_all reads its peers' partials).
template <bool WORDS> struct RaCoherentWord { typedef unsigned int type; };
template <> struct RaCoherentWord<false> { typedef unsigned char type; };
template <typename T> RA_DEVICE T ra_load_coherent(const T* p) {
  typedef typename RaCoherentWord<sizeof(T) % 4 == 0>::type W;
  T v;
  const volatile W* src = (const volatile W*)p;
  W* dst = (W*)&v;
#pragma unroll
  for (int k = 0; k < (int)(sizeof(T) / sizeof(W)); ++k) dst[k] = src[k];
  return v;
}

// An element (mapped) or an accumulator of a first pass (PARTIAL) at `off`; COHERENT: read
// through ra_load_coherent (accumulators written by other blocks of the same launch).
template <typename In, typename C, typename Map, bool PARTIAL, bool COHERENT = false>
RA_DEVICE typename Map::template acc<C> ra_load(const void* in, ra_index_t off, ra_index_t r) {
  typedef typename Map::template acc<C> A;
  if constexpr (COHERENT) return ra_load_coherent((const A*)in + off);
  else if constexpr (PARTIAL) return ((const A*)in)[off];
  else return Map::template map<C>(((const In*)in)[off], r);
}

// Elements (PARTIAL: first passes' accumulators) r + u * nt, u < 4, each at base + at(its r), folded
// into acc[0..4): each into its own, or elements as one run where the Map folds runs (ra_fold).
template <typename In, typename C, typename Map, typename Combine, bool PARTIAL, bool COHERENT = false, typename At>
RA_DEVICE void ra_fold_four(typename Map::template acc<C>* acc, const void* in, ra_index_t base, At at, ra_index_t r,
                            int nt) {
  if constexpr (!PARTIAL && RaFoldsRuns<Map>::value) {
    ra_vec<In, 1> x[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) x[u].v[0] = ((const In*)in)[base + at(r + u * nt)];
    Map::template fold<C, Combine>(acc, x);
  } else {
    const Combine op;
#pragma unroll
    for (int u = 0; u < 4; ++u)
      acc[u] = op(acc[u], ra_load<In, C, Map, PARTIAL, COHERENT>(in, base + at(r + u * nt), r + u * nt));
  }
}

template <typename Out, typename Fin, typename A>
RA_DEVICE void ra_store(void* out, ra_index_t at, A acc, int flags, double param) {
  if (flags & RA_PARTIAL_OUT) ((A*)out)[at] = acc;
  else ((Out*)out)[at] = Fin::template finalize<Out>(acc, param);
}

// A contiguous run of values: read from memory (element i at p[i]), or computed (a fused
// expression's, see elementwise/fused.hip). at(i): element i; vector<V>(v0, j): elements
// v0 + j*V .. v0 + j*V + V - 1; phase(i): where element i lies, in elements, modulo a vector.
template <typename In> struct RaMemory {
  typedef In value_type;
  const In* p;
  RA_DEVICE In at(ra_index_t i) const { return p[i]; }
  template <int V> RA_DEVICE ra_vec<In, V> vector(ra_index_t v0, ra_index_t j) const {
    return ((const ra_vec<In, V>*)(p + v0))[j];
  }
  RA_DEVICE unsigned long long phase(ra_index_t i) const { return (unsigned long long)(p + i) / sizeof(In); }
};

// This thread's share (stride: the block) of elements [lo, hi) of the contiguous run `src`:
// a scalar head up to 16-byte alignment, vector loads, a scalar tail.
template <typename C, typename Map, typename Combine, typename Src>
RA_DEVICE typename Map::template acc<C> ra_row_contiguous(const Src& src, ra_index_t lo, ra_index_t hi) {
  typedef typename Map::template acc<C> A;
  typedef typename Src::value_type In;
  const Combine op;
  const int t = threadIdx.x, nt = blockDim.x;
  A acc[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) acc[u] = Combine::template identity<A>();
  constexpr int V = sizeof(In) >= 16 ? 1 : 16 / sizeof(In);
  ra_index_t head = (ra_index_t)((V - src.phase(lo) % V) % V);
  if (head > hi - lo) head = hi - lo;
  if (t < head) acc[0] = op(acc[0], Map::template map<C>(src.at(lo + t), lo + t));
  const ra_index_t v0 = lo + head, nv = (hi - v0) / V;
  ra_index_t j = t;
  for (; j + 3 * nt < nv; j += 4 * nt) {
    ra_vec<In, V> x[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) x[u] = src.template vector<V>(v0, j + u * nt);
    ra_fold<C, Map, Combine>(acc, x, [&](int u, int k) { return v0 + (j + u * nt) * V + k; });
  }
  for (; j < nv; j += nt) {
    const ra_vec<In, V> x[1] = {src.template vector<V>(v0, j)};
    ra_fold<C, Map, Combine>(acc, x, [&](int, int k) { return v0 + j * V + k; });
  }
  for (ra_index_t r = v0 + nv * V + t; r < hi; r += nt) acc[1] = op(acc[1], Map::template map<C>(src.at(r), r));
  return op(op(acc[0], acc[1]), op(acc[2], acc[3]));
}

// This thread's share (stride: nt threads, the block's) of elements [lo, hi) of the row at
// `base`, element r at base + at(r).
template <typename In, typename C, typename Map, typename Combine, bool PARTIAL, typename At, bool COHERENT = false>
RA_DEVICE typename Map::template acc<C> ra_row_strided(const void* in, ra_index_t base, At at, ra_index_t lo,
                                                      ra_index_t hi, int nt) {
  typedef typename Map::template acc<C> A;
  const Combine op;
  const int t = threadIdx.x;
  A acc[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) acc[u] = Combine::template identity<A>();
  ra_index_t r = lo + t;
  for (; r + 3 * nt < hi; r += 4 * nt) ra_fold_four<In, C, Map, Combine, PARTIAL, COHERENT>(acc, in, base, at, r, nt);
  for (; r < hi; r += nt) acc[0] = op(acc[0], ra_load<In, C, Map, PARTIAL, COHERENT>(in, base + at(r), r));
  return op(op(acc[0], acc[1]), op(acc[2], acc[3]));
}

// One block per output row (blockIdx.y, grid-stride) and chunk of it (blockIdx.x): the block's
// combination of its chunk, finalized (or, under RA_PARTIAL_OUT, the accumulator kept).
// Row(row) is the row's first element; Part(base, lo, hi) a thread's share of it.
template <typename A, typename Combine, typename Out, typename Fin, typename Row, typename Part>
RA_DEVICE void ra_reduce_rows(void* out, ra_index_t rows, ra_index_t len, ra_index_t chunk, Row row_at,
                              Part part, int flags, double param) {
  const ra_index_t splits = gridDim.x, s = blockIdx.x;
  const ra_index_t lo = s * chunk, hi = lo + chunk < len ? lo + chunk : len;
  for (ra_index_t row = blockIdx.y; row < rows; row += gridDim.y) {
    A acc = part(row_at(row), lo, hi);
    acc = ra_block_reduce(acc, Combine());
    if (threadIdx.x == 0) ra_store<Out, Fin>(out, (flags & RA_PARTIAL_OUT) ? row * splits + s : row, acc, flags, param);
  }
}

template <typename In, typename C, typename Map, typename Combine> struct RaContiguousPart {
  const In* in;
  RA_DEVICE auto operator()(ra_index_t base, ra_index_t lo, ra_index_t hi) const {
    return ra_row_contiguous<C, Map, Combine>(RaMemory<In>{in + base}, lo, hi);
  }
};
// Rows of a computed run (Src: a fused expression), row r's elements from r * len on; the
// arithmetic of RaContiguousPart on the array the expression would have filled.
template <typename Src, typename C, typename Map, typename Combine> struct RaSourcePart {
  Src src;
  RA_DEVICE auto operator()(ra_index_t base, ra_index_t lo, ra_index_t hi) const {
    return ra_row_contiguous<C, Map, Combine>(src.from(base), lo, hi);
  }
};
template <typename In, typename C, typename Map, typename Combine, bool PARTIAL, typename At> struct RaStridedPart {
  const void* in;
  At at;
  RA_DEVICE auto operator()(ra_index_t base, ra_index_t lo, ra_index_t hi) const {
    return ra_row_strided<In, C, Map, Combine, PARTIAL>(in, base, at, lo, hi, blockDim.x);
  }
};

// The first pass when each output's reduced elements are one contiguous run (red: 1-D, stride 1).
template <typename In, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_inner(void* out, const void* in, ra_index_t rows, ra_index_t len, ra_index_t chunk,
             ra_geometry<1> kept, ra_geometry<1> red, int flags, double param) {
  typedef typename Map::template acc<C> A;
  ra_reduce_rows<A, Combine, Out, Fin>(out, rows, len, chunk, RaGeometryAt{kept},
                                       RaContiguousPart<In, C, Map, Combine>{(const In*)in}, flags, param);
}

// The first pass of reduce_inner over rows of a computed run (a fused expression, appended to this
// file with elementwise/fused.hip): rows contiguous, row r from element r * len.
template <typename Src, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_inner_of(void* out, Src src, ra_index_t rows, ra_index_t len, ra_index_t chunk, int flags,
                double param) {
  typedef typename Map::template acc<C> A;
  ra_reduce_rows<A, Combine, Out, Fin>(out, rows, len, chunk, RaLinearAt{len}, RaSourcePart<Src, C, Map, Combine>{src},
                                       flags, param);
}

// Blocks' writes made visible to the last block's reads (the simulator runs blocks in turn).
#ifdef RA_SIM
#define RA_GRID_FENCE() ((void)0)
#else
#define RA_GRID_FENCE() __threadfence()
#endif

// A full reduction of a contiguous run in one launch: each block's chunk combined into
// part[block], and the last block to finish combines the gridDim.x accumulators as
// reduce_partial_rows would with `fold` threads (the same order, so the bits of the two
// launches), finalizes them, and sets `done` (zero before) back to zero for the next launch.
template <typename Src, typename C, typename Out, typename Map, typename Combine, typename Fin>
RA_DEVICE void ra_reduce_all(void* out, void* part, unsigned int* done, const Src& src, ra_index_t len,
                             ra_index_t chunk, int fold, double param) {
  typedef typename Map::template acc<C> A;
  __shared__ int last;
  const ra_index_t splits = gridDim.x, s = blockIdx.x;
  const ra_index_t lo = s * chunk, hi = lo + chunk < len ? lo + chunk : len;
  A acc = ra_block_reduce(ra_row_contiguous<C, Map, Combine>(src, lo, hi), Combine());
  // The memory model's pattern (as cooperative groups' grid sync): a release fence before the count,
  // an acquire fence in the thread that read the count, before the barrier hands it to its block;
  // then each wave's own (an AMD wave's caches are its CU's, which in WGP mode is not its peers').
  if (threadIdx.x == 0) {
    ((A*)part)[s] = acc;
    RA_GRID_FENCE();
    last = atomicAdd(done, 1u) == (unsigned int)(splits - 1);
    if (last) RA_GRID_FENCE();
  }
  __syncthreads();
  if (!last) return;
  RA_GRID_FENCE();
  acc = (int)threadIdx.x < fold
            ? ra_row_strided<C, C, Map, Combine, true, RaLinearAt, true>(part, 0, RaLinearAt{1}, 0, splits, fold)
            : Combine::template identity<A>();  // (the identity changes no result)
  acc = ra_block_reduce(acc, Combine());
  if (threadIdx.x == 0) {
    ((Out*)out)[0] = Fin::template finalize<Out>(acc, param);
    *done = 0;
  }
}

// A full reduction of an array's contiguous elements in one launch (a mid-size sum's second
// launch cost a few microseconds, a tenth of its time on an H200).
template <typename In, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_all(void* out, void* part, unsigned int* done, const void* in, ra_index_t len,
           ra_index_t chunk, int fold, double param) {
  ra_reduce_all<RaMemory<In>, C, Out, Map, Combine, Fin>(out, part, done, RaMemory<In>{(const In*)in}, len, chunk,
                                                         fold, param);
}

// The same of a computed run (a fused expression).
template <typename Src, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_all_of(void* out, void* part, unsigned int* done, Src src, ra_index_t len, ra_index_t chunk,
              int fold, double param) {
  ra_reduce_all<Src, C, Out, Map, Combine, Fin>(out, part, done, src, len, chunk, fold, param);
}

// The first pass over reduced elements anywhere a geometry says.
template <typename In, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_inner_strided(void* out, const void* in, ra_index_t rows, ra_index_t len, ra_index_t chunk,
                     ra_geometry<1> kept, ra_geometry<1> red, int flags, double param) {
  typedef typename Map::template acc<C> A;
  ra_reduce_rows<A, Combine, Out, Fin>(out, rows, len, chunk, RaGeometryAt{kept},
                                       RaStridedPart<In, C, Map, Combine, false, RaGeometryAt>{in, RaGeometryAt{red}},
                                       flags, param);
}

// The second pass of reduce_inner*: each of `rows` rows of `len` accumulators combined and finalized.
template <typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_partial_rows(void* out, const void* in, ra_index_t rows, ra_index_t len, double param) {
  typedef typename Map::template acc<C> A;
  ra_reduce_rows<A, Combine, Out, Fin>(out, rows, len, len, RaLinearAt{len},
                                       RaStridedPart<C, C, Map, Combine, true, RaLinearAt>{in, RaLinearAt{1}}, 0, param);
}

// Columns [c, c + W) of reduced rows [lo, hi), thread row ty of blockDim.y, combined through
// shared memory. W = 1: one column a thread, element r of column c at column_at(c) + at(r) (a
// first pass reads elements, PARTIAL a second accumulators); W > 1: V neighbouring columns, one
// 16-byte load each row (the first pass of reduce_outer_vector).
template <typename In, typename C, typename Map, typename Combine, bool PARTIAL, int W, typename Out, typename Fin,
          typename Column, typename At>
RA_DEVICE void ra_reduce_outer(void* out, const void* in, ra_index_t cols, ra_index_t len, ra_index_t chunk,
                               Column column_at, At at, int flags, double param) {
  typedef typename Map::template acc<C> A;
  RA_DYNAMIC_SHARED(unsigned long long, ra_outer_smem);
  A* tile = reinterpret_cast<A*>(ra_outer_smem);
  const Combine op;
  const ra_index_t s = blockIdx.y, lo = s * chunk, hi = lo + chunk < len ? lo + chunk : len;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const ra_index_t step = (ra_index_t)gridDim.x * blockDim.x * W;
  // Every thread of the block takes the same number of turns (the loop holds __syncthreads).
  for (ra_index_t cb = (ra_index_t)blockIdx.x * blockDim.x * W; cb < cols; cb += step) {
    const ra_index_t c0 = cb + (ra_index_t)tx * W;
    const bool live = c0 < cols;
    A acc[W];
#pragma unroll
    for (int k = 0; k < W; ++k) acc[k] = Combine::template identity<A>();
    if (live) {
      const ra_index_t base = column_at(c0);
      if constexpr (W > 1) {
        const int nt = blockDim.y;
        ra_index_t r = lo + ty;
        for (; r + 3 * nt < hi; r += 4 * nt) {  // four rows' loads in flight at once
          ra_vec<In, W> x[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) x[u] = *(const ra_vec<In, W>*)((const In*)in + base + at(r + u * nt));
          if constexpr (RaFoldsRuns<Map>::value) {  // (column k's four rows, a run into acc[k])
#pragma unroll
            for (int k = 0; k < W; ++k) {
              const ra_vec<In, 4> column[1] = {{{x[0].v[k], x[1].v[k], x[2].v[k], x[3].v[k]}}};
              Map::template fold<C, Combine>(acc + k, column);
            }
          } else {
#pragma unroll
            for (int u = 0; u < 4; ++u)
#pragma unroll
              for (int k = 0; k < W; ++k) acc[k] = op(acc[k], Map::template map<C>(x[u].v[k], r + u * nt));
          }
        }
        for (; r < hi; r += nt) {
          ra_vec<In, W> x = *(const ra_vec<In, W>*)((const In*)in + base + at(r));
#pragma unroll
          for (int k = 0; k < W; ++k) acc[k] = op(acc[k], Map::template map<C>(x.v[k], r));
        }
      } else {
        ra_index_t r = lo + ty;
        const int nt = blockDim.y;
        A part[4] = {acc[0], acc[0], acc[0], acc[0]};
        for (; r + 3 * nt < hi; r += 4 * nt) ra_fold_four<In, C, Map, Combine, PARTIAL>(part, in, base, at, r, nt);
        for (; r < hi; r += nt) part[0] = op(part[0], ra_load<In, C, Map, PARTIAL>(in, base + at(r), r));
        acc[0] = op(op(part[0], part[1]), op(part[2], part[3]));
      }
    }
#pragma unroll
    for (int k = 0; k < W; ++k) {
      __syncthreads();
      tile[ty * blockDim.x + tx] = acc[k];
      __syncthreads();
      // A tree over the thread rows: pairs, then pairs of pairs.
      for (int h = blockDim.y / 2; h > 0; h /= 2) {
        if (ty < h) tile[ty * blockDim.x + tx] = op(tile[ty * blockDim.x + tx], tile[(ty + h) * blockDim.x + tx]);
        __syncthreads();
      }
      if (ty == 0 && live) {
        const ra_index_t c = c0 + k;
        ra_store<Out, Fin>(out, (flags & RA_PARTIAL_OUT) ? s * cols + c : c, tile[tx], flags, param);
      }
    }
  }
}

// Block (x: columns, y: thread rows); blockIdx.y: the chunk of the reduced range. The first
// pass, one column a thread.
template <typename In, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_outer(void* out, const void* in, ra_index_t cols, ra_index_t len, ra_index_t chunk,
             ra_geometry<1> kept, ra_geometry<1> red, int flags, double param) {
  ra_reduce_outer<In, C, Map, Combine, false, 1, Out, Fin>(out, in, cols, len, chunk, RaGeometryAt{kept},
                                                           RaGeometryAt{red}, flags, param);
}

// The first pass, V = 16 / sizeof(In) neighbouring columns a thread (the host checks that every
// row's V columns are one aligned 16-byte load).
template <typename In, typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_outer_vector(void* out, const void* in, ra_index_t cols, ra_index_t len, ra_index_t chunk,
                    ra_geometry<1> kept, ra_geometry<1> red, int flags, double param) {
  constexpr int V = sizeof(In) >= 16 ? 1 : 16 / sizeof(In);
  ra_reduce_outer<In, C, Map, Combine, false, V, Out, Fin>(out, in, cols, len, chunk, RaGeometryAt{kept},
                                                           RaGeometryAt{red}, flags, param);
}

// The second pass of reduce_outer*: column c of `len` rows of `cols` accumulators combined and finalized.
template <typename C, typename Out, typename Map, typename Combine, typename Fin>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
reduce_partial_columns(void* out, const void* in, ra_index_t cols, ra_index_t len, double param) {
  ra_reduce_outer<C, C, Map, Combine, true, 1, Out, Fin>(out, in, cols, len, len, RaLinearAt{1}, RaLinearAt{cols},
                                                         0, param);
}

// ---- scans along contiguous rows ------------------------------------------------------------
// One pass (read once, write once) with decoupled look-back (Merrill & Garland 2016, as CUB's,
// PyTorch's and rocPRIM's scans): the rows' tiles, row-major, are numbered g = row * tiles + tile,
// and a block takes its g from a counter (tiles in the order blocks start, so a tile waits only on
// tiles whose blocks already run, whatever blocks are resident). A block scans its tile, publishes
// its aggregate at once, then learns the combination of its row's earlier tiles from what they
// published. A row of one tile publishes and reads nothing.
//
// The same bits every run: CUB's look-back stops at whichever earlier prefix is published first, so
// a float scan's grouping (its rounding) follows the blocks' timing. Here every combination has a
// fixed form. The row's tiles are cut into windows of W = RA_WAVE_SIZE tiles, and the windows into
// groups of W windows. A tile publishes its aggregate; the last tile of a window also the window's
// total (a wave scan of its W aggregates), the last tile of a group also the group's total (a wave
// scan of its W window totals). A tile's prefix is the combination of all earlier groups' totals (a
// wave of them at a time, each wave's as a tree, the waves' in order), then of its group's earlier
// windows' totals, then of its window's earlier tiles' aggregates. No published value depends on
// another group's, so nothing chains along the row: a tile waits at most for two rounds of wave-wide
// reads (its window's aggregates; its group's windows' and the earlier groups' totals together), the
// totals of a row's W^3 tiles (2^28 float32 of 8192-element tiles at W = 32) in one.
//
// RA_SCAN_BLOCK (threads) and RA_SCAN_ITEMS (elements a thread of a 4-byte accumulator) are compile
// options (rocm_array_plugins/reduction/gpu.py, which says why those values).
// The tile sits in shared memory with a gap after every 32 elements, or every run of items where a
// thread has more (RA_SCAN_AT): a thread's run then starts in a bank of its own, where unpadded runs
// put 8 threads on each bank, and a wave-wide row of the tile stays on 32 banks.
template <int ITEMS> RA_DEVICE constexpr int ra_scan_at(int i) { return i + i / (ITEMS > 32 ? ITEMS : 32); }
#define RA_SCAN_AT(i) ra_scan_at<ITEMS>(i)
// A tile comes in RA_SCAN_CHUNK elements a thread at a time, each chunk's loads together, then to
// shared memory: a tile of more items than registers hold (a 128-thread block of 64 on NVIDIA;
// 32 a chunk spilled 416 bytes a thread for float64 on sm_90).
#define RA_SCAN_CHUNK 16
// Elements a thread: RA_SCAN_ITEMS for accumulators of up to 4 bytes, fewer for wider ones, so a tile
// is the same bytes of shared memory for every C (gpu.py's _scan_tile makes the same count).
template <typename C> struct RaScanItems {
  static constexpr int value = sizeof(C) <= 4 ? RA_SCAN_ITEMS
                               : RA_SCAN_ITEMS * 4 / (int)sizeof(C) > 0 ? RA_SCAN_ITEMS * 4 / (int)sizeof(C) : 1;
};

// A published value and its flag: the launch's mark once written (gpu.py numbers the launches that
// share a state 1, 2, 3...: a flag left by an earlier launch is another number, so no launch clears
// the state first): 8 bytes for accumulators of up to 4, 16 for 8, 32 for 16 (gpu.py's
// _scan_slot_bytes makes the same sizes; each size has a state of its own, so a flag's word never
// held a value).
// Packed slots are one word that one store writes and one load reads whole, so a reader that sees
// the flag sees the value with no fence on either side (CUB's and rocPRIM's look-back likewise):
// 8-byte words everywhere (an aligned 8-byte access is single-copy atomic on both platforms), 16-byte
// words on NVIDIA only (st/ld.v2.u64: CUB's look-back relies on them for 8-byte values on every
// architecture it supports; AMD's memory model promises no more than 8 bytes, and rocPRIM packs no
// more). Other slots write the value, a fence, the flag; a reader the flag, a fence, the value.
template <typename C> struct RaScanPacks {
#ifdef RA_NVIDIA
  static constexpr bool value = sizeof(C) <= 8;
#else
  static constexpr bool value = sizeof(C) <= 4;
#endif
};
template <typename C> struct RaScanSlotBytes {
  static constexpr int value = sizeof(C) <= 4 ? 8 : sizeof(C) <= 8 ? 16 : 32;
};
template <typename C> struct RA_ALIGN(RaScanSlotBytes<C>::value < 16 ? RaScanSlotBytes<C>::value : 16) RaScanSlot {
  C value;
  unsigned int ready;
};

template <typename C> RA_DEVICE void ra_scan_put(RaScanSlot<C>* s, C v, unsigned int mark) {
  static_assert(sizeof(RaScanSlot<C>) == RaScanSlotBytes<C>::value, "a slot of another size than gpu.py's");
  RaScanSlot<C> w;
  w.value = v;
  w.ready = mark;
  if constexpr (!RaScanPacks<C>::value) {
    s->value = v;
    RA_GRID_FENCE();
    *(volatile unsigned int*)&s->ready = mark;
  } else if constexpr (sizeof(w) == 8) {
    *(volatile unsigned long long*)s = ra_bit_cast<unsigned long long>(w);
  } else {
#ifdef RA_NVIDIA
    struct Pair { unsigned long long lo, hi; };
    const Pair p = ra_bit_cast<Pair>(w);
    asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(s), "l"(p.lo), "l"(p.hi) : "memory");
#endif
  }
}

// Whether slot s is published by this launch (its flag is the launch's mark); if so, its value in *v.
template <typename C> RA_DEVICE bool ra_scan_get(const RaScanSlot<C>* s, C* v, unsigned int mark) {
  RaScanSlot<C> w;
  if constexpr (!RaScanPacks<C>::value) {
    if (*(const volatile unsigned int*)&s->ready != mark) return false;
    RA_GRID_FENCE();
    *v = ra_load_coherent(&s->value);
    return true;
  } else if constexpr (sizeof(w) == 8) {
    w = ra_bit_cast<RaScanSlot<C>>(*(const volatile unsigned long long*)s);
  } else {
#ifdef RA_NVIDIA
    struct Pair { unsigned long long lo, hi; } p;
    asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];" : "=l"(p.lo), "=l"(p.hi) : "l"(s) : "memory");
    w = ra_bit_cast<RaScanSlot<C>>(p);
#endif
  }
  *v = w.value;
  return w.ready == mark;
}

// Each lane's slots s and u (the wave's lanes together; identity where null) into *a and *b, once all
// are published (two at once: one round of waiting where two levels are read).
template <typename C>
RA_DEVICE void ra_scan_wait(const RaScanSlot<C>* s, const RaScanSlot<C>* u, C identity, C* a, C* b,
                            unsigned int mark) {
  *a = *b = identity;
  bool got_a = !s || ra_scan_get(s, a, mark), got_b = !u || ra_scan_get(u, b, mark);
  while (ra_any(!(got_a && got_b))) {
    ra_spin_turn();
    if (!got_a) got_a = ra_scan_get(s, a, mark);
    if (!got_b) got_b = ra_scan_get(u, b, mark);
  }
}

// Value v of lane `src`, for any T (one 32-bit word at a time).
template <typename T> RA_DEVICE T ra_scan_lane(T v, int src) {
  RaWords<T> u;
  u.value = v;
#pragma unroll
  for (int k = 0; k < (int)(sizeof(u.w) / 4); ++k) u.w[k] = ra_shfl(u.w[k], src);
  return u.value;
}

// The combination of tile `tile`'s earlier tiles in its row (one wave, tile > 0; every lane gets it),
// publishing on the way its window's total (the window's last tile) and its group's total (the
// group's last tile). level0/1/2: the aggregates of the tiles (g), the windows' totals and the
// groups' totals (row * windows + window, row * groups + group).
template <typename C, typename Combine>
RA_DEVICE C ra_scan_look_back(RaScanSlot<C>* level0, RaScanSlot<C>* level1, RaScanSlot<C>* level2, ra_index_t g,
                              ra_index_t row, ra_index_t tile, ra_index_t tiles, C total, Combine op, C identity,
                              unsigned int mark) {
  constexpr int W = RA_WAVE_SIZE;
  const int lane = ra_lane();
  const ra_index_t windows = (tiles + W - 1) / W, groups = (windows + W - 1) / W;
  const ra_index_t window = tile / W, group = window / W;
  const int p0 = (int)(tile % W), p1 = (int)(window % W);
  RaScanSlot<C>* const totals = level2 + row * groups;  // the row's groups' totals
  // The window's aggregates, this tile's own in lane p0.
  C a, unused;
  ra_scan_wait<C>(lane < p0 ? level0 + g - p0 + lane : nullptr, nullptr, identity, &a, &unused, mark);
  if (lane == p0) a = total;
  a = ra_wave_scan(a, op);
  C before = p0 > 0 ? ra_scan_lane(a, p0 - 1) : identity;
  const bool window_end = p0 == W - 1, group_end = window_end && p1 == W - 1;
  const C window_total = ra_scan_lane(a, W - 1);
  if (window_end && lane == 0) ra_scan_put(level1 + row * windows + window, window_total, mark);
  if (p1 == 0 && group == 0) return before;
  // The group's earlier windows' totals, this window's in lane p1 (where this tile ends it), read
  // together with the first wave of earlier groups' totals; but a group's last tile publishes its
  // group's total before it waits for any other group's, so that no group's total waits on another.
  C b, c;
  ra_scan_wait(lane < p1 ? level1 + row * windows + window - p1 + lane : nullptr,
               !group_end && lane < group ? totals + lane : nullptr, identity, &b, &c, mark);
  b = lane < p1 ? b : lane == p1 && window_end ? window_total : identity;
  b = ra_wave_scan(b, op);
  const C group_total = ra_scan_lane(b, W - 1);
  if (group_end && lane == 0) ra_scan_put(totals + group, group_total, mark);
  // The earlier groups' totals a wave at a time, each wave's combined as a tree, the waves' in order.
  C prefix = identity;
  for (ra_index_t first = 0; first < group; first += W) {
    if (group_end || first > 0) ra_scan_wait<C>(lane < group - first ? totals + first + lane : nullptr, nullptr,
                                                 identity, &c, &unused, mark);
    prefix = op(prefix, ra_scan_lane(ra_wave_reduce(c, op), 0));
  }
  return op(op(prefix, p1 > 0 ? ra_scan_lane(b, p1 - 1) : identity), before);
}

// Blocks of RA_SCAN_BLOCK threads; tiles of RaScanItems<C> elements a thread, each wave a contiguous
// run of RA_WAVE_SIZE * items (read and written a wave-wide row at a time, coalesced, and turned
// through the wave's part of shared memory into a run of items a lane, so only the waves' totals and
// the tile's prefix cross waves: two barriers a tile).
// taken: the two tile counters, slots the look-back's slots, mark the launch's number (the state's
// flags from earlier launches are other numbers): a block a tile. Null (rows of one tile, or rows enough
// to fill the GPU without cutting them: see gpu.py): a block takes whole rows, blockIdx.x then every
// gridDim.x-th, each row's tiles in order, carrying the row's combination so far (no look-back).
// On NVIDIA ptxas plans registers for blocks enough to hold RA_SCAN_SM_THREADS threads an SM (gpu.py):
// unbounded, a tile's loads in flight took 71 to 95 registers on sm_90. The loops over a thread's items
// unroll by RA_SCAN_UNROLL (gpu.py): unrolled whole, 2^26 float32 took 15% longer on an H200.
#ifdef RA_NVIDIA
#define RA_SCAN_BOUNDS __launch_bounds__(RA_SCAN_BLOCK, RA_SCAN_SM_THREADS / RA_SCAN_BLOCK)
#else
#define RA_SCAN_BOUNDS __launch_bounds__(RA_SCAN_BLOCK)
#endif
template <typename In, typename C, typename Out, typename Map, typename Combine>
__global__ void RA_SCAN_BOUNDS scan_tiles(Out* out, const In* in, ra_index_t rows, ra_index_t len,
                                          unsigned long long* taken, RaScanSlot<C>* slots, unsigned int mark) {
  constexpr int ITEMS = RaScanItems<C>::value, TILE = RA_SCAN_BLOCK * ITEMS, W = RA_WAVE_SIZE;
  constexpr int WAVES = RA_SCAN_BLOCK / W, RUN = W * ITEMS, CHUNK = ITEMS < RA_SCAN_CHUNK ? ITEMS : RA_SCAN_CHUNK;
  RA_SHARED_ARRAY(C, buf, RA_SCAN_AT(TILE));
  RA_SHARED_ARRAY(C, sums, WAVES);
  RA_SHARED_ARRAY(C, carry, 1);
  __shared__ ra_index_t first;
  const Combine op;
  const C identity = Combine::template identity<C>();
  const int t = threadIdx.x, lane = ra_lane(), wave = t / W;
  C* run = buf + RA_SCAN_AT(wave * RUN);  // (RUN is a multiple of 32: the gaps add up)
  const ra_index_t tiles = (len + TILE - 1) / TILE, count = rows * tiles;
  ra_index_t g = blockIdx.x * tiles;
  if (taken) {
    // Two counters, used in turn by the launches that share a state (by the mark's parity); the one
    // that takes tile 0 clears the other for the next launch, which the stream runs after this one.
    if (t == 0) {
      first = (ra_index_t)atomicAdd(taken + (mark & 1), 1ull);
      if (first == 0) taken[(mark + 1) & 1] = 0;
    }
    __syncthreads();
    g = first;
  }
  C carried = identity;  // (whole rows: the row's tiles before this one)
  for (ra_index_t next; g < count; g = next) {
    const ra_index_t row = g / tiles, tile = g - row * tiles, start = tile * TILE, base = row * len + start;
    next = slots ? count : tile + 1 < tiles ? g + 1 : g + 1 + (ra_index_t)(gridDim.x - 1) * tiles;
    const int n = (int)(len - start < TILE ? len - start : TILE), at = wave * RUN + lane;
    ra_wave_sync();  // (a later turn: the wave's reads of the last tile are done)
#pragma unroll 1
    for (int c = 0; c < ITEMS; c += CHUNK) {
      In x[CHUNK];
#pragma unroll
      for (int j = 0; j < CHUNK; ++j)
        if (at + (c + j) * W < n) x[j] = in[base + at + (c + j) * W];
#pragma unroll
      for (int j = 0; j < CHUNK; ++j) {
        const int k = c + j;
        run[RA_SCAN_AT(k * W + lane)] = at + k * W < n ? Map::template map<C>(x[j], start + at + k * W) : identity;
      }
    }
    ra_wave_sync();
    C mine = run[RA_SCAN_AT(lane * ITEMS)];
#pragma unroll RA_SCAN_UNROLL
    for (int k = 1; k < ITEMS; ++k) mine = op(mine, run[RA_SCAN_AT(lane * ITEMS + k)]);
    const C inclusive = ra_wave_scan(mine, op);
    C before = ra_shfl_up_any(inclusive, 1);
    if (lane == W - 1) sums[wave] = inclusive;
    __syncthreads();
    // The waves' totals in wave order (a fixed grouping: the same bits whatever the timing).
    C earlier = identity, total = sums[0];
#pragma unroll
    for (int w = 0; w < WAVES; ++w) {
      if (w < wave) earlier = op(earlier, sums[w]);
      if (w > 0) total = op(total, sums[w]);
    }
    before = lane > 0 ? op(earlier, before) : earlier;
    if (!slots) {
      if (tile > 0) before = op(carried, before);
      carried = tile > 0 ? op(carried, total) : total;
    } else {
      if (t == 0) ra_scan_put(slots + g, total, mark);
      if (tile > 0) {
        if (wave == 0) {
          const ra_index_t windows = (tiles + W - 1) / W;
          RaScanSlot<C>* level1 = slots + count;
          const C prefix = ra_scan_look_back(slots, level1, level1 + rows * windows, g, row, tile, tiles, total, op,
                                             identity, mark);
          if (t == 0) carry[0] = prefix;
        }
        __syncthreads();
        before = op(carry[0], before);
      }
    }
#pragma unroll RA_SCAN_UNROLL
    for (int k = 0; k < ITEMS; ++k) {
      before = op(before, run[RA_SCAN_AT(lane * ITEMS + k)]);
      run[RA_SCAN_AT(lane * ITEMS + k)] = before;
    }
    ra_wave_sync();
#pragma unroll RA_SCAN_UNROLL
    for (int k = 0; k < ITEMS; ++k)
      if (at + k * W < n) out[base + at + k * W] = ra_cast<Out>(run[RA_SCAN_AT(k * W + lane)]);
    if (next < count) __syncthreads();  // (another turn: sums are read)
  }
}

// nonzero: element i of the contiguous x (of `ndim` dimensions `shape`) is nonzero;
// `position` is the inclusive scan of the nonzero flags; out[d * count + k] the
// coordinate d of the k-th nonzero element.
template <typename In>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
nonzero_scatter(int64_t* out, const In* x, const int64_t* position, ra_index_t n,
                ra_index_t count, ra_geometry<1> shape) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    if (!ra_cast<bool>(x[i])) continue;
    const ra_index_t k = position[i] - 1;
    ra_index_t rest = i;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      const ra_index_t m = shape.shape[d], q = rest / m;
      out[d * count + k] = rest - q * m;
      rest = q;
    }
  }
}
