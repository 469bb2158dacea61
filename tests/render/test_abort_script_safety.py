"""The abort script is safe to review and to run whatever the evidence holds (hostile evidence).

Every value from the disk (directory names, transactional ids, paths, keys) reaches the script only
escaped inside comments or quoted inside an armed command; nothing runs unless the script is complete.
Each script is run for real with ``bash`` in a scratch dir whose PATH holds stubs of
``kafka-transactions.sh`` and ``python`` that record their arguments: only the armed abort may run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from fixtures.generator import Expire, Produce, Sleep, TopicSpec, Txn
from fixtures.hanging_scenarios import _single
from fixtures.scenario_specs import DAY_MS, disk, txn_producer
from forensics.cli.app import app
from forensics.render.live_guard import guard_functions

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
HOSTILE_ID = "evil\ntouch PWNED-1\n\x1b[2J\x1b]0;title\x07$(touch PWNED-2)`touch PWNED-3`'; touch PWNED-4 #\u202e"
runner = CliRunner()
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the generated script")


def _script(root: Path, *extra: str) -> str:
    r = runner.invoke(app, ["abort-commands", str(root), "--bootstrap-server", "k:9092", "--no-progress",
                            "--as-of", "1767229200000", *extra])
    assert r.exit_code == 0, r.output
    return r.stdout


# what the live guard's describe-producers sees: the disk copy's entry of producer 900, unchanged
LIVE_TABLE = ("ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\t"
              "CurrentTransactionStartOffset\t\n900\t0\t-1\t0\t1767225600300\t0\t\n")


def _run(script: str, tmp_path: Path, live: str = LIVE_TABLE) -> list[str]:
    """Run ``script`` with bash in a fresh dir; the argument lists the stubs recorded (the guard's
    describe-producers is answered with :data:`LIVE_TABLE`)."""
    work = tmp_path / "run"
    shutil.rmtree(work, ignore_errors=True)
    (work / "bin").mkdir(parents=True)
    (tmp_path / "live.txt").write_text(live)
    for name in ("kafka-transactions.sh", "python"):
        stub = work / "bin" / name
        stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> "$CALLS"\n'
                        'case "$*" in *describe-producers*) cat "$LIVE" ;; esac\n')
        stub.chmod(0o755)
    (work / "s.sh").write_text(script)
    env = {"PATH": f"{work / 'bin'}:/usr/bin:/bin", "CALLS": str(work / "calls"), "HOME": str(work),
           "LIVE": str(tmp_path / "live.txt")}
    subprocess.run(["bash", "s.sh"], cwd=work, env=env, capture_output=True, timeout=30)
    assert sorted(p.name for p in work.iterdir()) in (["bin", "s.sh"], ["bin", "calls", "s.sh"]), \
        "the script created a file"
    calls = (work / "calls").read_text().splitlines() if (work / "calls").exists() else []
    return [c for c in calls if "describe-producers" not in c]  # the guard's reads change nothing


def _hostile_id_disk(root: Path) -> Path:
    """A proven hanging transaction (the id expired) whose transactional id is hostile."""
    return _single(disk(
        [TopicSpec("exp", 1), TopicSpec("aux", 1)], [txn_producer("evil-app", 900, HOSTILE_ID)],
        [Txn("evil-app", (Produce("exp", 0, 1), Produce("aux", 0, 1)), coordinator_partitions=(("aux", 0),)),
         Sleep(7 * DAY_MS + 3_600_000), Expire(("evil-app",))]), root).parent


def _shape(script: str) -> None:
    """Every line is a comment, blank, or one of the lines we write ourselves (the guard's function
    is ours, written once when something is armed)."""
    guard = guard_functions()
    assert script.count(guard) <= 1
    code = [ln for ln in script.replace(guard, "").splitlines() if ln and not ln.startswith("#")]
    allowed = ("set -eu", "main() {", "}", "main end-of-script", "kafka-transactions.sh --bootstrap-server k:9092 ",
               "kf_guard --bootstrap-server k:9092 --topic exp --partition 0 ProducerId=900 ")
    assert all(ln.startswith(allowed) or ln.startswith('if [ "${1:-}" != end-of-script ]') for ln in code), code
    assert not any(c in script for c in "\x1b\x07\r\u202e")


def test_a_directory_name_breaking_out_of_its_comment_runs_nothing(tmp_path):
    root = tmp_path / "disk"
    shutil.copytree(EXAMPLE, root)
    (root / "broker-1" / "orders-0").rename(root / "broker-1" / "x\ntouch PWNED\n#-0")
    script = _script(root)
    _shape(script)
    assert "# NOT ARMED (hanging): the partition dir's topic name is not one Kafka allows" in script
    assert "--topic 'x\\ntouch PWNED\\n#' --partition 0" in script  # shown escaped, commented
    assert _run(script, tmp_path) == []


def test_a_hostile_transactional_id_is_only_ever_shown_escaped(tmp_path):
    script = _script(_hostile_id_disk(tmp_path / "disk"))
    _shape(script)
    assert "#   transactional id: evil\\ntouch PWNED-1\\n\\x1b[2J\\x1b]0;title\\x07$(touch PWNED-2)" in script
    assert _run(script, tmp_path) == [  # a KRaft disk: brokers 3.0 or newer, the --start-offset form is armed
        "kafka-transactions.sh --bootstrap-server k:9092 abort --topic exp --partition 0 --start-offset 0"]


def test_the_guard_stands_between_a_changed_broker_and_the_abort(tmp_path):
    script = _script(_hostile_id_disk(tmp_path / "disk"))
    moved_on = LIVE_TABLE.replace("900\t0\t-1", "900\t1\t-1")  # the producer bumped its epoch since the copy
    assert _run(script, tmp_path, moved_on) == []


def test_a_cut_script_runs_nothing(tmp_path):
    """stdout filled up, a copy cut short: every prefix of the script runs nothing; only the whole does."""
    script = _script(_hostile_id_disk(tmp_path / "disk"))
    data = script.encode()
    # the last cut that keeps every byte but the final newline is the whole script
    cuts = sorted(set(range(0, len(data), 97)) | set(range(max(0, len(data) - 120), len(data) - 1)))
    for n in cuts:
        assert _run(data[:n].decode("utf-8", "ignore"), tmp_path) == [], f"a script cut at byte {n} ran something"
    assert len(_run(script, tmp_path)) == 1


def test_the_script_is_plain_sh(tmp_path):
    script = _script(_hostile_id_disk(tmp_path / "disk"))
    (tmp_path / "s.sh").write_text(script)
    for shell in ("sh", "dash", "bash"):
        if shutil.which(shell):
            assert subprocess.run([shell, "-n", str(tmp_path / "s.sh")], capture_output=True).returncode == 0


def test_a_bootstrap_server_with_a_control_character_is_refused(tmp_path):
    r = runner.invoke(app, ["abort-commands", str(EXAMPLE), "--bootstrap-server", "k:9092\ntouch X",
                            "--no-progress", "--as-of", "1767229200000"])
    assert r.exit_code == 2
    assert "kafka-forensics: --bootstrap-server: a control character in 'k:9092\\ntouch X'" in r.stderr
    assert not os.path.exists("X")
