"""The one line every run prints on stderr about its engine, as the suite's runs print it (in-process:
``--engine local`` given, or ``KAFKA_FORENSICS_ENGINE=local`` set by tests/conftest.py)."""

from __future__ import annotations

import re

BY_OPTION = "kafka-forensics: engine local (in-process): --engine local"
BY_ENV = "kafka-forensics: engine local (in-process): KAFKA_FORENSICS_ENGINE=local"
_LOCAL = re.compile(r"^kafka-forensics: engine local \((?:in-process|\d+ processes)\): (?:--engine local|KAFKA_FORENSICS_ENGINE=local)\n",
                    re.M)
_ANY = re.compile(r"^kafka-forensics: engine [^\n]*\n", re.M)


def spark_line(master: str, why: str = "--master given") -> str:
    return f"kafka-forensics: engine spark ({master}): {why}"


def without_engine_line(err: str) -> str:
    """``err`` without the in-process engine's line, which must be there exactly once."""
    assert len(_LOCAL.findall(err)) == 1, err
    return _LOCAL.sub("", err, count=1)


def split_engine_line(err: str) -> tuple[str, str]:
    """The one engine line of ``err`` (without its newline), and the rest of ``err``."""
    found = _ANY.findall(err)
    assert len(found) == 1, err
    return found[0].rstrip("\n"), _ANY.sub("", err, count=1)


def as_engine(err: str, line: str) -> str:
    """An in-process run's ``err`` with its engine line replaced by ``line``: what the same run on
    another engine prints."""
    assert len(_LOCAL.findall(err)) == 1, err
    return _LOCAL.sub(lambda m: line + "\n", err, count=1)
