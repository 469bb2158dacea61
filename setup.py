"""Builds the optional C accelerator; everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled (no C compiler), the install goes on and
kafka-forensics runs its pure-Python code paths, which give the same results. Where zlib's header
is found the extension also inflates gzip payloads itself (``HAVE_ZLIB``); without it, gzip stays
with Python's zlib module.
"""

import glob
import os
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _has_zlib(compiler) -> bool:
    """Does a program using zlib compile and link here?"""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "zlibcheck.c")
        with open(src, "w") as f:
            f.write("#include <zlib.h>\nint main(void) { z_stream s = {0}; return inflateInit2(&s, 31); }\n")
        try:
            objects = compiler.compile([src], output_dir=tmp)
            compiler.link_executable(objects, "zlibcheck", output_dir=tmp, libraries=["z"])
        except Exception:  # any compiler or linker failure: build without zlib
            return False
    return True


class BuildExt(build_ext):
    def build_extensions(self) -> None:
        if _has_zlib(self.compiler):
            for ext in self.extensions:
                ext.define_macros.append(("HAVE_ZLIB", "1"))
                ext.libraries.append("z")
        super().build_extensions()


setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension("forensics._speedups", sorted(glob.glob("csrc/*.c")), depends=sorted(glob.glob("csrc/*.h")), optional=True,
                  extra_compile_args=["-O2", "-std=c99", "-Wall", "-fvisibility=hidden"]),
    ],
)
