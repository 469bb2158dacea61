"""Writing the export tables as Parquet in this process, with pyarrow (``kafka-forensics export`` below
the Spark threshold, or ``--engine local``; on Spark: :mod:`forensics.pipeline.export`).

The same tables from the same rows: ``batches`` from :func:`~forensics.pipeline.export_rows.batch_rows`
(the function Spark's tasks run), the others from the rows the driver built; the schema is derived
from the one declaration of the columns (:mod:`forensics.pipeline.export_rows`), as Spark's is, so both
engines write the same Parquet types (a nullable ``long`` is a nullable int64, never a double).

Layout: one Parquet file per table, ``DIR/<table>/part-0.parquet`` (snappy, as Spark writes), so that
a reader given the table directory reads either engine's export alike. Rows go out in row groups of
:data:`ROW_GROUP_ROWS` as they are made, segment after segment: memory holds one row group, never a
table. pyarrow is imported here only, when an export runs in-process.
"""

from __future__ import annotations

import os
from itertools import islice
from collections.abc import Iterable, Iterator, Sequence

from forensics.errors import UsageError
from forensics.model import Progress
from forensics.pipeline.export_rows import BATCHES, NO_CONTEXT, Context, Table, batch_rows
from forensics.pipeline.plan import WorkUnit

PART_FILE = "part-0.parquet"  # the one file of each table, in its table directory
# Rows per row group: a group in flight (its row tuples, their columns, the Arrow arrays) is ~40 MB of
# memory, whatever the size of the disk (the CLI's peak RSS: 282 MiB on 1 GiB, 297 MiB on 2 GiB; in one
# profile 283 MiB with 32k rows a group, 251 with 16k, 329 with 64k: docs/performance.md, "Export");
# readers (DuckDB, Spark) split their work by row group.
ROW_GROUP_ROWS = 1 << 15

_ARROW_TYPES = {"string": "string", "boolean": "bool_", "byte": "int8", "short": "int16", "int": "int32",
                "long": "int64"}


def pyarrow():
    """pyarrow with its Parquet module, or a one-line refusal saying how to get it."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401  (the writer)
    except ImportError as exc:
        raise UsageError(f"export writes its tables in this process with pyarrow, which cannot be imported here "
                         f"({exc}): install it (pip install pyarrow) or give --engine spark") from None
    return pyarrow


def arrow_schema(table: Table):
    """The Arrow schema of ``table``: Spark SQL's ``byte``/``short``/``int``/``long`` as int8/16/32/64,
    ``array<T>`` as a list of never-null ``element``s (the names Parquet's LIST type and Spark use),
    nullability as declared."""
    pa = pyarrow()

    def arrow_type(column):
        name, array = column.element
        simple = getattr(pa, _ARROW_TYPES[name])()
        return pa.list_(pa.field("element", simple, nullable=False)) if array else simple

    return pa.schema([pa.field(c.name, arrow_type(c), c.nullable) for c in table.columns])


def _groups(rows: Iterable[tuple], size: int) -> Iterator[list[tuple]]:
    it = iter(rows)
    while True:
        group = list(islice(it, size))
        if not group:
            return
        yield group


class LocalParquet:
    """Writes the tables of one export under ``out``, in this process."""

    engine = "local"

    def __init__(self, out: str, row_group_rows: int | None = None) -> None:
        self.out = out
        self.row_group_rows = row_group_rows or ROW_GROUP_ROWS
        self.pa = pyarrow()

    def write_batches(self, segments: Sequence[WorkUnit], contexts: dict[str, Context],
                      progress: Progress | None = None) -> int:
        """The ``batches`` table, segment after segment in the order given; its row count."""
        def rows() -> Iterator[tuple]:
            for u in segments:
                yield from batch_rows(u.path, u.base_offset, contexts.get(u.key, NO_CONTEXT))
                if progress is not None:
                    progress(u.size)
        return self.write_table(BATCHES, rows())

    def write_table(self, table: Table, rows: Iterable[tuple]) -> int:
        """``rows`` (tuples in the column order of ``table``) as ``DIR/<table>/part-0.parquet``; the count."""
        import pyarrow.parquet as pq

        pa, schema = self.pa, arrow_schema(table)
        directory = os.path.join(self.out, table.name)
        os.mkdir(directory)
        count = 0
        with pq.ParquetWriter(os.path.join(directory, PART_FILE), schema, compression="snappy") as writer:
            for group in _groups(rows, self.row_group_rows):
                columns = [pa.array(values, type=f.type) for values, f in zip(zip(*group), schema)]
                writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=schema))
                count += len(group)
        return count

    def files(self, table: Table) -> list[str]:
        return [PART_FILE]
