"""Data for many-class problems: the papers' svmlight protocol and a generator.

- :func:`fetch_bibtex`, :func:`fetch_delicious` and :func:`fetch_corel5k`
  download the published multi-label files once (from Mulan's repository),
  check their SHA-256, cache them under scikit-learn's
  :func:`~sklearn.datasets.get_data_home` and apply the papers' protocol.
- :func:`load_svmlight_first_label` and :func:`load_svmlight_pair` read
  multi-label svmlight files the way Fagan & Iyengar (2018, Sec. 4.1) and
  Ruiz et al. (2018, Sec. 4.2) do: keep the first (lowest-index) label of
  each row, drop rows with no label or no nonzero feature, optionally scale
  rows to unit L2 norm.
- :func:`make_softmax_classification` draws sparse count features and labels
  from a planted model whose posterior is exactly a linear softmax, at
  O(nnz) per row, for up to millions of classes.
- :func:`make_python_tokens` builds a real next-token problem with ~10,000
  classes from the Python standard library's own source files: nothing to
  download, cached on disk after the first call.
"""

from ._fetchers import fetch_bibtex, fetch_corel5k, fetch_delicious
from ._generators import make_softmax_classification
from ._loaders import load_svmlight_first_label, load_svmlight_pair
from ._python_tokens import make_python_tokens

__all__ = [
    "fetch_bibtex",
    "fetch_corel5k",
    "fetch_delicious",
    "load_svmlight_first_label",
    "load_svmlight_pair",
    "make_python_tokens",
    "make_softmax_classification",
]
