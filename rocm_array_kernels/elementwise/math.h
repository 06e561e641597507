// Real math for the elementwise functors: one overloaded spelling (ra_sin, ra_log1p…) over
// the float and double functions both run-time compilers provide as builtins, plus
// classification, constants and wrapping integer arithmetic. No standard headers.
#pragma once
#include "common/types.h"

#define RA_MATH1(NAME, F, D)                                  \
  RA_DEVICE float ra_##NAME(float x) { return F(x); }        \
  RA_DEVICE double ra_##NAME(double x) { return D(x); }
#define RA_MATH2(NAME, F, D)                                          \
  RA_DEVICE float ra_##NAME(float x, float y) { return F(x, y); }    \
  RA_DEVICE double ra_##NAME(double x, double y) { return D(x, y); }
RA_MATH1(sin, sinf, sin) RA_MATH1(cos, cosf, cos) RA_MATH1(tan, tanf, tan)
RA_MATH1(asin, asinf, asin) RA_MATH1(acos, acosf, acos) RA_MATH1(atan, atanf, atan)
RA_MATH1(sinh, sinhf, sinh) RA_MATH1(cosh, coshf, cosh) RA_MATH1(tanh, tanhf, tanh)
RA_MATH1(asinh, asinhf, asinh) RA_MATH1(acosh, acoshf, acosh) RA_MATH1(atanh, atanhf, atanh)
RA_MATH1(exp, expf, exp) RA_MATH1(expm1, expm1f, expm1) RA_MATH1(log, logf, log)
RA_MATH1(log1p, log1pf, log1p) RA_MATH1(log2, log2f, log2) RA_MATH1(log10, log10f, log10)
RA_MATH1(sqrt, sqrtf, sqrt) RA_MATH1(ceil, ceilf, ceil) RA_MATH1(floor, floorf, floor)
RA_MATH1(trunc, truncf, trunc) RA_MATH1(rint, rintf, rint) RA_MATH1(fabs, fabsf, fabs)
RA_MATH1(erf, erff, erf)
RA_MATH2(atan2, atan2f, atan2) RA_MATH2(copysign, copysignf, copysign) RA_MATH2(hypot, hypotf, hypot)
RA_MATH2(pow, powf, pow) RA_MATH2(fmod, fmodf, fmod) RA_MATH2(nextafter, nextafterf, nextafter)
#undef RA_MATH1
#undef RA_MATH2

// ---- constants and classification (bit patterns: no reliance on builtins' spelling) ----
template <typename R> RA_DEVICE R ra_inf();
template <> RA_DEVICE float ra_inf<float>() { return ra_bit_cast<float>(0x7f800000u); }
template <> RA_DEVICE double ra_inf<double>() { return ra_bit_cast<double>(0x7ff0000000000000ull); }
template <typename R> RA_DEVICE R ra_nan();
template <> RA_DEVICE float ra_nan<float>() { return ra_bit_cast<float>(0x7fc00000u); }
template <> RA_DEVICE double ra_nan<double>() { return ra_bit_cast<double>(0x7ff8000000000000ull); }
// 1 / sqrt(machine epsilon): beyond it, 1 + x*x is x*x in R.
template <typename R> RA_DEVICE R ra_big() { return sizeof(R) == 4 ? R(4096.0f) : R(67108864.0); }

#define RA_PI 3.14159265358979323846
#define RA_LN2 0.69314718055994530942

template <typename R> RA_DEVICE bool ra_isnan(R x) { return x != x; }
template <typename R> RA_DEVICE bool ra_isinf(R x) { return ra_fabs(x) == ra_inf<R>(); }
template <typename R> RA_DEVICE bool ra_isfinite(R x) { return ra_fabs(x) < ra_inf<R>(); }
template <typename R> RA_DEVICE bool ra_signbit(R x) {
  typedef typename ra_word<sizeof(R)>::type W;
  return (ra_bit_cast<W>(x) >> (sizeof(R) * 8 - 1)) != 0;
}

// ---- integers: arithmetic that wraps (signed overflow is undefined in C++) ----
template <typename T> struct ra_unsigned { typedef T type; };
template <> struct ra_unsigned<int8_t> { typedef uint8_t type; };
template <> struct ra_unsigned<int16_t> { typedef uint16_t type; };
template <> struct ra_unsigned<int32_t> { typedef uint32_t type; };
template <> struct ra_unsigned<int64_t> { typedef uint64_t type; };
template <typename T> struct ra_is_signed { static constexpr bool value = T(-1) < T(0); };
template <> struct ra_is_signed<bool> { static constexpr bool value = false; };

template <typename T> RA_DEVICE T ra_wrap_add(T a, T b) {
  typedef typename ra_unsigned<T>::type U;
  return (T)(U)((U)a + (U)b);
}
template <typename T> RA_DEVICE T ra_wrap_sub(T a, T b) {
  typedef typename ra_unsigned<T>::type U;
  return (T)(U)((U)a - (U)b);
}
template <typename T> RA_DEVICE T ra_wrap_mul(T a, T b) {
  typedef typename ra_unsigned<T>::type U;
  // (uint16 * uint16 would promote to int and could overflow it: multiply 64-bit, keep the low bits.)
  return (T)(U)((unsigned long long)(U)a * (unsigned long long)(U)b);
}
