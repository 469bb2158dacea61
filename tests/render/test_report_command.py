"""``kafka-forensics report``: writes one HTML file, exit 0 even when something hangs, embeds the
evidence manifest's path and SHA-256, refuses an output inside the evidence, byte-identical
output for the same inputs and as-of time; also as a subprocess through the real entry point."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import forensics.cli.report_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
AS_OF = "2026-01-01T00:00:20Z"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["report", *map(str, args), "--no-progress", "--engine", "local"])


def tree(root: Path):
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*"))


def test_writes_the_report_with_the_manifest_digest_and_exits_0(tmp_path):
    out, manifest = tmp_path / "report.html", tmp_path / "manifest.json"
    r = run(EXAMPLE, "--out", out, "--as-of", AS_OF, "--manifest", manifest, "--bootstrap-server", "kafka-1:9092")
    assert r.exit_code == 0, r.output  # the report is the product; find-hanging is the gate
    page = out.read_text(encoding="utf-8")
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert f'<code class="digest">{digest}</code>' in page and str(manifest) in page
    assert str(EXAMPLE) in page
    assert "<dt>brokers</dt><dd>broker 4.1 or newer: KRaft, metadata.version 4.1-IV1, brokers support metadata.version up to 4.1-IV1</dd>" in page
    assert "--bootstrap-server kafka-1:9092 abort --topic orders --partition 0" in page
    assert f"report: {out}" in r.stderr and "1 hanging" in r.stderr
    assert r.stdout == ""
    assert sorted(tmp_path.iterdir()) == sorted([manifest, out])  # no temporary file left behind


def test_same_inputs_same_bytes(tmp_path):
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert run(EXAMPLE, "--out", a, "--as-of", AS_OF).exit_code == 0
    assert run(EXAMPLE, "--out", b, "--as-of", AS_OF).exit_code == 0
    assert a.read_bytes() == b.read_bytes()


def test_refuses_an_output_inside_the_evidence_and_a_missing_directory(tmp_path):
    before = tree(EXAMPLE)
    r = run(EXAMPLE, "--out", EXAMPLE / "broker-1" / "report.html", "--as-of", AS_OF)
    assert r.exit_code == 2 and "--out" in r.stderr and "inside the evidence" in r.stderr
    assert tree(EXAMPLE) == before
    r = run(EXAMPLE, "--out", tmp_path / "nope" / "report.html", "--as-of", AS_OF)
    assert r.exit_code == 3 and "does not exist" in r.stderr
    assert run(EXAMPLE).exit_code == 2  # --out is required


def test_through_the_entry_point(tmp_path):
    out = tmp_path / "report.html"
    env = dict(os.environ, KAFKA_FORENSICS_ENGINE="local")
    p = subprocess.run([sys.executable, "-m", "forensics", "report", str(EXAMPLE), "--out", str(out), "--as-of",
                        AS_OF, "--no-progress"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.read_text(encoding="utf-8").count('<svg class="timeline"') == 3
    help_ = subprocess.run([sys.executable, "-m", "forensics", "--help"], capture_output=True, text=True, env=env,
                           timeout=60)
    assert " report " in help_.stdout


def _snapshot(root: Path):
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mode, p.stat().st_mtime_ns)
                  for p in root.rglob("*"))


def test_read_only_evidence_stays_untouched_and_the_manifest_verifies(tmp_path):
    from tests.readonly_support import without_permission_override

    evidence = tmp_path / "evidence"
    shutil.copytree(EXAMPLE, evidence)
    paths = sorted(evidence.rglob("*"), reverse=True)
    for p in paths:
        p.chmod(0o555 if p.is_dir() else 0o444)
    evidence.chmod(0o555)
    try:
        before = _snapshot(evidence)
        out, manifest = tmp_path / "report.html", tmp_path / "manifest.json"
        env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
        env["KAFKA_FORENSICS_ENGINE"] = "local"
        cmd = [*without_permission_override(), sys.executable, "-m", "forensics", "report", str(evidence),
               "--out", str(out), "--manifest", str(manifest), "--as-of", AS_OF, "--no-progress"]
        p = subprocess.run(cmd, cwd=evidence / "broker-1", env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert _snapshot(evidence) == before
        assert hashlib.sha256(manifest.read_bytes()).hexdigest() in out.read_text(encoding="utf-8")
        v = subprocess.run([sys.executable, "-m", "forensics", "verify-manifest", str(manifest)], capture_output=True,
                           text=True, timeout=120)
        assert v.returncode == 0, v.stdout + v.stderr
    finally:
        for p in [evidence, *evidence.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_the_report_opens_with_the_warnings_find_hanging_prints(tmp_path):
    """Copy times and a missing coordinator weaken every verdict: the report says so first, and
    separates what is proven hanging from what cannot be verified."""
    disk = tmp_path / "disk"
    shutil.copytree(EXAMPLE / "broker-1" / "orders-0", disk / "orders-0")
    for p in [disk, *disk.rglob("*")]:
        os.utime(p, (1767232800, 1767232800))  # touched two hours after the newest record
    out = tmp_path / "report.html"
    r = run(disk, "--out", out)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    header = page[page.index("<header>"):page.index("</header>")]
    assert ("no transaction proven hanging · 1 unverifiable (not armed)") in header
    assert ('<p class="warning">WARNING: no __transaction_state partition among the inputs: verdicts are '
            "UNVERIFIABLE and rest on age alone, as Kafka&#x27;s find-hanging; add the coordinators&#x27; disks.</p>"
            in header)
    assert '<p class="warning">WARNING: file times look like copy times: 1 h 59 min after the newest' in header
    assert "<h2>Unverifiable: not armed</h2>" in page and "<h4>Commands, NOT armed</h4>" in page
    assert "1 hanging" not in r.stderr and "0 hanging, 1 unverifiable" in r.stderr
