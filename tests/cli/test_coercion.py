"""cli/coercion.py converts option values without pydantic: it must give, for every parameter of every
command and any value, exactly what typer's own conversion gives (the same value of the same type,
or the same error with the same message)."""

from __future__ import annotations

from enum import Enum
from typing import Any

import pytest
import typer

from forensics.cli import coercion
from forensics.cli.app import app

pytestmark = pytest.mark.skipif(coercion.RuntimeParam is None, reason="this typer converts values without pydantic")

TEXTS = ["x", "", " a ", "orders", "\x1b[2J", "ünï", "-1", "true", "a,b"]
INTS = ["0", "1", "-1", "15", "007", "+5", " 5", "5 ", "1_000", "1e3", "1.0", "0x10", "-0", "٣", "", "abc",
        "99999999999999999", "999999999999999999", "9999999999999999999", "-99999999999999999", "2147483647",
        0, 1, -1, 15, 2 ** 31 - 1, 2 ** 40, True, 1.0]
BOOLS = [True, False, "true", "1", "no", "", 1]
LISTS: list[Any] = [("a",), ("a", "b"), [], (), ["x", "y"], ("a", 1), "ab"]


def _plain_params() -> list[tuple[str, Any, Any]]:
    group = typer.main.get_command(app)
    found = [("(root)", group, p) for p in group.params]
    for name in list(group.commands):
        command = group.commands[name]
        found += [(name, command, p) for p in command.params]
        ctx = typer._click.Context(command, info_name=name)
        found.append((name, command, command.get_help_option(ctx)))
    return [(name, command, p) for name, command, p in found if p is not None and coercion.kind_of(p)]


PARAMS = _plain_params()


def _values(param) -> list[Any]:
    kind = coercion.kind_of(param)
    if kind == coercion.CHOICE:
        members = list(param.type_descriptor.annotation)
        words = [m.value for m in members]
        return members + words + [w.upper() for w in words] + [w.title() for w in words] + \
            [w + " " for w in words] + ["bogus", "", "ＪＳＯＮ", "Spark2", 1]
    return {coercion.STR: TEXTS, coercion.INT: INTS, coercion.BOOL: BOOLS, coercion.STR_LIST: LISTS}[kind]


def _outcome(runtime, value, param, ctx):
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome
        return ("error", type(exc).__name__, getattr(exc, "message", str(exc)))
    return ("value", type(got), got.value if isinstance(got, Enum) else got)


def test_every_plain_parameter_has_the_conversion() -> None:
    kinds = {coercion.kind_of(p) for _, _, p in PARAMS}
    assert kinds == {coercion.STR, coercion.INT, coercion.BOOL, coercion.CHOICE, coercion.STR_LIST}
    for name, _, param in PARAMS:
        assert isinstance(param.get_runtime_param(), coercion._Plain), (name, param.name)


@pytest.mark.parametrize("name, command, param", PARAMS, ids=[f"{n}:{p.name}" for n, _, p in PARAMS])
def test_the_same_value_or_error_as_typer(name, command, param) -> None:
    from typer._coercion import build_runtime_param

    ctx = typer._click.Context(command, info_name=name)
    ours, typers = param.get_runtime_param(), build_runtime_param(param.type_descriptor)
    values = _values(param)
    if param.multiple or param.nargs == -1:  # a multi-value parameter is given a list or tuple
        values = LISTS
    for value in values + [None]:
        assert _outcome(ours, value, param, ctx) == _outcome(typers, value, param, ctx), (name, param.name, value)


def test_values_typer_would_refuse_are_left_to_typer() -> None:
    """The error texts are typer's (pydantic's): out of range, not an integer, not a choice."""
    group = typer.main.get_command(app)
    dump = group.commands["dump"]
    by_name = {p.name: p for p in dump.params}
    ctx = typer._click.Context(dump, info_name="dump")
    with pytest.raises(typer._click.exceptions.BadParameter, match="greater than or equal to 1"):
        by_name["max_bytes"].get_runtime_param().coerce("0", param=by_name["max_bytes"], ctx=ctx)
    with pytest.raises(typer._click.exceptions.BadParameter, match="valid integer"):
        by_name["max_bytes"].get_runtime_param().coerce("1e3", param=by_name["max_bytes"], ctx=ctx)
    with pytest.raises(typer._click.exceptions.BadParameter, match="'bogus' is not one of 'text', 'jsonl', 'json'"):
        by_name["fmt"].get_runtime_param().coerce("bogus", param=by_name["fmt"], ctx=ctx)
