"""The exception tree of cofabric.

Every error the library raises on purpose about a value that is malformed, unknown or out of
range is a :class:`FabricError`. The subclasses that describe bad values also derive from
:class:`ValueError`, so code that already catches ``ValueError`` keeps working.

A value of the wrong KIND (a float, a string, a bool or None where a count goes) is Python's
own :class:`TypeError`, as Python's functions raise it; counts are checked by one helper,
``fabric._units.check_count`` (session 31), which the address functions share (session 32):
an address, offset, rank, interleave position or ways of the wrong kind
(``mem.address(0, 1.0)``, ``amap.lookup(2.5)``, a float array) is a TypeError, one out of
range their domain's error (AddressMapError, NodeError for a rank, TranslationError for a
host-local address). A choice from a set (interleave ways, a runtime's split rule) the same:
4.0 is a TypeError, 5 the domain's error. The models' numbers likewise
(``fabric._units.check_number`` / ``check_fraction``: ``skew='1'`` or ``True`` is a TypeError,
``skew=-1`` or nan a SpecError). Text from
a spec or a file is a value: a spec's ``links=2.5`` or an address ``'0xZZ'`` is a SpecError or
AddressMapError, and the file readers name a TypeError of a field as a SpecError with the
path, so the CLI still reports bad input on one line. Labels too (session 33): a record's
name, source or description, and a choice's name before its set (a chip's generation, a
runtime's kind), is a str or a TypeError (``fabric._units.text_of``); a refused value's kind
is written one way, "(an int)" (``fabric._units.kind_of``).

Decided, and kept (session 33):

- ``Fabric.node(x)`` answers a NodeError for ANY name it does not find, ``1.0``, ``True`` or
  ``[1]`` included: node names are any hashable (``from_graph`` takes a networkx graph, whose
  nodes may be named ``1.0``), so a miss is a lookup's value; only ranks are ints (``1.0`` is
  not read as rank 1, ``True`` not as rank 1).
- A graph's attributes (``Fabric.from_graph``) of any wrong kind (a bandwidth ``"25GB/s"``)
  are a GraphError: the graph is data checked as a whole against the schema, each fault
  naming its edge or node (as a file's fields are SpecErrors naming the file), not an
  argument.
- ``cost(size=1.5)`` prices 1.5 bytes: a size in bytes is a real number >= 1 (a computed split
  such as a total over p ranks need not be whole; below one byte is refused); TEXT such as
  ``"1.5"`` or ``"1.3B"`` must be whole bytes (``parse_size``: a written size is exact).
- ``kernel_floors`` that is no mapping is a TypeError (was a SpecError).

Decided (session 34):

- An empty sequence holds no value of a wrong kind: ``[]`` or ``()`` where integers go (ranks,
  offsets, interleave positions, experts' owners) is no item, an empty answer, as an empty
  array of any dtype already was for ``lookup_many``. numpy reads ``[]`` as float64, which
  ``fabric._address.whole_numbers`` refused as a TypeError (``interleave_target([], 2, 256)``,
  ``mem.addresses([], [])``) while ``expected_max_active([], [], 4)`` special-cased it to 0.0:
  one rule now, in ``whole_numbers`` (a non-empty float array is still a TypeError).
- A refused value is quoted through ``fabric._units.show_value``, the one abbreviation: whole
  when short (its ``repr``), its head and its length past 80 characters. A 5000-character spec,
  node name or choice was echoed in full (5-10 KB error lines, a spec quoted twice).
- Names before ranks, and ints are ranks (lead, board 15:06): a string or tuple that names a
  node, live or failed, is that node (a failed chip named "2" is not rank 2; ``without(chips=
  (0, 1))`` on networkx's grid is node (0, 1)); an int is always a rank, so ``Fabric.from_graph``
  refuses a graph with a node named by an int that is ANOTHER chip's rank (networkx's
  ``star_graph``: hub 0, chips 1..n), a GraphError naming the node, the rank it reads as and
  the fix (strings, or ints equal to their ranks).

Decided (session 37):

- A choice from a set of names is checked by one helper, ``fabric._units.check_choice``:
  its kind first (``text_of``'s TypeError), then ONE class, a SpecError (a ValueError, so a
  caller catching ValueError still does), in one sentence: "x must be one of a, b, c, got
  'd'" (the choices joined, a set's sorted; the value by ``show_value``). Twenty-odd sites had
  written it by hand with ValueError or SpecError, the choices as a tuple's repr, a list or
  joined, "got d" or "got x=d". A lookup of an open table by name (a chip, a runtime, a
  model, a traffic pattern) keeps its own sentence, "unknown x 'd'; known: ...".
- A number's check is ``fabric._units.check_number``, not its test written out with
  ``error_for`` (its ``rule=`` of then is gone since session 38: ``unit=`` names what is
  counted, " rows per group").

Decided (session 38):

- A choice's refusal is one text, ``fabric._units.choice_fault``, which ``check_choice``
  raises and a list of faults (a plan's layout, a file's limits) holds; a numeric choice (CXL
  interleave ways) is a count first (``check_count``'s TypeError), then the set.
- A lookup of an open table by name (a chip, a runtime, a model, a traffic pattern, a
  kernel, a cost book, a file's tables and keys, a report's sections) is one sentence too,
  ``fabric._units.unknown_fault``: "unknown x 'd'; known: a, b, c", the known names SORTED
  (~20 sites had written it, in order or sorted, as a list's repr or joined, with "allowed"
  or "known"); ``fabric._units.lookup`` is the lookup itself (the name's kind first). A
  context goes before it ("router_limit: ", "no measured peer-load latency: "), a further
  choice after it (", or native (...)").
- ``check_number``'s ``rule=`` is gone: its words are derived from ``minimum``, ``strict``
  and ``unit`` (four callers restated them); ``minimum=None`` is any finite number.
- An array of integers is checked by ``fabric._arrays.integer_array`` (its dtype's one
  sentence, "x must be integers, got an array of dtype float64").
- An address is an integer or address text, never a float (lead, board 01:21): parse_address
  and a system file's address keys refuse one by kind, as validate_address did.
"""

__all__ = [
    "AddressMapError",
    "FabricError",
    "GraphError",
    "NodeError",
    "RoutingError",
    "SpecError",
    "TranslationError",
]


class FabricError(Exception):
    """Root of every error cofabric raises on purpose."""


class SpecError(FabricError, ValueError):
    """A spec, name, quantity or parameter given to cofabric is malformed, unknown or out of range."""


class GraphError(FabricError, ValueError):
    """A graph does not follow the fabric attribute schema."""


class NodeError(FabricError, ValueError):
    """A node or rank named by the caller is not in the fabric."""


class AddressMapError(FabricError, ValueError):
    """An address plan is invalid, or an address is not mapped."""


class TranslationError(FabricError, ValueError):
    """A host-local address cannot be translated, or the access is not granted."""


class RoutingError(FabricError, ValueError):
    """No route exists between two nodes, or a route would use a dead link."""


# Show the public location in tracebacks and reprs (fabric.SpecError, not fabric._errors...).
for _cls in (FabricError, SpecError, GraphError, NodeError, AddressMapError, TranslationError, RoutingError):
    _cls.__module__ = "fabric"
del _cls
