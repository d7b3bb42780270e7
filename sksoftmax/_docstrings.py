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
