// What the nn kernels share: the accumulation type (float for the 16-bit floats and
// float itself, double for double) and the device-side index check.
#pragma once
#include "common/types.h"
#include "common/indexing.h"
#include "elementwise/math.h"

template <typename T> struct nn_acc { typedef float type; };
template <> struct nn_acc<double> { typedef double type; };

// An out-of-range index is reported (common/indexing.h: ra_report_index) and skipped.
RA_DEVICE bool nn_check_index(long long v, ra_index_t n, unsigned long long* error) {
  if (v < 0 || v >= n) {
    ra_report_index(error, 1ull, v);
    return false;
  }
  return true;
}
