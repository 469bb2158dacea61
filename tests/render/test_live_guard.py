"""``kf_guard`` (forensics/render/live_guard.py) run by real shells, without a broker.

The live side is a stand-in ``kafka-transactions.sh`` on PATH that prints what the real Kafka 4.1.0
tool printed for a real broker (``fixtures/real/<run>/ground-truth/broker-view-*``, saved while that
broker was up) and records the arguments it was given. The offline side (``KF_FRESH_COPY``) runs the
real ``kafka-forensics describe-producers`` on a disk. tests/e2e/ runs the guard against a live broker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.render.live_guard import guard_call, guard_functions

REPO = Path(__file__).resolve().parents[2]
AT_STOP = REPO / "fixtures" / "real" / "kraft-rv3.9-tv0" / "ground-truth" / "broker-view-at-stop"
BEFORE_D = REPO / "fixtures" / "real" / "kraft-rv3.9-tv0" / "ground-truth" / "broker-view-before-d"
EXAMPLE = REPO / "fixtures" / "example-disk"
SHELLS = [s for s in ("sh", "dash", "bash") if shutil.which(s)]

# d-tx-ongoing (producer 20) at the broker's stop: open from offset 2 on d-txn-ongoing-0 and -1
ONGOING = {"topic": "d-txn-ongoing", "partition": 0, "producerId": 20, "producerEpoch": 0, "coordinatorEpoch": 0,
           "startOffset": 2, "lastSequence": 3, "lastTimestamp": 1795211725765}
SAME = ("kf_guard: ok d-txn-ongoing-0 producer 20: live ProducerEpoch 0, LatestCoordinatorEpoch 0, "
        "CurrentTransactionStartOffset 2, LastSequence 3, LastTimestamp 1795211725765 equal the disk copy\n")


def section(path: Path, title: str) -> str:
    """The table printed under ``# title`` / ``$ ... --topic T --partition P`` in a saved broker view."""
    out, inside = [], False
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith(("#", "$")) or not line.strip():
            if inside and out:
                break
            inside = line.rstrip("\n").endswith(title)
            continue
        if inside:
            out.append(line)
    assert out, f"no section {title!r} in {path}"
    return "".join(out)


def fake_tool(bin_dir: Path, answer: str, code: int = 0, message: str = "",
              name: str = "kafka-transactions.sh") -> Path:
    """A kafka-transactions.sh (or ``name``) that prints ``answer``, says ``message`` on stderr and exits ``code``."""
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "answer.txt").write_text(answer)
    tool = bin_dir / name
    tool.write_text("#!/bin/sh\n"
                    f"for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{bin_dir}/argv.txt'\n"
                    f"cat '{bin_dir}/answer.txt'\n"
                    + (f"printf '%s\\n' {message!r} >&2\n" if message else "")
                    + f"exit {code}\n")
    tool.chmod(0o755)
    return tool


def run_guard(tmp_path: Path, row: dict, shell: str = "sh", env: dict[str, str] | None = None,
              bootstrap: str = "kafka:9092", command_config: str | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / "guard.sh"
    script.write_text(guard_functions() + guard_call(row, bootstrap, command_config) + "\necho AFTER-THE-GUARD\n")
    path = os.pathsep.join([str(tmp_path / "bin"), os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    return subprocess.run([shell, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={"PATH": path, "HOME": str(tmp_path), **(env or {})})


@pytest.mark.parametrize("shell", SHELLS)
def test_syntax_is_plain_sh(tmp_path: Path, shell: str) -> None:
    script = tmp_path / "g.sh"
    script.write_text(guard_functions() + guard_call(ONGOING, "kafka:9092", "/etc/kafka/admin.properties") + "\n")
    r = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_call_line_is_quoted_and_names_each_column() -> None:
    row = dict(ONGOING, topic="it's $(x)")
    assert guard_call(row, "kafka:9092", "/etc/admin props") == (
        "kf_guard --bootstrap-server kafka:9092 --command-config '/etc/admin props' --topic 'it'\"'\"'s $(x)' "
        "--partition 0 ProducerId=20 ProducerEpoch=0 LatestCoordinatorEpoch=0 CurrentTransactionStartOffset=2 "
        "LastSequence=3 LastTimestamp=1795211725765 || exit")


@pytest.mark.parametrize("shell", SHELLS)
def test_equal_live_state_passes_and_the_script_goes_on(tmp_path: Path, shell: str) -> None:
    fake_tool(tmp_path / "bin", section(AT_STOP / "describe-producers-d.txt", "d-txn-ongoing-0"))
    r = run_guard(tmp_path, ONGOING, shell)
    assert (r.returncode, r.stdout, r.stderr) == (0, SAME + "AFTER-THE-GUARD\n", "")
    argv = (tmp_path / "bin" / "argv.txt").read_text().splitlines()
    assert argv == ["--bootstrap-server", "kafka:9092", "describe-producers", "--topic", "d-txn-ongoing",
                    "--partition", "0"]


@pytest.mark.parametrize(("key", "value", "column", "live"), [
    ("producerEpoch", 1, "ProducerEpoch", "0"),
    ("coordinatorEpoch", -1, "LatestCoordinatorEpoch", "0"),
    ("startOffset", 5, "CurrentTransactionStartOffset", "2"),
    ("lastSequence", 2, "LastSequence", "3"),
    ("lastTimestamp", 1795211725000, "LastTimestamp", "1795211725765"),
])
def test_each_differing_value_is_refused_and_named(tmp_path: Path, key, value, column, live) -> None:
    fake_tool(tmp_path / "bin", section(AT_STOP / "describe-producers-d.txt", "d-txn-ongoing-0"))
    r = run_guard(tmp_path, dict(ONGOING, **{key: value}))
    assert (r.returncode, r.stdout) == (3, "")
    assert r.stderr == (f"kf_guard: REFUSED d-txn-ongoing-0 producer 20: the live state differs from the disk copy: "
                        f"{column} disk {value}, live {live}. Nothing was aborted; analyse a fresh copy.\n")


def test_a_completed_transaction_is_refused(tmp_path: Path) -> None:
    """d-txn-ongoing-2: producer 20 has an entry there but no open transaction (None)."""
    fake_tool(tmp_path / "bin", section(AT_STOP / "describe-producers-d.txt", "d-txn-ongoing-2"))
    r = run_guard(tmp_path, dict(ONGOING, partition=2, lastSequence=0))
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr == ("kf_guard: REFUSED d-txn-ongoing-2 producer 20: the live state differs from the disk copy: "
                        "CurrentTransactionStartOffset disk 2, live None. Nothing was aborted; analyse a fresh copy.\n")


def test_several_differences_are_all_named_on_one_line(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", section(BEFORE_D / "describe-producers.txt", "--topic a-txn-orders --partition 0"))
    row = dict(ONGOING, topic="a-txn-orders", producerId=1, startOffset=3)  # producer 1: no open transaction
    r = run_guard(tmp_path, row)
    assert r.returncode == 3
    assert r.stderr == ("kf_guard: REFUSED a-txn-orders-0 producer 20: the live state differs from the disk copy: "
                        .replace("producer 20", "producer 1")
                        + "CurrentTransactionStartOffset disk 3, live None; LastSequence disk 3, live 11; "
                        "LastTimestamp disk 1795211725765, live 1795211495543. Nothing was aborted; "
                        "analyse a fresh copy.\n")


def test_missing_producer_and_empty_table_are_refused(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", section(BEFORE_D / "describe-producers.txt", "--topic c-plain --partition 0"))
    r = run_guard(tmp_path, dict(ONGOING, topic="c-plain"))
    assert r.returncode == 3
    assert r.stderr == ("kf_guard: REFUSED c-plain-0 producer 20: the live state differs from the disk copy: "
                        "no live entry for producer id 20 (expired, or the partition changed). "
                        "Nothing was aborted; analyse a fresh copy.\n")


def test_a_failing_tool_is_refused_and_points_at_the_offline_check(tmp_path: Path) -> None:
    msg = ("Failed to describe producers for partition d-txn-ongoing-0 on leader: The broker does not support "
           "DESCRIBE_PRODUCERS. Enable debug logging for additional detail.")
    fake_tool(tmp_path / "bin", "", code=1, message=msg)
    r = run_guard(tmp_path, ONGOING)
    assert r.returncode == 4 and r.stdout == ""
    assert r.stderr == msg + "\n" + (
        "kf_guard: REFUSED d-txn-ongoing-0 producer 20: could not check: kafka-transactions.sh describe-producers "
        "exited 1 (its message is above): broker unreachable, or older than 2.8 (no DescribeProducers)? For an "
        "older broker use the offline check: KF_FRESH_COPY=<fresh copy of the partition dir> (see the top of this "
        "script). Nothing was aborted.\n")


def test_no_tool_on_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    r = run_guard(tmp_path, ONGOING)
    assert r.returncode == 4 and "AFTER-THE-GUARD" not in r.stdout
    assert r.stderr.splitlines()[-1].startswith(
        "kf_guard: REFUSED d-txn-ongoing-0 producer 20: could not check: kafka-transactions.sh describe-producers "
        "exited 127 ")


def test_the_tool_is_the_one_kafka_transactions_names(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "not asked\n", code=9)  # on PATH, but the variable wins
    tool = fake_tool(tmp_path / "opt", section(AT_STOP / "describe-producers-d.txt", "d-txn-ongoing-0"),
                     name="my tools.sh")
    r = run_guard(tmp_path, ONGOING, env={"KAFKA_TRANSACTIONS": str(tool)})
    assert (r.returncode, r.stdout) == (0, SAME + "AFTER-THE-GUARD\n"), r.stderr
    assert (tmp_path / "opt" / "argv.txt").read_text().splitlines()[:2] == ["--bootstrap-server", "kafka:9092"]


def test_confluent_s_kafka_transactions_is_taken_when_only_it_is_on_path(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", section(AT_STOP / "describe-producers-d.txt", "d-txn-ongoing-0"),
              name="kafka-transactions")
    r = run_guard(tmp_path, ONGOING)
    assert (r.returncode, r.stdout) == (0, SAME + "AFTER-THE-GUARD\n"), r.stderr
    fake_tool(tmp_path / "bin", "", code=1, message="boom")  # both on PATH: Kafka's name first
    r = run_guard(tmp_path, ONGOING)
    assert r.returncode == 4 and "could not check: kafka-transactions.sh describe-producers exited 1" in r.stderr


def test_a_named_tool_that_fails_is_named(tmp_path: Path) -> None:
    r = run_guard(tmp_path, ONGOING, env={"KAFKA_TRANSACTIONS": str(tmp_path / "nowhere" / "kt")})
    assert r.returncode == 4 and "AFTER-THE-GUARD" not in r.stdout
    assert f"could not check: {tmp_path}/nowhere/kt describe-producers exited 127 " in r.stderr.splitlines()[-1]


def test_output_that_is_no_table_is_refused(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "Picked up JAVA_TOOL_OPTIONS: -Xmx1g\n")
    r = run_guard(tmp_path, ONGOING)
    assert r.returncode == 4
    assert r.stderr == ("kf_guard: REFUSED d-txn-ongoing-0 producer 20: could not check: no describe-producers "
                        "table in the live answer. Nothing was aborted.\n")


def test_command_config_and_hostile_topic_reach_the_tool_verbatim(tmp_path: Path) -> None:
    topic = "it's $(touch pwned) `touch pwned2`"
    fake_tool(tmp_path / "bin", section(AT_STOP / "describe-producers-d.txt", "d-txn-ongoing-0"))
    r = run_guard(tmp_path, dict(ONGOING, topic=topic), command_config="/etc/admin props")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "bin" / "argv.txt").read_text().splitlines() == [
        "--bootstrap-server", "kafka:9092", "--command-config", "/etc/admin props", "describe-producers",
        "--topic", topic, "--partition", "0"]
    assert not list(tmp_path.glob("pwned*"))


# ---- offline: KF_FRESH_COPY, read by the real kafka-forensics ------------------------------------------

HANGING = {"topic": "orders", "partition": 0, "producerId": 2002, "producerEpoch": 1, "coordinatorEpoch": -1,
           "startOffset": 6, "lastSequence": 1, "lastTimestamp": 1767225606251}


def test_fresh_copy_check_passes_on_an_unchanged_copy(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    r = run_guard(tmp_path, HANGING, env={"KF_FRESH_COPY": str(EXAMPLE / "broker-1" / "orders-0")})
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("kf_guard: ok orders-0 producer 2002: fresh copy ProducerEpoch 1, LatestCoordinatorEpoch -1, "
                        "CurrentTransactionStartOffset 6, LastSequence 1, LastTimestamp 1767225606251 equal the disk "
                        "copy\nAFTER-THE-GUARD\n")


def test_fresh_copy_check_refuses_a_changed_copy(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    r = run_guard(tmp_path, dict(HANGING, producerEpoch=0), env={"KF_FRESH_COPY": str(EXAMPLE)})
    assert r.returncode == 3 and "AFTER-THE-GUARD" not in r.stdout
    assert r.stderr.splitlines()[-1] == (
        "kf_guard: REFUSED orders-0 producer 2002: the fresh copy state differs from the disk copy: ProducerEpoch "
        "disk 0, fresh copy 1. Nothing was aborted; analyse a fresh copy.")


def test_fresh_copy_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    missing = tmp_path / "no-such-copy"
    r = run_guard(tmp_path, HANGING, env={"KF_FRESH_COPY": str(missing)})
    assert r.returncode == 4 and "AFTER-THE-GUARD" not in r.stdout
    last = r.stderr.splitlines()[-1]
    assert last.startswith(f"kf_guard: REFUSED orders-0 producer 2002: could not check: kafka-forensics "
                           f"describe-producers {missing} exited ") and last.endswith(
                               " (its message is above). Nothing was aborted.")


# ---- the docs show the lines exactly as printed --------------------------------------------------------

def _doc_lines(doc: str, start: str) -> list[str]:
    return [ln.strip() for ln in (REPO / "docs" / doc).read_text().splitlines() if ln.strip().startswith(start)]


def _table(epoch: int, coordinator: int, start: int | None, sequence: int, timestamp: int) -> str:
    """A describe-producers answer for producer 2002 as Kafka's tool lays it out."""
    cells = [["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
              "CurrentTransactionStartOffset"],
             ["2002", str(epoch), str(coordinator), str(sequence), str(timestamp), "None" if start is None else str(start)]]
    widths = [max(len(row[i]) for row in cells) for i in range(6)]
    return "".join("".join(c.ljust(w) + "\t" for c, w in zip(row, widths)) + "\n" for row in cells)


def test_docs_show_the_guard_lines_exactly_as_printed(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
    from forensics.cli.app import app

    script = CliRunner().invoke(app, ["abort-commands", str(EXAMPLE), "--bootstrap-server", "kafka-1:9092",
                                      "--no-progress"]).stdout
    [call] = [ln for ln in script.splitlines() if ln.startswith("kf_guard --")]
    assert _doc_lines("cli.md", "kf_guard --") == [call] and _doc_lines("stuck-lso.md", "kf_guard --") == [call]
    printed = []
    for answer, code in ((_table(1, -1, 6, 1, 1767225606251), 0), (_table(1, 0, None, 1, 1767229200000), 0),
                         ("", 1)):
        fake_tool(tmp_path / "bin", answer, code)
        r = run_guard(tmp_path, HANGING, bootstrap="kafka-1:9092")
        printed.append((r.stdout.splitlines() + r.stderr.splitlines())[0])
    assert _doc_lines("cli.md", "kf_guard: ") == printed
    assert _doc_lines("stuck-lso.md", "kf_guard: ") == printed[:2]
