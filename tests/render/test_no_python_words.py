"""No screen leaks Python (issue 24): every command, in every format, on the example disk, the hanging
scenarios and the real broker disks in fixtures/real writes no ``None``, ``nan``, ``inf``, ``True``/``False``,
no Python repr (``TopicPartition(``, ``<... object at``), no ``+00:00`` (our times end in ``Z``) and no
traceback. ``--format text`` is Kafka's own layout, where Kafka's tool writes ``None`` for an absent value:
there ``None`` is Kafka's word and allowed in that column only (tests/render/test_kafka_text.py checks the
table itself). JSON's ``null`` is JSON's word; in table and CSV outputs an absent value is ``-`` or empty."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from fixtures import hanging_scenarios as hs
from forensics.cli.app import app
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
AS_OF = "2026-11-20T23:00:00Z"  # a fixed clock: the outputs do not depend on today
DISKS = ["example-disk", "real/kraft-tv2/disk", "real/kraft-rv3.9-tv0/disk", *(f"scenario {n}" for n in hs.SCENARIOS)]
FORMATS = ("table", "text", "json", "jsonl", "csv")
# words and forms only Python writes; a word boundary each side, so that "Nonexistent" or "nanos" pass
_PYTHON = re.compile(r"\b(None|nan|NaN|inf|True|False)\b|TopicPartition\(|<[\w.]+ object at 0x|\+00:00"
                     r"|Traceback \(most recent call last\)|\bself\b\.|\b[A-Z]\w+\([a-z_]+=")  # last: a dataclass repr
_GUARD = re.compile(r'\(None / empty: no open transaction\)|\|None\)\$/\)|\? "None" : v')
_ALLOWED_IN_TEXT = re.compile(r"(?<=\t)None(?=\s*\t)|^None(?=\s*\t)", re.M)  # a whole cell of Kafka's table


def _run(args: Sequence[str], stdout_only: bool = False) -> str:
    r = CliRunner().invoke(app, [*map(str, args), "--no-progress", "--engine", "local"], env={"COLUMNS": "100"})
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
    assert r.exit_code in (0, 1, 3, 7), (args, r.exit_code, r.output)
    return r.stdout if stdout_only else r.stdout + r.stderr


def _leaks(out: str, fmt: str) -> list[str]:
    if fmt == "text":
        out = _ALLOWED_IN_TEXT.sub("", out)
    if fmt == "script":  # the guard reads Kafka's describe-producers table, where Kafka writes None
        out = "\n".join(line for line in out.splitlines() if "None" not in line or _GUARD.search(line) is None)
    return [line for line in out.splitlines() if _PYTHON.search(line)]


def _commands(disk: Path) -> list[list[str]]:
    commands = [["scan", disk, "--as-of", AS_OF], ["find-hanging", disk, "--all", "--as-of", AS_OF],
                ["list", disk]]
    scan = json.loads(_run(["scan", disk, "--format", "json"], stdout_only=True))
    partitions = [p for d in scan["logDirs"] for p in d["partitions"]]
    ids = {r["transactionalId"] for r in rows_of(_run(["list", disk, "--format", "json"], stdout_only=True))}
    for tp in sorted({(r["topic"], r["partition"]) for r in partitions if not r["topic"].startswith("__")})[:3]:
        commands.append(["describe-producers", disk, "--topic", tp[0], "--partition", str(tp[1])])
    for tid in sorted(ids)[:3]:
        commands.append(["describe", disk, "--transactional-id", tid])
    return commands


# the second real run (the same workload as kraft-tv2, the same renderers): slow tier
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "real/kraft-rv3.9-tv0/disk" else n
                                  for n in DISKS])
def test_no_output_leaks_python(name, tmp_path, tmp_path_factory):
    if name.startswith("scenario "):
        disk = hs.build(name.split(" ", 1)[1], tmp_path)
    else:
        disk = REPO / "fixtures" / name
    assert disk.is_dir(), disk
    leaks = []
    for args in _commands(disk):
        for fmt in FORMATS:
            if args[0] == "scan" and fmt not in ("table", "json"):
                continue  # scan writes these two
            out = _run([*args, "--format", fmt])
            leaks += [f"{' '.join(map(str, args[:1] + args[2:]))} --format {fmt}: {line}" for line in _leaks(out, fmt)]
    report = tmp_path_factory.mktemp("page") / "report.html"  # outside the evidence (a scenario's is tmp_path)
    _run(["report", disk, "--out", report, "--as-of", AS_OF])
    leaks += [f"report page: {line}" for line in _leaks(_page_text(report.read_text()), "report")]
    for extra in ([], ["--arm-unverifiable"]):
        args = ["abort-commands", disk, "--bootstrap-server", "broker-1:9092", "--as-of", AS_OF, *extra]
        leaks += [f"{' '.join(map(str, args[:1] + extra))}: {line}" for line in _leaks(_run(args), "script")]
    assert not leaks, "\n".join(leaks[:20])


def _page_text(page: str) -> str:
    """The report's text as a browser shows it, a line per element, less the page's two English uses of
    the word, which open a sentence under a heading: "None proven: no abort is armed." (no hanging
    transaction) and "None: every input read as Kafka wrote it." (no finding)."""
    page = re.sub(r"<style.*?</style>", "", page, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "\n", page))
    return "\n".join(line for line in text.splitlines() if line.strip() and _ENGLISH_NONE.match(line) is None)


_ENGLISH_NONE = re.compile(r"None (proven|proven here): no abort is armed\.|None: every input read as Kafka wrote it\."
                           r"|None here: these partitions read as Kafka wrote them\.")


def test_the_check_sees_a_leak():
    assert _leaks("orders\t0\tNone\n", "table") and _leaks("last seen 2026-01-01T00:00:00+00:00", "json")
    assert _leaks("x: nan", "csv") and not _leaks("orders\t0\tNone \t5\t\n", "text")
    assert not _leaks("Nonexistent nanos Inference", "table")
    assert _leaks("differs (ProducerState(producer_id=300, producer_epoch=0))", "report")
    assert _leaks(_page_text("<td>offsets 30-None</td>"), "report") and not _page_text("<p>None proven: no abort is armed.</p>")


def test_inputs_without_a_timestamp_leak_no_python(tmp_path):
    """Inputs with no timestamp at all (empty segments only): the as-of time is "unknown" on every
    screen (scan, find-hanging's stderr, the abort script, report's stderr line), never ``None``."""
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"")
    runs = [["scan", part], ["scan", part / "00000000000000000000.log"], ["find-hanging", part],
            ["abort-commands", part, "--bootstrap-server", "broker-1:9092"],
            ["report", part, "--out", tmp_path / "report.html"]]
    leaks, unknown = [], 0
    for args in runs:
        out = _run(args)
        unknown += "unknown: no timestamp on the inputs" in " ".join(out.split())  # stderr lines fold
        leaks += [f"{args[0]}: {line}" for line in _leaks(out, "script" if args[0] == "abort-commands" else "table")]
    assert not leaks, "\n".join(leaks)
    assert unknown == len(runs)
