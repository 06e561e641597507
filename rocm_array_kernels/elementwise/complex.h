// Complex elementary functions, written out (no std headers in hiprtc or NVRTC), with the
// special cases of C99 Annex G, which the standard follows: finite arguments by formulas
// that avoid overflow and cancellation (Kahan's for the inverse functions), the rest from
// Annex G's tables. Templated on complex64/complex128; callers give complex64 arguments
// as complex128 (ra_widen), so a complex64 result is rounded once.
#pragma once
#include "elementwise/math.h"

RA_DEVICE complex128 ra_widen(complex64 z) { return complex128(z.re, z.im); }
RA_DEVICE complex128 ra_widen(complex128 z) { return z; }
template <typename C> RA_DEVICE C ra_narrow(complex128 z) {
  return C((typename C::value_type)z.re, (typename C::value_type)z.im);
}

template <typename C> RA_DEVICE C ra_times_i(C z) { return C(-z.im, z.re); }     // i z
template <typename C> RA_DEVICE C ra_times_minus_i(C z) { return C(z.im, -z.re); }  // -i z
template <typename C> RA_DEVICE bool ra_cisnan(C z) { return ra_isnan(z.re) || ra_isnan(z.im); }

template <typename C> RA_DEVICE C ra_cexp(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (y == R(0)) return C(ra_exp(x), y);
  if (ra_isfinite(x) && ra_isfinite(y)) {
    if (x > R(sizeof(R) == 4 ? 88 : 709)) {  // exp(x) overflows where exp(x) cos(y) may not
      const R h = ra_exp(x * R(0.5));
      return C(h * ra_cos(y) * h, h * ra_sin(y) * h);
    }
    const R e = ra_exp(x);
    return C(e * ra_cos(y), e * ra_sin(y));
  }
  if (ra_isinf(x)) {
    if (x > R(0)) return ra_isfinite(y) ? C(x * ra_cos(y), x * ra_sin(y)) : C(x, y - y);
    return ra_isfinite(y) ? C(R(0) * ra_cos(y), R(0) * ra_sin(y)) : C(R(0), R(0));
  }
  return C(ra_nan<R>(), ra_nan<R>());
}

template <typename C> RA_DEVICE C ra_clog(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (ra_isinf(x) || ra_isinf(y)) return C(ra_inf<R>(), ra_atan2(y, x));
  if (ra_isnan(x) || ra_isnan(y)) return C(ra_nan<R>(), ra_nan<R>());
  const R ax = ra_fabs(x), ay = ra_fabs(y);
  if (ax == R(0) && ay == R(0)) return C(-ra_inf<R>(), ra_atan2(y, x));
  const R m = ax > ay ? ax : ay, s = ax > ay ? ay : ax;
  // Near |z| = 1, log|z| = log1p(|z|^2 - 1) / 2 keeps the digits log(hypot) loses.
  const R re = (m > R(0.5) && m < R(2)) ? R(0.5) * ra_log1p((m - R(1)) * (m + R(1)) + s * s)
                                        : ra_log(ra_hypot(x, y));
  return C(re, ra_atan2(y, x));
}

template <typename C> RA_DEVICE C ra_csqrt(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (x == R(0) && y == R(0)) return C(R(0), y);
  if (ra_isinf(y)) return C(ra_inf<R>(), y);
  if (ra_isnan(x)) return C(x, x);
  if (ra_isinf(x)) {
    if (x > R(0)) return C(x, ra_isnan(y) ? y : ra_copysign(R(0), y));
    return C(ra_isnan(y) ? y : R(0), ra_copysign(ra_inf<R>(), y));
  }
  if (ra_isnan(y)) return C(y, y);
  R ax = ra_fabs(x), ay = ra_fabs(y), scale = R(1);
  const bool single = sizeof(R) == 4;
  if (ax > R(single ? 8.5e37f : 4.4e307) || ay > R(single ? 8.5e37f : 4.4e307)) {
    ax *= R(0.25), ay *= R(0.25), scale = R(2);  // ax + |z| must not overflow
  } else if (ax < R(single ? 1e-30f : 1e-300) && ay < R(single ? 1e-30f : 1e-300)) {
    // tiny (subnormal) parts: scale up by an even power of two, exactly
    const R up = single ? R(18446744073709551616.0f) : R(3.402823669209384634633746e38);
    ax *= up, ay *= up, scale = single ? R(2.3283064365386963e-10f) : R(5.421010862427522170e-20);
  }
  const R t = ra_sqrt((ax + ra_hypot(ax, ay)) * R(0.5));
  const R u = ay / (R(2) * t);
  if (x >= R(0)) return C(t * scale, ra_copysign(u * scale, y));
  return C(u * scale, ra_copysign(t * scale, y));
}

// sinh(x) and cosh(x) times a factor, past the point where sinh and cosh overflow alone.
template <typename R> RA_DEVICE void ra_sinh_cosh(R x, R& s, R& c) {
  if (ra_fabs(x) > R(sizeof(R) == 4 ? 88 : 709)) {
    const R h = ra_exp(ra_fabs(x) * R(0.5));
    s = ra_copysign(h * R(0.5) * h, x), c = h * R(0.5) * h;
  } else {
    s = ra_sinh(x), c = ra_cosh(x);
  }
}

template <typename C> RA_DEVICE C ra_csinh(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (ra_isfinite(x) && ra_isfinite(y)) {
    if (y == R(0)) return C(ra_sinh(x), y);
    R s, c;
    ra_sinh_cosh(x, s, c);
    return C(s * ra_cos(y), c * ra_sin(y));
  }
  if (x == R(0)) return C(x, y - y);           // +0 + i inf, +0 + i NaN: 0 + NaN j
  if (y == R(0)) return C(x, y);               // inf + i0, NaN + i0
  if (ra_isinf(x)) return ra_isfinite(y) ? C(x * ra_cos(y), ra_inf<R>() * ra_sin(y)) : C(x, y - y);
  return C(ra_nan<R>(), ra_nan<R>());
}

template <typename C> RA_DEVICE C ra_ccosh(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (ra_isfinite(x) && ra_isfinite(y)) {
    R s, c;
    ra_sinh_cosh(x, s, c);
    if (y == R(0)) return C(c, ra_copysign(R(0), x) * y);  // sinh(x) * 0 is NaN once sinh(x) overflows
    return C(c * ra_cos(y), s * ra_sin(y));
  }
  if (x == R(0)) return C(y - y, x);                              // NaN + 0j
  if (y == R(0)) return C(x * x, ra_copysign(R(0), x) * y);       // inf + 0j, NaN + 0j
  if (ra_isinf(x)) return ra_isfinite(y) ? C(ra_inf<R>() * ra_cos(y), x * ra_sin(y)) : C(ra_inf<R>(), y - y);
  return C(ra_nan<R>(), ra_nan<R>());
}

template <typename C> RA_DEVICE C ra_ctanh(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  // The standard's +-inf + bj: +-1 with a zero signed as b (conjugate symmetry).
  if (ra_isinf(x)) return C(ra_copysign(R(1), x), ra_copysign(R(0), y));
  if (ra_isnan(x)) return C(x, y == R(0) ? y : ra_nan<R>());
  if (!ra_isfinite(y)) return x == R(0) ? C(x, ra_nan<R>()) : C(ra_nan<R>(), ra_nan<R>());
  if (ra_fabs(x) >= R(sizeof(R) == 4 ? 9 : 22)) {  // tanh(x) rounds to +-1
    const R e = ra_exp(-ra_fabs(x));
    return C(ra_copysign(R(1), x), R(4) * ra_sin(y) * ra_cos(y) * e * e);
  }
  // Kahan: with t = tan(y), b = 1 + t^2, s = sinh(x), r = sqrt(1 + s^2):
  // tanh(z) = (b r s + i t) / (1 + b s^2).
  const R t = ra_tan(y), b = R(1) + t * t, s = ra_sinh(x), r = ra_sqrt(R(1) + s * s);
  const R d = R(1) + b * s * s;
  return C(b * r * s / d, t / d);
}

// ---- inverse functions: Annex G's tables for infinities and NaNs, Kahan's formulas else ----
template <typename C> RA_DEVICE C ra_casinh(C z);

template <typename C> RA_DEVICE C ra_casin(C z) {
  typedef typename C::value_type R;
  if (!ra_isfinite(z.re) || !ra_isfinite(z.im)) return ra_times_minus_i(ra_casinh(ra_times_i(z)));
  const C s1 = ra_csqrt(C(R(1) - z.re, -z.im)), s2 = ra_csqrt(C(R(1) + z.re, z.im));
  return C(ra_atan2(z.re, s1.re * s2.re - s1.im * s2.im), ra_asinh(s1.re * s2.im - s1.im * s2.re));
}

template <typename C> RA_DEVICE C ra_casinh(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im, pi = R(RA_PI);
  if (ra_isnan(x)) {
    if (ra_isinf(y)) return C(ra_fabs(y), x);
    return y == R(0) ? C(x, y) : C(ra_nan<R>(), ra_nan<R>());
  }
  if (ra_isinf(x)) {
    if (ra_isnan(y)) return C(x, y);
    return C(x, ra_copysign(ra_isinf(y) ? pi / R(4) : R(0), y));
  }
  if (ra_isinf(y)) return C(ra_copysign(ra_inf<R>(), x), ra_copysign(pi / R(2), y));
  if (ra_isnan(y)) return C(ra_nan<R>(), ra_nan<R>());
  return ra_times_minus_i(ra_casin(ra_times_i(z)));
}

template <typename C> RA_DEVICE C ra_cacos(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im, pi = R(RA_PI);
  if (ra_isnan(x)) return ra_isinf(y) ? C(x, -y) : C(ra_nan<R>(), ra_nan<R>());
  if (ra_isinf(x)) {
    if (ra_isnan(y)) return C(y, x);
    if (ra_isinf(y)) return C(x > R(0) ? pi / R(4) : R(3) * pi / R(4), -y);
    return C(x > R(0) ? R(0) : pi, ra_copysign(ra_inf<R>(), -y));
  }
  if (ra_isinf(y)) return C(pi / R(2), -y);
  if (ra_isnan(y)) return x == R(0) ? C(pi / R(2), y) : C(ra_nan<R>(), ra_nan<R>());
  const C s1 = ra_csqrt(C(R(1) - x, -y)), s2 = ra_csqrt(C(R(1) + x, y));
  return C(R(2) * ra_atan2(s1.re, s2.re), ra_asinh(s2.re * s1.im - s2.im * s1.re));
}

template <typename C> RA_DEVICE C ra_cacosh(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im, pi = R(RA_PI);
  if (ra_isnan(x)) return ra_isinf(y) ? C(ra_inf<R>(), x) : C(ra_nan<R>(), ra_nan<R>());
  if (ra_isinf(x)) {
    if (ra_isnan(y)) return C(ra_inf<R>(), y);
    if (ra_isinf(y)) return C(ra_inf<R>(), ra_copysign(x > R(0) ? pi / R(4) : R(3) * pi / R(4), y));
    return C(ra_inf<R>(), ra_copysign(x > R(0) ? R(0) : pi, y));
  }
  if (ra_isinf(y)) return C(ra_inf<R>(), ra_copysign(pi / R(2), y));
  if (ra_isnan(y)) return x == R(0) ? C(y, pi / R(2)) : C(ra_nan<R>(), ra_nan<R>());
  const C a = ra_csqrt(C(x - R(1), y)), b = ra_csqrt(C(x + R(1), y));
  return C(ra_asinh(a.re * b.re + a.im * b.im), R(2) * ra_atan2(a.im, b.re));
}

template <typename C> RA_DEVICE C ra_catanh(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im, pi = R(RA_PI);
  if (ra_isnan(x)) return ra_isinf(y) ? C(ra_copysign(R(0), x), ra_copysign(pi / R(2), y)) : C(x, x);
  if (ra_isinf(x)) return C(ra_copysign(R(0), x), ra_isnan(y) ? y : ra_copysign(pi / R(2), y));
  if (ra_isinf(y)) return C(ra_copysign(R(0), x), ra_copysign(pi / R(2), y));
  if (ra_isnan(y)) return x == R(0) ? C(x, y) : C(y, y);
  const R ax = ra_fabs(x), ay = ra_fabs(y);
  if (ax > ra_big<R>() || ay > ra_big<R>()) {  // atanh(z) = 1/z + i pi/2 to working precision
    const R h = ra_hypot(x, y);
    return C(x / h / h, ra_copysign(pi / R(2), y));
  }
  const R im = R(0.5) * ra_atan2(R(2) * y, (R(1) - x) * (R(1) + x) - y * y);
  // re = log(|1 + z| / |1 - z|) / 2: as log1p of 4x / |1 - z|^2 near 0, as a difference of logs
  // near x = +-1 (where |1 -+ z| may be tiny).
  if (ax < R(0.5)) return C(R(0.25) * ra_log1p(R(4) * x / ((R(1) - x) * (R(1) - x) + y * y)), im);
  return C(R(0.5) * (ra_log(ra_hypot(R(1) + x, y)) - ra_log(ra_hypot(R(1) - x, y))), im);
}

template <typename C> RA_DEVICE C ra_catan(C z) { return ra_times_minus_i(ra_catanh(ra_times_i(z))); }

// NumPy's expm1 for finite z (exp(x) - 1 loses the digits of small results), the exp - 1 of
// the standard otherwise, +0 for the real part at z = 0, and y itself for y = ±0 (exp(x) may
// overflow: expm1(800 + 0i) is inf + 0i, as C99's cexp, not inf * 0 = NaN).
template <typename C> RA_DEVICE C ra_cexpm1(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (!ra_isfinite(x) || !ra_isfinite(y)) {
    const C e = ra_cexp(z);
    return C(e.re - R(1), e.im);
  }
  if (x == R(0) && y == R(0)) return C(R(0), y);
  const R h = ra_sin(y * R(0.5));
  return C(ra_expm1(x) * ra_cos(y) - R(2) * h * h, y == R(0) ? y : ra_exp(x) * ra_sin(y));
}

// log(1 + z); for small z, from log1p of |1 + z|^2 - 1 = x (2 + x) + y^2.
template <typename C> RA_DEVICE C ra_clog1p(C z) {
  typedef typename C::value_type R;
  const R x = z.re, y = z.im;
  if (ra_fabs(x) < R(0.5) && ra_fabs(y) < R(0.5))
    return C(R(0.5) * ra_log1p(x * (R(2) + x) + y * y), ra_atan2(y, R(1) + x));
  return ra_clog(C(R(1) + x, y));
}

// NumPy's power: exact repeated products for small integer exponents, exp(b log a) else.
template <typename C> RA_DEVICE C ra_cpow(C a, C b) {
  typedef typename C::value_type R;
  if (b.re == R(0) && b.im == R(0)) return C(R(1), R(0));
  if (a.re == R(0) && a.im == R(0)) {
    if (b.re > R(0)) return C(R(0), R(0));  // NumPy's 0 ** z for Re z > 0, whatever Im z is
    return C(ra_nan<R>(), ra_nan<R>());
  }
  if (b.im == R(0) && b.re == ra_trunc(b.re) && ra_fabs(b.re) < R(100)) {
    int n = (int)b.re;
    if (n == 1) return a;
    if (n == 2) return a * a;
    if (n == 3) return a * (a * a);
    const bool invert = n < 0;
    if (invert) n = -n;
    C r(R(1), R(0)), p = a;
    for (int mask = 1;; mask <<= 1) {
      if (n & mask) r = r * p;
      if (n < (mask << 1)) break;
      p = p * p;
    }
    return invert ? C(R(1), R(0)) / r : r;
  }
  const C l = ra_clog(a);
  return ra_cexp(C(b.re * l.re - b.im * l.im, b.re * l.im + b.im * l.re));
}
