"""fetch_bibtex and its siblings, against a local HTTP server.

No test needs the internet: a server on 127.0.0.1, started here in a
thread, serves Mulan-format ARFF files written from the project's shared
svmlight files (../shared/data), and the fetchers are pointed at it by
monkeypatching the private base URL and pinned checksums of
``sksoftmax.datasets`` (the real checksums are those of Mulan's own files,
which are not in ../shared/data).
"""

import functools
import gzip
import hashlib
import re
import socket
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

import numpy as np
import pytest
import scipy.sparse as sp
from _data import shared_data_home, shared_file
from numpy.testing import assert_array_equal

from sksoftmax import datasets
from sksoftmax._fetch import arff_to_svmlight
from sksoftmax.datasets import _fetchers

FETCHERS = {
    "bibtex": datasets.fetch_bibtex,
    "delicious": datasets.fetch_delicious,
    "corel5k": datasets.fetch_corel5k,
}


def write_mulan_arff(rows, path, n_features, n_labels):
    """Write (labels, "f:v" tokens) rows as a sparse ARFF file, Mulan's way.

    The features are the first n_features attributes and the labels the
    last n_labels, each {0,1}; a row lists its nonzero attributes in
    increasing order.
    """
    lines = ["% written by tests/test_fetch.py", "@relation test", ""]
    lines += [f"@attribute 'w {j}' {{0,1}}" for j in range(n_features)]
    lines += [f"@attribute TAG_{k} {{0,1}}" for k in range(n_labels)]
    lines += ["", "@data"]
    for labels, features in rows:
        entries = [tok.replace(":", " ") for tok in features]
        entries += [f"{n_features + k} 1" for k in labels]
        lines.append("{" + ",".join(entries) + "}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def svmlight_rows(path):
    """(labels, feature tokens) of each line of a gzipped svmlight file."""
    rows = []
    with gzip.open(path, "rt") as f:
        for line in f:
            head, _, rest = line.rstrip("\n").partition(" ")
            rows.append(([int(k) for k in head.split(",") if k], rest.split()))
    return rows


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def pin(monkeypatch, name, url, folder, **sizes):
    """Point fetch_<name> at url, with the checksums of folder's files."""
    spec = _fetchers._MULTILABEL_SETS[name]
    spec = spec._replace(
        **sizes,
        train=spec.train._replace(sha256=sha256(folder / spec.train.path)),
        test=spec.test._replace(sha256=sha256(folder / spec.test.path)),
    )
    monkeypatch.setattr(_fetchers, "_MULAN_URL", url)
    monkeypatch.setitem(_fetchers._MULTILABEL_SETS, name, spec)
    return spec


class _Handler(SimpleHTTPRequestHandler):
    def do_GET(self):
        self.server.paths.append(self.path)
        super().do_GET()

    def log_message(self, *args):
        pass


class LocalServer:
    """A static file server on 127.0.0.1 in a thread; counts its GETs."""

    def __init__(self, directory):
        handler = functools.partial(_Handler, directory=str(directory))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.paths = []
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() waits up to this
            daemon=True,
        )
        self.thread.start()

    @property
    def paths(self):
        return self.httpd.paths

    def stop(self):
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    """Keep urllib off any proxy of the environment for 127.0.0.1."""
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")


@pytest.fixture
def serve():
    servers = []

    def start(directory):
        servers.append(LocalServer(directory))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def closed_port():
    """A port of 127.0.0.1 with no server (free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def files_under(folder):
    return sorted(
        str(p.relative_to(folder))
        for p in Path(folder).rglob("*")
        if p.is_file()
    )


# --- Bibtex from the shared files ------------------------------------------


@pytest.fixture(scope="module")
def bibtex_site(tmp_path_factory):
    """A folder laid out like Mulan's, with ARFFs of the shared Bibtex."""
    site = tmp_path_factory.mktemp("mulan")
    spec = _fetchers._MULTILABEL_SETS["bibtex"]
    for remote, name in zip((spec.train, spec.test), ("train", "test")):
        rows = svmlight_rows(shared_file(f"bibtex_{name}.svm.gz"))
        write_mulan_arff(rows, site / remote.path, 1836, 159)
    return site


@pytest.fixture(scope="module")
def bibtex_expected():
    """The protocol read straight from the shared files."""
    return datasets.load_svmlight_pair(
        shared_file("bibtex_train.svm.gz"),
        shared_file("bibtex_test.svm.gz"),
        n_features=1836,
        normalize=False,
    )


def assert_same_split(got, expected):
    assert len(got) == len(expected) == 4
    for a, b in zip(got, expected):
        if sp.issparse(b):
            assert a.format == "csr" and a.dtype == b.dtype
            assert a.shape == b.shape
            assert_array_equal(a.indptr, b.indptr)
            assert_array_equal(a.indices, b.indices)
            assert_array_equal(a.data, b.data)
        else:
            assert_array_equal(a, b)


def test_download_verify_cache_then_offline(
    tmp_path, monkeypatch, serve, bibtex_site, bibtex_expected
):
    server = serve(bibtex_site)
    pin(monkeypatch, "bibtex", server.url, bibtex_site)
    home = tmp_path / "home"

    got = datasets.fetch_bibtex(data_home=home, normalize=False)
    assert_same_split(got, bibtex_expected)
    assert got[0].shape == (4880, 1836) and got[2].shape == (2515, 1836)
    assert np.unique(got[1]).shape[0] == 146
    assert sorted(server.paths) == [
        "/bibtex/bibtex-test.arff",
        "/bibtex/bibtex-train.arff",
    ]
    # the cache holds the converted files only (no ARFF, no partial file),
    # with the very text of the shared files
    assert files_under(home) == [
        "sksoftmax_multilabel/bibtex_test.svm.gz",
        "sksoftmax_multilabel/bibtex_train.svm.gz",
    ]
    for split in ("train", "test"):
        name = f"bibtex_{split}.svm.gz"
        cached = home / "sksoftmax_multilabel" / name
        with gzip.open(cached) as a, gzip.open(shared_file(name)) as b:
            assert a.read() == b.read()

    server.stop()
    with pytest.raises(URLError):
        urlopen(server.url + "bibtex/bibtex-train.arff", timeout=5)
    again = datasets.fetch_bibtex(
        data_home=home, normalize=False, download_if_missing=False
    )
    assert_same_split(again, bibtex_expected)
    assert len(server.paths) == 2

    # normalize and dtype apply to the cached files
    X, y, Xt, _ = datasets.fetch_bibtex(data_home=home, dtype=np.float32)
    assert X.dtype == Xt.dtype == np.float32
    assert_array_equal(y, bibtex_expected[1])
    np.testing.assert_allclose(sp.linalg.norm(X, axis=1), 1.0, rtol=1e-6)


def test_refuses_a_corrupted_download(
    tmp_path, monkeypatch, serve, bibtex_site
):
    pin(monkeypatch, "bibtex", "unused", bibtex_site)
    spec = _fetchers._MULTILABEL_SETS["bibtex"]
    bad_site = tmp_path / "bad"
    data = bytearray((bibtex_site / spec.train.path).read_bytes())
    at = data.rindex(b" 1}")  # the last row's last label...
    data[at + 1 : at + 2] = b"0"  # ...switched off
    (bad_site / "bibtex").mkdir(parents=True)
    (bad_site / spec.train.path).write_bytes(bytes(data))
    actual = hashlib.sha256(bytes(data)).hexdigest()
    server = serve(bad_site)
    monkeypatch.setattr(_fetchers, "_MULAN_URL", server.url)
    home = tmp_path / "home"

    with pytest.raises(OSError) as info:
        datasets.fetch_bibtex(data_home=home, n_retries=0)
    message = str(info.value)
    assert "bibtex-train.arff" in message
    assert spec.train.sha256 in message and actual in message
    assert server.url + spec.train.path in message
    assert server.paths == ["/" + spec.train.path]
    # nothing kept: no ARFF, no partial download, no converted file
    assert files_under(home) == []


def test_offline_error_names_the_url_and_the_place(tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/"
    monkeypatch.setattr(_fetchers, "_MULAN_URL", url)
    home = tmp_path / "home"
    spec = _fetchers._MULTILABEL_SETS["bibtex"]
    folder = home / "sksoftmax_multilabel"
    with pytest.raises(OSError) as info:
        datasets.fetch_bibtex(data_home=home, n_retries=0)
    message = str(info.value)
    assert isinstance(info.value.__cause__, URLError)
    assert f"Could not download bibtex-train.arff from {url}" in message
    # what to place by hand, and where: both published files...
    for remote in (spec.train, spec.test):
        assert f"{url}{remote.path} (SHA-256 {remote.sha256})" in message
    assert f"in {folder} as bibtex-train.arff and bibtex-test.arff" in message
    # ... or both converted files
    assert "bibtex_train.svm.gz and bibtex_test.svm.gz" in message
    assert "call fetch_bibtex again" in message
    assert files_under(home) == []

    # each retry warns and waits delay seconds
    with pytest.warns(UserWarning, match="Retrying the download") as record:
        with pytest.raises(OSError, match="Could not download"):
            datasets.fetch_bibtex(data_home=home, n_retries=2, delay=0.0)
    assert sum("Retrying" in str(w.message) for w in record) == 2
    assert files_under(home) == []


def test_no_download_when_told_not_to(tmp_path, monkeypatch):
    monkeypatch.setattr(_fetchers, "_MULAN_URL", f"http://127.0.0.1:{closed_port()}/"
    )
    with pytest.raises(OSError, match="download_if_missing` is False"):
        datasets.fetch_bibtex(data_home=tmp_path, download_if_missing=False)
    assert files_under(tmp_path) == []


def test_reads_converted_files_placed_by_hand(tmp_path, bibtex_expected):
    # what tests, benchmarks and CI do with ../shared/data
    home = shared_data_home(tmp_path)
    got = datasets.fetch_bibtex(
        data_home=home, normalize=False, download_if_missing=False
    )
    assert_same_split(got, bibtex_expected)


# --- a tiny set: files placed by hand, every fetcher ----------------------


TINY_TRAIN = [
    ([2, 0], ["0:1", "3:1"]),  # labels as written: 2 then 0
    ([1], ["1:1"]),
    ([], ["2:1"]),  # no label: dropped
    ([0], []),  # no feature: dropped
    ([1, 2], ["0:1", "1:1", "2:1"]),
]
TINY_TEST = [([2], ["3:1"]), ([0, 1], ["2:1"])]


def tiny_site(site, name):
    """A Mulan-like folder of the tiny set under fetch_<name>'s paths."""
    spec = _fetchers._MULTILABEL_SETS[name]
    for remote, rows in ((spec.train, TINY_TRAIN), (spec.test, TINY_TEST)):
        # ARFF rows list attributes in increasing order
        rows = [(sorted(labels), tokens) for labels, tokens in rows]
        write_mulan_arff(rows, site / remote.path, 4, 3)
    return site


def assert_tiny(X, y, Xt, yt):
    assert_array_equal(y, [0, 1, 1])
    assert_array_equal(X.toarray(), [[1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 1, 0]])
    assert_array_equal(yt, [2, 0])
    assert_array_equal(Xt.toarray(), [[0, 0, 0, 1], [0, 0, 1, 0]])


def test_published_files_placed_by_hand(tmp_path, monkeypatch):
    site = tiny_site(tmp_path / "site", "bibtex")
    spec = pin(monkeypatch, "bibtex", "", site, n_features=4, n_labels=3)
    monkeypatch.setattr(_fetchers, "_MULAN_URL", f"http://127.0.0.1:{closed_port()}/"
    )
    home = tmp_path / "home"
    folder = home / "sksoftmax_multilabel"
    folder.mkdir(parents=True)
    for remote in (spec.train, spec.test):
        (folder / remote.filename).write_bytes(
            (site / remote.path).read_bytes()
        )
    got = datasets.fetch_bibtex(
        data_home=home, normalize=False, download_if_missing=False
    )
    assert_tiny(*got)
    # checked, converted, then deleted like a download
    assert files_under(home) == [
        "sksoftmax_multilabel/bibtex_test.svm.gz",
        "sksoftmax_multilabel/bibtex_train.svm.gz",
    ]


def test_a_wrong_file_placed_by_hand(tmp_path, monkeypatch, serve):
    site = tiny_site(tmp_path / "site", "bibtex")
    spec = pin(monkeypatch, "bibtex", "", site, n_features=4, n_labels=3)
    home = tmp_path / "home"
    folder = home / "sksoftmax_multilabel"
    folder.mkdir(parents=True)
    wrong = folder / spec.train.filename
    wrong.write_text("@relation truncated\n")
    with pytest.raises(OSError) as info:
        datasets.fetch_bibtex(data_home=home, download_if_missing=False)
    assert spec.train.sha256 in str(info.value)
    assert sha256(wrong) in str(info.value)
    assert wrong.is_file()  # the user's file stays, untouched

    # allowed to download, the fetcher replaces it by the published file
    server = serve(site)
    monkeypatch.setattr(_fetchers, "_MULAN_URL", server.url)
    with pytest.warns(UserWarning, match="downloading it again"):
        got = datasets.fetch_bibtex(data_home=home, normalize=False)
    assert_tiny(*got)
    assert files_under(home) == [
        "sksoftmax_multilabel/bibtex_test.svm.gz",
        "sksoftmax_multilabel/bibtex_train.svm.gz",
    ]


@pytest.mark.parametrize("name", sorted(FETCHERS))
def test_each_fetcher_reads_its_own_files(name, tmp_path, monkeypatch, serve):
    spec = _fetchers._MULTILABEL_SETS[name]
    site = tiny_site(tmp_path / "site", name)
    server = serve(site)
    pin(monkeypatch, name, server.url, site, n_features=4, n_labels=3)
    home = tmp_path / "home"
    assert_tiny(*FETCHERS[name](data_home=home, normalize=False))
    assert files_under(home) == [
        f"sksoftmax_multilabel/{name}_test.svm.gz",
        f"sksoftmax_multilabel/{name}_train.svm.gz",
    ]
    assert sorted(server.paths) == sorted(
        "/" + r.path for r in (spec.train, spec.test)
    )


def test_pinned_sources():
    commit = re.compile(
        r"^https://raw\.githubusercontent\.com/tsoumakas/mulan/[0-9a-f]{40}/"
        r"data/multi-label/$"
    )
    assert commit.match(_fetchers._MULAN_URL)
    names = set()
    for name, spec in _fetchers._MULTILABEL_SETS.items():
        assert set(FETCHERS) == set(_fetchers._MULTILABEL_SETS)
        for remote in (spec.train, spec.test):
            assert re.fullmatch(r"[0-9a-f]{64}", remote.sha256)
            assert remote.path.startswith(f"{name}/")
            assert remote.path.endswith("/" + remote.filename)
            names.add(remote.filename)
    assert len(names) == 2 * len(_fetchers._MULTILABEL_SETS)


@pytest.mark.parametrize(
    "params, error",
    [
        ({"n_retries": -1}, ValueError),
        ({"n_retries": 1.5}, TypeError),
        ({"delay": -1.0}, ValueError),
        ({"delay": "1"}, TypeError),
    ],
)
def test_parameter_checks(params, error, tmp_path):
    with pytest.raises(error):
        datasets.fetch_bibtex(data_home=tmp_path, **params)


# --- the ARFF conversion ---------------------------------------------------


def test_arff_to_svmlight(tmp_path):
    src = tmp_path / "tiny.arff"
    src.write_text(
        "% a comment\n"
        "@RELATION tiny\n"
        "@attribute 'a b' numeric\n"
        "@attribute c {0,1}\n"
        "@attribute L0 {0,1}\n"
        "@attribute L1 {0,1}\n"
        "@DATA\n"
        "{0 2.5,3 1}\n"
        "\n"
        "% another comment\n"
        "{ 1 1 , 2 0 }\n"  # an explicit 0 is not a label
        "{}\n"
        "{2 1,3 1}\n"
    )
    dest = tmp_path / "tiny.svm.gz"
    arff_to_svmlight(src, dest, 2, 2)
    with gzip.open(dest, "rt") as f:
        assert f.read() == "1 0:2.5\n 1:1\n \n0,1 \n"
    # the same input gives the same bytes (no time in the gzip header)
    first = dest.read_bytes()
    arff_to_svmlight(src, dest, 2, 2)
    assert dest.read_bytes() == first
    assert files_under(tmp_path) == ["tiny.arff", "tiny.svm.gz"]

    with pytest.raises(
        ValueError, match="4 attributes, expected 2 features and 1 labels"
    ):
        arff_to_svmlight(src, tmp_path / "x.svm.gz", 2, 1)
    dense = tmp_path / "dense.arff"
    dense.write_text("@attribute a {0,1}\n@attribute b {0,1}\n@data\n1,0\n")
    with pytest.raises(ValueError, match="line 4: only sparse ARFF"):
        arff_to_svmlight(dense, tmp_path / "x.svm.gz", 1, 1)
    out_of_range = tmp_path / "range.arff"
    out_of_range.write_text("@attribute a {0,1}\n@data\n{1 1}\n")
    with pytest.raises(ValueError, match="out of range"):
        arff_to_svmlight(out_of_range, tmp_path / "x.svm.gz", 1, 0)
    # a failed conversion leaves no file behind
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "dense.arff",
        "range.arff",
        "tiny.arff",
        "tiny.svm.gz",
    ]
