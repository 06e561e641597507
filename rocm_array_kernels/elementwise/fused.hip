// Fused elementwise expressions (rocm_array/fusion.py, rocm_array_plugins/elementwise/fused.py): this file is appended
// to elementwise.hip, and a generated struct RaFused completes it. RaFused holds the expression's
// operands and code:
//   out_type, width (elements per 16-byte access of the widest operand), Loads (a vector of each
//   array operand); out, a pointer per array operand, a member per scalar, and `fence` (always 0);
//   aligned(): every pointer aligned to its vector; load(i): vector i of every array operand;
//   values(i, loads): the results of vector i; store(i, loads): them written; at(i): the result of
//   element i (the tail). An array read several times is loaded once.
//
// An operation's result passes through ra_fence where it could be contracted: the eager kernels
// round each result to its dtype in memory, so a fused kernel must not contract two operations (a
// multiply and an add into one fma) where they could not be. The xor with `fence`, a kernel
// argument the compiler cannot know is 0, keeps them apart for one integer operation. A float add,
// subtract or multiply is rounded once instead (ra_add_rn below), and needs no fence, nor does an
// operand of one (fused.py's `operation`). (16-bit floats and integers need none:
// a 16-bit result is rounded by its conversion, and integer operations do not contract.)
template <typename T> struct RaFence {
  RA_DEVICE static T apply(T v, unsigned int) { return v; }
};
template <> struct RaFence<float> {
  RA_DEVICE static float apply(float v, unsigned int z) { return ra_bit_cast<float>(ra_bit_cast<unsigned int>(v) ^ z); }
};
template <> struct RaFence<double> {
  RA_DEVICE static double apply(double v, unsigned int z) {
    return ra_bit_cast<double>(ra_bit_cast<unsigned long long>(v) ^ (unsigned long long)z);
  }
};
template <> struct RaFence<complex64> {
  RA_DEVICE static complex64 apply(complex64 v, unsigned int z) {
    return complex64(RaFence<float>::apply(v.re, z), RaFence<float>::apply(v.im, z));
  }
};
template <> struct RaFence<complex128> {
  RA_DEVICE static complex128 apply(complex128 v, unsigned int z) {
    return complex128(RaFence<double>::apply(v.re, z), RaFence<double>::apply(v.im, z));
  }
};
template <typename T> RA_DEVICE T ra_fence(T v, unsigned int z) { return RaFence<T>::apply(v, z); }

// A float sum, difference or product rounded once, which the compiler never contracts with a
// neighbour: add_op's, sub_op's and mul_op's eager bits, so fused.py fences neither it nor its
// operands (fused_chain_sum's five fences were 42M of 417M instructions on an H100). NVIDIA: the
// _rn intrinsics (ptxas contracts only a mul and an add without a rounding modifier); clang:
// contraction off in the body (HIP's default, fast-honor-pragmas, contracts only what allows it).
#ifdef RA_NVIDIA
RA_DEVICE float ra_add_rn(float a, float b) { return __fadd_rn(a, b); }
RA_DEVICE float ra_sub_rn(float a, float b) { return __fsub_rn(a, b); }
RA_DEVICE float ra_mul_rn(float a, float b) { return __fmul_rn(a, b); }
RA_DEVICE double ra_add_rn(double a, double b) { return __dadd_rn(a, b); }
RA_DEVICE double ra_sub_rn(double a, double b) { return __dsub_rn(a, b); }
RA_DEVICE double ra_mul_rn(double a, double b) { return __dmul_rn(a, b); }
#else
template <typename T> RA_DEVICE T ra_add_rn(T a, T b) {
#pragma clang fp contract(off)
  return a + b;
}
template <typename T> RA_DEVICE T ra_sub_rn(T a, T b) {
#pragma clang fp contract(off)
  return a - b;
}
template <typename T> RA_DEVICE T ra_mul_rn(T a, T b) {
#pragma clang fp contract(off)
  return a * b;
}
#endif

// n elements of the expression E, a grid-stride loop as the eager contiguous kernels run it: two
// vectors in flight per thread (all loads before any store), then the tail element by element.
template <typename E>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
fused_contiguous(E e, ra_index_t n) {
  constexpr int V = E::width;
  const ra_index_t stride = ra_grid_stride();
  ra_index_t head = 0;
  if (V > 1 && e.aligned()) {
    const ra_index_t nv = n / V;
    ra_index_t i = ra_thread_index();
    for (; i + stride < nv; i += 2 * stride) {
      const typename E::Loads x0 = e.load(i), x1 = e.load(i + stride);
      e.store(i, x0);
      e.store(i + stride, x1);
    }
    if (i < nv) e.store(i, e.load(i));
    head = nv * V;
  }
  for (ra_index_t i = head + ra_thread_index(); i < n; i += stride) e.out[i] = e.at(i);
}

// A fused expression as a run of values for the reductions (reduction.hip's RaMemory, computed;
// appended after this file): element i of the run from `first` is the expression's element
// first + i, of an array that would start at a vector boundary (as a new one does).
template <typename E> struct RaComputed {
  typedef typename E::out_type value_type;
  E e;
  ra_index_t first;
  RA_DEVICE RaComputed from(ra_index_t base) const { return {e, first + base}; }
  RA_DEVICE value_type at(ra_index_t i) const { return e.at(first + i); }
  // (v0 is where a reduction's vectors start: first + v0 is a multiple of V, see phase.) A vector of
  // the expression's own width loads each array's vector at once, as fused_contiguous does.
  template <int V> RA_DEVICE ra_vec<value_type, V> vector(ra_index_t v0, ra_index_t j) const {
    const ra_index_t i = first + v0 + j * V;
    if constexpr (V == E::width) {
      if (e.aligned()) return e.values(i / V, e.load(i / V));
    }
    ra_vec<value_type, V> y;
#pragma unroll
    for (int k = 0; k < V; ++k) y.v[k] = e.at(i + k);
    return y;
  }
  RA_DEVICE unsigned long long phase(ra_index_t i) const { return (unsigned long long)(first + i); }
};
