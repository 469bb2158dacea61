"""The version is written once (forensics/__init__.py): pyproject.toml takes it from there, so the
installed metadata says the same, and --version prints it without reading that metadata."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

import forensics

REPO = Path(__file__).resolve().parents[1]


def test_pyproject_takes_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "forensics.__version__"}


def test_the_installed_metadata_carries_the_same_version():
    assert importlib.metadata.version("kafka-forensics") == forensics.__version__


def test_version_reads_no_package_metadata():
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "forensics", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == f"kafka-forensics {forensics.__version__}"
    assert "importlib.metadata" not in proc.stderr  # ~50-150 ms of imports (email, zipfile, csv) on this machine
