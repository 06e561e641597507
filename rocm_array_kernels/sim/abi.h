// The simulator's interface between kernel libraries and the scheduler library
// (rocm_array_kernels/sim/scheduler.cpp), in C types: rocm_array/runtime/sim.py builds the scheduler
// once, loads it with RTLD_GLOBAL, and each kernel library (rocm_array_kernels/sim/sim.h) binds to
// these symbols when it is loaded.
#pragma once

struct RaSimDim3 {
  unsigned int x, y, z;
};

// The order in which the blocks of a grid run (RaSimLaunch::blocks; ROCM_ARRAY_SIM_BLOCKS). A GPU
// runs many at once, in no set order, so a kernel must give the same result under each.
enum {
  RA_SIM_BLOCKS_FORWARD,     // one at a time, by linear index
  RA_SIM_BLOCKS_REVERSE,     // one at a time, last index first
  RA_SIM_BLOCKS_SHUFFLE,     // one at a time, in an order drawn from `seed`
  RA_SIM_BLOCKS_INTERLEAVE,  // RESIDENT (scheduler.cpp) at once, switched between at every synchronization
                             // point, admitted and picked as drawn from `seed`
};

// A launch as the driver makes it; mirrored by rocm_array/runtime/sim.py: Launch.
struct RaSimLaunch {
  RaSimDim3 grid, block;
  unsigned int shared;  // bytes of dynamic shared memory
  int reverse;          // run the ready threads last to first (shows order-dependent races)
  int blocks;           // RA_SIM_BLOCKS_*
  unsigned int seed;    // of SHUFFLE and INTERLEAVE's draws
};

// The kernel as the current simulated thread: reads its arguments from params (the
// driver's kernelParams: a pointer to each argument).
typedef void (*RaSimBody)(void** params);

extern "C" {
// Runs every block of the grid in the launch's order, each block's threads as fibers. [statics,
// statics_end): the kernel library's static shared memory (sim.h puts every __shared__ variable
// there), which is the running block's, so that blocks can take turns. Returns 0, or -1 with
// ra_sim_error() (this OS thread's) saying what went wrong in kernel `name`: a deadlock,
// divergent wave operations, an invalid launch.
int ra_sim_run(const RaSimLaunch* launch, int wave_size, const char* name, RaSimBody body, void** params,
               char* statics, char* statics_end);
const char* ra_sim_error(void);

// ---- device side: what rocm_array_kernels/sim/sim.h spells HIP's names with ----
extern RaSimDim3 ra_sim_block_idx, ra_sim_block_dim, ra_sim_grid_dim;
extern RaSimDim3* ra_sim_thread_idx;  // the current thread's
extern int ra_sim_lane_id;            // the current thread's lane in its wave
void ra_sim_syncthreads(void);
// A wave exchange: every live lane of the wave gives `value` and gets the value of lane
// `src` of its wave (a poison pattern when that lane has exited or does not exist).
unsigned long long ra_sim_exchange(unsigned long long value, int src);
unsigned long long ra_sim_ballot(int predicate);
void ra_sim_wave_barrier(void);
// A turn of a spin-wait (a thread polling what another block writes, as a look-back does): the
// thread waits for the round's end, when the scheduler may run another block before it polls again.
void ra_sim_spin(void);
void* ra_sim_dynamic_shared(void);
}
