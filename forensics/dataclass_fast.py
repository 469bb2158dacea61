"""``dataclass`` as the standard library's, made in a third of the time: every command imports ~160
of them, and ``dataclasses`` compiles six functions per frozen class from source text (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``), about half of the CPU an
import of a command costs (measured: 0.3 of 0.55 s for find-hanging's). Here the standard library
makes the class (its fields, ``__init__``, the frozen guards, slots, ``__match_args__``), told not to
make ``__repr__``, ``__eq__`` and ``__hash__``; those are added as closures over the field names,
with the standard library's results to the byte: the same repr (``...`` on recursion), the same
comparison (a tuple of the compared fields, ``NotImplemented`` for another class) and the same hash
(of that tuple: what a set of records iterates in stays the same), set or left exactly where the
standard library sets or leaves them (a method the class defines is kept; ``eq`` without ``frozen``
makes it unhashable); so are a frozen class's ``__setattr__`` and ``__delattr__`` on the Pythons
whose ``dataclasses`` makes them as 3.10-3.12 do. Any option other than ``frozen``, ``slots``, ``kw_only`` and ``match_args``
goes to the standard library whole.

``__init__`` is compiled when the class is first made an instance of, not when it is made: of the ~190
classes a command imports, a run instantiates fewer than half (78 in a ``find-hanging``), and the
compiled text is most of what making one costs (import of find-hanging's modules: 0.18-0.21 s eager,
0.12-0.14 s lazy). Until then the class holds a stand-in with the standard library's signature (so
``inspect.signature`` and the ``__doc__`` the standard library writes from it are the same), which
makes the standard library's ``__init__`` from the same fields on its first call, puts it in its
place, and calls it; after that, an instance costs what it costs under the standard library. This
on the Pythons whose ``dataclasses`` makes ``__init__`` as 3.10-3.12 do; on others, at once.

Type checkers see the standard library's decorator."""

from __future__ import annotations

import dataclasses
import inspect
import threading
import types
from operator import attrgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any

_OWN = frozenset({"frozen", "slots", "kw_only", "match_args"})
# What the standard library's __init__ shows as the default of a field with a default_factory
_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
_PLAIN = getattr(dataclasses, "_FIELD", None)  # a field's kind: not a ClassVar, not an InitVar

# The standard library's maker of a frozen class's __setattr__ and __delattr__ (compiled from text), where
# it has the form of Python 3.10-3.12 (``(cls, fields, globals)``): replaced by closures while one of
# ours is made (None: another form, left alone)
_STD_GUARDS = getattr(dataclasses, "_frozen_get_del_attr", None)
if _STD_GUARDS is None or _STD_GUARDS.__code__.co_varnames[:3] != ("cls", "fields", "globals"):
    _STD_GUARDS = None
_GUARDS = threading.Lock()
# The standard library's maker of ``__init__`` (compiled from text), where it has the form of Python
# 3.10-3.12: replaced by a lazy stand-in while one of ours is made (None: another form, made at once)
_STD_INIT = getattr(dataclasses, "_init_fn", None)
_INIT_ARGS = ("fields", "std_fields", "kw_only_fields", "frozen", "has_post_init", "self_name", "globals", "slots")
if _STD_INIT is None or _STD_INIT.__code__.co_varnames[:len(_INIT_ARGS)] != _INIT_ARGS:
    _STD_INIT = None

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    def dataclass(cls: Any = None, /, **options: Any) -> Any:
        """As :func:`dataclasses.dataclass` (see the module's docstring)."""
        if not options.keys() <= _OWN:
            return dataclasses.dataclass(cls, **options) if cls is not None else dataclasses.dataclass(**options)

        def wrap(c: type) -> type:
            return _make(c, options)
        return wrap if cls is None else wrap(cls)


def _make(cls: type, options: dict[str, Any]) -> type:
    own = cls.__dict__
    class_hash = own.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own))
    has_repr, has_eq = "__repr__" in own, "__eq__" in own
    made: Any
    guards = options.get("frozen", False) and _STD_GUARDS is not None
    with _GUARDS:  # for this class only: __init__ made when first called, the frozen guards as closures
        if _STD_INIT is not None:
            dataclasses._init_fn = _lazy_init  # type: ignore[attr-defined]
        if guards:
            dataclasses._frozen_get_del_attr = _frozen_guards  # type: ignore[attr-defined]
        try:
            made = dataclasses.dataclass(cls, repr=False, eq=False, **options)
        finally:
            if _STD_INIT is not None:
                dataclasses._init_fn = _STD_INIT  # type: ignore[attr-defined]
            if guards:
                dataclasses._frozen_get_del_attr = _STD_GUARDS  # type: ignore[attr-defined]
    fields = dataclasses.fields(made)
    if not has_repr:
        made.__repr__ = _repr(made, tuple(f.name for f in fields if f.repr))  # type: ignore[method-assign]
    compared = tuple(f.name for f in fields if f.compare)
    if not has_eq:
        made.__eq__ = _eq(made, compared)  # type: ignore[method-assign]
    if not explicit_hash:
        if options.get("frozen", False):
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            made.__hash__ = _hash(made, hashed)  # type: ignore[method-assign]
        else:
            made.__hash__ = None  # type: ignore[assignment]
    return made


def _lazy_init(*args: Any) -> Any:
    """A stand-in for the ``__init__`` that ``dataclasses._init_fn(*args)`` makes (the same signature);
    on its first call it makes that one, puts it in its own place on the class, and calls it."""
    fields = dict(zip(_INIT_ARGS, args))
    real: Any = None

    def __init__(instance: Any, /, *a: Any, **k: Any) -> None:  # positional: a field may be named "self"
        nonlocal real
        if real is None:
            # the class made (with slots, not the one decorated; a plain subclass's base)
            owner = next(c for c in type(instance).__mro__ if c.__dict__.get("__init__") is __init__)
            made = _slot_init(owner, fields) or _STD_INIT(*args)  # type: ignore[misc]
            made.__qualname__ = f"{owner.__qualname__}.__init__"
            type.__setattr__(owner, "__init__", made)
            real = made
        real(instance, *a, **k)
    params = [inspect.Parameter(fields["self_name"], inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for kind, init_fields in ((inspect.Parameter.POSITIONAL_OR_KEYWORD, fields["std_fields"]),
                              (inspect.Parameter.KEYWORD_ONLY, fields["kw_only_fields"])):
        for f in init_fields:
            default = (f.default if f.default is not dataclasses.MISSING
                       else _FACTORY if f.default_factory is not dataclasses.MISSING else inspect.Parameter.empty)
            params.append(inspect.Parameter(f.name, kind, default=default, annotation=f.type))
    __init__.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    return __init__


def _slot_init(owner: type, spec: dict[str, Any]) -> Any:
    """For a frozen class with slots whose fields are all plain (each in ``__init__``, no
    ``default_factory``, no ``InitVar``, no ``__post_init__``): the standard library's ``__init__``
    with each slot set through its descriptor, where the standard library's calls
    ``object.__setattr__`` (the same effect, in under half the time: 2.3 against 5.1 us for 16 fields);
    None for any other class."""
    every = spec["fields"]
    if not (spec["frozen"] and spec["slots"]) or spec["has_post_init"] or any(
            not f.init or f._field_type is not _PLAIN or f.default_factory is not dataclasses.MISSING for f in every):
        return None
    setters = []
    for f in every:
        slot = inspect.getattr_static(owner, f.name, None)
        if type(slot) is not types.MemberDescriptorType:
            return None
        setters.append(slot.__set__)
    names = {f.name: i for i, f in enumerate(every)}
    space: dict[str, Any] = {"__name__": spec["globals"].get("__name__")}
    params = [spec["self_name"]]
    for group, star in ((spec["std_fields"], False), (spec["kw_only_fields"], True)):
        if star and group:
            params.append("*")
        for f in group:
            i = names[f.name]
            if f.default is dataclasses.MISSING:
                params.append(f.name)
            else:
                space[f"__default_{i}__"] = f.default
                params.append(f"{f.name}=__default_{i}__")
    body = []
    for i, f in enumerate(every):
        space[f"__set_{i}__"] = setters[i]
        body.append(f"    __set_{i}__({spec['self_name']}, {f.name})\n")
    exec(f"def __init__({', '.join(params)}):\n{''.join(body) or '    pass' + chr(10)}", space)
    made = space["__init__"]
    made.__annotations__ = {**{f.name: f.type for f in every}, "return": None}
    return made


def _frozen_guards(cls: type, fields: Any, globals: Any) -> tuple[Any, Any]:
    """As the standard library's ``__setattr__`` and ``__delattr__`` of a frozen class, as closures."""
    names = tuple(f.name for f in fields)
    frozen = dataclasses.FrozenInstanceError

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise frozen(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type, misc]

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise frozen(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type, misc]
    return __setattr__, __delattr__


def _values(names: tuple[str, ...]):
    """A function of an instance giving the tuple of those fields' values (as ``(self.a, self.b,)``)."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    return attrgetter(*names)


def _named(cls: type, fn: Any, name: str) -> Any:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    return fn


def _repr(cls: type, names: tuple[str, ...]) -> Any:
    def __repr__(self: Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
    return _named(cls, recursive_repr()(__repr__), "__repr__")


def _eq(cls: type, names: tuple[str, ...]) -> Any:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented
    return _named(cls, __eq__, "__eq__")


def _hash(cls: type, names: tuple[str, ...]) -> Any:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))
    return _named(cls, __hash__, "__hash__")
