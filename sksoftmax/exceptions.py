"""Exceptions raised by sksoftmax estimators."""


class DivergenceError(FloatingPointError, ValueError):
    """A stochastic solver overflowed or produced non-finite parameters.

    Raised by ``fit`` and ``partial_fit`` with a message that says what went
    wrong (which quantity, at which row and epoch) and what to change (usually
    a smaller ``eta0``). The estimator is left unfitted: refit it.

    It is both a ``FloatingPointError`` and a ``ValueError``, so code that
    catches either keeps working.

    Examples
    --------
    >>> from sksoftmax.exceptions import DivergenceError
    >>> issubclass(DivergenceError, ValueError)
    True
    """
