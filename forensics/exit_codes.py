"""The exit codes of every command, by name (docs/cli.md, "Exit codes", lists them for users).

Errors carry theirs (:attr:`forensics.errors.ForensicsError.exit_code`); the CLI maps everything
else in one place (``forensics/cli/app.py``).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FOUND = 1  # reserved for commands that gate scripts (find-hanging: something hangs)
EXIT_USAGE = 2
EXIT_INPUT = 3  # a path does not exist, is of the wrong type or cannot be read
EXIT_CORRUPT = 4  # an input file is not what its name says or is damaged beyond decoding
EXIT_STRICT = 5  # --strict and findings were reported
EXIT_SPARK = 6  # the Spark engine failed, or was asked for where it cannot run (no PySpark)
EXIT_UNDECIDED = 7  # find-hanging: open transactions need a person, none is proven hanging
EXIT_INTERNAL = 70
EXIT_OUTPUT = 74  # sysexits.h EX_IOERR: the output could not be written
EXIT_INTERRUPTED = 130

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FOUND: "the analysis found what the command looks for (find-hanging: a hanging transaction; "
                "verify-manifest: a file differs from the manifest)",
    EXIT_USAGE: "usage error (bad option or argument, an output path inside the evidence)",
    EXIT_INPUT: "input error: a path does not exist, is of the wrong type or cannot be read",
    EXIT_CORRUPT: "an input file is not what its name says or is damaged beyond decoding",
    EXIT_STRICT: "--strict was given and findings were reported",
    EXIT_SPARK: "the Spark engine failed: Spark could not start or a job failed (the message names Spark's log), "
                "or Spark was asked for (--engine spark, --master, --conf, export) where it cannot run (PySpark "
                "not installed; the message says how to install it)",
    EXIT_UNDECIDED: "find-hanging: nothing is proven hanging, but open transactions need a person (unverifiable "
                    "evidence, a coordinator stuck or fenced, an overdue transaction: ongoing more than a minute "
                    "past its own timeout, which the coordinator still holds and so is never armed): neither all "
                    "clear nor abort these",
    EXIT_INTERNAL: "internal error (a bug: please report it with KAFKA_FORENSICS_DEBUG=1 output), or a worker process "
                   "of the in-process engine was killed (the line names it and what it read; --jobs 1 reads without)",
    EXIT_OUTPUT: "output error: stdout could not be written (disk full, I/O error); what was written is incomplete",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
