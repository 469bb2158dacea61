"""Writing the export tables as Parquet through Spark (``kafka-forensics export`` on Spark: above
export's Spark threshold (forensics/pipeline/engine.py), with ``--master``/``--conf`` or ``--engine spark``; in-process otherwise, by
:mod:`forensics.pipeline.export_local`, with the same columns and values).

Two kinds of table. ``batches`` grows with the bytes on the disks: it is made on the executors,
one task per bin of whole segments (:func:`~forensics.pipeline.spark.balance`), each task framing
its segments (:func:`~forensics.pipeline.export_rows.batch_rows`) and Spark's Parquet writer
writing the rows where they were made; only a row count travels back. The other tables grow with
partitions, producers and transactions: the driver has them already (the analysis ran on the
reduced per-replica results, as every command does) and hands them to Spark as rows.

Every table is a directory of Parquet files (``part-*.snappy.parquet``, plus Spark's ``_SUCCESS``
and Hadoop's ``.crc`` files) under the output directory; the caller checks that directory is not
the evidence's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from forensics.model import Progress
from forensics.pipeline.export_rows import (
    BATCHES,
    NO_CONTEXT,
    Context,
    Table,
    batch_rows,
)
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.spark import ExecutorCannotReadError, Item, balance, run_job
from forensics.pipeline.spark_session import Conf, process_session


def spark_schema(table: Table):
    from pyspark.sql.types import (
        ArrayType,
        BooleanType,
        ByteType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
        StructField,
        StructType,
    )

    simple = {"string": StringType(), "boolean": BooleanType(), "byte": ByteType(), "short": ShortType(),
              "int": IntegerType(), "long": LongType()}

    def spark_type(column):
        name, array = column.element
        return ArrayType(simple[name], containsNull=False) if array else simple[name]

    return StructType([StructField(c.name, spark_type(c), c.nullable) for c in table.columns])


def _uri(path: str) -> str:
    return "file://" + os.path.abspath(path)


def _rows_task(contexts, done, count, cwd: str):
    """Each task: the driver's working directory first (relative paths resolve as on the driver),
    then the rows of every segment of its bins."""
    def run(bins):
        if os.path.isdir(cwd):
            os.chdir(cwd)
        ctx = contexts.value
        for bin_ in bins:
            for item in bin_:
                for u in item.units:
                    if not os.path.exists(u.path):
                        import socket

                        raise ExecutorCannotReadError(
                            f"executor on {socket.gethostname()} cannot see {os.path.join(cwd, u.path)}, which the "
                            "driver read: the disks must be mounted at the same path on every executor")
                    n = 0
                    for row in batch_rows(u.path, u.base_offset, ctx.get(u.key, NO_CONTEXT)):
                        n += 1
                        yield row
                    count.add(n)
                    done.add(u.size)
    return run


class ParquetWriter:
    """Writes the tables of one export under ``out`` with the session for ``master`` and ``conf``
    (the one the analysis job started)."""

    engine = "spark"

    def __init__(self, out: str, master: str | None, conf: Conf) -> None:
        self.out = out
        self.master, self.conf = master, conf

    @property
    def session(self):
        return process_session().get(self.master, self.conf)  # the analysis job's, started by then

    def write_batches(self, segments: Sequence[WorkUnit], contexts: dict[str, Context],
                      progress: Progress | None = None) -> int:
        """The ``batches`` table, made and written on the executors; its row count."""
        session = self.session
        sc = session.sparkContext
        done, count = sc.accumulator(0), sc.accumulator(0)
        bins: list[list[Item]] = balance([Item((u,), u.size, True) for u in segments], sc.defaultParallelism)
        shared = sc.broadcast(contexts)
        try:
            rdd = sc.parallelize(bins or [[]], max(1, len(bins))).mapPartitions(
                _rows_task(shared, done, count, os.getcwd()))
            frame = session.createDataFrame(rdd, spark_schema(BATCHES), verifySchema=False)
            run_job(lambda: frame.write.parquet(_uri(os.path.join(self.out, BATCHES.name))), done, progress)
        finally:
            shared.unpersist()
        return count.value

    def write_table(self, table: Table, rows: Sequence[tuple]) -> int:
        """A table the driver holds (partitions, producers, transactions, records, findings), as one file."""
        frame = self.session.createDataFrame(list(rows), spark_schema(table))
        done = self.session.sparkContext.accumulator(0)
        run_job(lambda: frame.coalesce(1).write.parquet(_uri(os.path.join(self.out, table.name))), done, None)
        return len(rows)

    def files(self, table: Table) -> list[str]:
        """The Parquet files Spark wrote for ``table`` (what a reader reads; ``_export.json`` lists them)."""
        names = os.listdir(os.path.join(self.out, table.name))
        return sorted(n for n in names if n.startswith("part-") and n.endswith(".parquet"))
