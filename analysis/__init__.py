"""Everything computed over a Fabric: metrics, traffic, collectives, decode, reports, CLI.

Public names are re-exported from underscored modules; each declares ``__all__``.
"""

__all__ = []
