"""The committed corpus of damaged real segments (``tests/corpus``) against its expected findings.

Each case of ``tests/corpus/expected.json`` (written by ``tests/corpus/make_corpus.py``, see its RECIPE.md)
is read four ways, and each must give exactly the expected framing findings (kind, byte range) and
decode every batch that verifies, at its position, with the expected offsets and partitionLeaderEpoch:

* the dump report (``dump_file``, deep iteration, data printed, the topic's record decoder): nothing
  raised, every byte inside a batch or a finding, the records of every verified batch decoded (a
  decoding finding is allowed only on a batch whose checksum failed);
* the scan / state-rebuild unit reader (``read_segment``): the same framing findings, nothing raised;
* ``kafka-forensics dump --deep-iteration --format json`` in-process (typer's CliRunner): exit 0, no
  exception, the same findings and batches in its JSON lines;
* one ``python -m forensics dump --strict`` process over all the files: exit 5 (findings reported,
  cli/app.py EXIT_CODES), no traceback, one stderr line per expected finding; without ``--strict``: exit 0.

The corpus itself must be what ``make_corpus.py`` generates, byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.dump_cmd  # noqa: F401  (registers the dump command)
from forensics.cli.app import EXIT_CODES, app
from forensics.findings import FindingKind
from forensics.pipeline.plan import UnitKind, WorkUnit
from forensics.pipeline.units import read_segment
from forensics.report.dump import DumpOptions, dump_file
from forensics.report.dump_rows import BatchRow, DataRecords, FindingRow, RecordRow

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus"
CASES = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
DECODING = {FindingKind.CORRUPT_BATCH, FindingKind.UNSUPPORTED_CODEC}
DECODER_FLAGS = {"transaction-log": "--transaction-log-decoder", "offsets": "--offsets-decoder", None: None}
EXIT_FINDINGS_STRICT = 5
assert EXIT_CODES[0] == "success" and "--strict" in EXIT_CODES[EXIT_FINDINGS_STRICT]


def expected_findings(case):
    return sorted((k, p, e) for k, p, e in case["findings"])


def expected_batches(case):
    return sorted((d["position"], d["base_offset"], d["last_offset"], d["partition_leader_epoch"])
                  for d in case["decoded"])


def test_corpus_is_what_make_corpus_generates():
    sys.path.insert(0, str(CORPUS))
    try:
        import make_corpus
    finally:
        sys.path.remove(str(CORPUS))
    generated = make_corpus.build()
    for rel, data in generated.items():
        assert (CORPUS / rel).read_bytes() == data, f"tests/corpus/{rel} differs from what make_corpus.py writes"
    on_disk = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert on_disk - set(generated) == {"make_corpus.py"}
    kinds = {k for case in CASES for k, _, _ in case["findings"]}
    assert {"crc_mismatch", "corrupt_region", "zero_fill", "truncated_tail", "offset_regression", "offset_overflow",
            "batch_before_base"} <= kinds


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_segment_readers(case):
    path = str(CORPUS / case["file"])
    assert os.path.getsize(path) == case["size"]
    rows = list(dump_file(path, DumpOptions(deep_iteration=True, print_data_log=True, decoder=case["decoder"])))
    frames = [r.frame for r in rows if type(r) is BatchRow]
    findings = [r.finding for r in rows if type(r) is FindingRow]
    framing = sorted((f.kind.value, f.position, f.end_position) for f in findings if f.kind not in DECODING)
    assert framing == expected_findings(case), "\n".join(f.one_line() for f in findings)
    verified = sorted((f.position, f.header.base_offset, f.header.last_offset, f.header.partition_leader_epoch)
                      for f in frames if f.crc_ok)
    assert verified == expected_batches(case)
    failed = {(f.position, f.end) for f in frames if f.crc_ok is False}
    assert failed == {(p, e) for k, p, e in case["findings"] if k == "crc_mismatch"}
    for f in findings:  # records that do not decode: only in batches whose checksum failed
        if f.kind in DECODING:
            assert (f.position, f.end_position) in failed, f.one_line()
    with_records = {r.batch.frame.position for r in rows if type(r) in (DataRecords, RecordRow)}
    assert {p for p, *_ in expected_batches(case)} <= with_records
    covered = sorted([(f.position, f.end) for f in frames] + [(f.position, f.end_position) for f in findings])
    reach = 0
    for a, b in covered:
        assert a <= reach, f"bytes {reach}..{a} are in no batch and no finding"
        reach = max(reach, b)
    assert reach == case["size"]

    kind = UnitKind.TXNLOG if case["decoder"] == "transaction-log" else UnitKind.EVENTS
    piece = read_segment(WorkUnit(kind, path, path, int(Path(path).name[:20]), stats=True))
    assert sorted((f.kind.value, f.position, f.end_position) for f in piece.summary.findings) == expected_findings(case)
    assert piece.summary.batches == len(frames)


runner = CliRunner()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_dump_cli_json(case):
    args = ["dump", "--deep-iteration", "--format", "json", str(CORPUS / case["file"])]
    if DECODER_FLAGS[case["decoder"]]:
        args.insert(1, DECODER_FLAGS[case["decoder"]])
    result = runner.invoke(app, args)
    assert result.exception is None and result.exit_code == 0, result.output
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    got = sorted((o["kind"], o["position"], o["end_position"]) for o in objs
                 if o["type"] == "finding" and o["kind"] not in {k.value for k in DECODING})
    assert got == expected_findings(case)
    batches = {(o["position"], o["baseOffset"], o["lastOffset"], o["partitionLeaderEpoch"]) for o in objs
               if o["type"] == "batch" and o["isValid"]}
    assert set(expected_batches(case)) <= batches


def test_dump_process_over_the_whole_corpus():
    files = [str(CORPUS / c["file"]) for c in CASES]
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    strict = subprocess.run([sys.executable, "-m", "forensics", "dump", "--deep-iteration", "--strict", *files],
                            cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert strict.returncode == EXIT_FINDINGS_STRICT, strict.stderr[-2000:]
    assert "Traceback" not in strict.stderr and "internal error" not in strict.stderr
    lines = strict.stderr.splitlines()
    for case in CASES:
        for kind, p, e in case["findings"]:
            assert any(f": {kind}: " in line and case["file"] in line and f"bytes {p}-{e}" in line
                       for line in lines), f"{case['name']}: no stderr line for {kind} at bytes {p}-{e}"
    plain = subprocess.run([sys.executable, "-m", "forensics", "dump", *files], cwd=REPO, capture_output=True,
                           text=True, timeout=300, env=env)
    assert plain.returncode == 0 and "Traceback" not in plain.stderr
