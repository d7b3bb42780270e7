"""Standard-library docstrings labelled by module, as TF-IDF rows.

The data of ``examples/plot_text_pipeline.py`` as functions, for the
benchmarks: every ``\"\"\"...\"\"\"`` string of at least five words in the
standard library's ``.py`` files (test suites, IDLE, lib2to3, turtledemo
and ``site-packages`` left out) is a document, its class the top-level
module or package of its file; classes with fewer than ``min_docs``
documents are dropped. A regular expression, not ``ast``, finds the
strings (several times faster; it also picks up a few other triple-quoted
strings). Needs nothing but the running Python and scikit-learn.
"""

import re
import sysconfig
from collections import Counter
from pathlib import Path

import numpy as np

SKIP = {"site-packages", "dist-packages", "idlelib", "lib2to3", "turtledemo"}
TRIPLE_QUOTED = re.compile(r'"""(.*?)"""', re.S)


def stdlib_docstrings(min_docs=30, min_words=5):
    """Documents of the standard library and the module of each.

    Parameters
    ----------
    min_docs : int, default=30
        Drop classes with fewer documents (30 keeps every class in every
        fold of a 3-fold stratified cross-validation).
    min_words : int, default=5
        Shortest document kept, in whitespace-separated words.

    Returns
    -------
    docs : list of str
    labels : ndarray of shape (len(docs),), dtype str
        Top-level module or package of each document's file.
    """
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docs, labels = [], []
    for path in sorted(stdlib.rglob("*.py")):
        parts = path.relative_to(stdlib).parts
        if any(p in SKIP or p.startswith("test") for p in parts):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for doc in TRIPLE_QUOTED.findall(text):
            if len(doc.split()) >= min_words:
                docs.append(doc)
                labels.append(parts[0].removesuffix(".py"))
    counts = Counter(labels)
    keep = [i for i, label in enumerate(labels) if counts[label] >= min_docs]
    return [docs[i] for i in keep], np.array([labels[i] for i in keep])


def docstrings_tfidf(
    test_size=0.25,
    random_state=0,
    ngram_range=(1, 1),
    min_docs=30,
    dtype=np.float64,
):
    """TF-IDF train / test split of ``stdlib_docstrings``.

    ``TfidfVectorizer(sublinear_tf=True, min_df=2, ngram_range=...)`` fit on
    the training documents only (the example's pipeline); a stratified
    split, seeded.

    Returns
    -------
    X_train, y_train, X_test, y_test
        CSR matrices (unit L2 rows) of ``dtype`` and string labels.
    """
    docs, labels = stdlib_docstrings(min_docs=min_docs)
    return tfidf_split(
        docs, labels, test_size, random_state, ngram_range, dtype
    )


def tfidf_split(docs, labels, test_size, random_state, ngram_range=(1, 1),
                dtype=np.float64):
    """X_train, y_train, X_test, y_test of labelled documents: a
    stratified seeded split, then ``TfidfVectorizer(sublinear_tf=True,
    min_df=2, ngram_range=...)`` fit on the training documents only."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import train_test_split

    docs_train, docs_test, y_train, y_test = train_test_split(
        docs,
        labels,
        test_size=test_size,
        stratify=labels,
        random_state=random_state,
    )
    vec = TfidfVectorizer(
        sublinear_tf=True, min_df=2, ngram_range=ngram_range, dtype=dtype
    )
    X_train = vec.fit_transform(docs_train)
    X_test = vec.transform(docs_test)
    return X_train.tocsr(), y_train, X_test.tocsr(), y_test
