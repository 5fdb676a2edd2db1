"""The Chroma store is one class made of parts, and no part reaches into another's insides: each
class of `memory/chroma/` touches, of `self`'s private members, only those it defines itself
(read with `ast`, nothing is executed)."""

from __future__ import annotations

import ast
from pathlib import Path

CHROMA = Path(__file__).resolve().parent.parent / "memory" / "chroma"


def _own(cls: ast.ClassDef) -> set[str]:
    """What a class defines: its methods, class attributes, and what its methods assign."""
    names = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and _on_self(part):
                    names.add(part.attr)
    return names


def _on_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == "self"


def borrowed(source: str) -> list[str]:
    """`Class.member` for each private member of `self` a class uses but does not define."""
    found = []
    for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)):
        own = _own(cls)
        for node in ast.walk(cls):
            if not (isinstance(node, ast.Attribute) and _on_self(node)):
                continue
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            if private and node.attr not in own:
                found.append(f"{cls.name}.{node.attr}")
    return sorted(set(found))


def test_a_mixin_that_uses_its_hosts_private_members_is_found() -> None:
    mixin = (
        "class History:\n"
        "    def forget(self, ids):\n"
        "        with self._calling():\n"
        "            return self._history.of(ids)\n"
    )
    assert borrowed(mixin) == ["History._calling", "History._history"]
    part = "class History:\n    def __init__(self, rows):\n        self._rows = rows\n"
    assert borrowed(part + "    def forget(self):\n        return self._rows.get()\n") == []


def test_no_class_of_the_chroma_store_uses_private_members_it_does_not_define() -> None:
    modules = sorted(CHROMA.glob("*.py"))
    assert len(modules) > 5  # the store's modules were found
    bad = {p.name: borrowed(p.read_text(encoding="utf-8")) for p in modules}
    assert {name: found for name, found in bad.items() if found} == {}
