"""Shared pytest configuration.

The markers (``pyproject.toml``) sort the suite into tiers: ``-m "not slow"`` is the fast tier, and
every test marked ``spark``, ``jvm`` or ``browser`` counts as ``slow``; ``tests/process_guard.py``
fails a test that starts a JVM or Chromium without its marker.
"""

import os

from tests.process_guard import ProcessGuard


def pytest_configure(config):
    config.pluginmanager.register(ProcessGuard(), "kafka-forensics-process-guard")


def pytest_sessionstart(session):
    # Commands default to --engine spark for whole-disk work; the suite runs them in-process unless a
    # test asks for Spark explicitly (tests/spark runs both engines and compares them).
    os.environ.setdefault("KAFKA_FORENSICS_ENGINE", "local")
