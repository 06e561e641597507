// Sorting, sets and searching: an LSD radix sort on order-preserving integer keys.
//
// Keys (sort_keys): a value's bits made unsigned-comparable: floats flip every bit when
// negative and the sign bit otherwise, signed integers flip the sign bit; descending
// order complements the key; every NaN gets the all-ones key (last in both orders, ties
// among themselves). Under RA_CANON_ZERO -0 becomes +0 (a tie, as the standard's order
// has it). Keys of 1..4-byte types are uint32_t, of 8-byte types uint64_t.
//
// One pass per 8-bit digit, least significant first, each stable: radix_histogram counts
// each tile's digits (digit-major, so one exclusive scan of the whole table gives every
// tile its output offset per digit), then radix_scatter ranks its tile in shared memory
// (wave ballots find the lanes that share a digit) and writes each digit's run coalesced.
// Values ride along as uint32_t indices (a sort holds fewer than 2^32 elements).
// Sorting by several keys is several LSD sorts, least significant key first: the
// segment of a row sort (segment_keys), the real part after the imaginary one.
#include "common/portability.h"
#include "common/types.h"
#include "common/cast.h"
#include "common/block.h"

#define RA_RADIX 256
#define RA_SORT_BLOCK 256
#define RA_DESCENDING 1
#define RA_CANON_ZERO 2
#define RA_IMAG_PART 4

template <int N> struct RaUint;
template <> struct RaUint<1> { typedef unsigned char type; };
template <> struct RaUint<2> { typedef unsigned short type; };
template <> struct RaUint<4> { typedef unsigned int type; };
template <> struct RaUint<8> { typedef unsigned long long type; };

// The real value a key is made of: the part named by the flags for complex types.
template <typename T> struct RaPart { typedef T type; RA_DEVICE static T get(T x, int) { return x; } };
template <> struct RaPart<complex64> {
  typedef float type;
  RA_DEVICE static float get(complex64 x, int flags) { return flags & RA_IMAG_PART ? x.im : x.re; }
};
template <> struct RaPart<complex128> {
  typedef double type;
  RA_DEVICE static double get(complex128 x, int flags) { return flags & RA_IMAG_PART ? x.im : x.re; }
};

template <typename T> struct RaKey {
  typedef typename RaPart<T>::type R;
  typedef typename RaUint<sizeof(R) <= 4 ? 4 : 8>::type type;
  typedef typename RaUint<sizeof(R)>::type bits;
  static constexpr bool floating = ra_is_16bit_float<R>::value || ra_same<R, float>::value || ra_same<R, double>::value;
  static constexpr bool is_signed = ra_same<R, int8_t>::value || ra_same<R, int16_t>::value ||
                                    ra_same<R, int32_t>::value || ra_same<R, int64_t>::value;
  static constexpr int digits = sizeof(R);  // 8-bit digits
};

template <typename R> RA_DEVICE typename RaUint<sizeof(R)>::type ra_bits_of(R x) {
  if constexpr (ra_is_16bit_float<R>::value) return x.bits;
  else return ra_bit_cast<typename RaUint<sizeof(R)>::type>(x);
}

template <typename R> RA_DEVICE R ra_from_bits(typename RaUint<sizeof(R)>::type b) {
  if constexpr (ra_is_16bit_float<R>::value) return R::from_bits(b);
  else if constexpr (ra_same<R, bool>::value) return b != 0;
  else return ra_bit_cast<R>(b);
}

template <typename T> RA_DEVICE typename RaKey<T>::type ra_sort_key(T v, int flags) {
  typedef RaKey<T> K;
  typedef typename K::bits U;
  typedef typename K::R R;
  constexpr U sign = (U)((U)1 << (8 * sizeof(U) - 1));
  const R x = RaPart<T>::get(v, flags);
  U b = ra_bits_of(x);
  if constexpr (K::floating) {
    if ((float)x != (float)x) return (typename K::type)(U)~(U)0;  // a double NaN stays NaN as float
    if ((flags & RA_CANON_ZERO) && (U)(b & (U)~sign) == 0) b = 0;
    b = (b & sign) ? (U)~b : (U)(b | sign);
  } else if constexpr (K::is_signed) {
    b = (U)(b ^ sign);
  }
  if (flags & RA_DESCENDING) b = (U)~b;
  return (typename K::type)b;
}

// The value of a key (keys-only sorts); a NaN comes back as a quiet NaN.
template <typename T> RA_DEVICE T ra_sort_value(typename RaKey<T>::type key, int flags) {
  typedef RaKey<T> K;
  typedef typename K::bits U;
  constexpr U sign = (U)((U)1 << (8 * sizeof(U) - 1));
  U b = (U)key;
  if constexpr (K::floating) {
    if (b == (U)~(U)0) return ra_from_bits<T>((U)~(U)0 >> 1);
    if (flags & RA_DESCENDING) b = (U)~b;
    b = (b & sign) ? (U)(b & (U)~sign) : (U)~b;
  } else {
    if (flags & RA_DESCENDING) b = (U)~b;
    if (K::is_signed) b = (U)(b ^ sign);
  }
  return ra_from_bits<T>(b);
}

// keys[i] = the key of x[perm[i]] (perm null: of x[i]); idx[i] = perm[i] (or i) when idx is non-null.
template <typename T>
__global__ void sort_keys(typename RaKey<T>::type* keys, unsigned int* idx, const T* x, const unsigned int* perm,
                          ra_index_t n, int flags) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    const ra_index_t src = perm ? (ra_index_t)perm[i] : i;
    keys[i] = ra_sort_key(x[src], flags);
    if (idx) idx[i] = (unsigned int)src;
  }
}

// The row of each element of a row sort: the most significant key.
template <typename V>
__global__ void segment_keys(unsigned int* keys, const V* idx, ra_index_t n, ra_index_t len) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) keys[i] = (unsigned int)(idx[i] / len);
}

struct add_u32 {
  RA_DEVICE unsigned int operator()(unsigned int a, unsigned int b) const { return a + b; }
};

template <typename K> struct RaTile { static constexpr int items = sizeof(K) == 4 ? 16 : 8; };

// hist[d * blocks + b] = how many keys of tile b have digit d at `shift`.
template <typename K>
__global__ void __launch_bounds__(RA_SORT_BLOCK)
radix_histogram(const K* keys, ra_index_t n, int shift, unsigned int* hist, ra_index_t blocks) {
  __shared__ unsigned int count[RA_RADIX];
  constexpr int TILE = RA_SORT_BLOCK * RaTile<K>::items;
  const int t = threadIdx.x;
  for (ra_index_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    count[t] = 0;
    __syncthreads();
    const ra_index_t base = b * TILE;
#pragma unroll
    for (int j = 0; j < RaTile<K>::items; ++j) {
      const ra_index_t i = base + j * RA_SORT_BLOCK + t;
      if (i < n) atomicAdd(&count[(unsigned int)(keys[i] >> shift) & (RA_RADIX - 1)], 1u);
    }
    __syncthreads();
    hist[(ra_index_t)t * blocks + b] = count[t];
    __syncthreads();
  }
}

// One stable pass: tile b's keys (and values) go to their digit's place. `scanned` is the
// inclusive scan of radix_histogram's table. One block per tile.
template <typename K>
__global__ void __launch_bounds__(RA_SORT_BLOCK)
radix_scatter(K* kout, unsigned int* vout, const K* kin, const unsigned int* vin, ra_index_t n, int shift,
              const unsigned int* scanned, ra_index_t blocks) {
  constexpr int ITEMS = RaTile<K>::items, TILE = RA_SORT_BLOCK * ITEMS, WAVES = RA_SORT_BLOCK / RA_WAVE_SIZE;
  __shared__ K skeys[TILE];
  __shared__ unsigned char sdigit[TILE];
  __shared__ unsigned int wave_count[WAVES][RA_RADIX], wave_offset[WAVES][RA_RADIX];
  __shared__ unsigned int tile_count[RA_RADIX];
  __shared__ ra_index_t global_base[RA_RADIX];
  const int t = threadIdx.x, lane = ra_lane(), wave = t / RA_WAVE_SIZE;
  const ra_lanemask_t below = (((ra_lanemask_t)1) << lane) - 1;
  const ra_index_t b = blockIdx.x, base = b * TILE;
  const int tile_n = (int)(n - base < TILE ? n - base : TILE);

  K key[ITEMS];
  int pos[ITEMS];
  tile_count[t] = 0;
  for (int w = 0; w < WAVES; ++w) wave_count[w][t] = 0;
  __syncthreads();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int i = j * RA_SORT_BLOCK + t;
    if (i < tile_n) {
      key[j] = kin[base + i];
      atomicAdd(&tile_count[(unsigned int)(key[j] >> shift) & (RA_RADIX - 1)], 1u);
    }
  }
  __syncthreads();
  // Thread t owns digit t: its tile-local start, and where its run goes in the output.
  unsigned int start, total;
  const unsigned int mine = tile_count[t];
  ra_block_scan(mine, add_u32(), 0u, &start, &total);
  global_base[t] = (ra_index_t)scanned[(ra_index_t)t * blocks + b] - mine - start;
  unsigned int run = start;

#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int i = j * RA_SORT_BLOCK + t;
    const bool valid = i < tile_n;
    const unsigned int d = valid ? (unsigned int)(key[j] >> shift) & (RA_RADIX - 1) : 0u;
    ra_lanemask_t peers = ra_ballot(valid);
#pragma unroll
    for (int bit = 0; bit < 8; ++bit) {
      const bool set = (d >> bit) & 1u;
      const ra_lanemask_t m = ra_ballot(set);
      peers &= set ? m : ~m;
    }
    const int rank = ra_popc(peers & below);
    if (valid && rank == 0) wave_count[wave][d] = ra_popc(peers);
    __syncthreads();
    unsigned int acc = run;
    for (int w = 0; w < WAVES; ++w) {
      const unsigned int c = wave_count[w][t];
      wave_count[w][t] = 0;
      wave_offset[w][t] = acc;
      acc += c;
    }
    run = acc;
    __syncthreads();
    if (valid) pos[j] = (int)wave_offset[wave][d] + rank;
  }
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    if (j * RA_SORT_BLOCK + t < tile_n) {
      skeys[pos[j]] = key[j];
      sdigit[pos[j]] = (unsigned char)((key[j] >> shift) & (RA_RADIX - 1));
    }
  }
  __syncthreads();
  for (int i = t; i < tile_n; i += RA_SORT_BLOCK) kout[global_base[sdigit[i]] + i] = skeys[i];
  if (vin) {
    unsigned int* svals = (unsigned int*)skeys;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = j * RA_SORT_BLOCK + t;
      if (i < tile_n) svals[pos[j]] = vin[base + i];
    }
    __syncthreads();
    for (int i = t; i < tile_n; i += RA_SORT_BLOCK) vout[global_base[sdigit[i]] + i] = svals[i];
  }
}

// ---- from sorted keys and indices to results ----------------------------------------------------
template <typename T>
__global__ void sort_values(T* out, const typename RaKey<T>::type* keys, ra_index_t n, int flags) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) out[i] = ra_sort_value<T>(keys[i], flags);
}

template <typename T>
__global__ void sort_gather(T* out, const T* x, const unsigned int* idx, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) out[i] = x[idx[i]];
}

// The position of each element within its row of `len`, as the standard's index dtype.
template <typename V>
__global__ void sort_indices(int64_t* out, const V* idx, ra_index_t n, ra_index_t len) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) out[i] = (int64_t)(idx[i] % len);
}

// ---- sets ----------------------------------------------------------------------------------------
// flags[i] = 1 where the i-th smallest element (x[perm[i]]) starts a new value (NaNs: always).
template <typename T>
__global__ void unique_flags(unsigned int* flags, const T* x, const unsigned int* perm, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride())
    flags[i] = i == 0 || !(x[perm[i]] == x[perm[i - 1]]);
}

// group = inclusive scan of flags: element perm[i] belongs to value group[i] - 1; a group's
// first sorted element gives its value, first index (the sort is stable) and start.
template <typename T>
__global__ void unique_scatter(T* values, int64_t* first, int64_t* inverse, int64_t* starts, const T* x,
                               const unsigned int* perm, const unsigned int* group, const unsigned int* flags,
                               ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) {
    const unsigned int src = perm[i];
    const ra_index_t g = (ra_index_t)group[i] - 1;
    inverse[src] = g;
    if (flags[i]) {
      values[g] = x[src];
      first[g] = src;
      starts[g] = i;
    }
  }
}

template <typename I>
__global__ void unique_counts(I* counts, const I* starts, ra_index_t groups, ra_index_t n) {
  for (ra_index_t g = ra_thread_index(); g < groups; g += ra_grid_stride())
    counts[g] = (g + 1 < groups ? starts[g + 1] : n) - starts[g];
}

// ---- searching -----------------------------------------------------------------------------------
// The sort order (NaNs last, -0 == +0), lexicographic for complex values.
template <typename T> RA_DEVICE bool ra_sort_less(T a, T b) {
  const auto ka = ra_sort_key(a, RA_CANON_ZERO), kb = ra_sort_key(b, RA_CANON_ZERO);
  if constexpr (ra_is_complex<T>::value) {
    if (ka != kb) return ka < kb;
    return ra_sort_key(a, RA_CANON_ZERO | RA_IMAG_PART) < ra_sort_key(b, RA_CANON_ZERO | RA_IMAG_PART);
  } else {
    return ka < kb;
  }
}

// out[j] = the first i (side left) or the first i past the equal ones (right) where v[j]
// would go in a (sorted, or sorted through `sorter`).
template <typename T>
__global__ void searchsorted(int64_t* out, const T* a, ra_index_t n, const int64_t* sorter, const T* v,
                             ra_index_t m, int right) {
  for (ra_index_t j = ra_thread_index(); j < m; j += ra_grid_stride()) {
    const T x = v[j];
    ra_index_t lo = 0, hi = n;
    while (lo < hi) {
      const ra_index_t mid = lo + (hi - lo) / 2;
      const T y = a[sorter ? sorter[mid] : mid];
      if (right ? !ra_sort_less(x, y) : ra_sort_less(y, x)) lo = mid + 1;
      else hi = mid;
    }
    out[j] = lo;
  }
}

// out[j] = whether x[j] equals an element of the sorted array s (!= under invert).
template <typename T>
__global__ void isin_sorted(bool* out, const T* x, ra_index_t m, const T* s, ra_index_t n, int invert) {
  for (ra_index_t j = ra_thread_index(); j < m; j += ra_grid_stride()) {
    const T v = x[j];
    ra_index_t lo = 0, hi = n;
    while (lo < hi) {
      const ra_index_t mid = lo + (hi - lo) / 2;
      if (ra_sort_less(s[mid], v)) lo = mid + 1;
      else hi = mid;
    }
    const bool found = lo < n && s[lo] == v;
    out[j] = found != (invert != 0);
  }
}
