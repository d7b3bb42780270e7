"""Parameter entries that several estimators' docstrings share, written
once: a class docstring holds a line ``    %(name)s`` where the entry goes,
and :func:`fill_doc` puts it there when the class is defined."""

ENTRIES = {
    "class_weight": """\
    class_weight : dict, 'balanced' or None, default=None
        Class weights, multiplying the sample weights of each class's rows
        (scikit-learn's meaning): a dict ``{label: weight}`` (missing labels
        weigh 1); 'balanced': ``n / (n_classes * n_k)``, n_k a class's
        summed sample weight, in ``partial_fit`` over every call so far
        (see :ref:`class weights <class_weight>`).""",
    "allow_new_classes": """\
    allow_new_classes : bool, default=False
        Let ``partial_fit`` add classes it has not seen (in ``y`` or
        ``classes``) instead of raising: the model grows by them, each
        starting at its class-prior intercept, and they are appended to
        ``classes_`` in order of arrival (see the user guide's streaming
        page).""",
    "n_jobs_hogwild": """\
    n_jobs : int, default=None
        Threads of the training epochs and of the exact evaluation
        (``predict``, ``predict_proba``, ``log_loss``, ...): None means 1,
        -1 every core, as in scikit-learn. With more than one thread the
        epochs run lock-free ("Hogwild!"), reproducible in distribution
        only; ``n_jobs=None`` or 1 stays bitwise reproducible under
        ``random_state``, and ``eta0_`` does not depend on it
        (:ref:`threads_in_training`).
        ``learning_rate='adagrad'`` trains on one thread, with a UserWarning.""",
    "fagan_iyengar_2018": """\
    F. Fagan, G. Iyengar, "Unbiased scalable softmax optimization",
    arXiv:1803.08577, 2018.""",
    "max_iter": """\
    max_iter : int, default=100
        Most epochs (passes over the training rows) of ``fit``.""",
    "tol": """\
    tol : float or None, default=1e-3
        ``fit`` stops when the monitored loss (the validation log-loss with
        ``early_stopping``, else the training objective recorded in
        ``loss_curve_``) has not fallen below its best by more than
        ``tol`` times that best (a relative tolerance) for
        ``n_iter_no_change`` epochs in a row. None: run ``max_iter`` epochs.""",
    "early_stopping": """\
    early_stopping : bool, default=False
        Hold out a stratified ``validation_fraction`` of the rows, score
        their exact log-loss after every epoch and stop on it (``tol``,
        ``n_iter_no_change``); the model is the last epoch's, fitted on
        the other rows: ``SGDClassifier``'s meaning, and its default. Off
        by default: the exact score costs O(n_classes) per held-out row and
        epoch, more than a sampled epoch at many classes, and the split
        needs two rows of every class and as many held-out rows as classes
        (see :ref:`shared_parameters`).""",
    "validation_fraction": """\
    validation_fraction : float, default=0.1
        Share of the rows held out by ``early_stopping``.""",
    "n_iter_no_change": """\
    n_iter_no_change : int, default=8
        Epochs in a row without an improvement by more than ``tol`` times
        the best before ``fit`` stops.""",
}


def fill_doc(cls, entries=None):
    """Replace each ``    %(name)s`` line of ``cls.__doc__`` by the entry
    ``name`` of ``entries`` (default: :data:`ENTRIES`); returns cls, so it
    serves as a class decorator."""
    doc = cls.__doc__
    for name, text in (ENTRIES if entries is None else entries).items():
        doc = doc.replace(f"    %({name})s", text)
    cls.__doc__ = doc
    return cls
