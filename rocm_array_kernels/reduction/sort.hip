// Sorting, sets and searching: an LSD radix sort on order-preserving integer keys.
//
// Keys (ra_key_bits): a value's bits made unsigned-comparable: floats flip every bit when
// negative and the sign bit otherwise, signed integers flip the sign bit; descending
// order complements the key; every NaN gets the all-ones key (last in both orders, ties
// among themselves). -0 and +0 are a tie (the standard's order): under RA_CANON_ZERO both
// get one key, the sign bit. Without it (keys-only sorts, which remake values from keys)
// the zero that sorts second (-0 ascending, +0 descending) gets key 0: no value's key, and
// the other zero's in every digit but the top one, which the top pass reads as the other's
// (ra_digit). So the zeros tie in every pass and each comes back with its sign (stable, as
// NumPy's sort). Keys of 1..4-byte types are uint32_t, of 8-byte types uint64_t. Kernels
// see a value as its bits (uint8_t..uint64_t) and runtime flags say how to make its key, so
// one instantiation serves every dtype of a width.
//
// The sort reads the keys once per 8-bit digit, least significant first (onesweep, after
// Adinets & Merrill 2022). First sort_counts reads the values once (nothing written) and
// counts every digit position at once. Each pass is radix_onesweep: a block
// takes the next tile in order from a counter, loads all its keys at once (the first pass
// loads values and makes their keys, through a permutation for a later key of several),
// ranks them by digit (stable; 8 wave ballots find the lanes sharing a digit, each wave
// counts in its own shared counters), publishes its per-digit counts, looks back over a
// window of earlier tiles' published counts for its global offset per digit (decoupled
// look-back, 32-bit status words), and writes each digit's run coalesced; values are
// loaded only after the look-back and follow their keys. The last pass of a keys-only
// sort writes the values of its keys, not the keys. Every tile but the last is full: its
// per-item code is a variant without bound tests, valid-lane ballots or masked accesses
// (ra_onesweep_tile<FULL>), and a pass is two launches, the full tiles (radix_onesweep<...,
// true>), then the last tile (<..., false>): two programs, each compiled in about 60% of the
// time of one kernel holding both variants (NVRTC, sm_90), and a first call compiles them at
// once. Keys are made branch-free (flags folded into uniform masks).
// Values ride along as uint32_t indices (a sort holds fewer than 2^32 elements, so all
// index math is 32-bit); the last pass of an argsort writes them as int64 positions
// within their row. Sorting by several keys is several LSD sorts, least significant key
// first: the segment of a row sort (segment_keys), the real part after the imaginary one.
#include "common/portability.h"
#include "common/types.h"
#include "common/cast.h"
#include "common/block.h"

// Compile options, defined once in rocm_array_plugins/reduction/gpu_sort.py (SORT_KERNELS):
// RA_RADIX (digit values), RA_SORT_BLOCK (the onesweep's threads), RA_KEY_ITEMS, RA_TILE_ITEMS and
// RA_LOOKBACK_KEYS / RA_LOOKBACK_PAIRS (the onesweep's tile and look-back window), and the flag bits
// RA_DESCENDING, RA_CANON_ZERO, RA_IMAG_PART;
// how keys are made of (and values remade from) the bits of a real value (ra_key_bits):
//   RA_KEY_FLOAT (an IEEE float's bits), RA_KEY_SIGNED (a two's complement integer's),
//   RA_KEY_BFLOAT (with RA_KEY_FLOAT on 2 bytes: bfloat16's, else float16's);
// where a sort's first pass reads values (x: the array, i: the element):
//   RA_INTERLEAVED (x[2 * i]: a complex array's part; x then points at the part of element 0),
//   RA_GATHER (at vin[i], the order by the less significant keys, not i).

template <int N> struct RaUint;  // type: N bytes unsigned, signed_type: signed
template <> struct RaUint<1> { typedef unsigned char type; typedef signed char signed_type; };
template <> struct RaUint<2> { typedef unsigned short type; typedef short signed_type; };
template <> struct RaUint<4> { typedef unsigned int type; typedef int signed_type; };
template <> struct RaUint<8> { typedef unsigned long long type; typedef long long signed_type; };
// All ones where b's top bit is set, else 0.
template <typename U> RA_DEVICE U ra_top_bit_mask(U b) {
  return (U)((typename RaUint<sizeof(U)>::signed_type)b >> (8 * sizeof(U) - 1));
}
// The key of the bits U of a value: 32-bit up to 4 bytes, else 64-bit.
template <typename U> struct RaKeyOf { typedef typename RaUint<sizeof(U) <= 4 ? 4 : 8>::type type; };

// The bits of an IEEE float's infinity: larger magnitudes are NaNs.
template <typename U> RA_DEVICE U ra_inf_bits(int flags) {
  if constexpr (sizeof(U) == 2) return (U)(flags & RA_KEY_BFLOAT ? 0x7f80u : 0x7c00u);
  else if constexpr (sizeof(U) == 4) return 0x7f800000u;
  else return (U)0x7ff0000000000000ull;
}

// Branch-free, the flags folded into masks (uniform, made once per kernel): the count kernel
// and the first and last passes make and remake a key per element. A float's key flips every
// bit when negative and the sign bit otherwise; a signed integer's the sign bit; descending
// order all; a NaN's is all ones. The zeros' keys are then the sign bit (+0 ascending, -0
// descending) and its complement, which the last step makes the sign bit too under
// RA_CANON_ZERO, else 0 (see the top of the file).
template <typename U> RA_DEVICE typename RaKeyOf<U>::type ra_key_bits(U b, int flags) {
  typedef typename RaKeyOf<U>::type K;
  constexpr U sign = (U)((U)1 << (8 * sizeof(U) - 1)), ones = (U)~(U)0;
  const bool real = sizeof(U) > 1 && (flags & RA_KEY_FLOAT);
  const U flip = (U)((real || (flags & RA_KEY_SIGNED) ? sign : (U)0) ^ (flags & RA_DESCENDING ? ones : (U)0));
  const U negative_flip = real ? (U)~sign : (U)0;           // what a negative float flips besides
  const U nan_above = real ? ra_inf_bits<U>(flags) : ones;  // no integer's magnitude is above it
  const U zero_and = flags & RA_CANON_ZERO ? (U)0 : sign, zero_xor = (U)(sign ^ zero_and);
  const U mag = (U)(b & (U)~sign);
  const U negative = ra_top_bit_mask(b);
  const U key = mag > nan_above ? ones : (U)(b ^ flip ^ (negative & negative_flip));
  return (K)(real && mag == 0 ? (U)((key & zero_and) ^ zero_xor) : key);
}

// The bits of the value of a key (keys-only sorts); a NaN comes back as a quiet NaN, key 0 as
// the zero that sorts second (-0 ascending, +0 descending).
template <typename U, typename K> RA_DEVICE U ra_value_bits(K key, int flags) {
  constexpr U sign = (U)((U)1 << (8 * sizeof(U) - 1)), ones = (U)~(U)0;
  const bool real = sizeof(U) > 1 && (flags & RA_KEY_FLOAT);
  const U desc = flags & RA_DESCENDING ? ones : (U)0;
  const U flip = (U)((real || (flags & RA_KEY_SIGNED) ? sign : (U)0) ^ desc);
  const U negative_flip = real ? (U)~sign : (U)0;
  const U b = (U)key;
  // The key of a negative float has its (ascending) sign bit clear.
  const U negative = (U)~ra_top_bit_mask((U)(b ^ desc));
  const U v = (U)(b ^ flip ^ (negative & negative_flip));
  // Key 0, and no other, makes all ones ascending and ~sign descending: of those bits, the zero's
  // are the sign bit. (Tested on v, not on the key: a test of the key is the digit's, which the
  // compiler then keeps for every item through the pass, in every pass.)
  const U zero_v = (U)(ones ^ (desc & sign));
  return real && b == ones ? (U)(ones >> 1) : real && v == zero_v ? (U)(v & sign) : v;
}

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

// The flags that make keys of a real type's bits.
template <typename R> struct RaRecipe {
  static constexpr int flags = ra_same<R, bfloat16>::value ? RA_KEY_FLOAT | RA_KEY_BFLOAT
    : ra_is_16bit_float<R>::value || ra_same<R, float>::value || ra_same<R, double>::value ? RA_KEY_FLOAT
    : ra_same<R, int8_t>::value || ra_same<R, int16_t>::value || ra_same<R, int32_t>::value ||
      ra_same<R, int64_t>::value ? RA_KEY_SIGNED : 0;
};

template <typename T> RA_DEVICE auto ra_sort_key(T v, int flags) {
  typedef typename RaPart<T>::type R;
  const R x = RaPart<T>::get(v, flags);
  typename RaUint<sizeof(R)>::type b;
  if constexpr (ra_is_16bit_float<R>::value) b = x.bits;
  else b = ra_bit_cast<typename RaUint<sizeof(R)>::type>(x);
  return ra_key_bits(b, flags | RaRecipe<R>::flags);
}

// ---- digit counts --------------------------------------------------------------------------------
// The count of every digit at every position, in shared tables, added to the global one at
// the end (counts[p * RA_RADIX + d]: keys with digit d at position p). Lanes add to SPREAD
// copies of each counter (lane % SPREAD), side by side in the banks: lanes sharing a digit
// in one instruction (the high digits of real data are often all equal) serialize less.
// Each key costs a few instructions per position: the kernels keep up with their loads.
template <int X> struct RaLog2 { static constexpr int value = 1 + RaLog2<X / 2>::value; };
template <> struct RaLog2<1> { static constexpr int value = 0; };

template <typename K, int SPREAD> struct RaDigitCounts {
  static constexpr int SCALE = RaLog2<SPREAD * sizeof(unsigned int)>::value;  // a counter's bytes, log2
  unsigned int* table;      // [sizeof(K)][RA_RADIX][SPREAD], shared
  unsigned int lane_bytes;  // where this lane's copy is in a counter's
  int digits;

  RA_DEVICE RaDigitCounts(unsigned int* shared_table, int positions)
      : table(shared_table), lane_bytes(ra_lane() % SPREAD * sizeof(unsigned int)), digits(positions) {
    for (int i = threadIdx.x; i < digits * RA_RADIX * SPREAD; i += blockDim.x) table[i] = 0;
    __syncthreads();
  }

  // The counter's byte offset made of the key in one shift and one mask-or (the count kernels
  // are issue-bound).
  RA_DEVICE void add(K key) {
#pragma unroll
    for (int p = 0; p < (int)sizeof(K); ++p) {
      if (p >= digits) break;
      const K at = 8 * p >= SCALE ? key >> (8 * p - SCALE) : key << (SCALE - 8 * p);
      const unsigned int off = ((unsigned int)at & ((RA_RADIX - 1) << SCALE)) | lane_bytes;
      atomicAdd((unsigned int*)((char*)table + (p * RA_RADIX << SCALE) + off), 1u);
    }
  }

  // Every thread of the block calls it once, at the end.
  RA_DEVICE void finish(unsigned int* counts) {
    __syncthreads();
    for (int i = threadIdx.x; i < digits * RA_RADIX; i += blockDim.x) {
      unsigned int c = 0;
#pragma unroll
      for (int s = 0; s < SPREAD; ++s) c += table[i * SPREAD + s];
      if (c) atomicAdd(&counts[i], c);
    }
  }
};

// The count kernels run few blocks (each adds its tables to the global one), so each thread
// loads RA_KEY_ITEMS elements before using any: enough loads in flight to fill the bandwidth.
// Counter copies: 32 KiB of tables, whatever the key size.
template <typename K> struct RaSpread { static constexpr int value = 32 / sizeof(K); };

// The digits of the keys of x's values (U: their bits; flags: how keys are made, and
// RA_INTERLEAVED) counted into `counts`; only read (the first pass makes the keys again).
// Zeros count as one key: key 0, where the first pass makes it, is read as the other zero's.
template <typename U>
__global__ void __launch_bounds__(RA_SORT_BLOCK)
sort_counts(const U* x, ra_index_t n, int flags, unsigned int* counts) {
  typedef typename RaKeyOf<U>::type K;
  flags |= RA_CANON_ZERO;
  __shared__ unsigned int table[sizeof(U) * RA_RADIX * RaSpread<K>::value];
  RaDigitCounts<K, RaSpread<K>::value> count(table, sizeof(U));
  const int stride = flags & RA_INTERLEAVED ? 2 : 1;
  const ra_index_t step = ra_grid_stride() * RA_KEY_ITEMS;
  for (ra_index_t base = (ra_index_t)blockIdx.x * blockDim.x * RA_KEY_ITEMS + threadIdx.x; base < n; base += step) {
    U v[RA_KEY_ITEMS];
    if (base + (RA_KEY_ITEMS - 1) * blockDim.x < n) {  // a full batch: no per-item checks (the kernel is issue-bound)
#pragma unroll
      for (int j = 0; j < RA_KEY_ITEMS; ++j) v[j] = x[(base + j * blockDim.x) * stride];
#pragma unroll
      for (int j = 0; j < RA_KEY_ITEMS; ++j) count.add(ra_key_bits(v[j], flags));
      continue;
    }
#pragma unroll
    for (int j = 0; j < RA_KEY_ITEMS; ++j) {
      const ra_index_t i = base + j * blockDim.x;
      if (i < n) v[j] = x[i * stride];
    }
#pragma unroll
    for (int j = 0; j < RA_KEY_ITEMS; ++j)
      if (base + j * blockDim.x < n) count.add(ra_key_bits(v[j], flags));
  }
  count.finish(counts);
}

// The row of each element of a row sort (the most significant key, K: uint32_t), its low
// `digits` counted. (A template, as every kernel here: a plain __global__ function is compiled
// into every program of its file.)
template <typename K>
__global__ void __launch_bounds__(RA_SORT_BLOCK)
segment_keys(K* keys, const unsigned int* idx, ra_index_t n, ra_index_t len, int digits, unsigned int* counts) {
  __shared__ unsigned int table[sizeof(K) * RA_RADIX * RaSpread<K>::value];
  RaDigitCounts<K, RaSpread<K>::value> count(table, digits);
  const unsigned int row = (unsigned int)len;  // 32-bit division: indices and rows fit
  const ra_index_t step = ra_grid_stride() * RA_KEY_ITEMS;
  for (ra_index_t base = (ra_index_t)blockIdx.x * blockDim.x * RA_KEY_ITEMS + threadIdx.x; base < n; base += step) {
    unsigned int v[RA_KEY_ITEMS];
#pragma unroll
    for (int j = 0; j < RA_KEY_ITEMS; ++j) {
      const ra_index_t i = base + j * blockDim.x;
      if (i < n) v[j] = idx[i];
    }
#pragma unroll
    for (int j = 0; j < RA_KEY_ITEMS; ++j) {
      const ra_index_t i = base + j * blockDim.x;
      if (i < n) {
        const K key = v[j] / row;
        keys[i] = key;
        count.add(key);
      }
    }
  }
  count.finish(counts);
}

// ---- one pass ------------------------------------------------------------------------------------
struct add_u32 {
  RA_DEVICE unsigned int operator()(unsigned int a, unsigned int b) const { return a + b; }
};
struct RaTwo {
  unsigned int a, b;
};
struct add_two {
  RA_DEVICE RaTwo operator()(RaTwo x, RaTwo y) const { return {x.a + y.a, x.b + y.b}; }
};

// Keys a thread of a tile holds: RA_TILE_ITEMS of 4 bytes, half as many of 8.
template <typename K> struct RaTile { static constexpr int items = sizeof(K) == 4 ? RA_TILE_ITEMS : RA_TILE_ITEMS / 2; };
// The pass is latency-bound (each tile waits on its loads, its waves' ranking chains and the
// look-back): enough blocks per multiprocessor to overlap them (4 cap registers at 64, 3 at
// 80, which the values need). Measured on an H200.
template <typename VO> struct RaOnesweep {
  static constexpr int blocks = ra_same<VO, void>::value ? 4 : 3;
  // Tiles whose status a look-back reads at once (one round trip per window).
  static constexpr int lookback = ra_same<VO, void>::value ? RA_LOOKBACK_KEYS : RA_LOOKBACK_PAIRS;
};
// A status word: 0 until published; then the tile's count of the digit plus 1, and at last
// RA_INCLUSIVE | the count of the digit in all tiles up to it, mod 2^31 (see radix_onesweep).
#define RA_INCLUSIVE 0x80000000u

// A value as the pass writes it: a uint32 index, or (int64) its position within a row of `len`.
template <typename VO> RA_DEVICE VO ra_value_out(unsigned int v, unsigned int len) {
  if constexpr (sizeof(VO) == 8) return (VO)(v % len);
  else return (VO)v;
}

// The digit at `shift` of a key. Where a pass writes float values (the top pass of a keys-only
// sort), key 0 is a zero (see the top of the file): its digit is the other zero's, whose key is the
// sign bit. (Tested on the kernel's flags at each use, not held in a register: the keys-only pass
// is at its 64 registers, and ptxas then spilled one.)
template <typename K> RA_DEVICE unsigned int ra_digit(K key, int shift, int out_flags) {
  return key == 0 && (out_flags & RA_KEY_FLOAT) ? RA_RADIX / 2 : (unsigned int)(key >> shift) & (RA_RADIX - 1);
}

// Every lane of the wave: on AMD the mask has 64 bits at wave 32 too, and the lanes past the
// wave must stay clear (a complemented ballot sets them).
#define RA_WAVE_LANES ((ra_lanemask_t)(~0ull >> (64 - RA_WAVE_SIZE)))

// The lanes among `lanes` whose digit equals this lane's: a ballot per bit. (NVIDIA's match
// instruction takes longer the more distinct digits a warp holds: it lost on random keys.)
RA_DEVICE ra_lanemask_t ra_digit_peers(unsigned int d, ra_lanemask_t lanes) {
  ra_lanemask_t peers = lanes;
#pragma unroll
  for (int bit = 0; bit < 8; ++bit) {
#ifdef RA_NVIDIA
    // The bit tested once, for the ballot and the choice (NVRTC tested it twice, and the
    // ranking is most of the pass's instructions): the ballot, complemented where clear.
    unsigned int m;
    asm("{\n\t.reg .pred p;\n\tand.b32 %0, %1, %2;\n\tsetp.ne.u32 p, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t@!p not.b32 %0, %0;\n\t}"
        : "=r"(m) : "r"(d), "r"(1u << bit));
    peers &= m;
#else
    const bool set = (d >> bit) & 1u;
    const ra_lanemask_t m = ra_ballot(set);
    peers &= set ? m : ~m;
#endif
  }
  return peers;
}

// What a pass's block keeps in shared memory.
template <typename K, bool PAIRS> struct RaOnesweepShared {
  static constexpr int TILE = RA_SORT_BLOCK * RaTile<K>::items;
  K key[TILE];
  unsigned int value[PAIRS ? TILE : 1];
  unsigned int wave_count[RA_SORT_BLOCK / RA_WAVE_SIZE][RA_RADIX];
  unsigned int out_base[RA_RADIX];
  unsigned int tile;
};

// Whether item i of a tile of n is there: always in a full tile (FULL: every tile but the last),
// which then needs no bound test, ballot of valid lanes or masked load and store.
template <bool FULL> RA_DEVICE bool ra_in_tile(unsigned int i, unsigned int n) { return FULL || i < n; }

// The pass's work on one tile (see radix_onesweep), of tile_n elements (FULL: a whole tile).
template <bool FULL, typename KI, typename KO, typename VO>
RA_DEVICE void ra_onesweep_tile(RaOnesweepShared<typename RaKeyOf<KI>::type, !ra_same<VO, void>::value>& sh,
                                KO* kout, VO* vout, const KI* kin, const unsigned int* vin, unsigned int n,
                                unsigned int tile, unsigned int tile_n, int shift, int in_flags, int out_flags,
                                unsigned int digit_count, volatile unsigned int* st, unsigned int len) {
  typedef typename RaKeyOf<KI>::type K;
  constexpr bool pairs = !ra_same<VO, void>::value;
  constexpr int ITEMS = RaTile<K>::items, TILE = RA_SORT_BLOCK * ITEMS;
  constexpr int WAVES = RA_SORT_BLOCK / RA_WAVE_SIZE, WAVE_TILE = RA_WAVE_SIZE * ITEMS;
  constexpr int LOOKBACK = RaOnesweep<VO>::lookback;
  const int t = threadIdx.x, lane = ra_lane(), wave = t / RA_WAVE_SIZE;
  const unsigned int base = tile * TILE;
  // Each wave holds a contiguous run of the tile, lane-fastest: loads coalesce, and item j's
  // lanes come before item j + 1's, so ranking in (item, lane) order is stable.
  const unsigned int first = wave * WAVE_TILE + lane;

  // Every load issued before any key is used: one memory latency per tile.
  K key[ITEMS];
  if (in_flags & RA_GATHER) {
    const int shift_in = in_flags & RA_INTERLEAVED ? 1 : 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const unsigned int i = first + j * RA_WAVE_SIZE;
      key[j] = ra_in_tile<FULL>(i, tile_n) ? kin[(ra_index_t)vin[base + i] << shift_in] : 0;
    }
  } else if (in_flags & RA_INTERLEAVED) {
    const KI* src = kin + 2 * (ra_index_t)(base + first);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
      key[j] = ra_in_tile<FULL>(first + j * RA_WAVE_SIZE, tile_n) ? src[2 * j * RA_WAVE_SIZE] : 0;
  } else {
    const KI* src = kin + (base + first);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
      key[j] = ra_in_tile<FULL>(first + j * RA_WAVE_SIZE, tile_n) ? src[j * RA_WAVE_SIZE] : 0;
  }
  if (in_flags & (RA_DESCENDING | RA_KEY_FLOAT | RA_KEY_SIGNED)) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) key[j] = ra_key_bits((KI)key[j], in_flags);
  }

  // rank[j]: where item j goes among the wave's keys of its digit (low half), and the digit
  // (high half; past the end: RA_RADIX, never counted). The lanes sharing a digit find each
  // other and all read the wave's count of it; the lowest adds them to it, in item order
  // (the wave's counters are its own: no block barrier; no branch, no shuffle).
  const ra_lanemask_t below = (((ra_lanemask_t)1) << lane) - 1;
  unsigned int* wave_count = sh.wave_count[wave];
  unsigned int rank[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const bool valid = ra_in_tile<FULL>(first + j * RA_WAVE_SIZE, tile_n);
    const unsigned int d = ra_digit(key[j], shift, out_flags);
    const ra_lanemask_t peers = ra_digit_peers(d, FULL ? RA_WAVE_LANES : ra_ballot(valid));
    const ra_lanemask_t ahead = peers & below;
    const unsigned int before = wave_count[d];
    ra_wave_sync();  // every lane has read its count before the lowest of each digit adds to it
    if (valid && ahead == 0) wave_count[d] = before + ra_popc(peers);
    rank[j] = (before + ra_popc(ahead)) | (valid ? d : RA_RADIX) << 16;
    ra_wave_sync();
  }
  __syncthreads();

  // Thread t owns digit t: its count in the tile, published at once, so that later tiles
  // wait as little as possible (the first tile's is already a total); then each wave's
  // start within the tile, and (scanned with it) where the digit starts in the output.
  unsigned int mine = 0;
#pragma unroll
  for (int w = 0; w < WAVES; ++w) {
    const unsigned int c = sh.wave_count[w][t];
    sh.wave_count[w][t] = mine;
    mine += c;
  }
  st[tile * RA_RADIX + t] = tile == 0 ? RA_INCLUSIVE | mine : mine + 1;
  RaTwo starts, totals;
  ra_block_scan(RaTwo{mine, digit_count}, add_two(), RaTwo{0u, 0u}, &starts, &totals);
  const unsigned int start = starts.a;
#pragma unroll
  for (int w = 0; w < WAVES; ++w) sh.wave_count[w][t] += start;
  __syncthreads();

  // Keys to their place in the tile, in output order.
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const unsigned int d = rank[j] >> 16;
    if (FULL || d < RA_RADIX) {
      rank[j] = (rank[j] & 0xffffu) + wave_count[d];
      sh.key[rank[j]] = key[j];
    }
  }

  // earlier: the keys of digit t in the tiles before this one, the sum of what they published
  // back to one with its total (LOOKBACK words read at once: one round trip per window).
  // Only mod 2^31 (a word keeps a flag), but it lies in [lo, lo + 2^31): at least the digit's
  // keys beyond what the tiles from this one on hold, at most both that plus n / 2.
  unsigned int earlier = 0;
  if (tile > 0) {
    bool found = false;
    for (int j = (int)tile - 1; !found; j -= LOOKBACK) {
      unsigned int s[LOOKBACK];
#pragma unroll
      for (int w = 0; w < LOOKBACK; ++w) s[w] = j - w >= 0 ? st[(unsigned int)(j - w) * RA_RADIX + t] : RA_INCLUSIVE;
#pragma unroll
      for (int w = 0; w < LOOKBACK && !found; ++w) {
        while (s[w] == 0) {  // nothing published there yet
          ra_spin_turn();
          s[w] = st[(unsigned int)(j - w) * RA_RADIX + t];
        }
        found = s[w] & RA_INCLUSIVE;
        earlier += found ? s[w] : s[w] - 1;
      }
    }
    const unsigned int rest = n - base, lo = digit_count > rest ? digit_count - rest : 0;
    earlier = lo + ((earlier - lo) & ~RA_INCLUSIVE);
    st[tile * RA_RADIX + t] = RA_INCLUSIVE | ((earlier + mine) & ~RA_INCLUSIVE);
  }
  sh.out_base[t] = starts.b + earlier - start;  // mod 2^32: the output index of the tile's element 0 of digit t

  // The values follow their keys (loaded only now: the look-back and its publication, which
  // later tiles wait on, come first, and no registers hold keys and values at once).
  if constexpr (pairs) {
    unsigned int value[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const unsigned int i = first + j * RA_WAVE_SIZE;
      if (ra_in_tile<FULL>(i, tile_n)) value[j] = vin ? vin[base + i] : base + i;
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
      if (ra_in_tile<FULL>(first + j * RA_WAVE_SIZE, tile_n)) sh.value[rank[j]] = value[j];
  }
  __syncthreads();

  // Each digit's run written coalesced; all shared reads first (one latency, not one per item).
  K k[ITEMS];
  unsigned int o[ITEMS];
#pragma unroll
  for (int r = 0; r < ITEMS; ++r) k[r] = sh.key[r * RA_SORT_BLOCK + t];
#pragma unroll
  for (int r = 0; r < ITEMS; ++r) o[r] = sh.out_base[ra_digit(k[r], shift, out_flags)] + r * RA_SORT_BLOCK + t;
  if (kout && out_flags) {
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
      if (ra_in_tile<FULL>(r * RA_SORT_BLOCK + t, tile_n)) kout[o[r]] = ra_value_bits<KO>(k[r], out_flags);
  } else if (kout) {
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
      if (ra_in_tile<FULL>(r * RA_SORT_BLOCK + t, tile_n)) kout[o[r]] = (KO)k[r];
  }
  if constexpr (pairs) {
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
      if (ra_in_tile<FULL>(r * RA_SORT_BLOCK + t, tile_n))
        vout[o[r]] = ra_value_out<VO>(sh.value[r * RA_SORT_BLOCK + t], len);
  }
}

// One stable pass on the digit at 8 * pass: keys (and values) of kin/vin go to kout/vout.
// KI: what kin holds, keys or (the first pass) the bits of values, which in_flags make keys
// of and say where they are (RA_INTERLEAVED, RA_GATHER); KO: what kout takes, keys or (the
// last pass of a keys-only sort) the bits of their values, remade under out_flags.
// counts: this position's row of the digit counts; tiles_taken: this pass's tile counter;
// status: two arrays of [tiles][RA_RADIX] words, what each tile has published for each
// digit; a pass uses array pass % 2 (zeroed) and zeroes the other for the next pass.
// kout null: keys not written (an argsort's last pass); VO void: keys only; vin null: each
// key's value is its position. Indices are 32-bit: a sort holds fewer than 2^32 elements.
template <typename KI, typename KO, typename VO, bool FULL>
__global__ void __launch_bounds__(RA_SORT_BLOCK, RaOnesweep<VO>::blocks)
radix_onesweep(KO* kout, VO* vout, const KI* kin, const unsigned int* vin, ra_index_t size, int pass,
               int in_flags, int out_flags, const unsigned int* counts, unsigned int* tiles_taken,
               unsigned int* status, unsigned int len) {
  typedef typename RaKeyOf<KI>::type K;
  constexpr int TILE = RA_SORT_BLOCK * RaTile<K>::items;
  static_assert(RA_SORT_BLOCK == RA_RADIX, "thread t publishes and looks back for digit t");
  static_assert(RA_WAVE_SIZE * RaTile<K>::items <= 0xffff, "a rank within the wave fits 16 bits");
  __shared__ RaOnesweepShared<K, !ra_same<VO, void>::value> sh;
  const int t = threadIdx.x;
  const unsigned int n = (unsigned int)size, digit_count = counts[t];
  const unsigned int table = (n + TILE - 1) / TILE * RA_RADIX;  // (the tiles of both launches of a pass)

  // Tiles in the order blocks start, not blockIdx: a tile waits only on tiles already running.
  if (t == 0) sh.tile = atomicAdd(tiles_taken, 1u);
  for (int w = 0; w < RA_SORT_BLOCK / RA_WAVE_SIZE; ++w) sh.wave_count[w][t] = 0;
  __syncthreads();
  const unsigned int tile = sh.tile, tile_n = n - tile * TILE < (unsigned int)TILE ? n - tile * TILE : TILE;
  status[((pass + 1) & 1) * table + tile * RA_RADIX + t] = 0;
  volatile unsigned int* st = status + (pass & 1) * table;
  ra_onesweep_tile<FULL>(sh, kout, vout, kin, vin, n, tile, tile_n, 8 * pass, in_flags, out_flags, digit_count, st, len);
}

// ---- from sorted keys and indices to results ----------------------------------------------------
template <typename T>
__global__ void sort_gather(T* out, const T* x, const unsigned int* idx, ra_index_t n) {
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) out[i] = x[idx[i]];
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
