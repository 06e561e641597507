// The 15 element types, spelled as rocm_array.dtypes.DType.c_type names them (hiprtc
// predefines `half` as its own __half, hence the name float16):
// bool, int8_t..uint64_t, float16, bfloat16, float, double, complex64, complex128.
//
// float16 and bfloat16 are 16-bit storage types that convert to and from float
// (arithmetic on them goes through float, so `float16 + float16` is a float); the
// conversions round to nearest even, in hardware where both platforms offer it.
#pragma once
#include "common/portability.h"

// hiprtc predefines some of these with the same types; a repeated identical typedef is legal.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

// ---- 16-bit floats ----------------------------------------------------------------------
RA_DEVICE float ra_half_bits_to_float(uint16_t b) {
#ifdef RA_AMD
  return (float)ra_bit_cast<_Float16>(b);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
  return f;
#endif
}

RA_DEVICE uint16_t ra_float_to_half_bits(float f) {
#ifdef RA_AMD
  return ra_bit_cast<uint16_t>((_Float16)f);
#else
  uint16_t b;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
#endif
}

RA_DEVICE float ra_bfloat16_bits_to_float(uint16_t b) { return ra_bit_cast<float>((uint32_t)b << 16); }

RA_DEVICE uint16_t ra_float_to_bfloat16_bits(float f) {
  uint32_t u = ra_bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // NaN stays (quiet) NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

// double -> float rounded to odd: rounding that float again to a format of at
// most 11 significant bits (float16, bfloat16) then gives the correctly rounded
// double -> 16-bit result (no double-rounding error).
RA_DEVICE float ra_double_to_float_odd(double d) {
  float f = (float)d;
  double back = (double)f;
  if (back == d || d != d) return f;
  uint32_t u = ra_bit_cast<uint32_t>(f);
  if ((back > d) == (d > 0.0)) u -= 1;  // f rounded away from zero: step back toward zero
  return ra_bit_cast<float>(u | 1u);
}

// A 16-bit float: its bits, and conversions from and to float.
#define RA_FLOAT16_LIKE(NAME, FROM_FLOAT, TO_FLOAT)                                          \
  struct NAME {                                                                             \
    uint16_t bits;                                                                          \
    NAME() = default;                                                                       \
    RA_DEVICE NAME(float f) : bits(FROM_FLOAT(f)) {}                                        \
    RA_DEVICE operator float() const { return TO_FLOAT(bits); }                             \
    RA_DEVICE static NAME from_bits(uint16_t b) { NAME h; h.bits = b; return h; }          \
  };
RA_FLOAT16_LIKE(float16, ra_float_to_half_bits, ra_half_bits_to_float)
RA_FLOAT16_LIKE(bfloat16, ra_float_to_bfloat16_bits, ra_bfloat16_bits_to_float)
#undef RA_FLOAT16_LIKE

// ---- complex ------------------------------------------------------------------------------
// Two concrete structs (not one template: hiprtc 5's name-expression lookup compares
// demangled names, and plain names survive that), aligned like their component as
// NumPy stores them; vector loads use ra_vec instead.
#define RA_COMPLEX(C, T)                                                                        \
  struct C {                                                                                    \
    typedef T value_type;                                                                       \
    T re, im;                                                                                   \
    C() = default;                                                                              \
    RA_HOST_DEVICE C(T r, T i = T(0)) : re(r), im(i) {}                                         \
    RA_DEVICE T real() const { return re; }                                                     \
    RA_DEVICE T imag() const { return im; }                                                     \
  };                                                                                            \
  RA_DEVICE C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); }                       \
  RA_DEVICE C operator-(C a, C b) { return C(a.re - b.re, a.im - b.im); }                       \
  RA_DEVICE C operator-(C a) { return C(-a.re, -a.im); }                                        \
  RA_DEVICE C operator*(C a, C b) { return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \
  RA_DEVICE C operator/(C a, C b) { return ra_complex_divide(a, b); }                           \
  RA_DEVICE bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; }                  \
  RA_DEVICE bool operator!=(C a, C b) { return !(a == b); }

// Smith's algorithm: no overflow in |b|^2 for large b.
template <typename C> RA_DEVICE C ra_complex_divide(C a, C b) {
  typedef typename C::value_type T;
  T ar = b.re < 0 ? -b.re : b.re, ai = b.im < 0 ? -b.im : b.im;
  if (ar >= ai) {
    if (ar == T(0) && ai == T(0)) return C(a.re / ar, a.im / ai);
    T r = b.im / b.re, d = b.re + b.im * r;
    return C((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  T r = b.re / b.im, d = b.re * r + b.im;
  return C((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}

RA_COMPLEX(complex64, float)
RA_COMPLEX(complex128, double)
#undef RA_COMPLEX

// ---- type traits ------------------------------------------------------------------------
template <typename A, typename B> struct ra_same { static constexpr bool value = false; };
template <typename A> struct ra_same<A, A> { static constexpr bool value = true; };
template <typename T> struct ra_is_complex { static constexpr bool value = false; };
template <> struct ra_is_complex<complex64> { static constexpr bool value = true; };
template <> struct ra_is_complex<complex128> { static constexpr bool value = true; };
template <typename T> struct ra_is_16bit_float { static constexpr bool value = false; };
template <> struct ra_is_16bit_float<float16> { static constexpr bool value = true; };
template <> struct ra_is_16bit_float<bfloat16> { static constexpr bool value = true; };
template <typename T> struct ra_is_integral { static constexpr bool value = false; };
#define RA_INTEGRAL(T) template <> struct ra_is_integral<T> { static constexpr bool value = true; };
RA_INTEGRAL(int8_t) RA_INTEGRAL(int16_t) RA_INTEGRAL(int32_t) RA_INTEGRAL(int64_t)
RA_INTEGRAL(uint8_t) RA_INTEGRAL(uint16_t) RA_INTEGRAL(uint32_t) RA_INTEGRAL(uint64_t)
#undef RA_INTEGRAL

// ---- vectors for wide loads and stores ----------------------------------------------------
// N elements of T moved as one aligned access (N * sizeof(T) a power of two, at most 16).
template <typename T, int N> struct RA_ALIGN(sizeof(T) * N) ra_vec { T v[N]; };
