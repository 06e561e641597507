// Row kernels (rocm_array_plugins/elementwise/rows.py): an expression over reductions along the last
// axis (a softmax, a layer norm) in one pass. This file is appended to elementwise.hip, fused.hip
// and reduction.hip (the reductions' functors and common/block.h), and a generated struct RaRows
// completes it: its row(row, len) loads the row's elements of each array into registers once, folds
// each reduction (a stage) over them, its finalized value shared by the block, and writes the row's
// results once.
//
// A stage gives the eager reduction's bits: each thread folds its elements in the order that
// reduction.hip's ra_row_contiguous folds them in reduce_inner's block of `nt` threads for the row
// (one block a row), four accumulators as there, then that block's reduction tree (ra_block_reduce's,
// ra_row_combine). A thread's elements: a head element (the row's first elements, up to a vector
// boundary of the array its values would fill), vectors of V elements (vector j = t + m * nt,
// m < M), a tail element. Short rows whose vectors fill only the first g threads of such a block
// (g: whole waves) take a group of g threads each, a few rows a block.
template <int V, int M> struct RaRowSpan {
  ra_index_t head, nv, rest, len;
  int t, nt, vectors;  // vectors: this thread's (at most M: the host sizes M to the row)
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
// index in the row), finalized with `param`, in every thread of the row's group (g threads).
template <typename C, typename Out, typename Map, typename Combine, typename Fin, int V, int M, typename F>
RA_DEVICE Out ra_row_reduce(const RaRowSpan<V, M>& s, int g, F value, double param) {
  typedef typename Map::template acc<C> A;
  const Combine op;
  A acc[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) acc[u] = Combine::template identity<A>();
  if (s.has_head()) acc[0] = op(acc[0], Map::template map<C>(value(RA_ROW_HEAD, 0, (ra_index_t)s.t), (ra_index_t)s.t));
  // ra_row_contiguous: vectors in groups of four (vector m into accumulator m % 4), the rest into acc[0].
  const int grouped = s.vectors / 4 * 4;
#pragma unroll
  for (int m = 0; m < M; ++m) {
    if (m < s.vectors) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const ra_index_t r = s.at(m, k);
        const A a = Map::template map<C>(value(m, k, r), r);
        if (m < grouped) acc[m % 4] = op(acc[m % 4], a);
        else acc[0] = op(acc[0], a);
      }
    }
  }
  if (s.has_tail()) acc[1] = op(acc[1], Map::template map<C>(value(RA_ROW_TAIL, 0, s.rest + s.t), s.rest + s.t));
  const A total = ra_row_combine(op(op(acc[0], acc[1]), op(acc[2], acc[3])), op, s, g);
  RA_SHARED_ARRAY(Out, shared, RA_MAX_WAVES);  // (a slot a group)
  const int group = threadIdx.x / g;
  __syncthreads();  // (the slot may still be read by the previous row's stage)
  if (s.t == 0) shared[group] = Fin::template finalize<Out>(total, param);
  __syncthreads();
  return shared[group];
}

// The row's results value(m, k, r), each written once (vectors where `out` is aligned to them).
template <typename Out, int V, int M, typename F>
RA_DEVICE void ra_row_store(Out* out, const RaRowSpan<V, M>& s, F value) {
  if (s.has_head()) out[s.t] = value(RA_ROW_HEAD, 0, (ra_index_t)s.t);
  const bool aligned = ra_aligned(out + s.head, sizeof(ra_vec<Out, V>));
#pragma unroll
  for (int m = 0; m < M; ++m) {
    if (m < s.vectors) {
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
  }
  if (s.has_tail()) out[s.rest + s.t] = value(RA_ROW_TAIL, 0, s.rest + s.t);
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
