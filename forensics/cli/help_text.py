"""What ``--help`` says beyond the options: the commands in the order of an investigation, one line
each, and one to three examples per command on the example disk of the source tree.

The examples are data, not prose: tests/cli/test_help.py runs every one of them on
``fixtures/example-disk`` (docs/stuck-lso.md walks through the same disk), so a renamed option or a
changed exit status breaks the test, not the reader's trust. Help is printed by click's plain
formatter (cli/help_format.py): option names are never cut, the text folds at the screen's width,
and the examples fit :data:`WIDTH` columns in any terminal, a pager or a file.
"""

from __future__ import annotations

import re
import shlex
from forensics.dataclass_fast import dataclass

PROG = "kafka-forensics"
EXAMPLE_DISK = "fixtures/example-disk"
ORDERS_0 = f"{EXAMPLE_DISK}/broker-1/orders-0/00000000000000000000.log"
TXN_STATE_0 = f"{EXAMPLE_DISK}/broker-1/__transaction_state-0/*.log"  # a shell expands it
WIDTH = 80  # the help fits a terminal this wide (examples included)
_GLOB = re.compile(r"[\w./-]*\*[\w./-]*")  # a path pattern, left for the shell to expand


@dataclass(frozen=True)
class Example:
    """One example: what it shows, and the command line(s) after ``kafka-forensics`` (several when a
    step prepares the next; ``> FILE`` at the end of one redirects its output, as a shell would)."""

    what: str
    commands: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class CommandHelp:
    name: str
    summary: str  # the line in ``kafka-forensics --help``
    examples: tuple[Example, ...]


def _ex(what: str, *lines: str) -> Example:
    return Example(what, tuple(tuple(shlex.split(line)) for line in lines))


# In the order of an investigation (docs/stuck-lso.md): inventory, verdicts, the partition's and the
# coordinator's views, the remedy and the report, then the tools for the raw files and the evidence.
COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp("scan", "Inventory: partitions, HW, LSO, open transactions", (
        _ex("Which partitions are stuck: HW, LSO and LSO lag of each",
            f"scan {EXAMPLE_DISK}"),
        _ex("The same as one JSON document, ages measured an hour after the last write",
            f"scan {EXAMPLE_DISK} --format json --as-of 2026-01-01T01:00:00Z"),
    )),
    CommandHelp("find-hanging", "Hanging transactions and why (exit 1 when any hangs)", (
        _ex("Which transactions hang, and why (exit 1: something hangs)",
            f"find-hanging {EXAMPLE_DISK}"),
        _ex("Every open transaction with its verdict, evidence and abort preview",
            f"find-hanging {EXAMPLE_DISK} --all --format json"),
    )),
    CommandHelp("describe-producers", "One partition's producer state, as its broker held it", (
        _ex("The producers of orders-0 and each one's transactions",
            f"describe-producers {EXAMPLE_DISK} --topic orders --partition 0 --timeline"),
    )),
    CommandHelp("list", "Every transactional id the coordinators hold", (
        _ex("Every transactional id, as kafka-transactions.sh list prints them",
            f"list {EXAMPLE_DISK}"),
        _ex("Only the ids in one state (any case), as CSV",
            f"list {EXAMPLE_DISK} --state completecommit --format csv"),
    )),
    CommandHelp("describe", "One transactional id: its metadata and history", (
        _ex("What the coordinator recorded for reporting-app, record by record",
            f"describe {EXAMPLE_DISK} --transactional-id reporting-app"),
    )),
    CommandHelp("abort-commands", "A reviewable script of kafka-transactions.sh aborts", (
        _ex("Write the script, read it, then run it against the live cluster",
            f"abort-commands {EXAMPLE_DISK} --bootstrap-server kafka-1:9092 > abort.sh"),
    )),
    CommandHelp("report", "The incident report: one self-contained HTML file", (
        _ex("The report, to read in a browser or attach to the incident",
            f"report {EXAMPLE_DISK} --out report.html --bootstrap-server kafka-1:9092"),
        _ex("One topic's partitions only (the page counts what it leaves out)",
            f"report {EXAMPLE_DISK} --out orders.html --topic orders"),
    )),
    CommandHelp("export", "The disks as Parquet tables, for Spark SQL or pandas", (
        _ex("Every table under example-export/ (in this process: a disk this small)",
            f"export {EXAMPLE_DISK} --out example-export"),
        _ex("Again, replacing that export, on Spark with two cores (needs Java 17+)",
            f"export {EXAMPLE_DISK} --out example-export --overwrite --master local[2]"),
    )),
    CommandHelp("dump", "Dump log, index, snapshot files as kafka-dump-log.sh", (
        _ex("The batches of a segment, as kafka-dump-log.sh prints them",
            f"dump {ORDERS_0}"),
        _ex("Every record with its key and value",
            f"dump --deep-iteration --print-data-log {ORDERS_0}"),
        _ex("The coordinator's records, decoded",
            f"dump --transaction-log-decoder {TXN_STATE_0}"),
    )),
    CommandHelp("verify-manifest", "Check an evidence manifest against the evidence", (
        _ex("Record the evidence while scanning it, then check it later",
            f"scan {EXAMPLE_DISK} --manifest evidence.json",
            "verify-manifest evidence.json"),
    )),
)

ORDER: tuple[str, ...] = tuple(c.name for c in COMMANDS)
_BY_NAME: dict[str, CommandHelp] = {c.name: c for c in COMMANDS}

ROOT_EPILOG = (f"Start with '{PROG} scan DIR', then '{PROG} find-hanging DIR' (DIR: copies of the brokers' "
               f"log dirs); '{PROG} COMMAND -h' shows a command's options and examples, docs/stuck-lso.md "
               "walks through an investigation.")


def summary(name: str) -> str:
    return _BY_NAME[name].summary


def examples(name: str) -> tuple[Example, ...]:
    return _BY_NAME[name].examples


def command_lines(argv: tuple[str, ...]) -> list[str]:
    """``kafka-forensics ARGS`` quoted for a shell, as the help shows it (indented 4), continued
    with `` \\`` where it would pass :data:`WIDTH`."""
    words = [PROG] + [w if w == ">" or _GLOB.fullmatch(w) else shlex.quote(w) for w in argv]
    room = WIDTH - 4 - 2  # the indent, and " \\"
    lines: list[str] = []
    line = ""
    for word in words:
        if line and len(line) + 1 + len(word) > room:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return ["    " + x for x in lines]


def epilog(name: str) -> str:
    """The examples section of a command's help (``\\b`` keeps click from rewrapping each one)."""
    blocks = [f"Examples (on {EXAMPLE_DISK} of the source tree):"]
    for ex in examples(name):
        lines = [f"  # {ex.what}"]
        for argv in ex.commands:
            lines += [x[2:] for x in command_lines(argv)]  # click indents the epilog by 2
        blocks.append("\b\n" + "\n".join(lines))
    return "\n\n".join(blocks)


__all__ = ["COMMANDS", "EXAMPLE_DISK", "ORDER", "ROOT_EPILOG", "WIDTH", "CommandHelp", "Example", "command_lines",
           "epilog", "examples", "summary"]
