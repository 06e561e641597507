"""scikit-learn with array_api_dispatch=True on rocm_array input: results equal the NumPy run's
and come back as rocm_array arrays on the input's device."""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp

from engines import assert_on

sklearn = pytest.importorskip("sklearn")
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.metrics.pairwise import cosine_similarity, euclidean_distances, rbf_kernel  # noqa: E402
from sklearn.preprocessing import StandardScaler, label_binarize  # noqa: E402

RNG = np.random.default_rng(2)
X = RNG.standard_normal((200, 8))
Y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(np.int64)
T = X @ RNG.standard_normal(8)

CASES = {
    # Components have a sign of their own choosing per solver: compare magnitudes.
    "pca_covariance_eigh": (lambda X, y, t: abs(PCA(3, svd_solver="covariance_eigh").fit_transform(X)), True),
    "pca_full": (lambda X, y, t: abs(PCA(3, svd_solver="full").fit_transform(X)), True),
    "lda_predict_proba": (lambda X, y, t: LinearDiscriminantAnalysis().fit(X, y).predict_proba(X), False),
    "ridge": (lambda X, y, t: Ridge(alpha=1.0, solver="svd").fit(X, t).predict(X), False),
    "standard_scaler": (lambda X, y, t: StandardScaler().fit_transform(X), False),
    "euclidean_distances": (lambda X, y, t: euclidean_distances(X), False),
    "rbf_kernel": (lambda X, y, t: rbf_kernel(X), False),
    "cosine_similarity": (lambda X, y, t: cosine_similarity(X), False),
    # Unsigned labels with neg_label=-1 must not wrap around (scikit-learn's own test of this
    # converts its result by np.asarray, which a GPU array refuses: tests/sklearn_namespaces.py).
    "label_binarize_uint8": (lambda X, y, t: label_binarize(y.astype(np.uint8), classes=[0, 1], neg_label=-1), False),
    "label_binarize_uint64_3": (lambda X, y, t: label_binarize(y.astype(np.uint64), classes=[0, 1, 2], neg_label=-1),
                                False),
}


@pytest.mark.parametrize("case", CASES)
def test_sklearn(device: str, case: str) -> None:
    f, _ = CASES[case]
    with sklearn.config_context(array_api_dispatch=True):
        got = f(xp.asarray(X, device=device), xp.asarray(Y, device=device), xp.asarray(T, device=device))
    want = f(X, Y, T)
    assert_on(got, want, device, rtol=1e-6, atol=1e-8)
