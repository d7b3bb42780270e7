"""sksoftmax.datasets: the papers' protocol, the generator, stdlib tokens."""

import gzip
import sys
import sysconfig
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _data import fetch_shared_bibtex, shared_file
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import gammaln, logsumexp
from sklearn.utils import murmurhash3_32

from sksoftmax.datasets import (
    _python_tokens,
    load_svmlight_first_label,
    load_svmlight_pair,
    make_python_tokens,
    make_softmax_classification,
)


def assert_canonical_csr(X):
    assert sp.issparse(X) and X.format == "csr"
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    # has_canonical_format may be a cached flag: check the arrays themselves,
    # vectorised for the millions of rows of make_python_tokens. A step
    # between the last entry of a row and the first of the next is exempt.
    step = np.diff(X.indices.astype(np.int64))
    within = np.ones(step.shape, dtype=bool)
    bounds = X.indptr[1:-1]
    within[bounds[(bounds > 0) & (bounds < X.nnz)] - 1] = False
    assert (step[within] > 0).all()
    assert X.has_canonical_format


# --- svmlight protocol -----------------------------------------------------


def test_protocol_on_a_small_file(tmp_path):
    path = tmp_path / "tiny.svm"
    path.write_text(
        "3,5 0:1 2:3\n"  # first label 3
        " 1:1\n"  # no label: dropped
        "2,4 \n"  # no feature: dropped
        "4 1:0\n"  # only an explicit zero: dropped
        "1 0:1 1:2\n"
        "0,7,9 1:4 2:0\n"  # explicit zero removed, row kept, label 0
    )
    X, y = load_svmlight_first_label(path, n_features=3)
    assert y.dtype == np.int64
    assert_array_equal(y, [3, 1, 0])
    assert X.dtype == np.float64
    assert_array_equal(X.toarray(), [[1, 0, 3], [1, 2, 0], [0, 4, 0]])
    assert X.nnz == 5  # no stored zero
    assert_canonical_csr(X)

    Xn, yn = load_svmlight_first_label(
        path, n_features=3, normalize=True, dtype=np.float32
    )
    assert Xn.dtype == np.float32
    assert_array_equal(yn, y)
    assert_allclose(sp.linalg.norm(Xn, axis=1), 1.0, rtol=1e-6)
    assert_allclose(
        Xn.toarray(),
        X.toarray() / np.linalg.norm(X.toarray(), axis=1, keepdims=True),
        rtol=1e-6,
    )
    assert_canonical_csr(Xn)


def test_protocol_reads_gzip_and_infers_n_features(tmp_path):
    path = tmp_path / "tiny.svm.gz"
    with gzip.open(path, "wt") as f:
        f.write("2,3 0:1 4:2\n\n1 1:1\n")  # the blank line is no row
    X, y = load_svmlight_first_label(path)
    assert X.shape == (2, 5)
    assert_array_equal(y, [2, 1])


def test_pair_shares_n_features(tmp_path):
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    train.write_text("0 1:1\n1 0:1\n 2:5\n")
    test.write_text("1,2 6:2\n3 \n")
    Xtr, ytr, Xte, yte = load_svmlight_pair(train, test, normalize=True)
    assert Xtr.shape == (2, 7) and Xte.shape == (1, 7)  # the max of the two
    assert_array_equal(ytr, [0, 1])
    assert_array_equal(yte, [1])
    assert_allclose(Xte.toarray(), [[0, 0, 0, 0, 0, 0, 1]])
    Xtr, _, Xte, _ = load_svmlight_pair(
        train, test, n_features=10, dtype=np.float32
    )
    assert Xtr.shape[1] == Xte.shape[1] == 10
    assert Xtr.dtype == Xte.dtype == np.float32
    assert_canonical_csr(Xtr)
    assert_canonical_csr(Xte)


# --- Bibtex ----------------------------------------------------------------


def hand_parse(path, n_features):
    """The protocol written out line by line, independently of sklearn."""
    rows, labels = [], []
    with gzip.open(path, "rt") as f:
        for line in f:
            tokens = line.split()
            if not tokens:
                continue
            # a line with no label starts with a space, i.e. with "f:v"
            if line[0].isspace() or ":" in tokens[0]:
                continue
            feats = {}
            for tok in tokens[1:]:
                j, v = tok.split(":")
                if float(v) != 0:
                    feats[int(j)] = float(v)
            if not feats:
                continue
            labels.append(int(tokens[0].split(",")[0]))  # first as written
            rows.append(feats)
    dense = np.zeros((len(rows), n_features))
    for i, feats in enumerate(rows):
        dense[i, list(feats)] = list(feats.values())
    return dense, np.array(labels)


@pytest.fixture(scope="module")
def bibtex_raw():
    return (
        *hand_parse(shared_file("bibtex_train.svm.gz"), 1836),
        *hand_parse(shared_file("bibtex_test.svm.gz"), 1836),
    )


# fetch_bibtex reads the shared files as its cache (tests/test_fetch.py
# checks that it writes that cache from Mulan-format ARFF files)


def test_bibtex_matches_a_hand_parse(bibtex_raw, tmp_path):
    Dtr, ltr, Dte, lte = bibtex_raw
    X, y, Xt, yt = fetch_shared_bibtex(tmp_path, normalize=False)
    # the protocol drops nothing from Bibtex: every row has a label and a word
    assert X.shape == (4880, 1836) and Xt.shape == (2515, 1836)
    assert Dtr.shape[0] == 4880 and Dte.shape[0] == 2515
    assert np.unique(y).shape[0] == 146
    assert_array_equal(y, ltr)
    assert_array_equal(yt, lte)
    assert_array_equal(X.toarray(), Dtr)
    assert_array_equal(Xt.toarray(), Dte)
    assert_canonical_csr(X)
    assert_canonical_csr(Xt)


def test_bibtex_normalized(bibtex_raw, tmp_path):
    Dtr, ltr, _, _ = bibtex_raw
    X, y, Xt, _ = fetch_shared_bibtex(tmp_path, normalize=True)
    assert_allclose(sp.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
    assert_allclose(sp.linalg.norm(Xt, axis=1), 1.0, rtol=1e-12)
    assert_allclose(
        X[:50].toarray(),
        Dtr[:50] / np.linalg.norm(Dtr[:50], axis=1, keepdims=True),
        rtol=1e-12,
    )
    assert_array_equal(y, ltr)
    X32, _, _, _ = fetch_shared_bibtex(tmp_path, dtype=np.float32)
    assert X32.dtype == np.float32
    assert_allclose(X32.toarray(), X.toarray(), rtol=1e-6)


# --- the planted softmax generator -----------------------------------------


def test_generator_shapes_dtype_and_reproducibility():
    kw = {"density": 0.05, "random_state": 3, "dtype": np.float32}
    X, y = make_softmax_classification(500, 300, 40, **kw)
    assert X.shape == (500, 300) and X.dtype == np.float32
    assert y.shape == (500,) and y.dtype == np.int64
    assert y.min() >= 0 and y.max() < 40
    assert_canonical_csr(X)
    assert (np.diff(X.indptr) > 0).all()  # no empty row
    # raw counts: positive integers, about density * n_features per row
    assert (X.data >= 1).all() and (X.data == np.round(X.data)).all()
    assert (X.data > 1).any()
    assert abs(X.sum() / 500 - 15) < 1.0

    X2, y2 = make_softmax_classification(500, 300, 40, **kw)
    assert_array_equal(y, y2)
    assert_array_equal(X.indptr, X2.indptr)
    assert_array_equal(X.indices, X2.indices)
    assert_array_equal(X.data, X2.data)
    _, y3 = make_softmax_classification(500, 300, 40, density=0.05)
    assert not np.array_equal(y, y3)
    Xs, ys = make_softmax_classification(
        500, 300, 40, density=0.05, random_state=3
    )
    assert Xs.dtype == np.float64
    assert_array_equal(ys, y)
    assert_array_equal(Xs.toarray(), X.toarray())


def test_generator_coef_structure():
    _, _, coef, b = make_softmax_classification(
        50,
        8,
        300,
        density=0.5,
        n_informative=8,
        random_state=0,
        return_coef=True,
    )
    # n_informative == n_features: each topic set is the whole vocabulary
    assert coef.shape == (300, 8) and coef.nnz == 300 * 8
    assert (coef.data > 0).all()
    assert_canonical_csr(coef)
    assert_allclose(b, np.log(1 / 300))

    _, _, coef, _ = make_softmax_classification(
        10, 1000, 2000, n_informative=7, random_state=1, return_coef=True
    )
    assert_array_equal(np.diff(coef.indptr), 7)  # distinct topic features
    assert_canonical_csr(coef)
    # topics are spread over the vocabulary, not clustered
    used = np.bincount(coef.indices, minlength=1000)
    assert used.min() > 0 and used.max() < 4 * used.mean()


@pytest.mark.parametrize(
    "kw",
    [
        {"n_classes": 1},
        {"n_informative": 0},
        {"n_informative": 31},
        {"density": 0.0},
        {"density": 1.5},
        {"topic_weight": 1.0},
        {"class_weights": np.ones(4)},
        {"class_weights": [1, 1, 0, 1, 1]},
    ],
)
def test_generator_rejects_bad_parameters(kw):
    params = {"n_samples": 10, "n_features": 30, "n_classes": 5}
    params["density"] = 0.1
    params.update(kw)
    with pytest.raises(ValueError):
        make_softmax_classification(**params)


def test_planted_posterior_is_exactly_bayes():
    K, D, lam, m, density = 5, 30, 0.4, 3, 0.2
    n = 20000
    X, y, coef, intercept = make_softmax_classification(
        n,
        D,
        K,
        density=density,
        n_informative=m,
        topic_weight=lam,
        class_exponent=1.0,
        random_state=0,
        return_coef=True,
    )
    # The model rebuilt from its documented definition; only the random topic
    # sets S_k are read off coef (its sparsity pattern, not its values).
    bg = 1.0 / np.arange(1, D + 1)
    bg /= bg.sum()
    prior = 1.0 / np.arange(1, K + 1)
    prior /= prior.sum()
    member = coef.toarray() != 0
    assert_array_equal(member.sum(axis=1), m)
    theta = (1 - lam) * bg + lam / m * member
    assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-14)

    # Bayes' rule with the full likelihood of the bag of words over all
    # classes: p(L) times the multinomial pmf of the counts given L.
    Xd = X.toarray()
    L = Xd.sum(axis=1)
    mu = density * D - 1
    log_p_len = (L - 1) * np.log(mu) - mu - gammaln(L)  # 1 + Poisson(mu)
    log_multinomial = gammaln(L + 1) - gammaln(Xd + 1).sum(axis=1)
    log_joint = (
        np.log(prior)
        + (log_p_len + log_multinomial)[:, None]
        + Xd @ np.log(theta).T
    )
    bayes = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))

    scores = (X @ coef.T).toarray() + intercept
    posterior = np.exp(scores - logsumexp(scores, axis=1, keepdims=True))
    assert_allclose(posterior, bayes, rtol=1e-10, atol=1e-12)
    assert_allclose(intercept, np.log(prior), rtol=1e-14)

    # The data were drawn from that model: class frequencies follow the
    # prior and each class's word frequencies follow theta_k.
    se_prior = np.sqrt(prior * (1 - prior) / n)
    assert (
        np.abs(np.bincount(y, minlength=K) / n - prior) < 5 * se_prior
    ).all()
    for k in range(K):
        words = Xd[y == k].sum(axis=0)
        se = np.sqrt(theta[k] * (1 - theta[k]) / words.sum())
        assert (np.abs(words / words.sum() - theta[k]) < 5 * se + 1e-3).all()
    assert abs(L.mean() - density * D) < 5 * np.sqrt(mu / n)

    # ... and the labels were drawn from the posterior: for y ~ p(. | x),
    # E[-log p_y] is the mean entropy and E[p_y] the mean sum of p_k^2.
    p_obs = posterior[np.arange(n), y]
    nll = -np.log(p_obs)
    entropy = -(posterior * np.log(posterior)).sum(axis=1)
    assert abs(nll.mean() - entropy.mean()) < 5 * nll.std() / np.sqrt(n)
    purity = (posterior**2).sum(axis=1)
    assert abs(p_obs.mean() - purity.mean()) < 5 * p_obs.std() / np.sqrt(n)
    # reliability: within bins of max probability, the argmax is right as
    # often as the posterior says
    pmax, pred = posterior.max(axis=1), posterior.argmax(axis=1)
    for lo, hi in [(0.0, 0.5), (0.5, 0.8), (0.8, 1.01)]:
        sel = (pmax >= lo) & (pmax < hi)
        if sel.sum() > 500:
            hit = (pred[sel] == y[sel]).mean()
            assert abs(hit - pmax[sel].mean()) < 5 * np.sqrt(0.25 / sel.sum())


def test_class_weights_set_the_prior():
    w = np.array([5.0, 1.0, 1.0, 3.0])
    _, y, _, b = make_softmax_classification(
        40000,
        20,
        4,
        density=0.1,
        class_weights=w,
        random_state=0,
        return_coef=True,
    )
    assert_allclose(b, np.log(w / w.sum()))
    assert_allclose(
        np.bincount(y, minlength=4) / 40000, w / w.sum(), atol=0.01
    )


def test_generator_scales_to_a_million_classes():
    K, m = 1_000_000, 5
    tracemalloc.start()
    try:
        X, y, coef, b = make_softmax_classification(
            2000,
            5000,
            K,
            density=0.004,
            n_informative=m,
            random_state=0,
            return_coef=True,
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert X.shape == (2000, 5000) and y.shape == (2000,)
    assert coef.shape == (K, 5000) and coef.nnz == K * m
    assert b.shape == (K,) and y.max() < K
    assert_canonical_csr(X)
    # The output alone is about 8 + 4 bytes per coefficient and 12 bytes per
    # class; a dense (K, 5000) matrix would be 40 GB.
    assert peak < 40 * K * m, f"peak {peak / 1e6:.0f} MB"
    # only O(n_samples) classes are observed, each from its own topic words
    rows = np.flatnonzero(y == y[0])
    topic = coef.indices[coef.indptr[y[0]] : coef.indptr[y[0] + 1]]
    assert X[rows][:, topic].sum() > 0


# --- next-token prediction on the standard library -------------------------


def hashed_columns(strings, n_features):
    """The sorted distinct columns of a row, one murmurhash per string."""
    hashes = (murmurhash3_32(s, seed=0, positive=True) for s in strings)
    return sorted({h % n_features for h in hashes})


def context_strings(before, context):
    """The feature strings of a token preceded by before (oldest first)."""
    prev = ["<BOF>"] * context + list(before)
    prev = prev[::-1][:context]  # prev[k - 1] is the token k back
    strings = [f"-{k}={t}" for k, t in enumerate(prev, start=1)]
    if context >= 2:
        strings.append(f"-2-1={prev[1]} {prev[0]}")
    return strings


def test_token_words_and_features_by_hand():
    source = (
        "x = 10  # a comment\n"
        "\n"  # a blank line: NL, dropped
        "if x:\n"
        "    s = 'ab' + '" + "b" * 18 + "' + '" + "c" * 19 + "'\n"
        "    y = 2 * 0x1\n"
    )
    words, indptr, indices = _python_tokens._token_rows(
        source, n_features=2**20, context=3
    )
    twenty = "'" + "b" * 18 + "'"  # the longest string kept verbatim
    # no token holds a space, so the expected words read as one string
    expected = (
        "x = <NUMBER> <NEWLINE> if x : <NEWLINE> <INDENT> "
        f"s = 'ab' + {twenty} + <STRING> <NEWLINE> "
        "y = 2 * <NUMBER> <NEWLINE> <DEDENT>"
    )
    assert words == expected.split()
    assert indptr.shape == (len(words) + 1,)

    def row(i):
        return indices[indptr[i] : indptr[i + 1]].tolist()

    # Two rows spelled out: the file's first token, and "x" after "if".
    assert row(0) == hashed_columns(
        ["-1=<BOF>", "-2=<BOF>", "-3=<BOF>", "-2-1=<BOF> <BOF>"], 2**20
    )
    assert row(5) == hashed_columns(
        ["-1=if", "-2=<NEWLINE>", "-3=<NUMBER>", "-2-1=<NEWLINE> if"], 2**20
    )
    for n_features in (2**20, 7, 1):
        for context in (1, 2, 3, 5):
            words, indptr, indices = _python_tokens._token_rows(
                source, n_features=n_features, context=context
            )
            for i in range(len(words)):
                strings = context_strings(words[:i], context)
                assert row(i) == hashed_columns(strings, n_features)
            # 7 columns force merged features: rows stay binary and sorted
            if n_features == 7 and context == 5:
                assert (np.diff(indptr) < context + 1).any()
            if n_features == 1:
                assert_array_equal(indices, 0)


def assert_same_arrays(first, again):
    assert len(first) == len(again)
    for a, b in zip(first, again):
        assert type(a) is type(b) and a.dtype == b.dtype
        if sp.issparse(a):
            assert a.shape == b.shape
            assert_array_equal(a.indptr, b.indptr)
            assert_array_equal(a.indices, b.indices)
            assert_array_equal(a.data, b.data)
        else:
            assert_array_equal(a, b)


def write_sources(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text if isinstance(text, bytes) else text.encode()
        path.write_bytes(data)


# At test_size=0.5 a file is a test file when murmurhash3_32 of its path,
# mod 1000, is below 500; the comments give that number.
TINY_STDLIB = {
    "a.py": "x = y\n",  # 602, train
    "bad.py": "x = (\n",  # 944, train; EOF in a statement: skipped
    "c.py": "x = x\n",  # 684, train
    # 989, train; not UTF-8 past the encoding check: skipped
    "latin.py": "x = 1\ny = 2\nz = 'é'\n".encode("latin-1"),
    "pkg/__init__.py": "",  # 857, train; no token
    "d.py": "# coding: no-such-codec\ny = x\n",  # 52, test; skipped
    "indent.py": "if x:\n  y\n z\n",  # 177, test; IndentationError
    "pkg/b.py": "y = q\n",  # 111, test
    # never read: third-party folders and other suffixes
    "site-packages/e.py": "z = z\n",
    "pkg/dist-packages/f.py": "z = z\n",
    "notes.txt": "z = z\n",
}


@pytest.fixture
def tiny_stdlib(tmp_path, monkeypatch):
    root = tmp_path / "lib"
    write_sources(root, TINY_STDLIB)
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"stdlib": root})
    return root


def test_python_tokens_on_a_tiny_stdlib(tiny_stdlib, tmp_path):
    sources, is_test = _python_tokens._python_token_split(0.5)
    rels = [rel for rel, _ in sources]
    assert rels == sorted(rels) == sorted(
        ["a.py", "bad.py", "c.py", "d.py", "indent.py", "latin.py"]
        + ["pkg/__init__.py", "pkg/b.py"]
    )
    test_files = {rel for rel, t in zip(rels, is_test) if t}
    assert test_files == {"d.py", "indent.py", "pkg/b.py"}

    home = tmp_path / "home"
    X, y, Xt, yt, classes = make_python_tokens(
        3,
        n_features=2**20,
        context=2,
        test_size=0.5,
        data_home=home,
        return_classes=True,
    )
    # Train words: a.py "x = y <NEWLINE>", c.py "x = x <NEWLINE>": x three
    # times, then "<NEWLINE>" and "=" twice each ("<" < "=" breaks the tie),
    # y once (not a class). Skipped files count for nothing.
    assert_array_equal(classes, ["x", "<NEWLINE>", "="])
    assert classes.dtype.kind == "U"
    assert_array_equal(y, [0, 2, 1, 0, 2, 0, 1])
    contexts = [[], ["x"], ["x", "=", "y"], [], ["x"], ["x", "="]]
    contexts.append(["x", "=", "x"])  # c.py starts afresh after a.py
    expected = [hashed_columns(context_strings(c, 2), 2**20) for c in contexts]
    assert [X[i].indices.tolist() for i in range(7)] == expected
    # pkg/b.py "y = q <NEWLINE>": only "=" and "<NEWLINE>" are classes
    assert_array_equal(yt, [2, 1])
    assert [Xt[i].indices.tolist() for i in range(2)] == [
        hashed_columns(context_strings(c, 2), 2**20)
        for c in (["y"], ["y", "=", "q"])
    ]
    for A in (X, Xt):
        assert A.shape[1] == 2**20 and A.dtype == np.float32
        assert_array_equal(A.data, 1.0)
        assert_canonical_csr(A)

    with pytest.raises(ValueError, match="the 4 distinct tokens"):
        make_python_tokens(5, test_size=0.5, data_home=home)


def test_python_tokens_cache(tiny_stdlib, tmp_path, monkeypatch):
    home = tmp_path / "home"
    kw = {"n_features": 64, "test_size": 0.5, "data_home": home}
    first = make_python_tokens(4, return_classes=True, **kw)
    (cache,) = (home / "sksoftmax_python_tokens").iterdir()
    version = ".".join(map(str, sys.version_info[:3]))
    assert cache.name.startswith(f"python{version}-")
    assert cache.suffix == ".npz"

    def no_build(*args):
        raise AssertionError("rebuilt although cached")

    monkeypatch.setattr(_python_tokens, "_build_python_tokens", no_build)
    assert_same_arrays(first, make_python_tokens(4, return_classes=True, **kw))
    # dtype is not part of the key: the same cache gives float64 values
    X64 = make_python_tokens(4, dtype=np.float64, **kw)[0]
    assert X64.dtype == np.float64
    assert_array_equal(X64.indices, first[0].indices)
    # other parameters, or a stdlib file of another size, are another file
    for other in ({"context": 2}, {"test_size": 0.4}, {"n_features": 65}):
        with pytest.raises(AssertionError, match="rebuilt"):
            make_python_tokens(4, **{**kw, **other})
    (tiny_stdlib / "c.py").write_text("x = x  \n")
    with pytest.raises(AssertionError, match="rebuilt"):
        make_python_tokens(4, **kw)


@pytest.mark.parametrize(
    "kw, error",
    [
        ({"n_classes": 1}, ValueError),
        ({"n_classes": 2.0}, TypeError),
        ({"n_classes": True}, TypeError),
        ({"n_features": 0}, ValueError),
        ({"n_features": 2**31}, ValueError),
        ({"context": 0}, ValueError),
        ({"context": "3"}, TypeError),
        ({"test_size": 0.0}, ValueError),
        ({"test_size": 1.0}, ValueError),
        ({"test_size": 0.0004}, ValueError),  # rounds to 0 thousandths
        ({"test_size": "0.2"}, TypeError),
        ({"dtype": np.int32}, ValueError),
    ],
)
def test_python_tokens_rejects_bad_parameters(kw, error, tmp_path):
    # checked before any file is read or written
    with pytest.raises(error):
        make_python_tokens(**kw, data_home=tmp_path / "home")
    assert not (tmp_path / "home").exists()


def test_stdlib_split():
    sources, is_test = _python_tokens._python_token_split(0.2)
    rels = [rel for rel, _ in sources]
    assert rels == sorted(set(rels))
    assert "os.py" in rels and "json/__init__.py" in rels
    assert all(rel.endswith(".py") for rel in rels)
    third_party = {"site-packages", "dist-packages"}
    assert not any(third_party & set(rel.split("/")) for rel in rels)
    # The hash rule decides, and it decides for about test_size of them.
    expected = [
        murmurhash3_32(rel, seed=0, positive=True) % 1000 < 200 for rel in rels
    ]
    assert_array_equal(is_test, expected)
    assert 0.15 < is_test.mean() < 0.25


N_TOKEN_CLASSES = 500


@pytest.fixture(scope="module")
def python_tokens(tmp_path_factory):
    # The one full build of the test session: it tokenizes the whole stdlib.
    home = tmp_path_factory.mktemp("python_tokens")
    data = make_python_tokens(
        N_TOKEN_CLASSES, n_features=2**12, data_home=home, return_classes=True
    )
    return home, data


def test_python_tokens_on_the_stdlib(python_tokens):
    _, (X, y, Xt, yt, classes) = python_tokens
    assert X.shape[1] == Xt.shape[1] == 2**12
    # hundreds of thousands of tokens whatever the Python version
    assert X.shape[0] > 100_000 and Xt.shape[0] > 10_000
    for A, labels in ((X, y), (Xt, yt)):
        assert A.dtype == np.float32
        assert_canonical_csr(A)
        assert_array_equal(A.data, 1.0)
        nnz = np.diff(A.indptr)
        assert nnz.min() >= 1 and nnz.max() <= 4  # context + 1
        assert nnz.mean() > 3.9  # collisions are rare at 4096 columns
        assert labels.dtype == np.int64 and labels.shape == (A.shape[0],)
        assert labels.min() >= 0 and labels.max() < N_TOKEN_CLASSES
    counts = np.bincount(y, minlength=N_TOKEN_CLASSES)
    assert (counts > 0).all()
    assert (np.diff(counts) <= 0).all()  # label = frequency rank in train
    assert classes.shape == (N_TOKEN_CLASSES,) and classes.dtype.kind == "U"
    assert len(set(classes.tolist())) == N_TOKEN_CLASSES
    for word in ("<NEWLINE>", "<INDENT>", "<DEDENT>", "def", "self", "("):
        assert word in classes
    assert "<BOF>" not in classes  # context only, never a token


def test_python_tokens_are_deterministic(python_tokens):
    home, first = python_tokens
    assert len(list((home / "sksoftmax_python_tokens").glob("*.npz"))) == 1
    again = make_python_tokens(
        N_TOKEN_CLASSES, n_features=2**12, data_home=home, return_classes=True
    )
    assert_same_arrays(first, again)
