"""The layers of the house, read from the code's imports (AST): the door for plugin authors,
``factcheck.plugin``, stands at the bottom, and what plugin authors read imports only the public doors."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from factcheck.registry import BUILTIN_PLUGINS
from tests.scripts import script

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "factcheck"
DOOR = "factcheck.plugin"

# What the door must never reach, even through a function's import: the registry, the check and how it
# is built and configured, the front doors, and the component packages with their implementations.
ABOVE_THE_DOOR = (
    "factcheck.registry",
    "factcheck.pipeline",
    "factcheck.build",
    "factcheck.config",
    "factcheck.server",
    "factcheck.cli",
    "factcheck.batch",
    "factcheck.eval",
    "factcheck.testing",
    "factcheck.sources",
    "factcheck.verifiers",
    "factcheck.extractors",
    "factcheck.scoring",
    "factcheck.deliberation",
    "factcheck.memory",
)
PUBLIC = ("factcheck", "factcheck.plugin", "factcheck.testing")


GRAPH = script("import_graph")  # scripts/import_graph.py: the one reading of the imports (and the docs' figures)
MODULES = GRAPH.modules(ROOT)
import_nodes = GRAPH.import_nodes
loading_imports = GRAPH.loading_imports
circles = GRAPH.circles


def imported(code: str, package: str = "") -> set[str]:
    return set(GRAPH.imported(code, package, MODULES))


def arrows(module: str) -> set[str]:
    return set(GRAPH.arrows(module, MODULES))


@cache
def imports_of(module: str) -> frozenset[str]:
    """What importing ``module`` runs of ours: its own imports and its packages' ``__init__``."""
    path = MODULES[module]
    own = {m for m in imported(path.read_text(encoding="utf-8"), GRAPH.package_of(module, path)) if m in MODULES}
    parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    return frozenset(own | parents)


def reached_from(start: str) -> dict[str, str]:
    """Each module importing ``start`` runs, with the module that imports it."""
    seen = {start: ""}
    todo = [start]
    while todo:
        current = todo.pop()
        for module in imports_of(current):
            if module not in seen:
                seen[module] = current
                todo.append(module)
    return seen


def route(seen: dict[str, str], module: str) -> str:
    path = [module]
    while seen[path[-1]]:
        path.append(seen[path[-1]])
    return " <- ".join(path)


def above(module: str) -> bool:
    return any(module == high or module.startswith(high + ".") for high in ABOVE_THE_DOOR)


def door_modules() -> list[str]:
    return sorted(m for m in MODULES if m == DOOR or m.startswith(DOOR + "."))


def test_the_door_and_everything_it_imports_stay_below_the_registry_the_pipeline_and_the_components() -> None:
    seen: dict[str, str] = {}
    for start in door_modules():
        seen |= {m: by for m, by in reached_from(start).items() if m not in seen}
    reached_above = sorted(route(seen, m) for m in seen if above(m))
    assert reached_above == []
    assert {"factcheck.types", "factcheck.errors", "factcheck.options"} <= set(seen)


def test_the_check_of_the_layers_sees_an_import_that_runs_up() -> None:
    assert above("factcheck.registry") and above("factcheck.sources.corpus") and not above("factcheck.plugin.source")
    assert "factcheck.registry" in imported("def f():\n    from factcheck.registry import get_registry\n")
    assert imported("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import factcheck.pipeline\n") == {
        "typing"
    }
    assert "factcheck.plugin.hooks" in imported("from factcheck.plugin import hooks\n")


def test_importing_the_door_loads_no_registry_pipeline_or_component() -> None:
    code = "import sys, factcheck.plugin; print('\\n'.join(m for m in sys.modules if m.startswith('factcheck')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    loaded = set(result.stdout.split())
    assert DOOR in loaded
    assert sorted(m for m in loaded if above(m)) == []


def test_the_builtins_take_their_contracts_and_hookimpl_from_the_door_as_a_third_party_does() -> None:
    import factcheck.plugin

    door = set(factcheck.plugin.__all__)
    behind: list[str] = []
    for module in BUILTIN_PLUGINS:
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for node in import_nodes(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(DOOR + "."):
                behind += [f"{module}: {node.module}.{a.name}" for a in node.names if a.name in door]
    assert behind == []


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.M | re.S)


def authors_code() -> list[tuple[str, str]]:
    """The Python a plugin author reads: docs/plugins.md's blocks, the example plugin, the hooks' docstrings."""
    blocks = [
        (f"docs/plugins.md block {i}", b) for i, b in enumerate(python_blocks((ROOT / "docs/plugins.md").read_text()))
    ]
    examples = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "examples").rglob("*.py"))]
    return blocks + examples


@pytest.mark.parametrize(("where", "code"), authors_code(), ids=[where for where, _ in authors_code()])
def test_what_plugin_authors_read_imports_only_the_public_doors(where: str, code: str) -> None:
    ours = {m for m in imported(code) if m == "factcheck" or m.startswith("factcheck.")}
    private = sorted(m for m in ours if m not in PUBLIC and not m.startswith("factcheck.testing."))
    assert private == [], where


def test_the_guide_has_python_blocks_to_check() -> None:
    assert len(python_blocks((ROOT / "docs/plugins.md").read_text())) >= 5


def test_the_hooks_docstrings_name_only_the_doors_classes() -> None:
    named = re.findall(r":class:`([\w.]+)`", (PACKAGE / "plugin" / "hooks.py").read_text())
    assert named
    assert [n for n in named if not n.startswith(("factcheck.plugin.", "click."))] == []


# The services a check shares. Each keeps its part of the check's CheckContext in a context variable
# of its own, and CheckContext (factcheck.context) is composed from those variables: it stands above
# them. factcheck.calls is not among them: it hands each component the whole CheckContext (a method's
# keyword-only ``context``), so it stands above context.py, on the loops below (factcheck.loops).
RUNTIME = (
    "factcheck.interrupt",
    "factcheck.usage",
    "factcheck.cache",
    "factcheck.loops",
    "factcheck.net",
    "factcheck.llm.client",
)
CONTEXT = "factcheck.context"


def test_the_import_graph_of_the_package_has_no_circle() -> None:
    """No two modules of factcheck import each other, directly or through others (a strongly connected
    component of more than one module). The rule: an arrow for each import that runs while a module loads,
    ``if TYPE_CHECKING`` imports included (a type named is a dependency as much as a function called);
    an import inside a function is no arrow (it runs once the modules are loaded: the CLI group adds its
    commands so). ``from p import m`` is an arrow to the module ``p.m`` where there is one, else to ``p``."""
    assert circles(GRAPH.graph(ROOT)) == []


def test_the_check_for_circles_finds_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert "factcheck.llm.client" in arrows("factcheck.context")  # the composition imports the services
    code = "if TYPE_CHECKING:\n    import a\nclass C:\n    import b\ndef f():\n    import c\n"
    assert {node.names[0].name for node in loading_imports(ast.parse(code))} == {"a", "b"}


def test_no_service_of_the_runtime_reaches_the_context_module() -> None:
    """The services are below CheckContext: none imports factcheck.context, directly or through what
    it imports (at the top or inside a function)."""
    reached = {module: reached_from(module) for module in RUNTIME}
    assert sorted(route(seen, CONTEXT) for seen in reached.values() if CONTEXT in seen) == []
    assert all(CONTEXT not in arrows(module) for module in RUNTIME)


def test_the_shape_of_a_graph_stacks_floors_and_counts_the_arrows_inside_a_circle() -> None:
    measured = GRAPH.shape({"a": {"b"}, "b": {"c"}, "c": {"b", "d"}, "d": set()})
    assert measured.floors == {"d": 1, "b": 2, "c": 2, "a": 3}
    assert (measured.height, measured.back_up, measured.circles) == (3, 2, [["b", "c"]])
    picture = GRAPH.mermaid({"factcheck.cli.check": {"factcheck.types"}, "factcheck.types": {"factcheck.pipeline"}})
    assert picture.splitlines()[0] == "flowchart BT" and "front_doors -->|1| domain" in picture
    assert "domain -->|1| check" in picture  # drawn pointing down: an import running back up


def test_no_arrow_runs_from_a_lower_part_of_the_house_to_a_higher_one() -> None:
    """The parts, bottom to top: the domain types, the runtime's services, the helpers they share, the door
    for plugin authors, the components, the registry, the check, the front doors (scripts/import_graph.py)."""
    assert GRAPH.running_up(GRAPH.graph(ROOT)) == []
    assert GRAPH.running_up({"factcheck.types": {"factcheck.pipeline"}}) == ["factcheck.types -> factcheck.pipeline"]


def test_the_rooms_take_a_sub_package_whole() -> None:
    graph = {"factcheck.sources.a": {"factcheck.types", "factcheck.sources.b"}, "factcheck.sources.b": set()}
    assert GRAPH.rooms({**graph, "factcheck.types": set()}) == {
        "factcheck.sources": {"factcheck.types"},
        "factcheck.types": set(),
    }
