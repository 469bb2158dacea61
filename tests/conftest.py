"""Shared pytest configuration."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: long-running scale/memory tests (deselect with -m 'not slow')")
