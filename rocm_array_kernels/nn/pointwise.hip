// The activations and the one-kernel affine / powf of rocm_array.nn, on contiguous arrays:
// out[i] = op(x[i], a, b), computed in nn_acc<T> (float for the 16-bit floats).
#include "common/portability.h"
#include "nn/nn.h"

struct relu_op {  // NaN stays NaN, as torch.relu
  template <typename C> RA_DEVICE C operator()(C x, C, C) const { return x < C(0) ? C(0) : x; }
};
struct gelu_op {  // exact: x * Phi(x)
  template <typename C> RA_DEVICE C operator()(C x, C, C) const {
    return C(0.5) * x * (C(1) + nn_erf(x * C(0.70710678118654752440)));
  }
};
struct gelu_tanh_op {
  template <typename C> RA_DEVICE C operator()(C x, C, C) const {
    const C k = C(0.79788456080286535588);  // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + ra_tanh(k * (x + C(0.044715) * x * x * x)));
  }
};
struct sigmoid_op {
  template <typename C> RA_DEVICE C operator()(C x, C, C) const { return C(1) / (C(1) + ra_exp(-x)); }
};
struct silu_op {
  template <typename C> RA_DEVICE C operator()(C x, C, C) const { return x / (C(1) + ra_exp(-x)); }
};
struct elu_op {  // a = alpha
  template <typename C> RA_DEVICE C operator()(C x, C a, C) const { return x > C(0) ? x : a * ra_expm1(x); }
};
struct affine_op {  // x * a + b, rounded once
  template <typename C> RA_DEVICE C operator()(C x, C a, C b) const { return x * a + b; }
};
struct powf_op {  // x ** a
  template <typename C> RA_DEVICE C operator()(C x, C a, C) const { return ra_pow(x, a); }
};

template <typename Op, typename T>
__global__ void pointwise(T* RA_RESTRICT out, const T* RA_RESTRICT x, ra_index_t n, double a, double b) {
  typedef typename nn_acc<T>::type C;
  const C ca = C(a), cb = C(b);
  Op op;
  for (ra_index_t i = ra_thread_index(); i < n; i += ra_grid_stride()) out[i] = T(op(C(x[i]), ca, cb));
}
