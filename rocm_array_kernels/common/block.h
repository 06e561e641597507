// Wave- and block-level collectives for any element type: reduce and scan with a
// combine functor, through wave shuffles of RA_WAVE_SIZE lanes (the device's, see
// portability.h) and one shared-memory slot per wave.
//
// Every thread of the block must call them (they hold __syncthreads), in a 1-D block
// whose size is a multiple of RA_WAVE_SIZE and at most RA_BLOCK_MAX threads.
#pragma once
#include "common/portability.h"

#define RA_BLOCK_MAX 1024
#define RA_MAX_WAVES (RA_BLOCK_MAX / RA_WAVE_SIZE)

// Shuffles of any trivially copyable T, one 32-bit word at a time (accumulators are structs).
template <typename T> union RaWords {
  T value;
  unsigned int w[(sizeof(T) + 3) / 4];
};

template <typename T> RA_DEVICE T ra_shfl_down_any(T v, unsigned d) {
  RaWords<T> u;
  u.value = v;
#pragma unroll
  for (int k = 0; k < (int)(sizeof(u.w) / 4); ++k) u.w[k] = ra_shfl_down(u.w[k], d);
  return u.value;
}

template <typename T> RA_DEVICE T ra_shfl_up_any(T v, unsigned d) {
  RaWords<T> u;
  u.value = v;
#pragma unroll
  for (int k = 0; k < (int)(sizeof(u.w) / 4); ++k) u.w[k] = ra_shfl_up(u.w[k], d);
  return u.value;
}

// Shared storage for n values of T (no constructors run: __shared__ allows none).
#define RA_SHARED_ARRAY(T, name, n) \
  __shared__ unsigned long long name##_raw[((n) * sizeof(T) + 7) / 8]; \
  T* name = reinterpret_cast<T*>(name##_raw)

// The combination of the wave's values, in lane 0 (a tree: pairs, then pairs of pairs).
template <typename T, typename Combine> RA_DEVICE T ra_wave_reduce(T v, Combine op) {
#pragma unroll
  for (int d = RA_WAVE_SIZE / 2; d > 0; d /= 2) v = op(v, ra_shfl_down_any(v, d));
  return v;
}

// The combination of the block's values, in thread 0.
template <typename T, typename Combine> RA_DEVICE T ra_block_reduce(T v, Combine op) {
  RA_SHARED_ARRAY(T, partial, RA_MAX_WAVES);
  const int lane = ra_lane(), wave = threadIdx.x / RA_WAVE_SIZE;
  const int waves = blockDim.x / RA_WAVE_SIZE;
  v = ra_wave_reduce(v, op);
  __syncthreads();  // partial may still be read by an earlier call
  if (lane == 0) partial[wave] = v;
  __syncthreads();
  if (wave == 0) {
    T w = partial[lane < waves ? lane : 0];
    for (int d = RA_WAVE_SIZE / 2; d > 0; d /= 2) {
      T o = ra_shfl_down_any(w, d);
      if (lane + d < waves) w = op(w, o);
    }
    v = w;
  }
  return v;
}

// Inclusive scan over the lanes of a wave (lane i: lanes 0..i combined, in order).
template <typename T, typename Combine> RA_DEVICE T ra_wave_scan(T v, Combine op) {
  const int lane = ra_lane();
#pragma unroll
  for (int d = 1; d < RA_WAVE_SIZE; d *= 2) {
    T o = ra_shfl_up_any(v, d);
    if (lane >= d) v = op(o, v);
  }
  return v;
}

// Scan over the threads of the block, in thread order: returns the inclusive value;
// *exclusive gets the combination of the threads before this one (identity for thread 0)
// and *total the block's combination.
template <typename T, typename Combine>
RA_DEVICE T ra_block_scan(T v, Combine op, T identity, T* exclusive, T* total) {
  RA_SHARED_ARRAY(T, sums, RA_MAX_WAVES);
  const int lane = ra_lane(), wave = threadIdx.x / RA_WAVE_SIZE;
  const int waves = blockDim.x / RA_WAVE_SIZE;
  T inclusive = ra_wave_scan(v, op);
  T before = ra_shfl_up_any(inclusive, 1);
  __syncthreads();
  if (lane == RA_WAVE_SIZE - 1) sums[wave] = inclusive;
  __syncthreads();
  if (wave == 0) {
    T s = ra_wave_scan(sums[lane < waves ? lane : waves - 1], op);
    if (lane < waves) sums[lane] = s;
  }
  __syncthreads();
  T carry = wave > 0 ? sums[wave - 1] : identity;
  *exclusive = lane > 0 ? op(carry, before) : carry;
  *total = sums[waves - 1];
  return wave > 0 ? op(carry, inclusive) : inclusive;
}
