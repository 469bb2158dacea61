"""forensics.dataclass_fast makes the standard library's dataclasses: the same repr, equality, hash,
frozen guards, slots, replace, pickling and unhashability, class by class (differential)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import field

import pytest

from forensics import dataclass_fast
from forensics.dataclass_fast import dataclass as fast

LAZY = dataclass_fast._STD_INIT is not None  # __init__ made when first called (Python 3.10-3.12)

SHAPES = [
    {"frozen": True, "slots": True},
    {"frozen": True},
    {},
    {"slots": True},
    {"frozen": True, "kw_only": True},
]


def _pair(options: dict, body):
    """The same class made by each decorator."""
    return dataclasses.dataclass(**options)(body()), fast(**options)(body())


def _point():
    class Point:
        x: int
        y: str = "a"
        z: tuple = ()
        hidden: int = field(default=0, repr=False, compare=False)
        nohash: int = field(default=1, hash=False)
    return Point


def _one():
    class One:
        v: float
    return One


def _empty():
    class Empty:
        pass
    return Empty


@pytest.mark.parametrize("options", SHAPES)
@pytest.mark.parametrize("body", [_point, _one, _empty])
def test_the_same_methods_as_the_standard_library(options, body):
    std, ours = _pair(options, body)
    names = [f.name for f in dataclasses.fields(std)]
    assert names == [f.name for f in dataclasses.fields(ours)]
    args = {"x": 3, "y": "b", "z": (1, 2), "hidden": 9, "nohash": 5, "v": float("nan")}
    kw = {n: args[n] for n in names}
    a, b = std(**kw), ours(**kw)
    assert repr(a) == repr(b).replace(type(b).__qualname__, type(a).__qualname__)
    assert (a == std(**kw)) == (b == ours(**kw))
    assert (a.__eq__(object()), b.__eq__(object())) == (NotImplemented, NotImplemented)
    if type(std).__hash__ is None or std.__hash__ is None:
        assert ours.__hash__ is None
        with pytest.raises(TypeError):
            hash(b)
    else:
        assert hash(a) == hash(b)
    if options.get("frozen") and names:
        for obj in (a, b):
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
                setattr(obj, names[0], 1)
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field"):
                delattr(obj, names[0])
    if "x" in names:
        assert dataclasses.replace(b, x=4).x == 4
        changed = dataclasses.replace(b, hidden=7)
        assert changed == b and repr(changed) == repr(b)  # neither compared nor shown
        assert (changed == dataclasses.replace(b, x=8)) is False
    assert hasattr(b, "__slots__") == hasattr(a, "__slots__")
    assert std.__match_args__ == ours.__match_args__


def _shapes_of_init():
    class Many:
        a: int
        b: list = field(default_factory=list)
        c: dataclasses.InitVar[int] = 0
        d: str = field(default="d", kw_only=True)
        e: int = field(default=0, init=False)

        def __post_init__(self, c: int) -> None:
            object.__setattr__(self, "e", c + 1)
    return Many


def _self_field():
    class Selfish:
        self: int
        other: str = "o"
    return Selfish


@pytest.mark.parametrize("options", SHAPES)
@pytest.mark.parametrize("body", [_point, _one, _empty, _shapes_of_init, _self_field])
def test_init_is_made_when_first_called_with_the_standard_librarys_signature(options, body):
    std, ours = _pair(options, body)
    assert ours.__doc__ == std.__doc__  # the standard library writes it from the signature
    assert inspect.signature(ours) == inspect.signature(std)
    stand_in = ours.__init__
    kw = {"x": 1, "v": 2.0, "a": 3, "c": 4, "d": "e", "self": 5}
    names = set(inspect.signature(std).parameters)
    a, b = std(**{k: v for k, v in kw.items() if k in names}), ours(**{k: v for k, v in kw.items() if k in names})
    assert (ours.__init__ is not stand_in) == LAZY  # the real one, in its place
    assert ours.__init__.__qualname__ == std.__init__.__qualname__.replace(std.__qualname__, ours.__qualname__)
    assert inspect.signature(ours) == inspect.signature(std)
    assert repr(a) == repr(b)
    assert [getattr(a, f.name) for f in dataclasses.fields(std)] == [getattr(b, f.name) for f in dataclasses.fields(ours)]
    with pytest.raises(TypeError) as std_error:
        std(unknown=1)
    with pytest.raises(TypeError) as our_error:
        ours(unknown=1)
    assert str(our_error.value) == str(std_error.value)


def test_a_subclass_made_first_puts_the_init_on_the_class_that_has_it():
    @fast(frozen=True, slots=True)
    class Base:
        a: int

    class Plain(Base):
        __slots__ = ()
    stand_in = Base.__init__
    assert Plain(1).a == 1
    assert (Base.__init__ is not stand_in) == LAZY and "__init__" not in Plain.__dict__
    assert Base(2).a == 2

    @fast(frozen=True)
    class Derived(Base):
        b: int = 0
    assert (Derived(1, 2).a, Derived(1, 2).b) == (1, 2)


def test_pickles_like_the_standard_library():
    ours = fast(frozen=True, slots=True)(_point())
    ours.__qualname__ = ours.__name__ = "PickledPoint"
    globals()["PickledPoint"] = ours
    b = ours(x=1)
    assert pickle.loads(pickle.dumps(b)) == b


def test_a_method_the_class_defines_is_kept():
    @fast(frozen=True)
    class Own:
        a: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other) -> bool:
            return True

        def __hash__(self) -> int:
            return 7
    assert (repr(Own(1)), Own(1) == 2, hash(Own(1))) == ("own", True, 7)

    @fast
    class EqOnly:
        a: int

        def __eq__(self, other) -> bool:
            return True
    assert EqOnly.__hash__ is None  # as the standard library: __eq__ in the body and no __hash__


def test_recursion_shows_dots():
    @fast
    class Node:
        child: list
    n = Node([])
    n.child.append(n)
    assert repr(n) == "test_recursion_shows_dots.<locals>.Node(child=[...])"


def test_other_options_go_to_the_standard_library():
    @fast(order=True, frozen=True)
    class Ordered:
        a: int
    assert Ordered(1) < Ordered(2)
    assert dataclasses.dataclass(order=True, frozen=True)(type("X", (), {"__annotations__": {"a": int}}))


def test_every_module_of_the_package_uses_it() -> None:
    """A class made by the standard library's decorator costs its share of every command's start-up
    (docs/performance.md, "The serial part"): forensics/ imports ``dataclass`` from here only."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "forensics"
    stdlib = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "dataclass_fast.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "dataclasses":
                stdlib += [f"{path.relative_to(package)}:{node.lineno}" for a in node.names if a.name == "dataclass"]
            elif isinstance(node, ast.Attribute) and node.attr == "dataclass" and \
                    isinstance(node.value, ast.Name) and node.value.id == "dataclasses":
                stdlib.append(f"{path.relative_to(package)}:{node.lineno}")
    assert stdlib == [], f"use forensics.dataclass_fast.dataclass: {stdlib}"
