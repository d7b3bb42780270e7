"""In-place transposition (``_shared/_transpose.pyx.tp``) and the layout
a fitted model is stored in.

The kernel only moves values, so it is checked bit for bit against
NumPy's ``A.T`` on every shape up to 24 x 24 (gcd 1 and larger, square,
one row or column, blocks of columns cut short) and on larger shapes
whose gcd, cache-line blocks and threads differ. A fit ends with W stored
feature-major; the next training call turns it back, so that a stream
continues exactly as it would have from the class-major W.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from sksoftmax import SCENTClassifier, SoftmaxClassifier, UMaxSoftmaxClassifier
from sksoftmax._shared._transpose import transpose_in_place
from sksoftmax.datasets import make_softmax_classification

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transpose_in_place_every_small_shape(dtype):
    rng = np.random.default_rng(0)
    for m in range(1, 25):
        for n in range(1, 25):
            A = rng.standard_normal((m, n)).astype(dtype)
            buf = A.copy()
            out = transpose_in_place(buf)
            assert out.shape == (n, m) and out.flags.c_contiguous
            assert np.shares_memory(out, buf)
            assert_array_equal(out, A.T)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize(
    "shape", [(1000, 64), (64, 1000), (997, 1024), (2048, 300), (4096, 3),
              (12345, 77), (96, 96)]
)
def test_transpose_in_place_larger_shapes_and_back(shape, n_threads):
    rng = np.random.default_rng(1)
    A = rng.standard_normal(shape).astype(np.float32)
    out = transpose_in_place(A.copy(), n_threads=n_threads)
    assert_array_equal(out, A.T)
    assert_array_equal(transpose_in_place(out, n_threads=n_threads), A)


def test_transpose_in_place_rejects_what_it_cannot_transpose():
    A = np.zeros((4, 6))
    with pytest.raises(ValueError, match="C-contiguous"):
        transpose_in_place(np.asfortranarray(A))
    with pytest.raises(ValueError, match="C-contiguous"):
        transpose_in_place(A[:, ::2])
    with pytest.raises(TypeError, match="int64"):
        transpose_in_place(np.zeros((4, 6), dtype=np.int64))


def _data():
    X, y = make_softmax_classification(
        n_samples=1500, n_features=60, n_classes=40, density=0.1,
        random_state=0,
    )[:2]
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda: SCENTClassifier(max_iter=2, random_state=0),
        lambda: UMaxSoftmaxClassifier(max_iter=2, random_state=0),
        lambda: SoftmaxClassifier(solver="scent", max_iter=2, random_state=0),
    ],
    ids=["scent", "umax", "front door, scent"],
)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fit_stores_w_feature_major_and_training_turns_it_back(make):
    X, y = _data()
    est = make().fit(X, y)
    # fit ends feature-major: coef_ is the transpose of a C (D, K) array
    assert est.coef_.flags.f_contiguous and not est.coef_.flags.c_contiguous
    coef = est.coef_.copy()
    scores = X[:20] @ coef.T + est.intercept_
    assert_allclose(est.decision_function(X[:20]), scores, rtol=1e-12)
    # a further pass starts from the same W, class-major again: the same
    # model as a twin whose W was never moved
    twin = make().fit(X, y)
    twin_state = twin._solver.estimator if hasattr(twin, "_solver") else twin
    state = twin_state._state
    state.coef = np.ascontiguousarray(state.coef)
    twin_state._expose()
    est.partial_fit(X[:300], y[:300])
    twin.partial_fit(X[:300], y[:300])
    assert est.coef_.flags.c_contiguous
    assert_array_equal(est.coef_, twin.coef_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_classes_added_after_fit_grow_the_class_major_w():
    """allow_new_classes after a fit: W is turned back before it grows, and
    the stream matches a twin whose W was never moved."""
    X, y = _data()
    old = y < 30

    def make():
        return SCENTClassifier(max_iter=2, random_state=0,
                               allow_new_classes=True).fit(X[old], y[old])

    est, twin = make(), make()
    twin._state.coef = np.ascontiguousarray(twin._state.coef)
    twin._expose()
    for model in (est, twin):
        model.partial_fit(X[~old][:100], y[~old][:100])
        model.partial_fit(X[:300], y[:300])
    assert est.coef_.shape == (40, X.shape[1])
    assert_array_equal(est.coef_, twin.coef_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_read_only_w_is_copied_not_moved():
    """A W that cannot be written (a model loaded memory-mapped, say) is
    neither transposed at the end of a fit nor in place before a further
    call: the call trains on a copy."""
    X, y = _data()
    est = SCENTClassifier(max_iter=2, random_state=0).fit(X, y)
    coef = est.coef_.copy()
    est._state.coef.flags.writeable = False
    est.partial_fit(X[:300], y[:300])
    assert est.coef_.flags.c_contiguous and est.coef_.flags.writeable
    twin = SCENTClassifier(max_iter=2, random_state=0).fit(X, y)
    assert_array_equal(twin.coef_, coef)
    twin.partial_fit(X[:300], y[:300])
    assert_array_equal(est.coef_, twin.coef_)
