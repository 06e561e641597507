// Row kernels (rocm_array_plugins/elementwise/rows.py): an expression over reductions along the last
// axis (a softmax, a layer norm) in one pass. This file is appended to elementwise.hip, fused.hip
// and reduction.hip (the reductions' functors and common/block.h), and a generated struct RaRows
// completes it: its row(row, len) folds each reduction (a stage) over the row's elements, its
// finalized value shared by the block, and writes the row's results once. A thread holds its
// elements of an array (and a stage's input values) in registers while they fit the host's budget
// (rows.py's CACHE_REGISTERS), reading the array once; past it an array is read again in each phase
// (from the caches: the row was just read) and an expression computed again.
//
// A stage gives the eager reduction's bits: each thread folds its elements in the order that
// reduction.hip's ra_row_contiguous folds them in reduce_inner's block of `nt` threads for the row
// (one block a row), four accumulators as there, then that block's reduction tree (ra_block_reduce's,
// ra_row_combine). A thread's elements: a head element (the row's first elements, up to a vector
// boundary of the array its values would fill), vectors of V elements (vector j = t + m * nt,
// m < vectors), a tail element. Short rows whose vectors fill only the first g threads of such a
// block (g: whole waves) take a group of g threads each, a few rows a block.
//
// M: a thread's vectors at most, when it holds any in registers (their places are constants: the
// loops over vectors are unrolled); 0 when it holds none (the loops are loops, any row length).
template <int V, int M> struct RaRowSpan {
  ra_index_t head, nv, rest, len;
  int t, nt, vectors;  // vectors: this thread's (at most M where M > 0: the host sizes M to the row)
  RA_DEVICE RaRowSpan(ra_index_t first, ra_index_t n, int thread, int threads) : len(n) {
    t = thread;
    nt = threads;
    head = (ra_index_t)((V - (unsigned long long)first % V) % V);
    if (head > len) head = len;
    nv = (len - head) / V;
    vectors = nv > t ? (int)((nv - t + nt - 1) / nt) : 0;
    rest = head + nv * V;
  }
  // The row's element at vector m's place k.
  RA_DEVICE ra_index_t at(int m, int k) const { return head + (ra_index_t)(t + m * nt) * V + k; }
  RA_DEVICE bool has_head() const { return t < head; }
  RA_DEVICE bool has_tail() const { return rest + t < len; }
};

// The places of a thread's elements: HEAD, a vector 0..M-1 (each of V), TAIL.
#define RA_ROW_HEAD (-1)
#define RA_ROW_TAIL (1 << 20)
// A place to a stream's fetch: vector m, or (m HEAD or TAIL) the element r of the row. (One type, not
// an overload: NVRTC takes no generic lambda in device code.)
struct RaRowPlace { int m; ra_index_t r; };

// A thread's elements of one array's row (or of an expression's), in registers (the loops are
// unrolled: m and k constant).
template <typename T, int V, int M> struct RaRowCache {
  T head, tail;
  ra_vec<T, V> v[M];
  RA_DEVICE void load(const T* p, const RaRowSpan<V, M>& s) {
    if (s.has_head()) head = p[s.t];
    const bool aligned = ra_aligned(p + s.head, sizeof(ra_vec<T, V>));
#pragma unroll
    for (int m = 0; m < M; ++m) {
      if (m < s.vectors) {
        if (aligned) {
          v[m] = *(const ra_vec<T, V>*)(p + s.at(m, 0));
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) v[m].v[k] = p[s.at(m, k)];
        }
      }
    }
    if (s.has_tail()) tail = p[s.rest + s.t];
  }
  RA_DEVICE T get(int m, int k) const { return m == RA_ROW_HEAD ? head : m == RA_ROW_TAIL ? tail : v[m].v[k]; }
  // x kept at the place (m, k) (a stage's input values, which a later stage or the results read again).
  RA_DEVICE T put(int m, int k, T x) {
    if (m == RA_ROW_HEAD) head = x;
    else if (m == RA_ROW_TAIL) tail = x;
    else v[m].v[k] = x;
    return x;
  }
};

// A thread's elements of one array's row read from memory in each phase, a place at a time: fetch
// loads the place's elements (a vector where the row is aligned to it), get reads them.
template <typename T, int V, int M> struct RaRowStream {
  const T* p;
  const RaRowSpan<V, M>& s;
  bool aligned;
  ra_vec<T, V> x;
  RA_DEVICE RaRowStream(const T* row, const RaRowSpan<V, M>& span)
      : p(row), s(span), aligned(ra_aligned(row + span.head, sizeof(ra_vec<T, V>))) {}
  RA_DEVICE void fetch(RaRowPlace at) {
    if (at.m == RA_ROW_HEAD || at.m == RA_ROW_TAIL) {
      x.v[0] = p[at.r];
    } else if (aligned) {
      x = *(const ra_vec<T, V>*)(p + s.at(at.m, 0));
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) x.v[k] = p[s.at(at.m, k)];
    }
  }
  RA_DEVICE T get(int, int k) const { return x.v[k]; }  // (k is 0 at the head and the tail)
};

// Vectors m..m+3 of the thread's `vectors` as ra_row_contiguous loads them together: f(m, 4), a whole
// group of four (vector m + u into accumulator u), or f(m + u, 1) each vector past the last whole group
// (into accumulator 0). (The count is a constant at each call.)
template <typename F> RA_DEVICE void ra_row_four(int m, int vectors, F& f) {
  if (m + 3 < vectors) {
    f(m, 4);
  } else {
#pragma unroll
    for (int u = 0; u < 3; ++u)
      if (m + u < vectors) f(m + u, 1);
  }
}

// f over the thread's vectors (see ra_row_four): unrolled where M > 0 (each m a constant, as a
// cache's registers need), a loop of four vectors a turn where M is 0.
template <int M, typename F> RA_DEVICE void ra_row_vectors(int vectors, F f) {
  if constexpr (M > 0) {
#pragma unroll
    for (int m = 0; m < M; m += 4) ra_row_four(m, vectors, f);
  } else {
    for (int m = 0; m < vectors; m += 4) ra_row_four(m, vectors, f);
  }
}

// The combination of each group's values (groups of g threads, whole waves, from thread 0), in the
// group's first thread, as ra_block_reduce combines a block of s.nt threads whose first g are the
// group's and the others' values the identity: each wave's tree, then wave 0's over the waves'
// partials (lane l takes lane l + d's while l + d < the waves, d halving), run here by one thread on
// the group's partials (a wave of identities is the identity, and it combines into no other).
template <typename A, typename Combine, int V, int M>
RA_DEVICE A ra_row_combine(A v, Combine op, const RaRowSpan<V, M>& s, int g) {
  RA_SHARED_ARRAY(A, partial, RA_MAX_WAVES);
  const int wave = threadIdx.x / RA_WAVE_SIZE, waves = s.nt / RA_WAVE_SIZE, own = g / RA_WAVE_SIZE;
  v = ra_wave_reduce(v, op);
  __syncthreads();  // partial may still be read by an earlier call
  if (ra_lane() == 0) partial[wave] = v;
  __syncthreads();
  if (s.t == 0) {
    A* w = partial + wave;  // (the group's first wave)
    for (int d = RA_WAVE_SIZE / 2; d > 0; d /= 2)
      for (int l = 0; l < own && l + d < waves; ++l)
        w[l] = op(w[l], l + d < own ? w[l + d] : Combine::template identity<A>());
    v = w[0];
  }
  return v;
}

// A stage: the reduction (functors of reduction.hip) of value(m, k, r) over the row (r: the element's
// index in the row), finalized with `param`, in every thread of the row's group (g threads). fetch(place)
// comes before the values of each place (the streamed arrays' loads).
template <typename C, typename Out, typename Map, typename Combine, typename Fin, int V, int M, typename Fetch,
          typename F>
RA_DEVICE Out ra_row_reduce(const RaRowSpan<V, M>& s, int g, Fetch fetch, F value, double param) {
  typedef typename Map::template acc<C> A;
  const Combine op;
  A acc[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) acc[u] = Combine::template identity<A>();
  if (s.has_head()) {
    fetch(RaRowPlace{RA_ROW_HEAD, (ra_index_t)s.t});
    acc[0] = op(acc[0], Map::template map<C>(value(RA_ROW_HEAD, 0, (ra_index_t)s.t), (ra_index_t)s.t));
  }
  ra_row_vectors<M>(s.vectors, [&](int m, int n) {
    typedef decltype(value(m, 0, ra_index_t(0))) T;
    ra_vec<T, V> x[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (u < n) {
        fetch(RaRowPlace{m + u, 0});
#pragma unroll
        for (int k = 0; k < V; ++k) x[u].v[k] = value(m + u, k, s.at(m + u, k));
      }
    }
    const auto at = [&](int u, int k) { return s.at(m + u, k); };
    if (n == 4) {
      ra_fold<C, Map, Combine>(acc, x, at);
    } else {
      const ra_vec<T, V> one[1] = {x[0]};
      ra_fold<C, Map, Combine>(acc, one, at);
    }
  });
  if (s.has_tail()) {
    fetch(RaRowPlace{RA_ROW_TAIL, s.rest + s.t});
    acc[1] = op(acc[1], Map::template map<C>(value(RA_ROW_TAIL, 0, s.rest + s.t), s.rest + s.t));
  }
  const A total = ra_row_combine(op(op(acc[0], acc[1]), op(acc[2], acc[3])), op, s, g);
  RA_SHARED_ARRAY(Out, shared, RA_MAX_WAVES);  // (a slot a group)
  const int group = threadIdx.x / g;
  __syncthreads();  // (the slot may still be read by the previous row's stage)
  if (s.t == 0) shared[group] = Fin::template finalize<Out>(total, param);
  __syncthreads();
  return shared[group];
}

// The row's results value(m, k, r), each written once (vectors where `out` is aligned to them).
template <typename Out, int V, int M, typename Fetch, typename F>
RA_DEVICE void ra_row_store(Out* out, const RaRowSpan<V, M>& s, Fetch fetch, F value) {
  if (s.has_head()) {
    fetch(RaRowPlace{RA_ROW_HEAD, (ra_index_t)s.t});
    out[s.t] = value(RA_ROW_HEAD, 0, (ra_index_t)s.t);
  }
  const bool aligned = ra_aligned(out + s.head, sizeof(ra_vec<Out, V>));
  ra_row_vectors<M>(s.vectors, [&](int first, int n) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (u >= n) break;
      const int m = first + u;
      fetch(RaRowPlace{m, 0});
      ra_vec<Out, V> y;
#pragma unroll
      for (int k = 0; k < V; ++k) y.v[k] = value(m, k, s.at(m, k));
      if (aligned) {
        *(ra_vec<Out, V>*)(out + s.at(m, 0)) = y;
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) out[s.at(m, k)] = y.v[k];
      }
    }
  });
  if (s.has_tail()) {
    fetch(RaRowPlace{RA_ROW_TAIL, s.rest + s.t});
    out[s.rest + s.t] = value(RA_ROW_TAIL, 0, s.rest + s.t);
  }
}

// `rows` rows of `len` elements, a group of g threads a row (blockDim.x / g rows a block, grid-stride),
// each folded as by reduce_inner's block of nt threads. A group past the last row takes part in the
// block's barriers with no elements.
template <typename R>
__global__ void RA_LAUNCH_BOUNDS(RA_BLOCK)
fused_rows(R e, ra_index_t rows, ra_index_t len, int g, int nt) {
  const int per = blockDim.x / g, group = threadIdx.x / g;
  for (ra_index_t first = (ra_index_t)blockIdx.x * per; first < rows; first += (ra_index_t)gridDim.x * per) {
    const ra_index_t row = first + group;
    e.row(row, row < rows ? len : 0, threadIdx.x % g, g, nt);
  }
}
