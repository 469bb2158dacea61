"""forensics/_speedups.pyi against the built accelerator: the stub declares exactly the functions the
module exports, each with the parameters the module's own signature gives (csrc/module.c writes
one for every function: its name, the arguments in order, which of them are optional); and
forensics.speedups.Accelerator, the type of ``native``, names each of them. Also the one check every
entry point makes that the Python side registered what it needs (pytypes.c)."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.segments import needs_native

REPO = Path(__file__).resolve().parents[2]
STUB = REPO / "forensics" / "_speedups.pyi"


def _stub_functions() -> dict[str, ast.arguments]:
    """Each module-level function of the stub and its parameters (one declaration each: no
    overloads, which Accelerator's staticmethod would drop)."""
    found: dict[str, ast.arguments] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            assert node.name not in found, f"{node.name} declared twice"
            found[node.name] = node.args
    return found


def _shape(args: ast.arguments) -> list[tuple[str, str, bool]]:
    """(name, kind, optional) of each parameter, as inspect.Parameter spells the kinds."""
    kinds = [(a, "POSITIONAL_ONLY") for a in args.posonlyargs] + [(a, "POSITIONAL_OR_KEYWORD") for a in args.args]
    first_default = len(kinds) - len(args.defaults)
    shape = [(a.arg, kind, i >= first_default) for i, (a, kind) in enumerate(kinds)]
    if args.vararg is not None:
        shape.append((args.vararg.arg, "VAR_POSITIONAL", True))
    shape += [(a.arg, "KEYWORD_ONLY", d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        shape.append((args.kwarg.arg, "VAR_KEYWORD", True))
    return shape


def _exported() -> dict[str, Callable[..., Any]]:
    from forensics import _speedups

    return {name: obj for name, obj in vars(_speedups).items()
            if not name.startswith("_") and inspect.isbuiltin(obj)}


@needs_native
def test_the_stub_declares_exactly_the_exported_functions() -> None:
    exported, declared = set(_exported()), set(_stub_functions())
    assert exported, "the built module exports no function"
    assert not exported - declared, f"exported but missing from {STUB.name}: {sorted(exported - declared)}"
    assert not declared - exported, f"declared in {STUB.name} but not exported: {sorted(declared - exported)}"


@needs_native
def test_each_declaration_has_the_parameters_of_the_module() -> None:
    for name, fn in sorted(_exported().items()):
        signature = inspect.signature(fn)  # csrc/module.c's DOC(): every function gives one
        c_shape = [(p.name, p.kind.name, p.default is not inspect.Parameter.empty)
                   for p in signature.parameters.values()]
        stub_shape = _shape(_stub_functions()[name])
        assert stub_shape == c_shape, f"{name}: stub {stub_shape} != module {c_shape}"


def test_the_type_of_native_names_every_function_of_the_stub() -> None:
    """forensics.speedups.Accelerator (read from the source: it exists for the type checker only)."""
    tree = ast.parse((REPO / "forensics" / "speedups.py").read_text(encoding="utf-8"))
    accelerator = next(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "Accelerator")
    members = {}
    for node in accelerator.body:
        if isinstance(node, ast.Assign):
            (target,) = node.targets
            assert isinstance(target, ast.Name)
            members[target.id] = ast.unparse(node.value)
    assert members == {name: f"staticmethod(_speedups.{name})" for name in _stub_functions()}


@needs_native
def test_every_entry_point_asks_for_what_it_needs_registered() -> None:
    """In a fresh interpreter that registered nothing (forensics._speedups imported alone), each
    entry point that makes a registered type or calls a registered function raises the one error,
    naming the init calls missing; nothing crashes."""
    code = """if True:
        from forensics import _speedups as n
        header = (0,) * 13
        calls = {
            "scan": (b"", 0, 0, False, None, None, False, 1),
            "scan_tuples": (b"", 0, 0, False, None, None, 1),
            "records": (b"", 0, 0, header),
            "record_tuples": (b"", 0, header),
            "legacy_entry": (b"", 0, 0),
            "legacy_inner": (b"", (0,) * 10),
            "legacy_records": (b"", 0),
            "deep_tuples": (b"", 0),
        }
        for name, args in calls.items():
            try:
                getattr(n, name)(*args)
            except RuntimeError as exc:
                print(name, exc)
            else:
                print(name, "ran")
    """
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "scan init_frames() has not been called",
        "scan_tuples init_records() and init_legacy() have not been called",
        "records init_records() has not been called",
        'record_tuples init_fallback("record_tuples", ...) has not been called',
        "legacy_entry init_legacy() has not been called",
        "legacy_inner init_legacy() has not been called",
        "legacy_records init_legacy() has not been called",
        'deep_tuples init_fallback("deep_tuples", ...) has not been called',
    ]


@pytest.mark.parametrize("name", ["init_frames", "init_records"])
@needs_native
def test_registration_takes_tuple_subclasses_only(name: str) -> None:
    from forensics import _speedups

    with pytest.raises(TypeError, match="tuple subclasses"):
        getattr(_speedups, name)(int, int)
