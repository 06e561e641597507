// HIP's device-side names for kernels compiled by the simulator (rocm_array/runtime/sim.py
// passes `-include sim/sim.h -DRA_SIM`): the kernels run on the CPU, each block's threads as
// fibers of the scheduler (rocm_array_kernels/sim/scheduler.cpp), with RA_WAVE_SIZE lanes to a wave.
// portability.h takes its AMD path under RA_SIM, so the kernels run the code that hiprtc
// compiles, with the wave operations below in place of the hardware's.
//
// No standard headers: the kernels define the fixed-width typedefs themselves
// (common/types.h, as hiprtc needs), which the C library's would contradict.
#pragma once
#include "sim/abi.h"

#ifndef RA_WAVE_SIZE
#error "RA_WAVE_SIZE must be defined by the compiler options (the simulated wave size)"
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// A static is the running block's shared memory: all of them lie in one section, which the
// scheduler saves and restores when it switches between blocks (ROCM_ARRAY_SIM_BLOCKS=interleave).
#define __shared__ static __attribute__((section("ra_sim_shared")))
// The section's bounds, which the linker defines (null both when the program has no __shared__).
extern "C" char __start_ra_sim_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_ra_sim_shared[] __attribute__((weak, visibility("hidden")));

#define threadIdx (*ra_sim_thread_idx)
#define blockIdx ra_sim_block_idx
#define blockDim ra_sim_block_dim
#define gridDim ra_sim_grid_dim

inline void __syncthreads() { ra_sim_syncthreads(); }
#define __builtin_amdgcn_wave_barrier() ra_sim_wave_barrier()

// ---- wave operations, with HIP's (AMD) lane arithmetic --------------------------------
template <typename T> inline T ra_sim_exchange_as(T v, int src) {
  static_assert(sizeof(T) <= 8, "the simulator's shuffles move up to 8 bytes, as HIP's do");
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(T));
  bits = ra_sim_exchange(bits, src & (RA_WAVE_SIZE - 1));  // the hardware's index wraps
  __builtin_memcpy(&v, &bits, sizeof(T));
  return v;
}
template <typename T> inline T __shfl(T v, int src, int width = RA_WAVE_SIZE) {
  return ra_sim_exchange_as(v, src + (ra_sim_lane_id & ~(width - 1)));
}
template <typename T> inline T __shfl_up(T v, unsigned int delta, int width = RA_WAVE_SIZE) {
  const int self = ra_sim_lane_id, src = self - (int)delta;
  return ra_sim_exchange_as(v, src < (self & ~(width - 1)) ? self : src);
}
template <typename T> inline T __shfl_down(T v, unsigned int delta, int width = RA_WAVE_SIZE) {
  const int self = ra_sim_lane_id;
  return ra_sim_exchange_as(v, (self & (width - 1)) + (int)delta >= width ? self : self + (int)delta);
}
template <typename T> inline T __shfl_xor(T v, int mask, int width = RA_WAVE_SIZE) {
  const int self = ra_sim_lane_id, src = self ^ mask;
  return ra_sim_exchange_as(v, src >= ((self + width) & ~(width - 1)) ? self : src);
}
inline unsigned long long __ballot(int predicate) { return ra_sim_ballot(predicate); }
inline int __popcll(unsigned long long m) { return __builtin_popcountll(m); }

// ---- atomics: HIP's overloads. Fibers switch only at the simulator's synchronization
// points, never inside one of these, so a plain read-modify-write is indivisible. ----
#define RA_SIM_ATOMICS(T)                                                         \
  inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }         \
  inline T atomicCAS(T* p, T expect, T want) { T old = *p; if (old == expect) *p = want; return old; }
RA_SIM_ATOMICS(int)
RA_SIM_ATOMICS(unsigned int)
RA_SIM_ATOMICS(unsigned long long)
#undef RA_SIM_ATOMICS
inline float atomicAdd(float* p, float v) { float old = *p; *p = old + v; return old; }
inline double atomicAdd(double* p, double v) { double old = *p; *p = old + v; return old; }

// ---- the math library functions the kernels call (hiprtc and NVRTC have them built in) ----
#define RA_SIM_MATH1(F) float F##f(float); double F(double);
#define RA_SIM_MATH2(F) float F##f(float, float); double F(double, double);
extern "C" {
RA_SIM_MATH1(sin) RA_SIM_MATH1(cos) RA_SIM_MATH1(tan) RA_SIM_MATH1(asin) RA_SIM_MATH1(acos)
RA_SIM_MATH1(atan) RA_SIM_MATH1(sinh) RA_SIM_MATH1(cosh) RA_SIM_MATH1(tanh) RA_SIM_MATH1(asinh)
RA_SIM_MATH1(acosh) RA_SIM_MATH1(atanh) RA_SIM_MATH1(exp) RA_SIM_MATH1(expm1) RA_SIM_MATH1(log)
RA_SIM_MATH1(log1p) RA_SIM_MATH1(log2) RA_SIM_MATH1(log10) RA_SIM_MATH1(sqrt) RA_SIM_MATH1(ceil)
RA_SIM_MATH1(floor) RA_SIM_MATH1(trunc) RA_SIM_MATH1(rint) RA_SIM_MATH1(fabs) RA_SIM_MATH1(erf)
RA_SIM_MATH2(atan2) RA_SIM_MATH2(copysign) RA_SIM_MATH2(hypot) RA_SIM_MATH2(pow) RA_SIM_MATH2(fmod)
RA_SIM_MATH2(nextafter)
}
#undef RA_SIM_MATH1
#undef RA_SIM_MATH2

// ---- the launch entry: the simulator's Rtc appends one per name expression ----------------
// `extern "C" int ra_sim_kernel_<i>(const RaSimLaunch* l, void** p)
//    { return ra_sim_launch<&EXPR>(l, p, "EXPR"); }`: the symbol the driver looks up.
template <unsigned long... I> struct RaSimIndices {};
template <unsigned long N, unsigned long... I> struct RaSimCount : RaSimCount<N - 1, N - 1, I...> {};
template <unsigned long... I> struct RaSimCount<0, I...> { typedef RaSimIndices<I...> type; };

template <auto K> struct RaSimEntry;
template <typename... A, void (*K)(A...)> struct RaSimEntry<K> {
  template <unsigned long... I> static void call(void** params, RaSimIndices<I...>) {
    K(*static_cast<A*>(params[I])...);
  }
  static void body(void** params) { call(params, typename RaSimCount<sizeof...(A)>::type()); }
};

template <auto K> int ra_sim_launch(const RaSimLaunch* launch, void** params, const char* name) {
  return ra_sim_run(launch, RA_WAVE_SIZE, name, &RaSimEntry<K>::body, params, __start_ra_sim_shared,
                    __stop_ra_sim_shared);
}
