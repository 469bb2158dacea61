"""The rule of docs/developer.md, "Process state": a module-level name is a constant; what the process
holds while it lives is a field of ``forensics.process_state.PROCESS``. No function changes a
module-level name (no ``global``, no call of a mutating method on one, no item or attribute set on
one), but for the caches the rule allows; no ``__all__`` names a private name."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "forensics"
MUTATORS = {"append", "extend", "add", "update", "clear", "pop", "setdefault", "remove", "discard", "insert",
            "popitem", "set", "sort", "reverse"}
CACHES = {
    ("codec/compression.py", "_local"),  # one zstd decompressor per thread (threading.local)
    ("columns.py", "_COLUMNS"),  # each row kind's columns, worked out once
}


def _module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top: assigned, or imported from another (``PROCESS``, the one
    place, is there to be changed)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("forensics"):
            where = PACKAGE.parent.joinpath(*node.module.split("."))
            names.update(a.asname or a.name for a in node.names  # a module's functions are not its state
                         if not (where / f"{a.name}.py").exists() and not (where / a.name).is_dir())
    return names - {"PROCESS"}


def _changes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _module_names(tree)
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            target = None
            if isinstance(node, ast.Global):
                found.extend(f"global {n}" for n in node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                target = node.func.value
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, (ast.Subscript, ast.Attribute)):
                        target = t.value
            if isinstance(target, ast.Name) and target.id in names and not _local_in(fn, target.id):
                found.append(f"{target.id} (line {node.lineno})")
    return found


def _local_in(fn: ast.AST, name: str) -> bool:
    """``name`` is bound in the function itself (a parameter or an assignment): not the module's."""
    args = fn.args  # type: ignore[attr-defined]
    if name in {a.arg for a in args.args + args.kwonlyargs + args.posonlyargs}:
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(fn))


def test_no_function_changes_a_module_level_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "process_state.py":
            continue
        found.extend(f"{rel}: {what}" for what in _changes(path)
                     if (rel, what.split(" ")[0]) not in CACHES)
    assert found == [], "mutable module state outside forensics/process_state.py (docs/developer.md): " + \
        "; ".join(found)


def test_no_private_name_is_exported() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) \
                    and isinstance(node.value, (ast.List, ast.Tuple)):
                found.extend(f"{path.relative_to(PACKAGE)}: {e.value}" for e in node.value.elts
                             if isinstance(e, ast.Constant) and str(e.value).startswith("_"))
    assert found == []


def test_the_process_state_is_light() -> None:
    """The one place imports nothing of the package and nothing heavy (it is on every floor's path)."""
    tree = ast.parse((PACKAGE / "process_state.py").read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | \
        {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "threading", "typing"}
