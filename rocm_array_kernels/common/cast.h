// ra_cast<D>(s): conversion between any two of the 15 element types, as NumPy's
// astype does it: x -> bool is x != 0 (either part for complex), complex -> real
// keeps the real part, float -> integer truncates (through int64 for narrow
// integers, so -1.0 -> uint8 gives 255 as on the host), integer -> integer wraps,
// and every conversion to float16 or bfloat16 rounds once, to nearest even.
#pragma once
#include "common/types.h"

template <typename D, typename S> RA_DEVICE D ra_cast(S s) {
  if constexpr (ra_same<D, S>::value) {
    return s;
  } else if constexpr (ra_is_complex<S>::value) {
    typedef typename S::value_type R;
    if constexpr (ra_same<D, bool>::value) return s.re != R(0) || s.im != R(0);
    else if constexpr (ra_is_complex<D>::value)
      return D(ra_cast<typename D::value_type>(s.re), ra_cast<typename D::value_type>(s.im));
    else return ra_cast<D>(s.re);
  } else if constexpr (ra_is_complex<D>::value) {
    typedef typename D::value_type R;
    return D(ra_cast<R>(s), R(0));
  } else if constexpr (ra_is_16bit_float<S>::value) {
    return ra_cast<D>((float)s);  // exact
  } else if constexpr (ra_same<S, bool>::value) {
    return ra_cast<D>((int)s);
  } else if constexpr (ra_same<D, bool>::value) {
    return s != S(0);
  } else if constexpr (ra_is_16bit_float<D>::value) {
    if constexpr (ra_same<S, float>::value) return D(s);
    // doubles and integers (exact in double for any value a 16-bit float holds)
    else return D(ra_double_to_float_odd((double)s));
  } else if constexpr (ra_is_integral<D>::value && sizeof(D) < 8 && !ra_is_integral<S>::value) {
    return (D)(long long)s;
  } else {
    return (D)s;
  }
}
