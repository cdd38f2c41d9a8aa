"""Import hygiene, from every import statement in the packages (function-level ones included).

* ``fabric`` (the model) imports neither ``topologies`` nor ``analysis``, and
  ``topologies`` does not import ``analysis``.
* No import cycle between modules. (A module importing its own package's root, as the
  CLI modules do with ``from analysis import metrics`` at call time, reaches the public
  names the package re-exports; it is not counted as an edge.)
* No module imports another module's private name (a leading underscore): what one module
  needs of another is a public name of that module (public within the package: it need not
  be in the package's ``__all__``).
"""

import ast
import functools

import networkx as nx
from source_trees import PACKAGES, ROOT, tree


def _modules():
    mods = {}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).glob("*.py")):
            mods[pkg if p.stem == "__init__" else f"{pkg}.{p.stem}"] = p
    return mods


MODULES = _modules()


def _target(mod, node):
    """The absolute module an ``ImportFrom`` names."""
    if not node.level:
        return node.module
    parts = mod.split(".")
    pkg = parts if MODULES[mod].name == "__init__.py" else parts[:-1]
    pkg = pkg[:len(pkg) - (node.level - 1)]
    return ".".join(pkg + ([node.module] if node.module else []))


@functools.cache
def _imports():
    """(importer, imported module, imported name or None) for every import statement (walked
    when a test first asks, not at collection: every pytest-xdist worker collects this file)."""
    out = []
    for mod, path in MODULES.items():
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.Import):
                out += [(mod, a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _target(mod, node)
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.append((mod, sub, None) if sub in MODULES else (mod, target, a.name))
    return out


def test_every_module_is_parsed():
    assert len(MODULES) > 40 and len(_imports()) > 200


def test_fabric_imports_neither_other_package():
    bad = [(m, t) for m, t, _ in _imports() if m.split(".")[0] == "fabric"
           and t and t.split(".")[0] in ("topologies", "analysis")]
    bad += [(m, t) for m, t, _ in _imports() if m.split(".")[0] == "topologies"
            and t and t.split(".")[0] == "analysis"]
    assert not bad, bad


def test_no_import_cycle():
    G = nx.DiGraph()
    for m, t, _ in _imports():
        if t in MODULES and t != m and t not in PACKAGES:
            G.add_edge(m, t)
    cycles = list(nx.simple_cycles(G))
    assert not cycles, cycles


def test_no_private_name_crosses_modules():
    found = {(m, t, n) for m, t, n in _imports()
             if n and n.startswith("_") and t in MODULES and t != m}
    assert not found, f"import the public name instead (or make one): {sorted(found)}"
