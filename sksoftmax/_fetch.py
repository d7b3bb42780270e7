"""Download, verify and convert the published multi-label data sets.

The machinery behind :func:`sksoftmax.datasets.fetch_bibtex` and its
siblings, written after scikit-learn's ``_fetch_remote`` (a download goes to
a temporary file beside its destination, its SHA-256 is checked, then it is
renamed; URLError and TimeoutError are retried) but kept here so that the
package depends on no private scikit-learn function.

The published files are Mulan's sparse ARFF files; each is converted once to
the gzipped multi-label svmlight text that the project's data folder uses
(``l1,l2,... f:v f:v ...``, zero-based labels and features), which
:func:`sksoftmax.datasets.load_svmlight_pair` then reads.
"""

import gzip
import hashlib
import http.client
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import NamedTuple
from urllib.error import URLError
from urllib.request import urlopen

# Seconds without a byte before a download attempt fails (urlopen waits
# forever by default).
_TIMEOUT = 60.0
_CHUNK = 1 << 16

# What a dropped connection or a server error can raise during a download:
# each is worth a retry, and none means the file is bad.
_NETWORK_ERRORS = (
    URLError,
    TimeoutError,
    ConnectionError,
    http.client.HTTPException,
)


class RemoteFile(NamedTuple):
    """A published file: its name in the cache folder, URL path and digest."""

    filename: str
    path: str
    sha256: str


def sha256(path):
    """SHA-256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(remote, url, folder, *, n_retries, delay, offline_hint=""):
    """Download url to folder/remote.filename if its SHA-256 is right.

    The bytes go to a temporary file in ``folder``, renamed to its final
    name only once the whole download has the expected digest: a failed or
    corrupted download leaves nothing behind.

    Raises
    ------
    OSError
        When the download fails after ``n_retries`` retries (the message
        names the URL, the reason, then ``offline_hint``), or when its
        SHA-256 differs from ``remote.sha256`` (the message names both
        digests).
    """
    folder = Path(folder)
    dest = folder / remote.filename
    fd, tmp = tempfile.mkstemp(
        dir=folder, prefix=f".{remote.filename}.", suffix=".part"
    )
    try:
        with os.fdopen(fd, "wb") as f:
            attempts_left = n_retries
            while True:
                f.seek(0)
                f.truncate()
                digest = hashlib.sha256()
                try:
                    with urlopen(url, timeout=_TIMEOUT) as response:
                        for chunk in iter(lambda: response.read(_CHUNK), b""):
                            digest.update(chunk)
                            f.write(chunk)
                    break
                except _NETWORK_ERRORS as exc:
                    if attempts_left <= 0:
                        # "HTTP Error 404: Not Found", but the bare reason
                        # of a URLError ("[Errno 111] Connection refused")
                        reason = (
                            exc.reason
                            if type(exc) is URLError and exc.reason
                            else exc
                        )
                        raise OSError(
                            f"Could not download {remote.filename} from "
                            f"{url} ({reason}). {offline_hint}".rstrip()
                        ) from exc
                    warnings.warn(
                        f"Retrying the download of {url} ({exc})", stacklevel=5
                    )
                    attempts_left -= 1
                    time.sleep(delay)
        actual = digest.hexdigest()
        if actual != remote.sha256:
            raise OSError(
                f"{remote.filename} downloaded from {url} has SHA-256 "
                f"{actual}, expected {remote.sha256}: the file is corrupted "
                f"or was changed, and was not kept in {folder}."
            )
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise
    return dest


def _arff_rows(lines, n_attributes, n_features, source):
    """Yield (labels, features) of each sparse ARFF data row.

    ``labels`` and ``features`` are lists of the written tokens: label
    indices (attribute index minus n_features, for a value other than 0)
    and ``index:value`` strings.
    """
    for number, line in lines:
        line = line.strip()
        if not line or line.startswith("%"):
            continue
        if not (line.startswith("{") and line.endswith("}")):
            raise ValueError(
                f"{source}, line {number}: only sparse ARFF rows "
                "({index value, ...}) are supported"
            )
        labels, features = [], []
        body = line[1:-1].strip()
        for entry in body.split(",") if body else ():
            index, value = entry.split()
            index = int(index)
            if not 0 <= index < n_attributes:
                raise ValueError(
                    f"{source}, line {number}: attribute {index} out of range"
                )
            if index < n_features:
                features.append(f"{index}:{value}")
            elif float(value) != 0:
                labels.append(str(index - n_features))
        yield labels, features


def arff_to_svmlight(src, dest, n_features, n_labels):
    """Convert a sparse multi-label ARFF file to gzipped svmlight text.

    The first ``n_features`` attributes are the features and the last
    ``n_labels`` the labels, as in Mulan's files; each data row becomes
    ``l1,l2,... f:v f:v ...`` with zero-based indices in the order of the
    file (ascending, as sparse ARFF requires). The output goes through a
    temporary file renamed at the end, and its gzip header holds no time
    or name, so one input always gives the same bytes. Level 6: level 9
    is many times slower for a slightly smaller file.
    """
    src, dest = Path(src), Path(dest)
    n_attributes = n_features + n_labels
    fd, tmp = tempfile.mkstemp(
        dir=dest.parent, prefix=f".{dest.name}.", suffix=".part"
    )
    try:
        with (
            open(src, encoding="utf-8") as text,
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(
                filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6
            ) as out,
        ):
            lines = enumerate(text, start=1)
            seen = 0
            for _, line in lines:
                head = line.strip().lower()
                if head.startswith("@attribute"):
                    seen += 1
                elif head.startswith("@data"):
                    break
            else:
                raise ValueError(f"{src.name}: no @data section")
            if seen != n_attributes:
                raise ValueError(
                    f"{src.name}: {seen} attributes, expected {n_features} "
                    f"features and {n_labels} labels"
                )
            for labels, features in _arff_rows(
                lines, n_attributes, n_features, src.name
            ):
                row = ",".join(labels) + " " + " ".join(features) + "\n"
                out.write(row.encode("ascii"))
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise
    return dest
