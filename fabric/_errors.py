"""The exception tree of cofabric.

Every error the library raises on purpose is a :class:`FabricError`. The
subclasses that describe bad values also derive from :class:`ValueError`, so
code that already catches ``ValueError`` keeps working.
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
