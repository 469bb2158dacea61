"""Builds the optional C accelerator; everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled (no C compiler), the install goes on and
kafka-forensics runs its pure-Python code paths, which give the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("forensics._speedups", ["forensics/_speedups.c"], optional=True,
                  extra_compile_args=["-O2", "-std=c99", "-Wall"]),
    ],
)
