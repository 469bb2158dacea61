"""Every machine output (``--format json`` and ``jsonl`` of scan, find-hanging, list, describe,
describe-producers, dump and verify-manifest) against its published JSON Schema in docs/schemas, on
every fixture disk (committed and generated) and on the real disks of ../shared/real-kafka (skipped,
saying so, where they are absent); each output names its format and version, and each schema's
``const`` version is the code's (forensics/render/machine_format.py)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from typer.testing import CliRunner

from fixtures import hanging_scenarios, scenarios
from forensics.cli.app import app
from forensics.findings import FindingKind, Severity
from forensics.render.machine_format import MACHINE_FORMATS, MachineFormat
from tests.machine_output import rows_of
from tests.oracle import REPO, shared_dir

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is a test dependency (pip install -e '.[test]')")
referencing = pytest.importorskip("referencing")

SCHEMAS = REPO / "docs" / "schemas"
FORMATS = {f.command: f for f in MACHINE_FORMATS}
COMMITTED = {"example-disk": REPO / "fixtures" / "example-disk",
             **{f"real/{run}": REPO / "fixtures" / "real" / run / "disk" for run in ("kraft-tv2", "kraft-rv3.9-tv0")},
             **{f"live/{d.name}": d for d in sorted((REPO / "fixtures" / "live").iterdir())
                if d.is_dir() and d.name != "truth"}}
SHARED = shared_dir() / "real-kafka" / "4.1.0"
SHARED_RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
DECODER = {"__transaction_state": ["--transaction-log-decoder"], "__consumer_offsets": ["--offsets-decoder"],
           "__cluster_metadata": ["--cluster-metadata-decoder"]}
DUMP_BYTES = 65536  # of each log: every kind of line, in a fraction of the time
runner = CliRunner()


class Output(NamedTuple):
    command: str
    fmt: str  # json or jsonl
    args: list[str]
    stdout: str


def _schema_doc(command: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{command}.schema.json").read_text(encoding="utf-8"))


def _registry():
    from referencing.jsonschema import DRAFT202012

    resources = [(p.name, DRAFT202012.create_resource(json.loads(p.read_text(encoding="utf-8"))))
                 for p in sorted(SCHEMAS.glob("*.schema.json"))]
    return referencing.Registry().with_resources(resources)


REGISTRY = _registry() if SCHEMAS.is_dir() else None


@functools.cache
def validator(ref: str):
    """A draft 2020-12 validator of ``ref`` (``find-hanging.schema.json``, or a ``#/$defs/...`` in one); built
    once a ref (a validator holds no state between documents)."""
    return jsonschema.Draft202012Validator({"$ref": ref}, registry=REGISTRY)


def _invoke(args: Sequence[str]) -> str:
    r = runner.invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
    assert r.exit_code in (0, 1, 7), (args, r.exit_code, r.stderr)
    return r.stdout


def _dump_files(disk: Path, scan_doc: dict[str, Any]) -> Iterator[list[str]]:
    """Of the first two partitions of each kind (each internal topic, the data topics), the first segment
    with the decoder its topic calls for, then its index and snapshot files; the KRaft checkpoints."""
    kinds: dict[str, int] = {}
    for d in scan_doc["logDirs"]:
        for p in d["partitions"]:
            kind = p["topic"] if p["topic"] in DECODER else "data"
            kinds[kind] = kinds.get(kind, 0) + 1
            if not p["segments"] or kinds[kind] > 2:
                continue
            base = Path(p["segments"][0]["path"])
            yield [str(base), *DECODER.get(kind, ["--deep-iteration", "--print-data-log"])]
            yield [str(f) for f in sorted(base.parent.iterdir())
                   if f.suffix in (".index", ".timeindex", ".txnindex", ".snapshot") and f.stat().st_size]
    yield [str(f) for f in sorted(disk.rglob("*.checkpoint")) if "-checkpoint" not in f.name][:2]


def machine_outputs(disk: Path, tmp: Path) -> Iterator[Output]:
    """Every command in every machine format on ``disk``: scan, find-hanging --all, list (and --state Dead),
    describe of the first ids, describe-producers of the first partitions with producers, dump of the files
    each kind of partition holds, verify-manifest of scan's manifest."""
    manifest = tmp / "scan.manifest.json"
    scan = _invoke(["scan", disk, "--format", "json", "--no-progress", "--manifest", manifest])
    yield Output("scan", "json", ["scan"], scan)
    yield Output("verify-manifest", "json", ["verify-manifest"],
                 runner.invoke(app, ["verify-manifest", str(manifest), "--format", "json"]).stdout)
    scan_doc = json.loads(scan)
    for fmt in ("json", "jsonl"):
        yield Output("find-hanging", fmt, ["find-hanging", "--all"],
                     _invoke(["find-hanging", disk, "--all", "--format", fmt, "--no-progress"]))
        for extra in ([], ["--state", "Dead"]):
            yield Output("list", fmt, ["list", *extra], _invoke(["list", disk, *extra, "--format", fmt, "--no-progress"]))
    ids = [r["transactionalId"] for r in rows_of(_invoke(["list", disk, "--format", "json", "--no-progress"]))][:2]
    producers = [(p["topic"], p["partition"]) for d in scan_doc["logDirs"] for p in d["partitions"]
                 if p["records"] and p["topic"] and not p["topic"].startswith("__")][:2]
    for fmt in ("json", "jsonl"):
        for tid in ids:
            yield Output("describe", fmt, ["describe", tid],
                         _invoke(["describe", disk, "--transactional-id", tid, "--format", fmt, "--no-progress"]))
        for topic, partition in producers:
            yield Output("describe-producers", fmt, ["describe-producers", topic, str(partition)],
                         _invoke(["describe-producers", disk, "--topic", topic, "--partition", partition,
                                  "--format", fmt, "--no-progress"]))
    for files in _dump_files(disk, scan_doc):
        if files:
            yield Output("dump", "jsonl", ["dump", *files],
                         _invoke(["dump", *files, "--format", "jsonl", "--max-bytes", DUMP_BYTES]))


def check(out: Output) -> None:
    """``out`` names its format and version and validates against its schema (JSONL: every line)."""
    fmt = FORMATS[out.command]
    assert out.stdout, f"{out.args}: nothing on stdout"
    if out.fmt == "json":
        doc = json.loads(out.stdout)
        assert (doc["format"], doc["formatVersion"]) == (fmt.name, fmt.version), out.args
        errors = list(validator(f"{fmt.command}.schema.json").iter_errors(doc))
    else:
        lines = [json.loads(line) for line in out.stdout.splitlines()]
        head = {k: v for k, v in lines[0].items() if k != "type"}
        assert head == fmt.header(), (out.args, lines[0])
        line_schema = validator(f"{fmt.command}.schema.json#/$defs/jsonlLine")
        errors = [e for line in lines for e in line_schema.iter_errors(line)]
        assert not [line for line in lines[1:] if "formatVersion" in line], "one header line only"
    assert not errors, f"{out.args} {out.fmt}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:5])


def test_the_schemas_refuse_what_they_must():
    """Validation is no formality: an unknown key, a missing one, a verdict or a version the schema does not
    name are each refused (on the example disk's find-hanging row)."""
    doc = json.loads(_invoke(["find-hanging", COMMITTED["example-disk"], "--format", "json", "--no-progress"]))
    assert doc["rows"] and not list(validator("find-hanging.schema.json").iter_errors(doc))
    edits = {"an unknown key": lambda d: d["rows"][0].update(surprise=1),
             "an unknown key in the evidence": lambda d: d["rows"][0]["evidence"].update(surprise=1),
             "an unknown key beside the rows": lambda d: d.update(surprise=1),
             "a missing key": lambda d: d["rows"][0].pop("reason"),
             "an unknown verdict": lambda d: d["rows"][0].update(verdict="maybe"),
             "another version": lambda d: d.update(formatVersion=FORMATS["find-hanging"].version + 1)}
    for what, edit in edits.items():
        changed = json.loads(json.dumps(doc))
        edit(changed)
        assert list(validator("find-hanging.schema.json").iter_errors(changed)), f"{what} passed the schema"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("schema-disks")
    out = {f"scenario/{n}": scenarios.build(n, base / "s" / n) for n in scenarios.SCENARIOS}
    out.update({f"hanging/{n}": hanging_scenarios.build(n, base / "h" / n) for n in hanging_scenarios.SCENARIOS})
    return out


def _all_disks() -> list[str]:
    return (sorted(COMMITTED) + [f"scenario/{n}" for n in scenarios.SCENARIOS]
            + [f"hanging/{n}" for n in hanging_scenarios.SCENARIOS] + [f"shared/{r}" for r in SHARED_RUNS])


def _disk(name: str, built: dict[str, Path]) -> Path:
    if name.startswith("shared/"):
        path = SHARED / name.split("/", 1)[1] / "data"
        if not path.is_dir():
            pytest.skip(f"{path} is absent: the real disks of ../shared/real-kafka are not on this machine")
        return path
    return COMMITTED.get(name) or built[name]


# Slow tier only: the ../shared disks (byte for byte the committed fixtures/real copies, which run here:
# tests/analysis/test_real_broker_state.py checks the copy), the second real run (the same workload as
# kraft-tv2 on an older protocol; the tv0 coordinator and marker records reach the schemas through the
# generated scenarios) and the four copies of a running broker (their verdicts are those of the
# hanging/ scenarios; the small live disks, JBOD, DeleteRecords and restart, stay).
SLOW_DISKS = {"shared/kraft-tv2", "shared/kraft-rv3.9-tv0", "real/kraft-rv3.9-tv0",
              *(name for name in COMMITTED if name.startswith("live/live-"))}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_DISKS else n
                                  for n in _all_disks()])
def test_every_machine_output_validates(name, built, tmp_path):
    outputs = list(machine_outputs(_disk(name, built), tmp_path))
    assert {o.command for o in outputs} >= {"scan", "verify-manifest", "find-hanging", "list", "dump"}
    for out in outputs:
        check(out)


def test_the_outputs_checked_cover_every_machine_format():
    """Each output the code names has its schema, and each schema file is one of them (common holds shared parts)."""
    files = {p.name for p in SCHEMAS.glob("*.schema.json")}
    assert files == {f"{f.command}.schema.json" for f in MACHINE_FORMATS} | {"common.schema.json"}


@pytest.mark.parametrize("fmt", MACHINE_FORMATS, ids=lambda f: f.command)
def test_schema_names_the_codes_format_and_version(fmt: MachineFormat):
    doc = _schema_doc(fmt.command)
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    header = doc["$defs"]["header"]["properties"]
    assert (header["format"]["const"], header["formatVersion"]["const"]) == (fmt.name, fmt.version)


def test_finding_kinds_and_severities_are_the_codes():
    common = _schema_doc("common")["$defs"]["finding"]["properties"]
    assert common["kind"]["enum"] == [k.value for k in FindingKind]
    assert common["severity"]["enum"] == [s.value for s in Severity]


def test_transaction_states_are_kafkas():
    from forensics.analysis.filters import STATE_NAMES

    named = _schema_doc("common")["$defs"]["transactionState"]["anyOf"][0]["enum"]
    assert named == [*STATE_NAMES, "<tombstone>"]


def test_verdicts_are_the_codes():
    from forensics.analysis.verdict_kinds import VerdictKind

    verdicts = _schema_doc("find-hanging")["$defs"]["row"]["properties"]["verdict"]["enum"]
    assert set(verdicts) == {k.word for k in VerdictKind}  # an overdue row's verdict is "ongoing"


@pytest.mark.parametrize("command, narrow", [("find-hanging", ["--topic", "payments"]),
                                             ("list", ["--state", "PrepareCommit"])])
def test_an_empty_answer_is_an_empty_array(command, narrow):
    """A row report that selects nothing still names its format: ``rows`` is ``[]``, JSONL its header alone
    (describe and describe-producers name one id or partition: one that names nothing exits 2)."""
    disk = COMMITTED["example-disk"]
    fmt = FORMATS[command]
    doc = json.loads(_invoke([command, disk, *narrow, "--format", "json", "--no-progress"]))
    assert doc == {**fmt.header(), "rows": []}
    assert _invoke([command, disk, *narrow, "--format", "jsonl", "--no-progress"]) == json.dumps(fmt.header()) + "\n"


def test_a_version_bump_is_documented():
    """docs/cli.md names every output's current version in its table of machine outputs."""
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for fmt in MACHINE_FORMATS:
        assert f"| `{fmt.name}` | {fmt.version} |" in text, fmt

