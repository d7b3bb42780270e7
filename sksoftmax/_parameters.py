"""The experts' constructor parameters: one table of the shared ones, and
the keyword-only ``__init__`` each estimator gets from its own table.

scikit-learn reads an estimator's parameters from the signature of its
``__init__``, which must store each argument unchanged. The six expert
modules take the same eighteen parameters besides their own, so the
signatures are made here from a table (and DistributedSoftmaxClassifier's
from the front door's defaults), the way :mod:`dataclasses` makes
its ``__init__``: the result is an ordinary function whose signature
``help()``, ``inspect.signature`` and ``get_params`` read as if written by
hand.
"""

import sys

SHARED_PARAMETERS = {
    "eta0": "auto",
    "learning_rate": "exponential",
    "decay": 0.9,
    "power_t": 0.5,
    "alpha": 0.0,
    "fit_intercept": True,
    "max_iter": 100,
    "tol": 1e-3,
    "shuffle": True,
    "random_state": None,
    "warm_start": False,
    "verbose": 0,
    "early_stopping": False,
    "validation_fraction": 0.1,
    "n_iter_no_change": 8,
    "n_jobs": None,
    "class_weight": None,
    "allow_new_classes": False,
}


def keyword_init(own, shared=None, **shared_defaults):
    """Make ``__init__(self, *, <own>, <shared>)`` that stores each argument.

    Parameters
    ----------
    own : dict
        The estimator's own parameters and their defaults, in signature
        order; they come first.
    shared : dict, default=None
        The parameters taken from another table and their defaults;
        None: :data:`SHARED_PARAMETERS`.
    **shared_defaults
        Defaults of ``shared`` that differ for this estimator.

    Returns
    -------
    function
        The ``__init__`` to assign in the class body.

    Examples
    --------
    >>> import inspect
    >>> init = keyword_init({"rank": 2}, decay=0.5)
    >>> str(inspect.signature(init))[:40]
    "(self, *, rank=2, eta0='auto', learning_"
    """
    shared = SHARED_PARAMETERS if shared is None else shared
    unknown = set(shared_defaults) - set(shared)
    if unknown:
        raise TypeError(f"not shared parameters: {sorted(unknown)}")
    clash = set(own) & set(shared)
    if clash:
        raise TypeError(f"own parameters that are shared: {sorted(clash)}")
    defaults = {**own, **shared, **shared_defaults}
    for name in defaults:
        if not name.isidentifier():
            raise ValueError(f"not a parameter name: {name!r}")
    arguments = ", ".join(f"{name}=_defaults[{name!r}]" for name in defaults)
    body = "".join(f"    self.{name} = {name}\n" for name in defaults)
    namespace = {"_defaults": defaults}
    exec(f"def __init__(self, *, {arguments}):\n{body}", namespace)
    init = namespace["__init__"]
    # the module whose class body called this, as for a written __init__
    init.__module__ = sys._getframe(1).f_globals.get("__name__")
    init.__doc__ = "Store each parameter as given (see the class docstring)."
    return init
