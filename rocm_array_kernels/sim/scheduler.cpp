// The simulator's scheduler: runs a grid on the CPU, each thread of a block a fiber. A fiber
// runs until it reaches a synchronization point (__syncthreads, a wave operation, a spin-wait's
// turn) or returns; when every fiber of the block waits, the waits that can complete do: a wave
// operation once every live lane of the wave has reached one, __syncthreads once every live
// thread of the block has, a spin-wait's turn always. That is a round. Lanes are exact: a wave
// is RA_WAVE_SIZE consecutive threads in linear order (x fastest), as on AMD hardware. Blocks
// run one at a time in the launch's order, or (RA_SIM_BLOCKS_INTERLEAVE) RESIDENT at a time, a
// round of one then of another, as drawn: then the last block to reach a point is seldom the
// last index, as on a GPU, and a block polling another's result lets it run (ra_sim_spin).
//
// Built once per process by rocm_array/runtime/sim.py (with the system headers, unlike
// the kernel libraries) and loaded with RTLD_GLOBAL; see rocm_array_kernels/sim/abi.h.
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
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
//: Blocks at once under RA_SIM_BLOCKS_INTERLEAVE: a few, as on a few compute units.
constexpr unsigned int RESIDENT = 4;

enum class State { ready, at_barrier, at_wave, spinning, done };
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

// A block in progress: its threads' fibers and its shared memory while another block runs.
// Fibers never move (a started one's context points into itself), hence the fixed arrays.
struct Slot {
  std::unique_ptr<Fiber[]> fibers{new Fiber[MAX_THREADS]};
  std::vector<unsigned char> statics, dynamic;
  RaSimDim3 block{};
  bool busy = false;
};

std::mutex launch_lock;  // one grid at a time: the device globals above are the running block's
std::vector<std::unique_ptr<Slot>> slots;
Fiber* fibers = nullptr;      // the running block's
Slot* loaded = nullptr;       // whose static shared memory the kernel library's section holds
char *statics = nullptr, *statics_end = nullptr;
jmp_buf scheduler;
Fiber* current = nullptr;
RaSimBody body = nullptr;
void** params = nullptr;
unsigned char* dynamic_shared = nullptr;  // the running block's
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
    unsigned int counts[(int)State::done + 1] = {};
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

void start_block(unsigned int n) {
  const RaSimDim3 b = ra_sim_block_dim;
  for (unsigned int i = 0; i < n; ++i) {
    Fiber& f = fibers[i];
    f.tid = {i % b.x, i / b.x % b.y, i / (b.x * b.y)};
    f.state = State::ready;
  }
}

// One round of the running block: 1 while it has live threads, 0 once it is done, -1 on an error.
int run_round(unsigned int n, int wave_size, bool reverse) {
  for (unsigned int k = 0; k < n; ++k) {
    const unsigned int i = reverse ? n - 1 - k : k;
    if (fibers[i].state == State::ready) resume(fibers[i], wave_size, i);
  }
  bool moved = false, live = false, all_at_barrier = true;
  for (unsigned int i = 0; i < n; ++i)
    if (fibers[i].state == State::spinning) {
      fibers[i].state = State::ready;  // polls again next round, after the other blocks' turns
      moved = live = true;
    }
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
      if (!complete_wave(lo, hi, wave_size)) return -1;
      moved = true;
    }
  }
  if (!live) return 0;
  if (moved) return 1;
  if (all_at_barrier) {
    for (unsigned int i = 0; i < n; ++i)
      if (fibers[i].state == State::at_barrier) fibers[i].state = State::ready;
    return 1;
  }
  error = "deadlock: no thread can go on (lanes of a wave apart at __syncthreads and a wave operation)" +
          describe(n, wave_size);
  return -1;
}

// Makes `s` the running block: its fibers, its index, its shared memory in the section.
void enter(Slot& s) {
  if (loaded != &s) {
    const size_t bytes = (size_t)(statics_end - statics);
    if (bytes) {
      std::memcpy(loaded->statics.data(), statics, bytes);
      std::memcpy(statics, s.statics.data(), bytes);
    }
    loaded = &s;
  }
  fibers = s.fibers.get();
  dynamic_shared = s.dynamic.data();
  ra_sim_block_idx = s.block;
}

}  // namespace

RA_SIM_EXPORT const char* ra_sim_error(void) { return error.c_str(); }

RA_SIM_EXPORT int ra_sim_run(const RaSimLaunch* launch, int wave_size, const char* name, RaSimBody kernel,
                             void** args, char* statics_begin, char* statics_stop) {
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
  const unsigned long long count = (unsigned long long)g.x * g.y * g.z;
  const int order = launch->blocks;
  const unsigned int resident = order == RA_SIM_BLOCKS_INTERLEAVE && count > 1
                                    ? (unsigned int)std::min<unsigned long long>(RESIDENT, count) : 1;
  while (slots.size() < resident) slots.emplace_back(new Slot);
  for (unsigned int k = 0; k < resident; ++k)
    for (unsigned int i = 0; i < n; ++i)
      if (!make_stack(slots[k]->fibers[i])) {
        error = "could not map a fiber stack (mmap failed)";
        return -1;
      }
  std::mt19937_64 draw(launch->seed);
  std::vector<unsigned long long> drawn;  // SHUFFLE and INTERLEAVE: the blocks' order of admission
  if (order == RA_SIM_BLOCKS_SHUFFLE || order == RA_SIM_BLOCKS_INTERLEAVE) {
    drawn.resize(count);
    std::iota(drawn.begin(), drawn.end(), 0ull);
    std::shuffle(drawn.begin(), drawn.end(), draw);
  }
  body = kernel;
  params = args;
  ra_sim_grid_dim = g;
  ra_sim_block_dim = b;
  statics = statics_begin;
  statics_end = statics_stop;
  loaded = slots[0].get();
  for (unsigned int k = 0; k < resident; ++k) {
    Slot& s = *slots[k];
    s.statics.assign(statics, statics_end);
    if (s.dynamic.size() < launch->shared) s.dynamic.resize(launch->shared);
    s.busy = false;
  }
  unsigned long long next = 0;
  unsigned int busy = 0;
  auto admit = [&](Slot& s) {
    if (next == count) return;
    const unsigned long long i = drawn.empty() ? (order == RA_SIM_BLOCKS_REVERSE ? count - 1 - next : next)
                                               : drawn[next];
    ++next;
    s.block = {(unsigned int)(i % g.x), (unsigned int)(i / g.x % g.y), (unsigned int)(i / ((unsigned long long)g.x * g.y))};
    s.busy = true;
    ++busy;
    enter(s);
    std::memset(s.dynamic.data(), SHARED_POISON, launch->shared);
    start_block((unsigned int)n);
  };
  for (unsigned int k = 0; k < resident; ++k) admit(*slots[k]);
  while (busy) {
    unsigned int k = 0;
    if (resident > 1)
      do k = (unsigned int)(draw() % resident); while (!slots[k]->busy);
    Slot& s = *slots[k];
    enter(s);
    const int state = run_round((unsigned int)n, wave_size, launch->reverse != 0);
    if (state < 0) {
      std::snprintf(msg, sizeof msg, ": block (%u, %u, %u): ", s.block.x, s.block.y, s.block.z);
      error = name + (msg + error);
      // Abandoned mid-kernel: the next launch enters them afresh (setcontext leaves `start` as made).
      for (auto& slot : slots)
        for (unsigned int i = 0; i < MAX_THREADS; ++i) slot->fibers[i].started = false;
      return -1;
    }
    if (state == 0) {
      s.busy = false;
      --busy;
      admit(s);
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
RA_SIM_EXPORT void ra_sim_spin(void) { wait(State::spinning); }
RA_SIM_EXPORT void* ra_sim_dynamic_shared(void) { return dynamic_shared; }
