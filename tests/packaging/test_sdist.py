"""The source distribution (issue 24, item 10): the LICENSE (Apache-2.0's full text, as pyproject's
``license`` names it), the C sources with their headers, and what the README, the PyPI page, sends a
reader to: docs/ and fixtures/example-disk, on which every example runs. The fast check asks
setuptools for the sdist's file list (egg_info's SOURCES.txt, written outside the tree); the slow one
builds the tarball from a copy of the tracked files and lists it."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_2 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def tracked(*under: str) -> set[str]:
    """The files git tracks under ``under`` (what a clone holds), or every file there without git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", *under], cwd=REPO, capture_output=True, check=True,
                             timeout=60).stdout.decode()
        return {p for p in out.split("\0") if p}
    except (OSError, subprocess.CalledProcessError):
        return {str(p.relative_to(REPO)) for u in under for p in (REPO / u).rglob("*") if p.is_file()}


def must_ship() -> set[str]:
    return tracked("docs", "fixtures/example-disk", "csrc") | {"LICENSE", "README.md", "pyproject.toml", "setup.py"}


def check(listed: set[str]) -> None:
    missing = must_ship() - listed
    assert not missing, sorted(missing)[:20]
    assert any(p.startswith("fixtures/example-disk/broker-1/orders-0/") for p in listed)
    assert not [p for p in listed if p.endswith((".so", ".pyc"))]
    assert not [p for p in listed if p.startswith(("fixtures/", "tests/")) and not
                p.startswith(("fixtures/example-disk/", "tests/test_"))]  # no other fixture: data, not source


def test_the_license_is_apache_2_in_full():
    assert hashlib.sha256((REPO / "LICENSE").read_bytes()).hexdigest() == APACHE_2
    assert 'license = { text = "Apache-2.0" }' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_the_sdist_file_list_holds_docs_and_the_example_disk(tmp_path: Path):
    done = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (sources,) = tmp_path.glob("*.egg-info/SOURCES.txt")
    check(set(sources.read_text(encoding="utf-8").split()))


@pytest.mark.slow
def test_the_sdist_tarball(tmp_path: Path):
    """Built from a copy of the tracked files (nothing written into the tree): the files, and the
    metadata PyPI shows (license, its file, classifiers)."""
    src = tmp_path / "src"
    for rel in sorted(tracked()):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    done = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(tmp_path / "dist")], cwd=src,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (tarball,) = (tmp_path / "dist").glob("kafka-forensics-*.tar.gz")
    with tarfile.open(tarball) as tar:
        names: list[str] = [m.name for m in tar.getmembers() if m.isfile()]
        top = names[0].split("/")[0]
        info = tar.extractfile(f"{top}/PKG-INFO").read().decode("utf-8")  # type: ignore[union-attr]
    check({n.split("/", 1)[1] for n in names if "/" in n})
    assert "License: Apache-2.0" in info and "License-File: LICENSE" in info
    assert "Classifier: License :: OSI Approved :: Apache Software License" in info
    assert "Classifier: Programming Language :: Python :: 3" in info
