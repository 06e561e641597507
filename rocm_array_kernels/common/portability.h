// Portability layer: one spelling for HIP on AMD (hiprtc) and on NVIDIA (NVRTC).
//
// Kernels are compiled at run time by hiprtc or NVRTC, which provide no host
// standard headers: everything a kernel needs beyond the compiler's builtins is
// defined in rocm_array_kernels/common/*.h, and kernels include nothing else.
#pragma once

#if defined(RA_SIM)
#define RA_AMD 1  // the CPU simulator runs the AMD path (rocm_array_kernels/sim/sim.h supplies HIP's calls)
#elif defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC_RTC__)
#define RA_AMD 1
#elif defined(__CUDACC__)
#define RA_NVIDIA 1
#else
#error "rocm_array kernels compile with hiprtc (AMD) or NVRTC (NVIDIA) only"
#endif

// The wave (warp) size comes from the device the kernel is compiled for: the
// compiler passes -DRA_WAVE_SIZE=<queried value>. It is never assumed.
#ifndef RA_WAVE_SIZE
#error "RA_WAVE_SIZE must be defined by the compiler options (the device's queried wave size)"
#endif
#if defined(RA_AMD) && defined(__AMDGCN_WAVEFRONT_SIZE)
static_assert(RA_WAVE_SIZE == __AMDGCN_WAVEFRONT_SIZE,
              "RA_WAVE_SIZE disagrees with the wave size the code is generated for");
#endif

#define RA_DEVICE __device__ __forceinline__
#define RA_HOST_DEVICE __host__ __device__ __forceinline__
#define RA_RESTRICT __restrict__
#define RA_ALIGN(n) __attribute__((aligned(n)))

// RA_LAUNCH_BOUNDS(n): a kernel launched with blocks of at most n threads (its family's declared
// block, passed as a -D option). Without a bound hiprtc plans every kernel's registers for blocks of
// 1024 threads, which on gfx90a, gfx942 and gfx1030 leaves a lane 128 VGPRs: kernels that need a
// few more spilled them to scratch. ptxas plans registers without a block size, so on NVIDIA the
// bound is left out and sm_90's code stays as measured.
#ifdef RA_AMD
#define RA_LAUNCH_BOUNDS(n) __launch_bounds__(n)
#else
#define RA_LAUNCH_BOUNDS(n)
#endif

// The launch's dynamic shared memory as an array of T (the simulator hands the block's buffer).
#ifdef RA_SIM
#define RA_DYNAMIC_SHARED(T, name) T* name = static_cast<T*>(ra_sim_dynamic_shared())
#else
#define RA_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif

// 64-bit indexing: a tensor may hold more than 2^31 elements.
typedef long long ra_index_t;

#ifdef RA_AMD
typedef unsigned long long ra_lanemask_t;  // one bit per lane of a wave of up to 64
#else
typedef unsigned int ra_lanemask_t;
#endif

// The flat index of this thread in a 1-D launch, and the stride of a grid-stride loop.
RA_DEVICE ra_index_t ra_thread_index() {
  return (ra_index_t)blockIdx.x * blockDim.x + threadIdx.x;
}
RA_DEVICE ra_index_t ra_grid_stride() { return (ra_index_t)gridDim.x * blockDim.x; }
RA_DEVICE int ra_lane() { return (int)(threadIdx.x % RA_WAVE_SIZE); }

// Each turn of a loop polling what another block writes. Nothing on a GPU, whose resident blocks all
// run; on the simulator a synchronization point, where it may run the block polled for (interleave).
#ifdef RA_SIM
RA_DEVICE void ra_spin_turn() { ra_sim_spin(); }
#else
RA_DEVICE void ra_spin_turn() {}
#endif

// ---- wave-level primitives (all lanes of the wave active) ---------------------------
#ifdef RA_AMD
template <typename T> RA_DEVICE T ra_shfl(T v, int src) { return __shfl(v, src, RA_WAVE_SIZE); }
template <typename T> RA_DEVICE T ra_shfl_down(T v, unsigned d) { return __shfl_down(v, d, RA_WAVE_SIZE); }
template <typename T> RA_DEVICE T ra_shfl_up(T v, unsigned d) { return __shfl_up(v, d, RA_WAVE_SIZE); }
template <typename T> RA_DEVICE T ra_shfl_xor(T v, int m) { return __shfl_xor(v, m, RA_WAVE_SIZE); }
RA_DEVICE ra_lanemask_t ra_ballot(bool p) { return __ballot(p); }
RA_DEVICE int ra_popc(ra_lanemask_t m) { return __popcll(m); }
// Orders the shared-memory accesses of the wave's lanes: a wave runs in lockstep, so only
// the compiler must keep the order.
RA_DEVICE void ra_wave_sync() { __builtin_amdgcn_wave_barrier(); }
#else
#define RA_FULL_MASK 0xffffffffu
template <typename T> RA_DEVICE T ra_shfl(T v, int src) { return __shfl_sync(RA_FULL_MASK, v, src, RA_WAVE_SIZE); }
template <typename T> RA_DEVICE T ra_shfl_down(T v, unsigned d) { return __shfl_down_sync(RA_FULL_MASK, v, d, RA_WAVE_SIZE); }
template <typename T> RA_DEVICE T ra_shfl_up(T v, unsigned d) { return __shfl_up_sync(RA_FULL_MASK, v, d, RA_WAVE_SIZE); }
template <typename T> RA_DEVICE T ra_shfl_xor(T v, int m) { return __shfl_xor_sync(RA_FULL_MASK, v, m, RA_WAVE_SIZE); }
RA_DEVICE ra_lanemask_t ra_ballot(bool p) { return __ballot_sync(RA_FULL_MASK, p); }
RA_DEVICE int ra_popc(ra_lanemask_t m) { return __popc(m); }
// Orders the shared-memory accesses of the warp's lanes, which may run apart.
RA_DEVICE void ra_wave_sync() { __syncwarp(); }
#endif
RA_DEVICE bool ra_any(bool p) { return ra_ballot(p) != 0; }

// Leading zero bits of a nonzero 32-bit word.
#ifdef RA_AMD
RA_DEVICE int ra_clz(unsigned int x) { return __builtin_clz(x); }
#else
RA_DEVICE int ra_clz(unsigned int x) { return __clz((int)x); }
#endif

// ---- atomics ------------------------------------------------------------------------
// Native atomicAdd for int, unsigned, unsigned long long, float and double on
// both platforms; the rest goes through compare-and-swap on the 32- or 64-bit word.
template <typename T> RA_DEVICE T ra_atomic_add(T* p, T v) { return atomicAdd(p, v); }
RA_DEVICE long long ra_atomic_add(long long* p, long long v) {
  return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
RA_DEVICE unsigned long long ra_atomic_cas(unsigned long long* p, unsigned long long expect,
                                          unsigned long long want) {
  return atomicCAS(p, expect, want);
}
RA_DEVICE unsigned int ra_atomic_cas(unsigned int* p, unsigned int expect, unsigned int want) {
  return atomicCAS(p, expect, want);
}

// The unsigned word of a size, and a bit-for-bit reinterpretation between same-size types.
template <int N> struct ra_word;
template <> struct ra_word<2> { typedef unsigned short type; };
template <> struct ra_word<4> { typedef unsigned int type; };
template <> struct ra_word<8> { typedef unsigned long long type; };
#ifdef RA_AMD
template <> struct ra_word<16> { typedef unsigned int type __attribute__((ext_vector_type(4))); };
#else
template <> struct ra_word<16> { typedef uint4 type; };
#endif

// ---- copies to shared memory that may run behind the thread ---------------------------
// ra_copy16_async(shared, global, valid) copies 16 bytes (16-byte aligned at both ends) from
// global to shared memory, or writes 16 zero bytes without reading global when !valid.
// ra_async_commit() closes the thread's copies issued since the last one into a group, and
// ra_async_wait<N>() returns once at most N of its groups are still in flight. On NVIDIA from
// sm_80 these are cp.async: the copies go around the registers, so a block can have all its
// operands in flight at once and work on the first group while the rest arrive. Elsewhere (AMD,
// the simulator) the copy is made at once and the other two do nothing: the same results. Either
// way other threads see a copy only after a __syncthreads() that follows the wait.
#if defined(RA_NVIDIA) && __CUDA_ARCH__ >= 800
RA_DEVICE void ra_copy16_async(void* shared, const void* global, bool valid) {
  const unsigned to = (unsigned)__cvta_generic_to_shared(shared);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global), "r"(valid ? 16 : 0)
               : "memory");
}
RA_DEVICE void ra_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> RA_DEVICE void ra_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
#else
RA_DEVICE void ra_copy16_async(void* shared, const void* global, bool valid) {
  typedef ra_word<16>::type W;
  W v{};
  if (valid) v = *static_cast<const W*>(global);
  *static_cast<W*>(shared) = v;
}
RA_DEVICE void ra_async_commit() {}
template <int N> RA_DEVICE void ra_async_wait() {}
#endif
// ra_async_wait<N>() for an n known only once a loop is unrolled (MAX >= n): the branches fold away.
template <int MAX> RA_DEVICE void ra_async_wait_at_most(int n) {
  if constexpr (MAX == 0) {
    ra_async_wait<0>();
  } else if (n >= MAX) {
    ra_async_wait<MAX>();
  } else {
    ra_async_wait_at_most<MAX - 1>(n);
  }
}

template <typename To, typename From> RA_DEVICE To ra_bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "ra_bit_cast needs types of one size");
  union { From from; To to; } u;
  u.from = v;
  return u.to;
}

// A load of data read once (streaming): it need not stay in the caches, whose room goes to
// data that is read again. T: any type of 2, 4, 8 or 16 bytes (a scalar, a ra_vec).
template <typename T> RA_DEVICE T ra_load_once(const T* p) {
  typedef typename ra_word<sizeof(T)>::type W;
#ifdef RA_AMD
  return ra_bit_cast<T>(__builtin_nontemporal_load(reinterpret_cast<const W*>(p)));
#else
  return ra_bit_cast<T>(__ldcs(reinterpret_cast<const W*>(p)));
#endif
}

// Atomically replace *p by op(*p, v) for a 4- or 8-byte T; returns the old value.
template <typename T, typename Op> RA_DEVICE T ra_atomic_apply(T* p, T v, Op op) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "ra_atomic_apply works on 4- and 8-byte values");
  typedef typename ra_word<sizeof(T)>::type W;
  W* w = (W*)p;
  W old = *w, assumed;
  do {
    assumed = old;
    old = ra_atomic_cas(w, assumed, ra_bit_cast<W>(op(ra_bit_cast<T>(assumed), v)));
  } while (old != assumed);
  return ra_bit_cast<T>(old);
}
