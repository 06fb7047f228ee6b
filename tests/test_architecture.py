"""The package's layers: imports point one way and form no cycle.

Every ``import`` of an ordstats module is read from the source with ``ast``,
including imports inside functions and those under ``if TYPE_CHECKING:``: a
type-only import never runs, but it is a dependence all the same (of the types,
of a reader, of mypy), so it may not point up the layers or close a cycle either;
code types against a protocol of its own layer instead (``results/protocols.py``).
Run ``python tests/test_architecture.py`` to print the module graph's layers and
any cycle.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ordstats"

#: Layer of each top-level part, lowest first: a module may import modules of
#: its own layer or lower ones only (see ARCHITECTURE.md).
LAYERS = {
    "ordstats._typing": 0,
    "ordstats._version": 0,
    "ordstats.errors": 0,
    "ordstats.datasets": 0,
    "ordstats.core": 1,
    "ordstats.metrics": 1,  # ordinal metrics on arrays: penalised CV and the estimator use them
    "ordstats.families": 2,
    "ordstats.design": 3,
    "ordstats.data": 4,
    "ordstats.results": 5,  # values the model creates; they read it through protocols
    "ordstats.reporting": 5,  # results.summary() formats through it
    "ordstats.estimation": 6,
    "ordstats.inference": 7,
    "ordstats.plotting": 8,
    "ordstats.learn": 8,  # scikit-learn estimator and metrics: fits through estimation
    "ordstats.interop": 8,  # adapters to other packages (pymarginaleffects), on use
    "ordstats.links": 9,  # the public names of ordstats.core.links
    "ordstats.cli": 9,
    "ordstats.__main__": 10,
    "ordstats": 10,
}

#: Third-party packages each part may import (beyond the standard library).
ALLOWED_THIRD_PARTY = {
    "ordstats.core": {"numpy", "scipy"},
    "ordstats.families": {"numpy", "scipy"},
}
FORMULA_LAYER = "ordstats.design"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, also in functions and under ``if TYPE_CHECKING:``."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def imported_names(name: str, path: Path) -> Iterator[str]:
    """Full dotted names this module imports (absolute or relative)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        yield base
        yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = {t for t in imported_names(name, path) if t in known and t != name}
        edges[name] = targets
    return edges


def third_party(name: str, path: Path) -> set[str]:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    roots = {t.split(".")[0] for t in imported_names(name, path)}
    return {r for r in roots if r and r not in stdlib and r != "ordstats"}


def layer(name: str) -> tuple[str, int]:
    candidates = [part for part in LAYERS if name == part or name.startswith(part + ".")]
    part = max(candidates, key=len)
    return part, LAYERS[part]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    for name in modules():
        layer(name)  # raises ValueError (max of nothing) for an unplaced module


def test_import_graph_has_no_cycles():
    assert cycles(graph()) == []


def test_imports_point_down_the_layers():
    upward = []
    for name, targets in graph().items():
        part, rank = layer(name)
        for target in targets:
            target_part, target_rank = layer(target)
            if target_rank > rank:
                upward.append(f"{name} ({part}) imports {target} ({target_part})")
    assert upward == []


@pytest.mark.parametrize("part", sorted(ALLOWED_THIRD_PARTY))
def test_numerical_core_imports_numpy_and_scipy_only(part):
    for name, path in modules().items():
        if layer(name)[0] == part:
            assert third_party(name, path) <= ALLOWED_THIRD_PARTY[part], name


def test_only_the_formula_layer_imports_formulaic():
    users = [n for n, p in modules().items() if "formulaic" in third_party(n, p)]
    assert users and all(layer(n)[0] == FORMULA_LAYER for n in users), users


def test_type_only_imports_count(tmp_path):
    path = tmp_path / "fitted.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ordstats.estimation.model import OrdinalModel\n"
        "def f():\n"
        "    import ordstats.inference.lr\n"
    )
    found = set(imported_names("ordstats.results.fitted", path))
    assert {"ordstats.estimation.model", "ordstats.inference.lr"} <= found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


if __name__ == "__main__":
    edges = graph()
    by_layer: dict[int, list[str]] = {}
    for name in edges:
        by_layer.setdefault(layer(name)[1], []).append(name)
    for rank in sorted(by_layer):
        print(f"layer {rank}: {', '.join(sorted(by_layer[rank]))}")
    print(f"{sum(map(len, edges.values()))} imports between {len(edges)} modules")
    print(f"cycles: {cycles(edges) or 'none'}")
