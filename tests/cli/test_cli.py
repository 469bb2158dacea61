"""The ``kafka-forensics`` command line, driven in-process (typer's CliRunner) and as a real process
(``python -m forensics`` and the installed ``kafka-forensics`` script).

Covers ``--version``, ``--help``, ``dump`` on the committed real Kafka 4.1 files (stdout identical to
Kafka's own ``kafka-dump-log.sh`` output, run from the run directory with the relative path Kafka
printed), the ``--files a,b`` form, ``--format json``, and the error paths: missing path and directory
(exit 3, one stderr line, no traceback), a non-Kafka file named like a segment, an empty segment, a
truncated copy of a real segment (Kafka's ``Found N invalid bytes`` line + a ``truncated_tail``
finding), ``--strict`` (exit 5), an unknown option (exit 2) and a closed output pipe. Every dump must
leave its inputs untouched (size, mtime, ctime, mode, sha256, and no new files beside them).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics
import forensics.cli.dump_cmd  # noqa: F401  (registers the dump command on the app)
from forensics.cli.app import EXIT_CODES, app
from tests.machine_output import jsonl_lines

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
TV2 = REAL / "kraft-tv2"
SCRIPT = Path(sys.executable).with_name("kafka-forensics")
OFFSETS_LOG = "__consumer_offsets-42/00000000000000000000.log"
TXN_LOG = "__transaction_state-21/00000000000000000000.log"

runner = CliRunner()


# -- helpers -----------------------------------------------------------------------------------


def committed_dumps() -> list[tuple[Path, str, Path]]:
    """(run dir, relative file as Kafka printed it, committed dump) for every committed dump."""
    cases = []
    for run in sorted(p for p in REAL.iterdir() if (p / "dumps").is_dir()):
        for dump in sorted((run / "dumps").glob("*/*.dump.txt")):
            rel = str(dump.relative_to(run / "dumps"))[: -len(".dump.txt")]
            if (run / rel).is_file():
                cases.append((run, rel, dump))
    return cases


def kafka_options(dump: Path) -> tuple[list[str], str]:
    """The kafka-dump-log.sh options from the dump's first line, and Kafka's stdout."""
    first, _, rest = dump.read_text(encoding="utf-8").partition("\n")
    words = first.lstrip("# ").split()
    assert words[0] == "kafka-dump-log.sh" and "--files" in words
    return words[1: words.index("--files")], rest


def _stat(path: Path) -> tuple:
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, hashlib.sha256(path.read_bytes()).hexdigest())


@contextmanager
def untouched(*paths: Path) -> Iterator[None]:
    """Assert the files (and the listing of their directories) are byte- and metadata-identical afterwards."""
    files = [Path(p) for p in paths if Path(p).is_file()]
    before: dict[Path, tuple] = {p: _stat(p) for p in files}
    dirs = {p.parent: sorted(os.listdir(p.parent)) for p in files}
    yield
    for p, state in before.items():
        assert _stat(p) == state, f"{p} changed while being dumped"
    for d, listing in dirs.items():
        assert sorted(os.listdir(d)) == listing, f"files appeared or vanished in {d}"


def run_cli(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """CliRunner, with the process cwd moved to ``cwd`` for the call."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = runner.invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def run_proc(args: list[str], cwd: Path, how: str = "module", **kwargs) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "forensics"] if how == "module" else [str(SCRIPT)]
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    return subprocess.run(cmd + args, cwd=cwd, capture_output=True, text=True, timeout=60, env=env, **kwargs)


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr
    assert "BrokenPipeError" not in stderr


# -- version / help ----------------------------------------------------------------------------


def test_version_in_process():
    from forensics import speedups

    code, out, _ = run_cli(["--version"], REPO)
    assert code == 0
    assert out == f"kafka-forensics {forensics.__version__}\n{speedups.state()}\n"


@pytest.mark.parametrize("how", ["module", "script"])
def test_version_as_process(how):
    if how == "script" and not SCRIPT.exists():
        pytest.skip("console script not installed next to this interpreter")
    proc = run_proc(["--version"], REPO, how)
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"kafka-forensics {forensics.__version__}\nC accelerator: ")
    assert proc.stdout.count("\n") == 2
    assert proc.stderr == ""


@pytest.mark.parametrize("pure", [True, False])
def test_version_names_the_accelerator_state(pure):
    """``--version`` says whether the C accelerator runs (issue 24): off with KAFKA_FORENSICS_PURE=1,
    saying why and what it costs; on wherever the extension was built."""
    import importlib.util

    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_PURE"}
    if pure:
        env["KAFKA_FORENSICS_PURE"] = "1"
    proc = subprocess.run([sys.executable, "-m", "forensics", "--version"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    line = proc.stdout.splitlines()[1]
    built = importlib.util.find_spec("forensics._speedups") is not None
    if pure or not built:
        why = "KAFKA_FORENSICS_PURE is set" if pure else "not built: no C compiler when installed"
        assert re.fullmatch(rf"C accelerator: off \({why}\): pure Python, ~[\d.]+x slower .*, ~\d+x .*", line), line
    else:
        assert re.fullmatch(r"C accelerator: on \((CPU|table) CRC-32C\)", line), line


def test_help_lists_commands_and_dump_help_lists_options():
    code, out, _ = run_cli(["--help"], REPO)
    assert code == 0
    assert "dump" in out and "--version" in out
    wide = runner.invoke(app, ["dump", "--help"], env={"COLUMNS": "250"})  # rich wraps to the terminal
    code, out = wide.exit_code, wide.stdout
    assert code == 0
    for option in ("--files", "--deep-iteration", "--print-data-log", "--transaction-log-decoder",
                   "--offsets-decoder", "--cluster-metadata-decoder", "--skip-record-metadata", "--max-bytes",
                   "--format", "--strict"):
        assert option in out, option


def test_help_as_process():
    proc = run_proc(["--help"], REPO)
    assert proc.returncode == 0 and "dump" in proc.stdout
    no_traceback(proc.stderr)


def test_exit_codes_table_is_documented():
    assert {0, 2, 3, 4, 5, 70, 130} <= set(EXIT_CODES)
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for code in (0, 2, 3, 4, 5, 70, 130):
        assert f"| {code} |" in doc


# -- dump on the committed real Kafka files ------------------------------------------------------


@pytest.mark.parametrize("run,rel,dump", [pytest.param(*c, id=f"{c[0].name}/{c[1]}") for c in committed_dumps()])
def test_dump_matches_kafka_dump_log_in_process(run, rel, dump):
    options, expected = kafka_options(dump)
    with untouched(run / rel):
        code, out, err = run_cli(["dump", *options, rel], run)
    assert code == 0, err
    assert out.rstrip("\n") == expected.rstrip("\n")
    no_traceback(err)


@pytest.mark.parametrize("how", ["module", "script"])
def test_dump_matches_kafka_dump_log_as_process(how):
    if how == "script" and not SCRIPT.exists():
        pytest.skip("console script not installed next to this interpreter")
    for rel in (OFFSETS_LOG, TXN_LOG):
        options, expected = kafka_options(TV2 / "dumps" / f"{rel}.dump.txt")
        with untouched(TV2 / rel):
            proc = run_proc(["dump", *options, rel], TV2, how)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.rstrip("\n") == expected.rstrip("\n")
        assert proc.stderr == ""  # clean real segments: no findings


def test_dump_files_option_comma_separated():
    rels = ["i-java-txn-1/00000000000000000000.index", "i-java-txn-1/00000000000000000000.timeindex"]
    expected = "".join(kafka_options(TV2 / "dumps" / f"{r}.dump.txt")[1].rstrip("\n") + "\n" for r in rels)
    with untouched(*(TV2 / r for r in rels)):
        code, out, err = run_cli(["dump", "--files", ",".join(rels)], TV2)
        assert code == 0 and out == expected
        # arguments and --files combine, arguments first
        code, out, _ = run_cli(["dump", rels[0], "--files", rels[1]], TV2)
        assert code == 0 and out == expected
        proc = run_proc(["dump", "--files", ",".join(rels)], TV2)
    assert proc.returncode == 0 and proc.stdout == expected
    no_traceback(err + proc.stderr)


_BATCH = re.compile(
    r"^baseOffset: (?P<baseOffset>-?\d+) lastOffset: (?P<lastOffset>-?\d+) count: (?P<count>-?\d+) "
    r"baseSequence: (?P<baseSequence>-?\d+) lastSequence: (?P<lastSequence>-?\d+) producerId: (?P<producerId>-?\d+) "
    r"producerEpoch: (?P<producerEpoch>-?\d+) partitionLeaderEpoch: (?P<partitionLeaderEpoch>-?\d+) "
    r"isTransactional: (?P<isTransactional>true|false) isControl: (?P<isControl>true|false) "
    r"deleteHorizonMs: OptionalLong\.empty position: (?P<position>\d+) (?P<timestampType>\w+): "
    r"(?P<maxTimestamp>-?\d+) size: (?P<size>\d+) magic: (?P<magic>\d) compresscodec: (?P<compression>\w+) "
    r"crc: (?P<crc>\d+) isvalid: (?P<isValid>true|false)$")
_RECORD = re.compile(
    r"^\| offset: (?P<offset>\d+) (?P<timestampType>\w+): (?P<timestamp>-?\d+) keySize: (?P<keySize>-?\d+) "
    r"valueSize: (?P<valueSize>-?\d+) sequence: (?P<sequence>-?\d+) headerKeys: \[\](?: (?P<control>endTxnMarker: .*))?")


def _typed(d: dict[str, str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        if v is None:
            continue
        out[k] = {"true": True, "false": False}.get(v, int(v) if re.fullmatch(r"-?\d+", v) else v)
    return out


def test_dump_json_lines_carry_the_fields_kafka_prints():
    """Every JSON line parses; batch/record objects agree field by field with Kafka's own text dump."""
    _, expected = kafka_options(TV2 / "dumps" / f"{OFFSETS_LOG}.dump.txt")
    kafka_batches = [_typed(m.groupdict()) for m in map(_BATCH.match, expected.splitlines()) if m]
    kafka_records = [_typed(m.groupdict()) for m in map(_RECORD.match, expected.splitlines()) if m]
    assert len(kafka_batches) == 8 and len(kafka_records) == 10  # 6 offset commits + 4 markers
    with untouched(TV2 / OFFSETS_LOG):
        code, out, err = run_cli(["dump", "--deep-iteration", "--format", "json", OFFSETS_LOG], TV2)
    assert code == 0 and err == ""
    objs = jsonl_lines(out)
    assert all(isinstance(o, dict) and "type" in o for o in objs)
    assert objs[0] == {"type": "file", "path": OFFSETS_LOG, "kind": "log"}
    assert objs[1] == {"type": "log_start", "baseOffset": 0}
    batches = [o for o in objs if o["type"] == "batch"]
    records = [o for o in objs if o["type"] == "record"]
    assert len(batches) == len(kafka_batches) and len(records) == len(kafka_records)
    for ours, kafka in zip(batches, kafka_batches):
        assert ours["timestampType"] == kafka.pop("timestampType")
        for key, value in kafka.items():
            assert ours[key] == value, (key, ours, kafka)
        assert ours["deleteHorizonMs"] is None
    for ours, kafka in zip(records, kafka_records):
        control = kafka.pop("control", None)
        kafka.pop("timestampType")
        for key, value in kafka.items():
            assert ours[key] == value, (key, ours, kafka)
        assert ours["headers"] == []
        assert ours.get("control") == control
        assert ours["batchPosition"] in {b["position"] for b in batches}
    assert {o["type"] for o in objs} == {"file", "log_start", "batch", "record"}


def test_dump_json_as_process_with_print_data_log():
    with untouched(TV2 / TXN_LOG):
        proc = run_proc(["dump", "--print-data-log", "--transaction-log-decoder", "--format", "json", TXN_LOG], TV2)
    assert proc.returncode == 0 and proc.stderr == ""
    objs = jsonl_lines(proc.stdout)
    records = [o for o in objs if o["type"] == "record"]
    assert records and all("key" in r and "payload" in r for r in records)
    assert json.loads(records[0]["key"]) == {"type": "0", "data": {"transactionalId": "b-tx-timeout"}}


# -- error paths -------------------------------------------------------------------------------


def test_nonexistent_path_exit_3_one_line(tmp_path):
    missing = tmp_path / "00000000000000000000.log"
    code, out, err = run_cli(["dump", str(missing)], tmp_path)
    assert code == 3 and out == ""
    assert err.count("\n") == 1 and str(missing) in err
    proc = run_proc(["dump", str(missing)], tmp_path)
    assert proc.returncode == 3 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and str(missing) in lines[0]
    no_traceback(proc.stderr)


def test_directory_exit_3(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    code, out, err = run_cli(["dump", str(part)], tmp_path)
    assert code == 3 and out == "" and err.count("\n") == 1 and str(part) in err
    proc = run_proc(["dump", "orders-0"], tmp_path, "script" if SCRIPT.exists() else "module")
    assert proc.returncode == 3 and len(proc.stderr.splitlines()) == 1 and "orders-0" in proc.stderr
    no_traceback(proc.stderr)


def test_non_kafka_file_named_like_a_segment(tmp_path):
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b"This is not a Kafka segment.\nJust some text somebody saved with the wrong name.\n" * 40)
    with untouched(seg):
        code, out, err = run_cli(["dump", "--deep-iteration", str(seg)], tmp_path)
        proc = run_proc(["dump", "--deep-iteration", str(seg)], tmp_path)
    for code_, out_, err_ in ((code, out, err), (proc.returncode, proc.stdout, proc.stderr)):
        assert code_ in (0, 4) and code_ in EXIT_CODES
        assert out_.splitlines()[:2] == [f"Dumping {seg}", "Log starting offset: 0"]
        assert f"Found {seg.stat().st_size} invalid bytes at the end of {seg.name}" in out_
        assert "corrupt_region" in err_ or "truncated_tail" in err_
        assert "baseOffset:" not in out_
        no_traceback(err_)


def test_empty_segment_prints_only_the_header(tmp_path):
    seg = tmp_path / "00000000000000000123.log"
    seg.write_bytes(b"")
    with untouched(seg):
        code, out, err = run_cli(["dump", "--deep-iteration", "--strict", str(seg)], tmp_path)
    assert code == 0 and err == ""
    assert out == f"Dumping {seg}\nLog starting offset: 123\n"


def _truncated_copy(tmp_path: Path) -> tuple[Path, list[str], int]:
    """A copy of the real __consumer_offsets segment cut inside its last batch; returns the copy, Kafka's
    lines for the batches that are still whole, and the number of bytes left over."""
    _, expected = kafka_options(TV2 / "dumps" / f"{OFFSETS_LOG}.dump.txt")
    lines = expected.rstrip("\n").split("\n")
    batches = [(i, _typed(m.groupdict())) for i, m in enumerate(map(_BATCH.match, lines)) if m]
    last_i, last = batches[-1]
    cut = last["position"] + last["size"] // 2
    data = (TV2 / OFFSETS_LOG).read_bytes()
    assert last["position"] + last["size"] == len(data)
    part = tmp_path / "__consumer_offsets-42"
    part.mkdir()
    seg = part / "00000000000000000000.log"
    seg.write_bytes(data[:cut])
    return seg, lines[2:last_i], cut - last["position"]


def test_truncated_real_segment_reports_kafkas_line_and_a_finding(tmp_path):
    seg, kept, leftover = _truncated_copy(tmp_path)
    rel = "__consumer_offsets-42/00000000000000000000.log"
    with untouched(seg):
        code, out, err = run_cli(["dump", "--deep-iteration", "--print-data-log", "--offsets-decoder", rel], tmp_path)
    assert code == 0
    assert out.rstrip("\n").split("\n") == (
        [f"Dumping {rel}", "Log starting offset: 0"] + kept
        + [f"Found {leftover} invalid bytes at the end of 00000000000000000000.log"])
    findings = err.splitlines()
    assert len(findings) == 1 and "truncated_tail" in findings[0] and rel in findings[0]
    no_traceback(err)


def test_strict_exit_5_with_findings_and_0_without(tmp_path):
    seg, _, _ = _truncated_copy(tmp_path)
    with untouched(seg):
        code, _, err = run_cli(["dump", "--strict", str(seg)], tmp_path)
        assert code == 5 and "truncated_tail" in err
        code, out, _ = run_cli(["dump", "--strict", "--format", "json", str(seg)], tmp_path)
        assert code == 5 and any(json.loads(x)["type"] == "finding" for x in out.splitlines())
        proc = run_proc(["dump", "--strict", str(seg)], tmp_path)
        assert proc.returncode == 5 and "truncated_tail" in proc.stderr
        no_traceback(proc.stderr)
    with untouched(TV2 / TXN_LOG):
        code, _, err = run_cli(["dump", "--strict", TXN_LOG], TV2)
    assert code == 0 and err == ""


def test_unknown_option_exit_2():
    code, out, err = run_cli(["dump", "--no-such-option", TXN_LOG], TV2)
    assert code == 2 and "--no-such-option" in err
    proc = run_proc(["dump", "--no-such-option", TXN_LOG], TV2)
    assert proc.returncode == 2 and "--no-such-option" in proc.stderr
    no_traceback(proc.stderr)
    proc = run_proc(["no-such-command"], TV2)
    assert proc.returncode == 2
    no_traceback(proc.stderr)


def test_usage_errors_exit_2():
    code, _, err = run_cli(["dump"], TV2)
    assert code == 2 and "at least one file" in err
    code, _, err = run_cli(["dump", "--offsets-decoder", "--transaction-log-decoder", TXN_LOG], TV2)
    assert code == 2
    code, _, _ = run_cli(["dump", "--max-bytes", "0", TXN_LOG], TV2)
    assert code == 2
    code, _, _ = run_cli(["dump", "--format", "xml", TXN_LOG], TV2)
    assert code == 2


def _big_segment(tmp_path: Path) -> Path:
    """A segment whose deep dump is far larger than a pipe buffer."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    parts, base = [], 0
    for _ in range(20):
        b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                      producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for i in range(200):
            b.append(i, 1_700_000_000_000 + i, b"key-%d" % i, b"value-%d " % i * 10, [])
        buf = bytearray(b.build())
        buf[0:8] = base.to_bytes(8, "big")
        parts.append(bytes(buf))
        base += 200
    part = tmp_path / "big-0"
    part.mkdir()
    seg = part / "00000000000000000000.log"
    seg.write_bytes(b"".join(parts))
    return seg


@pytest.mark.parametrize("how", ["module", "script"])
def test_closed_output_pipe_ends_quietly(tmp_path, how):
    if how == "script" and not SCRIPT.exists():
        pytest.skip("console script not installed next to this interpreter")
    seg = _big_segment(tmp_path)
    prog = f"{shlex.quote(sys.executable)} -m forensics" if how == "module" else shlex.quote(str(SCRIPT))
    rc_file = tmp_path / "rc"
    cmd = (f"{prog} dump --deep-iteration --print-data-log {shlex.quote(str(seg))} | head -1; "
           f"echo ${{PIPESTATUS[0]}} > {shlex.quote(str(rc_file))}")
    with untouched(seg):
        proc = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.stdout == f"Dumping {seg}\n"
    no_traceback(proc.stderr)
    assert proc.stderr == ""
    assert rc_file.read_text().strip() == "0"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_closed_pipe_with_findings_on_stderr(tmp_path):
    """Findings keep going to stderr while stdout is a closed pipe; still no traceback."""
    seg = _big_segment(tmp_path)
    with open(seg, "ab") as fh:
        fh.write(b"\x00" * 100)
    cmd = f"{shlex.quote(sys.executable)} -m forensics dump --deep-iteration {shlex.quote(str(seg))} | head -c 10"
    proc = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.stdout == f"Dumping {seg}"[:10]
    no_traceback(proc.stderr)
