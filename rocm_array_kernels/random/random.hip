// The random plugin's draws: Philox4x32-10 (Salmon et al., SC'11) turns (key, counter) into
// four 32-bit words; the transforms turn words into values. Value j of a draw of n values takes
// words [j*W, j*W + W) of its stream (W = 1, 2 or 4 by dtype: rocm_array_plugins/random/streams.py), and
// word w is lane w % 4 of block `counter + w / 4`. One thread computes one block.
//
// The cpu back (rocm_array_plugins/random/cpu.py) performs the same IEEE operations in the same order, so
// both give the same bits: every product, sum, quotient and square root is rounded once
// (no contraction into fma: the __*_rn intrinsics on NVIDIA, the pragma below on clang), and
// log, sin and cos are this file's polynomials with the coefficients Python passes (RaRngConsts),
// and the normal draws' inverse CDF is normal_icdf.h's table: not the platform's math library.
#include "common/portability.h"
#include "common/types.h"
#include "random/normal_icdf.h"

#ifdef RA_AMD
#pragma clang fp contract(off)
#endif

// ---- rounded-once arithmetic ------------------------------------------------------------------
#ifdef RA_NVIDIA
RA_DEVICE float rng_mul(float a, float b) { return __fmul_rn(a, b); }
RA_DEVICE float rng_add(float a, float b) { return __fadd_rn(a, b); }
RA_DEVICE float rng_div(float a, float b) { return __fdiv_rn(a, b); }
RA_DEVICE float rng_sqrt(float a) { return __fsqrt_rn(a); }
RA_DEVICE double rng_mul(double a, double b) { return __dmul_rn(a, b); }
RA_DEVICE double rng_add(double a, double b) { return __dadd_rn(a, b); }
RA_DEVICE double rng_div(double a, double b) { return __ddiv_rn(a, b); }
RA_DEVICE double rng_sqrt(double a) { return __dsqrt_rn(a); }
#else
template <typename F> RA_DEVICE F rng_mul(F a, F b) { return a * b; }
template <typename F> RA_DEVICE F rng_add(F a, F b) { return a + b; }
template <typename F> RA_DEVICE F rng_div(F a, F b) { return a / b; }
RA_DEVICE float rng_sqrt(float a) { return __builtin_sqrtf(a); }
RA_DEVICE double rng_sqrt(double a) { return __builtin_sqrt(a); }
#endif
RA_DEVICE float rng_sub(float a, float b) { return rng_add(a, -b); }
RA_DEVICE double rng_sub(double a, double b) { return rng_add(a, -b); }

// ---- Philox4x32-10 -------------------------------------------------------------------------------
struct RaBlock { uint32_t w[4]; };

// The round keys, (k0 + r W0, k1 + r W1) for round r, computed once by Python (streams.round_keys):
// as kernel arguments they are operands of the xors, not additions in every thread's every block.
struct RaKey { uint32_t k[RA_PHILOX_ROUNDS][2]; };

RA_DEVICE RaBlock rng_philox(uint64_t counter, uint64_t stream, const RaKey& key) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32);
  uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
#pragma unroll
  for (int round = 0; round < RA_PHILOX_ROUNDS; ++round) {
    // One 32 x 32 -> 64 product each: separate low and high products made NVRTC multiply twice.
    const uint64_t p0 = (uint64_t)(uint32_t)RA_PHILOX_M0 * c0, p1 = (uint64_t)(uint32_t)RA_PHILOX_M1 * c2;
    c0 = (uint32_t)(p1 >> 32) ^ c1 ^ key.k[round][0];
    c1 = (uint32_t)p1;
    c2 = (uint32_t)(p0 >> 32) ^ c3 ^ key.k[round][1];
    c3 = (uint32_t)p0;
  }
  RaBlock b = {{c0, c1, c2, c3}};
  return b;
}

// ---- the constants of the transforms (rocm_array_plugins/random/streams.py fills them) ----------------------
template <typename F, int LOG> struct RaRngLog { F sqrt2, ln2_hi, ln2_lo; F log[LOG]; };
template <typename F, int SIN, int COS> struct RaRngTrig { F half_pi; F sin[SIN], cos[COS]; };
// Box-Muller's sin and cos serve float64 only: the other floats' normal draws use the table.
struct RaRngConsts {
  RaRngLog<float, RA_RNG_LOG32> log32;
  RaRngLog<double, RA_RNG_LOG64> log64;
  RaRngTrig<double, RA_RNG_SIN64, RA_RNG_COS64> trig64;
};

template <typename F> struct rng_bits;
template <> struct rng_bits<float> {
  typedef uint32_t U;
  static constexpr int mantissa = 23, bias = 127;
  RA_DEVICE static const RaRngLog<float, RA_RNG_LOG32>& log(const RaRngConsts& c) { return c.log32; }
};
template <> struct rng_bits<double> {
  typedef uint64_t U;
  static constexpr int mantissa = 52, bias = 1023;
  RA_DEVICE static const RaRngLog<double, RA_RNG_LOG64>& log(const RaRngConsts& c) { return c.log64; }
};

template <typename F, int N> RA_DEVICE F rng_horner(const F (&c)[N], F z) {
  F p = c[N - 1];
#pragma unroll
  for (int i = N - 2; i >= 0; --i) p = rng_add(rng_mul(p, z), c[i]);
  return p;
}

// log(u) for a normal u in (0, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
// log(m) = 2 atanh(s) = 2s + 2s * s^2 * P(s^2), s = (m - 1) / (m + 1).
template <typename F> RA_DEVICE F rng_log(F u, const RaRngConsts& consts) {
  typedef typename rng_bits<F>::U U;
  const auto& k = rng_bits<F>::log(consts);
  const U bits = ra_bit_cast<U>(u);
  int e = (int)(bits >> rng_bits<F>::mantissa) - rng_bits<F>::bias;
  const U one = (U)rng_bits<F>::bias << rng_bits<F>::mantissa, mask = ((U)1 << rng_bits<F>::mantissa) - 1;
  F m = ra_bit_cast<F>((bits & mask) | one);  // in [1, 2)
  if (m > k.sqrt2) {
    m = rng_mul(m, F(0.5));
    e += 1;
  }
  const F f = rng_sub(m, F(1));
  const F s = rng_div(f, rng_add(f, F(2)));
  const F z = rng_mul(s, s);
  F t = rng_mul(rng_mul(s, z), rng_horner(k.log, z));
  const F log_m = rng_add(rng_add(s, s), rng_add(t, t));
  const F fe = (F)e;
  return rng_add(rng_add(rng_mul(fe, k.ln2_lo), log_m), rng_mul(fe, k.ln2_hi));
}

// sin and cos of 2 pi t for t in [0, 1): quadrant q = floor(4t), r = 4t - q (both exact), the
// octant's reflection r -> 1 - r (exact), then Taylor polynomials of x = r pi/2 in [0, pi/4].
RA_DEVICE void rng_sincos_turns(double t, const RaRngConsts& consts, double* sin_out, double* cos_out) {
  typedef double F;
  const auto& k = consts.trig64;
  const F t4 = rng_mul(t, F(4));
  const int q = (int)t4;
  F r = rng_sub(t4, (F)q);
  const bool flip = r > F(0.5);
  if (flip) r = rng_sub(F(1), r);
  const F x = rng_mul(r, k.half_pi);
  const F z = rng_mul(x, x);
  const F s = rng_add(x, rng_mul(rng_mul(x, z), rng_horner(k.sin, z)));
  const F c = rng_add(F(1), rng_mul(z, rng_horner(k.cos, z)));
  const F sp = flip ? c : s, cp = flip ? s : c;
  switch (q) {
    case 0: *sin_out = sp; *cos_out = cp; break;
    case 1: *sin_out = cp; *cos_out = -sp; break;
    case 2: *sin_out = -sp; *cos_out = -cp; break;
    default: *sin_out = -cp; *cos_out = sp; break;
  }
}

// ---- words -> uniform floats ---------------------------------------------------------------------
// u in [0, 1) from the top bits of one word (float16: 11, bfloat16: 8, float: 24) or of two
// (double: 53); u1 in (0, 1] adds one unit of the last place. All exact.
template <typename T> struct rng_unit {  // float, and the 16-bit floats computed in float
  static constexpr int bits = ra_same<T, float16>::value ? 11 : ra_same<T, bfloat16>::value ? 8 : 24;
  typedef float F;
  RA_DEVICE static F scale() { return 1.0f / (float)(1u << bits); }
  RA_DEVICE static F u(const uint32_t* w) { return rng_mul((float)(w[0] >> (32 - bits)), scale()); }
  RA_DEVICE static F u1(const uint32_t* w) { return rng_mul((float)((w[0] >> (32 - bits)) + 1u), scale()); }
};
template <> struct rng_unit<double> {
  typedef double F;
  RA_DEVICE static uint64_t word(const uint32_t* w) { return (uint64_t)w[0] | ((uint64_t)w[1] << 32); }
  RA_DEVICE static F scale() { return 1.0 / 9007199254740992.0; }  // 2^-53
  RA_DEVICE static F u(const uint32_t* w) { return rng_mul((double)(word(w) >> 11), scale()); }
  RA_DEVICE static F u1(const uint32_t* w) { return rng_mul((double)((word(w) >> 11) + 1u), scale()); }
};
// Words per value: 2 for double, 1 for the others.
template <typename T> struct rng_words { static constexpr int value = ra_same<T, double>::value ? 2 : 1; };

// ---- the transforms: one block -> 4 / W values ---------------------------------------------------
// a and b arrive in F, the precision computed in (Python rounds them as the cpu back does).
struct uniform_op {  // a + (b - a) u
  template <typename T, int V, typename F>
  RA_DEVICE static void apply(const RaBlock& blk, F a, F b, const RaRngConsts&, F* v) {
    const F span = rng_sub(b, a);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = rng_add(a, rng_mul(span, rng_unit<T>::u(blk.w + i * rng_words<T>::value)));
  }
};
struct normal_op {  // float64: a + b z, z by Box-Muller on pairs (u1 in (0, 1], t in [0, 1))
  template <typename T, int V, typename F>
  RA_DEVICE static void apply(const RaBlock& blk, F a, F b, const RaRngConsts& c, F* v) {
    static_assert(ra_same<T, double>::value, "the other floats' normal draws are normal_icdf's");
#pragma unroll
    for (int i = 0; i < V; i += 2) {
      const double r = rng_sqrt(rng_mul(-2.0, rng_log(rng_unit<double>::u1(blk.w + 2 * i), c)));
      double s, co;
      rng_sincos_turns(rng_unit<double>::u(blk.w + 2 * (i + 1)), c, &s, &co);
      v[i] = rng_add(a, rng_mul(b, rng_mul(r, co)));
      v[i + 1] = rng_add(a, rng_mul(b, rng_mul(r, s)));
    }
  }
};
struct exponential_op {  // b * -log(u1)
  template <typename T, int V, typename F>
  RA_DEVICE static void apply(const RaBlock& blk, F, F b, const RaRngConsts& c, F* v) {
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = rng_mul(b, -rng_log(rng_unit<T>::u1(blk.w + i * rng_words<T>::value), c));
  }
};

// Every block of a draw of n values of T, V to a block: values(blk, v) fills v[0, V) from the
// block's words. Whole blocks go out as one vector store each, in a loop with no bounds check; the
// last, partial block (n % V values) is the first thread's, after it. (A bounds check per block
// and the a, b conversions in the loop made the library's uniform draw of 2^28 float32 on an
// H200 take 322 us, against 269 us for the same Philox and transform standing alone.)
template <typename T, int V, typename Values>
RA_DEVICE void rng_blocks(T* RA_RESTRICT out, ra_index_t n, const RaKey& key, uint64_t stream, uint64_t counter,
                          const Values& values) {
  const ra_index_t full = n / V;
  for (ra_index_t i = ra_thread_index(); i < full; i += ra_grid_stride()) {
    ra_vec<T, V> vec;
    values(rng_philox(counter + (uint64_t)i, stream, key), vec.v);
    reinterpret_cast<ra_vec<T, V>*>(out)[i] = vec;
  }
  const int rest = (int)(n - full * V);
  if (rest != 0 && ra_thread_index() == 0) {
    T v[V];
    values(rng_philox(counter + (uint64_t)full, stream, key), v);
    // Constant indices: v stays in registers (indexed by the loop counter, hiprtc put it in scratch,
    // or in LDS sized for a block of 1024 threads).
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (j < rest) out[full * V + j] = v[j];
  }
}

// n values of T (float16, bfloat16, float, double) from blocks counter, counter + 1, ...
template <typename Op, typename T>
__global__ void draw(T* RA_RESTRICT out, ra_index_t n, RaKey key, uint64_t stream, uint64_t counter,
                     typename rng_unit<T>::F a, typename rng_unit<T>::F b, RaRngConsts consts) {
  typedef typename rng_unit<T>::F F;
  constexpr int V = 4 / rng_words<T>::value;
  rng_blocks<T, V>(out, n, key, stream, counter, [&](const RaBlock& blk, T* t) {
    F v[V];
    Op::template apply<T, V>(blk, a, b, consts, v);
#pragma unroll
    for (int j = 0; j < V; ++j) t[j] = T(v[j]);
  });
}

// ---- normal draws of float, float16 and bfloat16: the inverse CDF table ----------------------------
// rocm_array_plugins/random/icdf.py says how a word picks a row and what the rows hold; each block copies the
// table (32 KiB) into shared memory, where the lanes' scattered reads are cheap.
struct RA_ALIGN(16) RaIcdfRow { float c0, c1, c2, unused; };

// z = Phi^-1((w + 1/2) / 2^32), from the row of p = min(u, 1 - u) = x / 2^33.
RA_DEVICE float rng_normal_icdf(uint32_t w, const RaIcdfRow* rows) {
  const uint32_t upper = (uint32_t)((int32_t)w >> 31);  // all ones for the upper half of the words
  const uint32_t x = ((w << 1) ^ upper) | 1u;           // 2 min(w, ~w) + 1: odd, never 0
  const int c = ra_clz(x);                              // p's octave
  const uint32_t y = x << c;                            // the leading one at bit 31
  // y's top 1 + RA_ICDF_BITS bits are 1j: the row is (c << RA_ICDF_BITS) + 1j - 2^RA_ICDF_BITS.
  const RaIcdfRow k = rows[((uint32_t)c << RA_ICDF_BITS) + (y >> (31 - RA_ICDF_BITS)) - (1u << RA_ICDF_BITS)];
  const float t = rng_sub(ra_bit_cast<float>(((y >> (8 - RA_ICDF_BITS)) & 0x7fffffu) | 0x3f800000u), 1.0f);
  const float z = rng_add(k.c0, rng_mul(t, rng_add(k.c1, rng_mul(t, k.c2))));
  return ra_bit_cast<float>(ra_bit_cast<uint32_t>(z) ^ (upper & 0x80000000u));
}

// n values of T (float16, bfloat16, float): a + b z, one value per word, four per block.
template <typename T>
__global__ void normal_icdf(T* RA_RESTRICT out, ra_index_t n, RaKey key, uint64_t stream, uint64_t counter,
                            float a, float b) {
  __shared__ RaIcdfRow rows[RA_ICDF_ROWS];
  for (int r = (int)threadIdx.x; r < RA_ICDF_ROWS; r += (int)blockDim.x) {
    const RaIcdfRow row = {ra_icdf[r][0], ra_icdf[r][1], ra_icdf[r][2], 0.0f};
    rows[r] = row;
  }
  __syncthreads();
  if (a == 0.0f && b == 1.0f) {  // z itself (0 + 1 z is z for the table's nonzero z): 396 against 403 us
    rng_blocks<T, 4>(out, n, key, stream, counter, [&](const RaBlock& blk, T* t) {
#pragma unroll
      for (int j = 0; j < 4; ++j) t[j] = T(rng_normal_icdf(blk.w[j], rows));
    });
  } else {
    rng_blocks<T, 4>(out, n, key, stream, counter, [&](const RaBlock& blk, T* t) {
#pragma unroll
      for (int j = 0; j < 4; ++j) t[j] = T(rng_add(a, rng_mul(b, rng_normal_icdf(blk.w[j], rows))));
    });
  }
}

// ---- integers in [low, low + span] ---------------------------------------------------------------
// (x * (span + 1)) >> bits(x): 64 random bits for a span below 2^32 (bias under 2^-32), 128 above
// (bias under 2^-64); span 2^64 - 1 takes the top word pair as it is.
RA_DEVICE uint64_t rng_mulhi64(uint64_t a, uint64_t b) {
  const uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
  const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

template <typename T, bool WIDE>
__global__ void integers(T* RA_RESTRICT out, ra_index_t n, RaKey key, uint64_t stream,
                         uint64_t counter, uint64_t low, uint64_t span) {
  constexpr int V = WIDE ? 1 : 2;
  rng_blocks<T, V>(out, n, key, stream, counter, [&](const RaBlock& blk, T* t) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const uint64_t lo = (uint64_t)blk.w[4 * j / V] | ((uint64_t)blk.w[4 * j / V + 1] << 32);
      uint64_t x;
      if (!WIDE) {
        x = rng_mulhi64(lo, span + 1u);
      } else {
        const uint64_t hi = (uint64_t)blk.w[2] | ((uint64_t)blk.w[3] << 32);
        if (span == ~0ull) {
          x = hi;
        } else {
          const uint64_t r = span + 1u, top_lo = hi * r, carry_in = rng_mulhi64(lo, r);
          x = rng_mulhi64(hi, r) + (top_lo + carry_in < top_lo ? 1u : 0u);
        }
      }
      t[j] = (T)(low + x);
    }
  });
}

// ---- the running sum of choice()'s weights, in order (the cpu back's np.cumsum order) -----------
// T: double. (A template, as every kernel: a plain __global__ function is compiled into every
// program of its file.)
template <typename T>
__global__ void cumulative_weights(T* RA_RESTRICT out, const T* RA_RESTRICT p, ra_index_t n) {
  if (ra_thread_index() != 0) return;
  T acc = 0.0;
  for (ra_index_t i = 0; i < n; ++i) {
    acc = rng_add(acc, p[i]);
    out[i] = acc;
  }
}
