"""docs/export.md's snippets, run as written on an in-process export of the example disk: pandas with
``dtype_backend="pyarrow"`` (nullable int64 stays exact; the float64 pitfall of the default is real) and
DuckDB over ``DIR/<table>/*.parquet``. Each is skipped, saying so, where its library is not installed
(both are in the ``test`` extra); the Spark snippet runs in tests/spark/test_export.py."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.export_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from tests.export_tables import EXAMPLE, REPO, read_rows

DOC = (REPO / "docs" / "export.md").read_text(encoding="utf-8")


def snippet(library: str) -> str:
    """The first ```python block after the paragraph that starts with ``**<library>.**``."""
    after = DOC.split(f"\n**{library}.**", 1)[1]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("export-docs") / "out"
    done = CliRunner().invoke(app, ["export", str(EXAMPLE), "--out", str(where), "--engine", "local",
                                    "--no-progress"])
    assert done.exit_code == 0, done.stderr
    return where


def run(library: str, out: Path) -> dict[str, object]:
    code = snippet(library).replace('"DIR/', f'"{out}/').replace("'DIR/", f"'{out}/")
    assert "DIR" not in code
    namespace: dict[str, object] = {}
    exec(compile(code, f"docs/export.md ({library})", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


def _open_transactions(out: Path):
    return sorted((t for t in read_rows(out, "transactions") if t["isOpen"]),
                  key=lambda t: (t["topic"], t["partition"], t["firstOffset"]))


def test_the_pandas_snippet_keeps_nullable_int64_exact(out: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pandas is not installed (pip install -e '.[test]' brings it)")
    ns = run("pandas", out)
    tx = ns["tx"]
    assert str(tx["markerTimestamp"].dtype) == "int64[pyarrow]"
    expected = [t["markerTimestamp"] for t in read_rows(out, "transactions")]
    got = tx["markerTimestamp"].tolist()
    assert [None if v is pd.NA else v for v in got] == expected and None in expected
    assert ns["open_tx"]["firstOffset"].tolist() == [t["firstOffset"] for t in _open_transactions(out)]
    assert ns["started"].tolist() == [pd.Timestamp(t["firstTimestamp"], unit="ms", tz="UTC")
                                      for t in _open_transactions(out)]
    per_partition = ns["per_partition"]
    assert int(per_partition.sum()) == len(read_rows(out, "batches"))
    # the pitfall the page warns of: without dtype_backend the same column is float64, with NaN
    plain = pd.read_parquet(out / "transactions")
    assert str(plain["markerTimestamp"].dtype) == "float64" and plain["markerTimestamp"].isna().sum() == 1
    assert "1.767226e+12" in plain["markerTimestamp"].to_string()
    assert "1.767226e+12" in DOC


def test_the_duckdb_snippet_reads_the_table_directories(out: Path) -> None:
    pytest.importorskip("duckdb", reason="duckdb is not installed (pip install -e '.[test]' brings it)")
    ns = run("DuckDB", out)
    batches = {(b["path"], b["position"]): b for b in read_rows(out, "batches")}
    expected = [(t["topic"], t["partition"], t["brokerId"], t["producerId"], t["firstOffset"],
                 t["firstTimestamp"], t["startPath"], t["startPosition"]) for t in _open_transactions(out)]
    got = ns["open_tx"]
    assert [r[:5] + r[6:] for r in got] == [e[:5] + e[6:] for e in expected] and got
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    for row, want in zip(got, expected):
        assert (want[6], want[7]) in batches
        assert row[5].replace(tzinfo=timezone.utc) == epoch + timedelta(milliseconds=want[5])  # epoch_ms: UTC
