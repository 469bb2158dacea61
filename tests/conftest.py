"""Shared pytest configuration."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: long-running scale/memory tests (deselect with -m 'not slow')")


def pytest_sessionstart(session):
    # Commands default to --engine spark for whole-disk work; the suite runs them in-process unless a
    # test asks for Spark explicitly (tests/spark runs both engines and compares them).
    import os

    os.environ.setdefault("KAFKA_FORENSICS_ENGINE", "local")
