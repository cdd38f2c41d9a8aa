"""Result records are built by keyword (issue 11), from every call in the packages.

A record (a dataclass or ``NamedTuple`` defined in ``fabric``, ``topologies`` or
``analysis``) that an analysis returns has many fields of alike types (seconds, bytes,
counts): built positionally, a reordered field is a silent wrong number. So every such
record is constructed with keyword arguments (one leading positional argument at most).
Exempt are the *specifications* a user or a table writes as literals, whose field order
is their documented signature (``Parameter(value, unit, source)``, ``Column(key,
header, fmt)``, a ``LinkTech``, a structure such as ``Grid(shape, connect, links)``):
:data:`SPECS`.
"""

import ast
import functools

from source_trees import FILES, ROOT, tree

#: Records that are specifications written as literals (inputs), not results.
SPECS = frozenset({
    "Parameter", "Column", "Table", "Section", "FigureSpec", "LinkTech", "WeightFormat",
    "TrafficMatrix", "Runtime", "Protocol", "Clos", "Grid", "Switched", "Dragonfly",
    "Transport", "Window", "Region", "Grant", "DomainLimits", "Layout", "ChipSpec", "System",
    "Fabric", "AddressPlan", "HardwareCosts", "ExchangeKernel", "MoEModel", "GQA", "MLA",
    "_Settings",
})


@functools.cache
def _records():
    """The names of the records (walked when a test first asks, not at collection)."""
    out = set()
    for p in FILES:
        for n in ast.walk(tree(p)):
            if isinstance(n, ast.ClassDef) and (
                    any("dataclass" in ast.unparse(d) for d in n.decorator_list)
                    or any(ast.unparse(b).endswith("NamedTuple") for b in n.bases)):
                out.add(n.name)
    return out


def test_records_are_found():
    assert {"CollectiveCost", "Throughput", "DecodeStep", "Failures", "Access"} <= _records()


def test_result_records_are_built_by_keyword():
    records = _records()
    bad = []
    for p in FILES:
        for n in ast.walk(tree(p)):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            if name in records and name not in SPECS and len(n.args) > 1:
                bad.append(f"{p.relative_to(ROOT)}:{n.lineno} {name}")
    assert not bad, "build these records by keyword: " + ", ".join(bad)
