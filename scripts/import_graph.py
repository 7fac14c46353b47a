"""The import graph of the ``factcheck`` package, read from the code (AST): what tests/test_layers.py holds
the house to, and the numbers and picture of docs/architecture.md.

    python scripts/import_graph.py                  # the numbers, the circles, the modules floor by floor
    python scripts/import_graph.py --mermaid        # the parts of the house and their imports (Mermaid)
    python scripts/import_graph.py --rooms          # each sub-package taken as one room, as a reader meets the tree
    python scripts/import_graph.py --root ../old    # another checkout (a worktree of an older commit)

Two readings of a module's imports:

- *arrows* (:func:`arrows`): the imports that run while the module loads, ``if TYPE_CHECKING:`` ones
  included (a type named is a dependency as much as a function called), not those inside a function (they
  run once the modules are loaded). ``from p import m`` is an arrow to the module ``p.m`` where there is
  one, else to ``p``. The graph, its circles and its floors are drawn from arrows.
- *imported* (:func:`imported`): every import that can run, inside functions too, not under ``if
  TYPE_CHECKING:``: what a module can reach at all (the door for plugin authors must reach nothing above it).

A module's *floor* is one above the highest floor it has an arrow to (floor 1: none); the modules of a
circle share a floor. An arrow inside a circle *runs back up*.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The parts of the house, bottom to top, by the modules they hold (a prefix of a module's name; first match wins);
# the modules no part names are the helpers the parts share (SHARED), between the runtime and the door.
PARTS = (
    ("domain", ("factcheck.types", "factcheck.errors", "factcheck.options", "factcheck.text", "factcheck.dates")),
    (
        "runtime",
        (
            "factcheck.context",
            "factcheck.cache",
            "factcheck.usage",
            "factcheck.interrupt",
            "factcheck.net",
            "factcheck.loops",
            "factcheck.calls",
            "factcheck.llm",
            "factcheck.secrets",
            "factcheck.switches",
            "factcheck.paths",
            "factcheck.sqlitewal",
        ),
    ),
    ("door", ("factcheck.plugin",)),
    (
        "components",
        (
            "factcheck.sources",
            "factcheck.verifiers",
            "factcheck.extractors",
            "factcheck.scoring",
            "factcheck.deliberation",
            "factcheck.memory",
            "factcheck.agent",
            "factcheck.pages",
            "factcheck.wikidata",
        ),
    ),
    ("registry", ("factcheck.registry", "factcheck.plugins")),
    ("check", ("factcheck.pipeline", "factcheck.build", "factcheck.config", "factcheck.judged_by")),
    (
        "front doors",
        (
            "factcheck.cli",
            "factcheck.server",
            "factcheck.batch",
            "factcheck.eval",
            "factcheck.testing",
            "factcheck.report",
            "factcheck.__main__",
        ),
    ),
)
SHARED = "shared"  # the rest: helpers the parts share (html, language, claimtime, embed, ...)


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Each module of the package under ``root``: its dotted name and its file."""
    return {module_name(path, root): path for path in (root / "factcheck").rglob("*.py")}


def package_of(module: str, path: Path) -> str:
    """The package a module's relative imports start from."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _is_type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run: at the top or inside a function, not under ``if TYPE_CHECKING``."""
    for node in ast.iter_child_nodes(tree):
        for child in node.orelse if isinstance(node, ast.If) and _is_type_checking(node) else [node]:
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            yield from import_nodes(child)


def loading_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run while the module loads: at the top, in a class body, under ``if`` (``if
    TYPE_CHECKING`` too) or ``try``; not those inside a function, which run when it is called."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from loading_imports(node)


def _base(node: ast.ImportFrom, package: str) -> str:
    base = node.module or ""
    if node.level:  # relative: from the package the code is in
        kept = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*kept, *filter(None, [base])])
    return base


def imported(code: str, package: str = "", known: dict[str, Path] | None = None) -> set[str]:
    """The modules ``code`` (of ``package``) can import (:func:`import_nodes`); ``from m import x`` counts
    ``m`` and ``m.x`` where that is a module of ``known`` (this checkout's by default)."""
    known = modules() if known is None else known
    found: set[str] = set()
    for node in import_nodes(ast.parse(code)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = _base(node, package)
        found.add(base)
        found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
    return found


def arrows(module: str, known: dict[str, Path] | None = None) -> set[str]:
    """The modules of ``known`` that ``module`` imports as it loads (:func:`loading_imports`)."""
    known = modules() if known is None else known
    path = known[module]
    package = package_of(module, path)
    found: set[str] = set()
    for node in loading_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = _base(node, package)
        found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {m for m in found if m in known and m != module}


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the package under ``root`` and its arrows."""
    known = modules(root)
    return {module: arrows(module, known) for module in known}


def rooms(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of rooms: each top-level module, and each top-level sub-package taken whole (its modules'
    arrows to other rooms); ``factcheck`` itself, the package's face that hands names on, is left out."""
    room = {module: ".".join(module.split(".")[:2]) for module in graph}
    drawn: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        if room[module] != "factcheck":
            drawn[room[module]].update(room[t] for t in targets if room[t] not in (room[module], "factcheck"))
    return dict(drawn)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one node, each sorted."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in graph.get(todo.pop(), set()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    found = {frozenset({m} | {n for n in reach[m] if m in reach.get(n, set())}) for m in graph}
    return sorted(sorted(c) for c in found if len(c) > 1)


@dataclass(frozen=True)
class Shape:
    """What a graph measures: its nodes and arrows, each node's floor, the arrows inside circles, the circles."""

    nodes: int
    arrows: int
    floors: dict[str, int]
    back_up: int
    circles: list[list[str]]

    @property
    def height(self) -> int:
        return max(self.floors.values(), default=0)


def shape(graph: dict[str, set[str]]) -> Shape:
    found = circles(graph)
    ring = {node: frozenset(c) for c in found for node in c}
    floors: dict[str, int] = {}

    def floor(node: str) -> int:
        if node not in floors:
            members = ring.get(node, frozenset({node}))
            below = [floor(t) for m in members for t in graph.get(m, ()) if t not in members]
            for member in members:
                floors[member] = 1 + max(below, default=0)
        return floors[node]

    for node in sorted(graph):
        floor(node)
    back_up = sum(1 for node, targets in graph.items() for t in targets if t in ring.get(node, ()))
    return Shape(len(graph), sum(map(len, graph.values())), floors, back_up, found)


def floors_of_parts() -> list[str]:
    """The parts, bottom to top, the shared helpers between the runtime and the door."""
    names = [part for part, _ in PARTS]
    names.insert(names.index("runtime") + 1, SHARED)
    return names


def running_up(graph: dict[str, set[str]]) -> list[str]:
    """Each arrow from a part to a part above it ("module -> module"); ``factcheck`` itself, the package's
    face that hands the public names on, is left out."""
    order = floors_of_parts()
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module != "factcheck"
        for target in targets
        if order.index(part_of(module)) < order.index(part_of(target))
    )


def part_of(module: str) -> str:
    for part, prefixes in PARTS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return part
    return SHARED


def mermaid(graph: dict[str, set[str]]) -> str:
    """The parts and how many arrows run from each to each, as a Mermaid flowchart drawn bottom to top (an
    arrow drawn pointing down runs from a lower part to a higher one); ``factcheck`` itself, the package's
    face, is left out."""
    edges: dict[tuple[str, str], int] = defaultdict(int)
    for module, targets in graph.items():
        for target in targets:
            a, b = part_of(module), part_of(target)
            if a != b and "factcheck" not in (module, target):
                edges[(a, b)] += 1
    names = floors_of_parts()
    ident = {name: name.replace(" ", "_") for name in names}
    lines = ["flowchart BT"]
    lines += [f'  {ident[n]}["{n}"]' for n in names if any(n in pair for pair in edges)]
    lines += [f"  {ident[a]} -->|{n}| {ident[b]}" for (a, b), n in sorted(edges.items())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to read (default: this one)")
    parser.add_argument("--mermaid", action="store_true", help="print the parts' graph as a Mermaid flowchart")
    parser.add_argument("--rooms", action="store_true", help="take each top-level sub-package as one room")
    args = parser.parse_args()
    drawn = graph(args.root.resolve())
    drawn = rooms(drawn) if args.rooms else drawn
    if args.mermaid:
        print(mermaid(drawn))
        return
    measured = shape(drawn)
    print(
        f"{measured.nodes} {'rooms' if args.rooms else 'modules'}, {measured.arrows} arrows, {measured.height} floors, "
        f"{measured.back_up} arrows inside circles, {len(measured.circles)} circles"
    )
    for ring in measured.circles:
        print("circle: " + " <-> ".join(ring))
    for level in range(measured.height, 0, -1):
        print(f"floor {level:2}: " + ", ".join(sorted(m for m, f in measured.floors.items() if f == level)))


if __name__ == "__main__":
    main()
