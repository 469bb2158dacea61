"""``report --out FILE`` refuses a file that exists unless ``--overwrite`` (issue 24, item 9: it was
replaced silently, where export refuses): one line, exit 2, before anything is read."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from forensics.cli.app import EXIT_USAGE, app

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"


def report(*args: str):
    return CliRunner().invoke(app, ["report", str(EXAMPLE), *args], env={"KAFKA_FORENSICS_ENGINE": "local"})


def test_an_existing_file_is_refused_without_overwrite(tmp_path: Path):
    out = tmp_path / "report.html"
    out.write_text("the previous report\n", encoding="utf-8")
    done = report("--out", str(out))
    assert done.exit_code == EXIT_USAGE == 2
    assert done.stderr == f"kafka-forensics: --out {out}: exists (give --overwrite to replace it)\n"
    assert done.stdout == ""
    assert out.read_text(encoding="utf-8") == "the previous report\n"  # untouched


def test_overwrite_replaces_it(tmp_path: Path):
    out = tmp_path / "report.html"
    out.write_text("the previous report\n", encoding="utf-8")
    done = report("--out", str(out), "--overwrite")
    assert done.exit_code == 0, done.stderr
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_new_file_needs_no_overwrite(tmp_path: Path):
    out = tmp_path / "new.html"
    assert report("--out", str(out)).exit_code == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_directory_is_refused_even_with_overwrite(tmp_path: Path):
    for extra in ([], ["--overwrite"]):
        done = report("--out", str(tmp_path), *extra)
        assert done.exit_code == 2
        assert done.stderr == f"kafka-forensics: --out {tmp_path}: is a directory; give the HTML file to write\n"
