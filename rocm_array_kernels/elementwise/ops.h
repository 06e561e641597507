// The elementwise functors: one per row of rocm_array_plugins/elementwise/table.py (its `functor` column),
// the standard's functions and the activations.
//
// A functor's operator() takes the compute type: the input dtype, except float16 and
// bfloat16, which arrive as float unless the functor sets widen = false (nextafter steps
// in the dtype itself). It returns the row's result (bool for predicates, the real type
// for abs/real/imag of a complex), which the kernel casts to the output dtype. Results
// follow the standard's special cases, and NumPy's choices where the standard leaves
// one open (the cpu back's results): integer division by zero gives 0, integer overflow
// wraps, shifts by the width or more give 0 (or -1).
#pragma once
#include "elementwise/complex.h"

template <typename T> struct ra_is_float {
  static constexpr bool value = ra_same<T, float>::value || ra_same<T, double>::value;
};

#define RA_FUNCTOR(NAME) struct NAME { static constexpr bool widen = true;
#define RA_END };

// ---- floating-point functions: real from math.h, complex from complex.h (in double) ----
template <typename C> RA_DEVICE C ra_ccos(C z) { return ra_ccosh(ra_times_i(z)); }
template <typename C> RA_DEVICE C ra_csin(C z) { return ra_times_minus_i(ra_csinh(ra_times_i(z))); }
template <typename C> RA_DEVICE C ra_ctan(C z) { return ra_times_minus_i(ra_ctanh(ra_times_i(z))); }
template <typename C> RA_DEVICE C ra_clog2(C z) {
  typedef typename C::value_type R;
  const C l = ra_clog(z);
  return C(l.re * R(1.44269504088896340736), l.im * R(1.44269504088896340736));
}
template <typename C> RA_DEVICE C ra_clog10(C z) {
  typedef typename C::value_type R;
  const C l = ra_clog(z);
  return C(l.re * R(0.434294481903251827651), l.im * R(0.434294481903251827651));
}

// WIDE: a complex64 computes in double and rounds once. Not for the logarithms, whose results
// with an infinite real part carry a scaled angle that must match NumPy's float one to the bit.
#define RA_FLOATING(NAME, REAL, COMPLEX, WIDE)                                    \
  RA_FUNCTOR(NAME)                                                               \
  template <typename T> RA_DEVICE T operator()(T a) const {                      \
    if constexpr (ra_is_complex<T>::value && WIDE) return ra_narrow<T>(COMPLEX(ra_widen(a))); \
    else if constexpr (ra_is_complex<T>::value) return COMPLEX(a);               \
    else return REAL(a);                                                         \
  }                                                                              \
  RA_END
RA_FLOATING(acos_op, ra_acos, ra_cacos, true)
RA_FLOATING(acosh_op, ra_acosh, ra_cacosh, true)
RA_FLOATING(asin_op, ra_asin, ra_casin, true)
RA_FLOATING(asinh_op, ra_asinh, ra_casinh, true)
RA_FLOATING(atan_op, ra_atan, ra_catan, true)
RA_FLOATING(atanh_op, ra_atanh, ra_catanh, true)
RA_FLOATING(cos_op, ra_cos, ra_ccos, true)
RA_FLOATING(cosh_op, ra_cosh, ra_ccosh, true)
RA_FLOATING(exp_op, ra_exp, ra_cexp, true)
RA_FLOATING(expm1_op, ra_expm1, ra_cexpm1, true)
RA_FLOATING(log1p_op, ra_log1p, ra_clog1p, true)
RA_FLOATING(sin_op, ra_sin, ra_csin, true)
RA_FLOATING(sinh_op, ra_sinh, ra_csinh, true)
RA_FLOATING(sqrt_op, ra_sqrt, ra_csqrt, true)
RA_FLOATING(tan_op, ra_tan, ra_ctan, true)
RA_FLOATING(tanh_op, ra_tanh, ra_ctanh, true)
RA_FLOATING(log_op, ra_log, ra_clog, false)
RA_FLOATING(log2_op, ra_log2, ra_clog2, false)
RA_FLOATING(log10_op, ra_log10, ra_clog10, false)
#undef RA_FLOATING

// Real-valued rounding: identity on integers.
#define RA_ROUNDING(NAME, REAL)                                    \
  RA_FUNCTOR(NAME)                                                 \
  template <typename T> RA_DEVICE T operator()(T a) const {        \
    if constexpr (ra_is_float<T>::value) return REAL(a);           \
    else return a;                                                 \
  }                                                                \
  RA_END
RA_ROUNDING(ceil_op, ra_ceil)
RA_ROUNDING(floor_op, ra_floor)
RA_ROUNDING(trunc_op, ra_trunc)
#undef RA_ROUNDING

// ---- other unary functions ----
RA_FUNCTOR(abs_op)
template <typename T> RA_DEVICE auto operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return ra_hypot(a.re, a.im);
  else if constexpr (ra_is_float<T>::value) return ra_fabs(a);
  else if constexpr (ra_is_signed<T>::value) return a < T(0) ? ra_wrap_sub(T(0), a) : a;
  else return a;
}
RA_END

RA_FUNCTOR(invert_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_same<T, bool>::value) return !a;
  else return (T)~a;
}
RA_END

RA_FUNCTOR(conj_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return T(a.re, -a.im);
  else return a;
}
RA_END

RA_FUNCTOR(real_op)
template <typename T> RA_DEVICE auto operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return a.re;
  else return a;
}
RA_END

RA_FUNCTOR(imag_op)
template <typename T> RA_DEVICE auto operator()(T a) const { return a.im; }
RA_END

RA_FUNCTOR(isfinite_op)
template <typename T> RA_DEVICE bool operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return ra_isfinite(a.re) && ra_isfinite(a.im);
  else if constexpr (ra_is_float<T>::value) return ra_isfinite(a);
  else return true;
}
RA_END

RA_FUNCTOR(isinf_op)
template <typename T> RA_DEVICE bool operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return ra_isinf(a.re) || ra_isinf(a.im);
  else if constexpr (ra_is_float<T>::value) return ra_isinf(a);
  else return false;
}
RA_END

RA_FUNCTOR(isnan_op)
template <typename T> RA_DEVICE bool operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return ra_cisnan(a);
  else if constexpr (ra_is_float<T>::value) return ra_isnan(a);
  else return false;
}
RA_END

RA_FUNCTOR(logical_not_op)
RA_DEVICE bool operator()(bool a) const { return !a; }
RA_END

RA_FUNCTOR(neg_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_is_integral<T>::value) return ra_wrap_sub(T(0), a);
  else return -a;
}
RA_END

RA_FUNCTOR(pos_op)
template <typename T> RA_DEVICE T operator()(T a) const { return a; }
RA_END

// NumPy's reciprocal of a complex (Smith's quotient 1 / a).
RA_FUNCTOR(reciprocal_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) {
    typedef typename T::value_type R;
    if (ra_fabs(a.im) <= ra_fabs(a.re)) {
      const R r = a.im / a.re, d = a.re + a.im * r;
      return T(R(1) / d, -r / d);
    }
    const R r = a.re / a.im, d = a.re * r + a.im;
    return T(r / d, R(-1) / d);
  } else {
    return T(1) / a;
  }
}
RA_END

// Half to even.
RA_FUNCTOR(round_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) return T(ra_rint(a.re), ra_rint(a.im));
  else if constexpr (ra_is_float<T>::value) return ra_rint(a);
  else return a;
}
RA_END

// z / |z| for a complex (0 at 0, NaN with a NaN part, the unit direction of an infinite part).
RA_FUNCTOR(sign_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_is_complex<T>::value) {
    typedef typename T::value_type R;
    const R x = a.re, y = a.im;
    if (ra_isnan(x) || ra_isnan(y)) return T(ra_nan<R>(), ra_nan<R>());
    if (ra_isinf(x)) return ra_isinf(y) ? T(ra_nan<R>(), ra_nan<R>()) : T(ra_copysign(R(1), x), R(0));
    if (ra_isinf(y)) return T(R(0), ra_copysign(R(1), y));
    if (x == R(0) && y == R(0)) return T(R(0), R(0));
    const R m = ra_hypot(x, y);
    return T(x / m, y / m);
  } else if constexpr (ra_is_float<T>::value) {
    return a > T(0) ? T(1) : a < T(0) ? T(-1) : a == T(0) ? T(0) : a;
  } else if constexpr (ra_is_signed<T>::value) {
    return (T)((a > T(0)) - (a < T(0)));
  } else {
    return (T)(a > T(0));
  }
}
RA_END

RA_FUNCTOR(signbit_op)
template <typename T> RA_DEVICE bool operator()(T a) const { return ra_signbit(a); }
RA_END

RA_FUNCTOR(square_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  if constexpr (ra_is_integral<T>::value) return ra_wrap_mul(a, a);
  else return a * a;
}
RA_END

// ---- binary arithmetic ----
#define RA_ARITHMETIC(NAME, OP, WRAP)                                       \
  RA_FUNCTOR(NAME)                                                          \
  template <typename T> RA_DEVICE T operator()(T a, T b) const {            \
    if constexpr (ra_is_integral<T>::value) return WRAP(a, b);              \
    else return a OP b;                                                     \
  }                                                                         \
  RA_END
RA_ARITHMETIC(add_op, +, ra_wrap_add)
RA_ARITHMETIC(sub_op, -, ra_wrap_sub)
RA_ARITHMETIC(mul_op, *, ra_wrap_mul)
#undef RA_ARITHMETIC

RA_FUNCTOR(div_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const { return a / b; }
RA_END

// Floor division and remainder as NumPy's divmod (remainder takes the divisor's sign); an
// infinite operand gives floor(a / b), as the standard says.
RA_FUNCTOR(floor_div_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if constexpr (ra_is_float<T>::value) {
    if (b == T(0) || ra_isinf(a) || ra_isinf(b)) return b == T(0) ? a / b : ra_floor(a / b);
    const T mod = ra_fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div == T(0)) return ra_copysign(T(0), a / b);
    T q = ra_floor(div);
    if (div - q > T(0.5)) q += T(1);
    return q;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (ra_is_signed<T>::value) {
      if (b == T(-1)) return ra_wrap_sub(T(0), a);
      T q = (T)(a / b);
      if ((T)(a % b) != T(0) && ((a < T(0)) != (b < T(0)))) q = (T)(q - 1);
      return q;
    } else {
      return (T)(a / b);
    }
  }
}
RA_END

RA_FUNCTOR(remainder_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if constexpr (ra_is_float<T>::value) {
    T mod = ra_fmod(a, b);
    if (b == T(0)) return mod;
    if (mod != T(0)) {
      if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
      mod = ra_copysign(T(0), b);
    }
    return mod;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (ra_is_signed<T>::value) {
      if (b == T(-1)) return T(0);
      T r = (T)(a % b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = (T)(r + b);
      return r;
    } else {
      return (T)(a % b);
    }
  }
}
RA_END

// Integer powers by squaring (wrapping); a negative exponent gives the exact 1 / a**-b
// truncated toward zero: 1 for a == 1, +-1 for a == -1, else 0.
RA_FUNCTOR(pow_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if constexpr (ra_is_complex<T>::value) {
    return ra_cpow(a, b);
  } else if constexpr (ra_is_float<T>::value) {
    return ra_pow(a, b);
  } else {
    if constexpr (ra_is_signed<T>::value) {
      if (b < T(0)) return a == T(1) ? T(1) : a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0);
    }
    T r = T(1), p = a;
    for (T e = b; e; e = (T)(e >> 1)) {
      if (e & 1) r = ra_wrap_mul(r, p);
      p = ra_wrap_mul(p, p);
    }
    return r;
  }
}
RA_END

// NaN wins; of equal arguments (+0 and -0), the second (NumPy's maximum and minimum).
RA_FUNCTOR(maximum_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if constexpr (ra_is_float<T>::value) return (a > b || a != a) ? a : b;
  else return a >= b ? a : b;
}
RA_END

RA_FUNCTOR(minimum_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if constexpr (ra_is_float<T>::value) return (a < b || a != a) ? a : b;
  else return a <= b ? a : b;
}
RA_END

RA_FUNCTOR(atan2_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const { return ra_atan2(a, b); }
RA_END

RA_FUNCTOR(copysign_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const { return ra_copysign(a, b); }
RA_END

RA_FUNCTOR(hypot_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const { return ra_hypot(a, b); }
RA_END

// NumPy's logaddexp: equal arguments (infinities of one sign included) give a + log(2).
RA_FUNCTOR(logaddexp_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if (a == b) return a + T(RA_LN2);
  const T d = a - b;
  if (d > T(0)) return a + ra_log1p(ra_exp(-d));
  if (d <= T(0)) return b + ra_log1p(ra_exp(d));
  return d;  // NaN
}
RA_END

// One step in the dtype itself: float16 and bfloat16 step on their bits (and, as C's nextafter and
// the standard's signed zeros have it, give y when x == y: nextafter(+0, -0) is -0).
struct nextafter_op {
  static constexpr bool widen = false;
  template <typename T> RA_DEVICE T operator()(T a, T b) const {
    if constexpr (ra_is_float<T>::value) {
      return ra_nextafter(a, b);
    } else {
      const float fa = a, fb = b;
      if (fa != fa || fb != fb) return T(fa + fb);
      if (fa == fb) return b;
      if (fa == 0.0f) return T::from_bits((uint16_t)((b.bits & 0x8000u) | 1u));
      return T::from_bits((uint16_t)((fa < fb) == (fa > 0.0f) ? a.bits + 1 : a.bits - 1));
    }
  }
};

// ---- bitwise (bool: logical) ----
#define RA_BITWISE(NAME, OP)                                                         \
  RA_FUNCTOR(NAME)                                                                   \
  template <typename T> RA_DEVICE T operator()(T a, T b) const { return (T)(a OP b); } \
  RA_END
RA_BITWISE(and_op, &)
RA_BITWISE(or_op, |)
RA_BITWISE(xor_op, ^)
#undef RA_BITWISE

RA_FUNCTOR(lshift_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  typedef typename ra_unsigned<T>::type U;
  if (b < T(0) || (unsigned long long)b >= sizeof(T) * 8) return T(0);
  return (T)(U)((unsigned long long)(U)a << (int)b);
}
RA_END

RA_FUNCTOR(rshift_op)
template <typename T> RA_DEVICE T operator()(T a, T b) const {
  if (b < T(0) || (unsigned long long)b >= sizeof(T) * 8) return a < T(0) ? T(-1) : T(0);
  return (T)(a >> (int)b);
}
RA_END

// ---- comparisons and logic ----
#define RA_COMPARE(NAME, EXPR)                                                       \
  RA_FUNCTOR(NAME)                                                                   \
  template <typename T> RA_DEVICE bool operator()(T a, T b) const { return EXPR; }   \
  RA_END
RA_COMPARE(eq_op, a == b)
RA_COMPARE(ne_op, a != b)
RA_COMPARE(gt_op, a > b)
RA_COMPARE(ge_op, a >= b)
RA_COMPARE(lt_op, a < b)
RA_COMPARE(le_op, a <= b)
RA_COMPARE(logical_and_op, a && b)
RA_COMPARE(logical_or_op, a || b)
RA_COMPARE(logical_xor_op, a != b)
#undef RA_COMPARE

// ---- activations: the rows of table.py's ACTIVATIONS (the nn plugin's xp.nn.relu...), of float
// or double (the 16-bit floats computed in float). elu, affine and powf take two parameters after
// the element (elementwise.hip's RaParams), the second 0 for those with one. ----
RA_FUNCTOR(relu_op)  // NaN stays NaN, as torch.relu
template <typename T> RA_DEVICE T operator()(T a) const { return a < T(0) ? T(0) : a; }
RA_END

RA_FUNCTOR(gelu_op)  // exact: x * Phi(x)
template <typename T> RA_DEVICE T operator()(T a) const {
  return T(0.5) * a * (T(1) + ra_erf(a * T(0.70710678118654752440)));
}
RA_END

RA_FUNCTOR(gelu_tanh_op)
template <typename T> RA_DEVICE T operator()(T a) const {
  const T k = T(0.79788456080286535588);  // sqrt(2 / pi)
  return T(0.5) * a * (T(1) + ra_tanh(k * (a + T(0.044715) * a * a * a)));
}
RA_END

RA_FUNCTOR(sigmoid_op)
template <typename T> RA_DEVICE T operator()(T a) const { return T(1) / (T(1) + ra_exp(-a)); }
RA_END

RA_FUNCTOR(silu_op)
template <typename T> RA_DEVICE T operator()(T a) const { return a / (T(1) + ra_exp(-a)); }
RA_END

RA_FUNCTOR(elu_op)
template <typename T> RA_DEVICE T operator()(T a, T alpha, T) const { return a > T(0) ? a : alpha * ra_expm1(a); }
RA_END

RA_FUNCTOR(affine_op)  // rounded once
template <typename T> RA_DEVICE T operator()(T a, T mul, T add) const { return a * mul + add; }
RA_END

RA_FUNCTOR(powf_op)
template <typename T> RA_DEVICE T operator()(T a, T e, T) const { return ra_pow(a, e); }
RA_END

#undef RA_FUNCTOR
#undef RA_END
