// Gather and scatter along one dimension (rocm_array.nn's gather, scatter, scatter_add,
// index_select and index_add), with indices checked on the device.
//
// One geometry of three operands over the index's iteration shape: the element
// positions of the output (gather) or the destination with 0 along `dim` (scatter),
// of the source with 0 along `dim` (gather) or of the source values (scatter), and
// of the index (a broadcast view for index_select / index_add). The index value
// times `step` (the stride of `dim` in the indexed array) completes the address.
#include "common/portability.h"
#include "common/types.h"
#include "common/indexing.h"
#include "nn/nn.h"

template <typename T>
__global__ void gather(T* RA_RESTRICT out, const T* RA_RESTRICT x, const long long* RA_RESTRICT index,
                       ra_index_t n, ra_geometry<3> g, ra_index_t size, ra_index_t step, unsigned long long* error) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    ra_index_t off[3];
    ra_offsets<3>(g, i, off);
    const long long v = index[off[2]];
    if (nn_check_index(v, size, error)) out[off[0]] = x[off[1] + v * step];
  }
}

// ADD: atomically, for the types ra_atomic_add takes (the front widens the others).
template <typename T, bool ADD>
__global__ void scatter(T* dst, const T* RA_RESTRICT src, const long long* RA_RESTRICT index,
                        ra_index_t n, ra_geometry<3> g, ra_index_t size, ra_index_t step, unsigned long long* error) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    ra_index_t off[3];
    ra_offsets<3>(g, i, off);
    const long long v = index[off[2]];
    if (!nn_check_index(v, size, error)) continue;
    if constexpr (ADD) ra_atomic_add(dst + off[0] + v * step, src[off[1]]);
    else dst[off[0] + v * step] = src[off[1]];
  }
}
