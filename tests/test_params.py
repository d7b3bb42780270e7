"""One set of parameter names and defaults (issue 32, item 4).

The shared parameters have the same name, default and meaning on all nine
estimators, every constructor is keyword-only, and the renaming changed
names and defaults only: the old settings, written with the new names,
give the models fitted before (``data/params_main.npz``, recorded at
507fb7f by ``data/record_params_main.py``): bit for bit where the fit runs
only the package's kernels, to a stated tolerance where it runs NumPy's
SIMD code or BLAS (``MACHINE_DEPENDENT``).
"""

import inspect
import os
import re
import warnings

import numpy as np
import pytest
from _estimators import ALL_ESTIMATORS, four_class_problem

import sksoftmax
from sksoftmax import SoftmaxClassifier, StochasticBoundClassifier

EXPERTS = [est for est in ALL_ESTIMATORS if est is not SoftmaxClassifier]

# name -> the default on every estimator (SoftmaxClassifier's)
SHARED_DEFAULTS = {
    "alpha": 0.0,
    "max_iter": 100,
    "tol": 1e-3,
    "validation_fraction": 0.1,
    "n_iter_no_change": 8,
    "early_stopping": False,
    "fit_intercept": True,
    "shuffle": True,
    "random_state": None,
    "warm_start": False,
    "verbose": 0,
    "n_jobs": None,
    "eta0": "auto",
    "class_weight": None,
}

# (estimator, parameter) -> (its default, why it differs; the user guide's
# "Parameters shared by every estimator" says the same)
EXCEPTIONS = {
    ("SoftmaxClassifier", "early_stopping"): (
        "auto",
        "the front door stops on held-out rows wherever the data has rows "
        "to hold out, and fits without them (a warning) where it has none; "
        "the experts' is SGDClassifier's (stop on a stratified split)",
    ),
    ("StochasticBoundClassifier", "alpha"): (
        1e-4,
        "the bound needs a penalty: M starts as I / alpha",
    ),
}


@pytest.mark.parametrize("Est", ALL_ESTIMATORS, ids=lambda e: e.__name__)
def test_shared_parameters_have_one_default(Est):
    params = inspect.signature(Est.__init__).parameters
    for name, default in SHARED_DEFAULTS.items():
        assert name in params, (Est.__name__, name)
        expected, _ = EXCEPTIONS.get((Est.__name__, name), (default, None))
        assert params[name].default == expected, (Est.__name__, name)


def test_shared_defaults_are_the_front_doors():
    """The table above is SoftmaxClassifier's defaults (up to its one
    documented exception), so that the experts follow the front door."""
    front = SoftmaxClassifier().get_params()
    for name, default in SHARED_DEFAULTS.items():
        expected, _ = EXCEPTIONS.get(
            ("SoftmaxClassifier", name), (default, None)
        )
        assert front[name] == expected, name


@pytest.mark.parametrize("Est", ALL_ESTIMATORS, ids=lambda e: e.__name__)
def test_constructors_are_keyword_only(Est):
    params = list(inspect.signature(Est.__init__).parameters.values())[1:]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    with pytest.raises(TypeError):
        Est(5)


@pytest.mark.parametrize("Est", EXPERTS, ids=lambda e: e.__name__)
def test_no_old_names(Est):
    """The variant switch is ``variant`` wherever a class has one; no
    learning rate is called 'adaptive' (scikit-learn's 'adaptive' divides
    the step by 5 on a plateau, which none of these does)."""
    params = Est().get_params()
    for old in ("formulation", "nu_update", "local_step", "update"):
        assert old not in params
    if Est.__name__ != "SampledSoftmaxClassifier":
        # ``loss`` names a loss function there only
        assert "loss" not in params
    options = Est._parameter_constraints["learning_rate"][0].options
    assert "adaptive" not in options
    assert {"constant", "invscaling"} <= options


def test_kucukelbir_is_the_old_adaptive():
    clf = sksoftmax.ARProbitClassifier()
    assert clf._learning_rate() == "kucukelbir"
    with pytest.raises(ValueError, match="learning_rate"):
        sksoftmax.ARProbitClassifier(learning_rate="adaptive").fit(
            *four_class_problem(60)
        )


@pytest.mark.parametrize("alpha", [0.0, 0])
def test_bound_without_penalty_says_what_to_set(alpha):
    X, y = four_class_problem(60)
    with pytest.raises(ValueError, match=r"alpha > 0.*alpha=1e-4"):
        StochasticBoundClassifier(alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match=r"alpha > 0.*alpha=1e-4"):
        StochasticBoundClassifier(alpha=alpha).partial_fit(
            X, y, classes=np.unique(y)
        )
    # behind the front door, whose validation skips its solvers'
    with pytest.raises(ValueError, match=r"alpha > 0.*alpha=1e-4"):
        SoftmaxClassifier(solver="bound", alpha=alpha).fit(X, y)


# The cases of data/record_params_main.py, in the new names: the old
# defaults (max_iter 50 / 100 / 10, tol 1e-3 / None / 1e-4,
# n_iter_no_change 5) given explicitly, and the renamed parameters and
# values: formulation -> variant (U-max), nu_update and loss -> variant
# (SCENT; loss='bsgd' -> variant='bsgd' whatever nu_update),
# local_step -> variant (A&R), learning_rate 'adaptive' -> 'kucukelbir'
# (A&R), update -> variant (bound).
_OLD_SGD = dict(max_iter=50, tol=1e-3, n_iter_no_change=5)
_OLD_AR = dict(max_iter=100, tol=None, n_iter_no_change=5)
_OLD_BOUND = dict(max_iter=10, tol=1e-4, n_iter_no_change=5)
CASES = {
    "umax_default": ("UMaxSoftmaxClassifier", dict(_OLD_SGD)),
    "umax_raman": (
        "UMaxSoftmaxClassifier",
        dict(_OLD_SGD, variant="raman", max_iter=5),
    ),
    "umax_early": (
        "UMaxSoftmaxClassifier",
        dict(_OLD_SGD, early_stopping=True),
    ),
    "implicit_default": ("ImplicitSGDClassifier", dict(_OLD_SGD)),
    "sampled_default": ("SampledSoftmaxClassifier", dict(_OLD_SGD)),
    "sampled_nce": (
        "SampledSoftmaxClassifier",
        dict(_OLD_SGD, loss="nce", eta0=0.1, max_iter=5),
    ),
    "scent_default": ("SCENTClassifier", dict(_OLD_SGD, batch_size=16)),
    "scent_scent": (
        "SCENTClassifier",
        dict(_OLD_SGD, batch_size=16, variant="scent", max_iter=5),
    ),
    "scent_sgd": (
        "SCENTClassifier",
        dict(_OLD_SGD, batch_size=16, variant="sgd", alpha_nu=0.1, max_iter=5),
    ),
    "scent_bsgd": (
        "SCENTClassifier",
        dict(_OLD_SGD, batch_size=16, variant="bsgd", max_iter=5),
    ),
    "scent_bsgd_scent": (
        "SCENTClassifier",
        dict(_OLD_SGD, batch_size=16, variant="bsgd", max_iter=5),
    ),
    "scent_early": (
        "SCENTClassifier",
        dict(_OLD_SGD, batch_size=16, early_stopping=True),
    ),
    "ar_softmax_default": ("ARSoftmaxClassifier", dict(_OLD_AR)),
    "ar_softmax_adaptive": (
        "ARSoftmaxClassifier",
        dict(_OLD_AR, learning_rate="kucukelbir", max_iter=5),
    ),
    "ar_probit_default": ("ARProbitClassifier", dict(_OLD_AR, max_iter=10)),
    "ar_probit_paper": (
        "ARProbitClassifier",
        dict(_OLD_AR, variant="paper", max_iter=5),
    ),
    "ar_logistic_adaptive": (
        "ARLogisticClassifier",
        dict(_OLD_AR, learning_rate="kucukelbir", max_iter=5),
    ),
    "ar_logistic_paper_tol": (
        "ARLogisticClassifier",
        dict(_OLD_AR, variant="paper", tol=1e-3, max_iter=8),
    ),
    "bound_default": ("StochasticBoundClassifier", dict(_OLD_BOUND)),
    "bound_paper": (
        "StochasticBoundClassifier",
        dict(_OLD_BOUND, variant="paper", max_iter=3),
    ),
    "bound_surrogate_low_rank": (
        "StochasticBoundClassifier",
        dict(_OLD_BOUND, rank=3, variant="surrogate", max_iter=3),
    ),
    "bound_low_rank": (
        "StochasticBoundClassifier",
        dict(_OLD_BOUND, rank=3, max_iter=3),
    ),
}


@pytest.fixture(scope="module")
def recorded():
    path = os.path.join(os.path.dirname(__file__), "data", "params_main.npz")
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def test_every_recorded_case_is_checked(recorded):
    cases = {key.split("/")[0] for key in recorded}
    assert cases == set(CASES)


# The cases whose fit leaves the package's own kernels: the A&R probit and
# logistic models with variant='paper' take NumPy's exp and log, which NumPy
# dispatches to per-CPU SIMD code, and the bound majorization calls BLAS,
# whose kernels OpenBLAS picks per CPU. Their last bits depend on the
# machine (measured across AVX-512, AVX2 and SSE NumPy and OpenBLAS
# SkylakeX, Haswell, Sandybridge and Prescott kernels: at most 4.1e-10 of
# the largest coefficient, bound_default's ten epochs with M = I / alpha);
# they are compared to REL_TOL of it, 25 times that, where a changed
# default (a step, a row order, an epoch) moves them by 1e-3 or more. Every
# other case runs only the package's kernels, written to give the same
# bits at every instruction set SKSOFTMAX_CPU_DISPATCH can force (CI runs
# this file under 'generic'): compared bit for bit.
MACHINE_DEPENDENT = {
    "ar_logistic_paper_tol",
    "ar_probit_paper",
    "bound_default",
    "bound_low_rank",
    "bound_paper",
    "bound_surrogate_low_rank",
}
REL_TOL = 1e-8


def test_machine_dependent_cases_are_cases():
    assert MACHINE_DEPENDENT <= set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_old_settings_give_the_old_model(case, recorded):
    name, kwargs = CASES[case]
    X, y = four_class_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = getattr(sksoftmax, name)(random_state=0, n_jobs=1, **kwargs)
        clf.fit(X, y)
    coef, intercept = recorded[case + "/coef"], recorded[case + "/intercept"]
    assert clf.n_iter_ == int(recorded[case + "/n_iter"])
    assert clf.coef_.dtype == coef.dtype
    if case in MACHINE_DEPENDENT:
        scale = max(np.abs(coef).max(), np.abs(intercept).max())
        np.testing.assert_allclose(clf.coef_, coef, rtol=0, atol=REL_TOL * scale)
        np.testing.assert_allclose(
            clf.intercept_, intercept, rtol=0, atol=REL_TOL * scale
        )
    else:
        assert clf.coef_.tobytes() == coef.tobytes()
        assert clf.intercept_.tobytes() == intercept.tobytes()


def test_docstrings_state_the_shared_defaults():
    """Each expert's docstring gives the shared defaults it has."""
    for Est in EXPERTS:
        doc = Est.__doc__
        params = Est().get_params()
        for name in (
            "alpha",
            "max_iter",
            "tol",
            "early_stopping",
            "validation_fraction",
            "n_iter_no_change",
        ):
            match = re.search(
                rf"^    {name} : [^\n]*default=([^\n,]+)$", doc, re.M
            )
            if match is None:
                # "As in UMaxSoftmaxClassifier" (one entry for several)
                continue
            stated, value = match.group(1), params[name]
            if isinstance(value, float):
                assert float(stated) == value, (Est.__name__, name, stated)
            else:
                assert stated == repr(value), (Est.__name__, name, stated)
