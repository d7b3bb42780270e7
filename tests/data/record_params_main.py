"""Record the models the eight expert estimators fit at commit 507fb7f,
before issue 32 item 4 renamed their parameters and changed their defaults.

Run once, at that commit (``python tests/data/record_params_main.py``):
it writes ``params_main.npz`` next to this file, the ``coef_``,
``intercept_`` and ``n_iter_`` of each case below on the small four-class
problem of ``tests/_estimators.py`` (one thread). Each case is given in
the parameter names and defaults of that commit: the defaults of the time
(no argument but ``random_state``) and the settings whose name or value
changed. ``tests/test_params.py`` fits the same cases written with the
new names and checks that the models are bitwise the same.
"""

import os
import sys
import warnings

import numpy as np

import sksoftmax

# case -> (class name, keyword arguments in the names of 507fb7f)
CASES = {
    "umax_default": ("UMaxSoftmaxClassifier", {}),
    "umax_raman": ("UMaxSoftmaxClassifier", dict(formulation="raman", max_iter=5)),
    "umax_early": ("UMaxSoftmaxClassifier", dict(early_stopping=True)),
    "implicit_default": ("ImplicitSGDClassifier", {}),
    "sampled_default": ("SampledSoftmaxClassifier", {}),
    "sampled_nce": ("SampledSoftmaxClassifier", dict(loss="nce", eta0=0.1, max_iter=5)),
    "scent_default": ("SCENTClassifier", dict(batch_size=16)),
    "scent_scent": (
        "SCENTClassifier",
        dict(batch_size=16, nu_update="scent", max_iter=5),
    ),
    "scent_sgd": (
        "SCENTClassifier",
        dict(batch_size=16, nu_update="sgd", alpha_nu=0.1, max_iter=5),
    ),
    "scent_bsgd": ("SCENTClassifier", dict(batch_size=16, loss="bsgd", max_iter=5)),
    "scent_bsgd_scent": (
        "SCENTClassifier",
        dict(batch_size=16, loss="bsgd", nu_update="scent", max_iter=5),
    ),
    "scent_early": ("SCENTClassifier", dict(batch_size=16, early_stopping=True)),
    "ar_softmax_default": ("ARSoftmaxClassifier", {}),
    "ar_softmax_adaptive": (
        "ARSoftmaxClassifier",
        dict(learning_rate="adaptive", max_iter=5),
    ),
    "ar_probit_default": ("ARProbitClassifier", dict(max_iter=10)),
    "ar_probit_paper": ("ARProbitClassifier", dict(local_step="paper", max_iter=5)),
    "ar_logistic_adaptive": (
        "ARLogisticClassifier",
        dict(learning_rate="adaptive", max_iter=5),
    ),
    "ar_logistic_paper_tol": (
        "ARLogisticClassifier",
        dict(local_step="paper", tol=1e-3, max_iter=8),
    ),
    "bound_default": ("StochasticBoundClassifier", {}),
    "bound_paper": ("StochasticBoundClassifier", dict(update="paper", max_iter=3)),
    "bound_surrogate_low_rank": (
        "StochasticBoundClassifier",
        dict(rank=3, update="surrogate", max_iter=3),
    ),
    "bound_low_rank": ("StochasticBoundClassifier", dict(rank=3, max_iter=3)),
}


def fit_case(name, kwargs, X, y):
    cls = getattr(sksoftmax, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(random_state=0, n_jobs=1, **kwargs).fit(X, y)


def main():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from _estimators import four_class_problem

    X, y = four_class_problem()
    out = {}
    for case, (name, kwargs) in CASES.items():
        clf = fit_case(name, kwargs, X, y)
        out[case + "/coef"] = clf.coef_
        out[case + "/intercept"] = clf.intercept_
        out[case + "/n_iter"] = np.array(clf.n_iter_)
        print(f"{case}: n_iter_={clf.n_iter_}")
    path = os.path.join(os.path.dirname(__file__), "params_main.npz")
    np.savez(path, **out)
    print("wrote", path)


if __name__ == "__main__":
    main()
