// The simulator's scheduler: runs a grid on the CPU, one block at a time, each thread of
// the block a fiber. A fiber runs until it reaches a synchronization point (__syncthreads,
// a wave operation) or returns; when every fiber waits, the waits that can complete do:
// a wave operation once every live lane of the wave has reached one, __syncthreads once
// every live thread of the block has. Lanes are exact: a wave is RA_WAVE_SIZE consecutive
// threads in linear order (x fastest), as on AMD hardware.
//
// Built once per process by rocm_array/runtime/sim.py (with the system headers, unlike
// the kernel libraries) and loaded with RTLD_GLOBAL; see rocm_array_kernels/sim/abi.h.
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "sim/abi.h"

#define RA_SIM_EXPORT extern "C" __attribute__((visibility("default")))

// Definitions (`extern "C"` on a single declaration would only declare them).
extern "C" {
__attribute__((visibility("default"))) RaSimDim3 ra_sim_block_idx, ra_sim_block_dim, ra_sim_grid_dim;
__attribute__((visibility("default"))) RaSimDim3* ra_sim_thread_idx;
__attribute__((visibility("default"))) int ra_sim_lane_id;
}

namespace {

//: The most threads a block may have (HIP's and CUDA's limit).
constexpr unsigned int MAX_THREADS = 1024;
//: Bytes of stack per fiber: kernels keep small frames; the rest is never touched (mmap).
constexpr size_t STACK_BYTES = 256 << 10;
//: What a lane reads from a lane that has exited or does not exist: the hardware gives
//: whatever that lane's register held, so any use of it is a bug; the pattern makes it show.
constexpr unsigned long long POISON = 0xdeadbeefdeadbeefull;
//: Byte every block's dynamic shared memory starts as (the hardware's is undefined too).
constexpr int SHARED_POISON = 0xa5;

enum class State { ready, at_barrier, at_wave, done };
enum class WaveOp { exchange, ballot, barrier };
const char* const WAVE_OP_NAME[] = {"a shuffle", "a ballot", "a wave barrier"};

struct Fiber {
  jmp_buf context;       // where it stopped
  ucontext_t start;      // its first entry (makecontext)
  char* stack = nullptr;
  bool started = false;  // entered fiber_main already (then resumed through `context`)
  RaSimDim3 tid{};
  State state = State::done;
  WaveOp op = WaveOp::barrier;
  unsigned long long value = 0, result = 0;
  int src = 0;
};

std::mutex launch_lock;  // one grid at a time: the device globals above are the running block's
std::vector<Fiber> fibers(MAX_THREADS);
jmp_buf scheduler;
Fiber* current = nullptr;
RaSimBody body = nullptr;
void** params = nullptr;
std::vector<unsigned char> dynamic_shared;
thread_local std::string error;  // the last failure on this OS thread

[[noreturn]] void fiber_main() {
  for (;;) {  // one simulated thread per turn: a fiber is reused for the next block's
    body(params);
    current->state = State::done;
    if (!_setjmp(current->context)) _longjmp(scheduler, 1);
  }
}

bool make_stack(Fiber& f) {
  if (f.stack) return true;
  // A guard page below the stack: an overflow faults instead of corrupting a neighbour.
  void* p = mmap(nullptr, STACK_BYTES + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  mprotect(p, 4096, PROT_NONE);
  f.stack = static_cast<char*>(p) + 4096;
  getcontext(&f.start);
  f.start.uc_stack.ss_sp = f.stack;
  f.start.uc_stack.ss_size = STACK_BYTES;
  f.start.uc_link = nullptr;
  makecontext(&f.start, fiber_main, 0);
  return true;
}

void resume(Fiber& f, int wave_size, unsigned int index) {
  current = &f;
  ra_sim_thread_idx = &f.tid;
  ra_sim_lane_id = (int)(index % wave_size);
  if (_setjmp(scheduler)) return;  // back from the fiber
  if (f.started) _longjmp(f.context, 1);
  f.started = true;
  setcontext(&f.start);
}

// The current fiber waits in `state` until the scheduler lets it go on.
void wait(State state) {
  Fiber* self = current;
  self->state = state;
  if (!_setjmp(self->context)) _longjmp(scheduler, 1);
}

std::string describe(unsigned int n, int wave_size) {
  std::string s;
  char line[160];
  for (unsigned int w = 0; w * wave_size < n; ++w) {
    unsigned int counts[4] = {};
    for (unsigned int i = w * wave_size; i < n && i < (w + 1) * wave_size; ++i) ++counts[(int)fibers[i].state];
    std::snprintf(line, sizeof line, "; wave %u: %u at __syncthreads, %u at a wave operation, %u exited", w,
                  counts[(int)State::at_barrier], counts[(int)State::at_wave], counts[(int)State::done]);
    s += line;
  }
  return s;
}

// Completes the wave operation every live lane of wave [lo, hi) waits at; false when they
// wait at different kinds of operation (divergent lanes).
bool complete_wave(unsigned int lo, unsigned int hi, int wave_size) {
  WaveOp op = fibers[lo].op;
  unsigned long long ballot = 0;
  for (unsigned int i = lo; i < hi; ++i) {
    const Fiber& f = fibers[i];
    if (f.state == State::done) continue;
    op = f.op;
    if (f.value) ballot |= 1ull << (i - lo);
  }
  for (unsigned int i = lo; i < hi; ++i) {
    Fiber& f = fibers[i];
    if (f.state == State::done) continue;
    if (f.op != op) {
      char msg[200];
      std::snprintf(msg, sizeof msg, "lanes of wave %u wait at different wave operations (%s and %s): divergent lanes",
                    lo / wave_size, WAVE_OP_NAME[(int)op], WAVE_OP_NAME[(int)f.op]);
      error = msg;
      return false;
    }
    if (op == WaveOp::exchange) {
      const unsigned int from = lo + f.src;
      f.result = from < hi && fibers[from].state != State::done ? fibers[from].value : POISON;
    } else {
      f.result = ballot;
    }
  }
  for (unsigned int i = lo; i < hi; ++i)
    if (fibers[i].state != State::done) fibers[i].state = State::ready;
  return true;
}

bool run_block(unsigned int n, int wave_size, bool reverse) {
  const RaSimDim3 b = ra_sim_block_dim;
  for (unsigned int i = 0; i < n; ++i) {
    Fiber& f = fibers[i];
    f.tid = {i % b.x, i / b.x % b.y, i / (b.x * b.y)};
    f.state = State::ready;
  }
  for (;;) {
    for (unsigned int k = 0; k < n; ++k) {
      const unsigned int i = reverse ? n - 1 - k : k;
      if (fibers[i].state == State::ready) resume(fibers[i], wave_size, i);
    }
    bool moved = false, live = false, all_at_barrier = true;
    for (unsigned int lo = 0; lo < n; lo += wave_size) {
      const unsigned int hi = lo + wave_size < n ? lo + wave_size : n;
      bool any = false, all_at_wave = true;
      for (unsigned int i = lo; i < hi; ++i) {
        const State s = fibers[i].state;
        if (s == State::done) continue;
        any = true;
        all_at_wave &= s == State::at_wave;
        all_at_barrier &= s == State::at_barrier;
      }
      live |= any;
      if (any && all_at_wave) {
        if (!complete_wave(lo, hi, wave_size)) return false;
        moved = true;
      }
    }
    if (!live) return true;
    if (moved) continue;
    if (all_at_barrier) {
      for (unsigned int i = 0; i < n; ++i)
        if (fibers[i].state == State::at_barrier) fibers[i].state = State::ready;
      continue;
    }
    error = "deadlock: no thread can go on (lanes of a wave apart at __syncthreads and a wave operation)" +
            describe(n, wave_size);
    return false;
  }
}

}  // namespace

RA_SIM_EXPORT const char* ra_sim_error(void) { return error.c_str(); }

RA_SIM_EXPORT int ra_sim_run(const RaSimLaunch* launch, int wave_size, const char* name, RaSimBody kernel,
                             void** args) {
  std::lock_guard<std::mutex> hold(launch_lock);
  error.clear();
  const RaSimDim3 g = launch->grid, b = launch->block;
  const unsigned long long n = (unsigned long long)b.x * b.y * b.z;
  char msg[200];
  if (n == 0 || n > MAX_THREADS || g.x == 0 || g.y == 0 || g.z == 0) {
    std::snprintf(msg, sizeof msg, "invalid launch: grid (%u, %u, %u), block (%u, %u, %u): a block holds 1 to %u threads",
                  g.x, g.y, g.z, b.x, b.y, b.z, MAX_THREADS);
    error = std::string(name) + ": " + msg;
    return -1;
  }
  for (unsigned int i = 0; i < n; ++i)
    if (!make_stack(fibers[i])) {
      error = "could not map a fiber stack (mmap failed)";
      return -1;
    }
  body = kernel;
  params = args;
  ra_sim_grid_dim = g;
  ra_sim_block_dim = b;
  if (dynamic_shared.size() < launch->shared) dynamic_shared.resize(launch->shared);
  for (unsigned int z = 0; z < g.z; ++z)
    for (unsigned int y = 0; y < g.y; ++y)
      for (unsigned int x = 0; x < g.x; ++x) {
        ra_sim_block_idx = {x, y, z};
        std::memset(dynamic_shared.data(), SHARED_POISON, launch->shared);
        if (!run_block((unsigned int)n, wave_size, launch->reverse != 0)) {
          std::snprintf(msg, sizeof msg, ": block (%u, %u, %u): ", x, y, z);
          error = name + (msg + error);
          // Abandoned mid-kernel: the next launch enters them afresh (setcontext leaves `start` as made).
          for (Fiber& f : fibers) f.started = false;
          return -1;
        }
      }
  return 0;
}

// ---- device side ----
RA_SIM_EXPORT void ra_sim_syncthreads(void) { wait(State::at_barrier); }

static unsigned long long wave_op(WaveOp op, unsigned long long value, int src) {
  current->op = op;
  current->value = value;
  current->src = src;
  wait(State::at_wave);
  return current->result;
}

RA_SIM_EXPORT unsigned long long ra_sim_exchange(unsigned long long value, int src) {
  return wave_op(WaveOp::exchange, value, src);
}
RA_SIM_EXPORT unsigned long long ra_sim_ballot(int predicate) { return wave_op(WaveOp::ballot, predicate != 0, 0); }
RA_SIM_EXPORT void ra_sim_wave_barrier(void) { wave_op(WaveOp::barrier, 0, 0); }
RA_SIM_EXPORT void* ra_sim_dynamic_shared(void) { return dynamic_shared.data(); }
