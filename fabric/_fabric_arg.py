"""The one check of a fabric argument: :func:`fabric_arg`.

The public functions that take a :class:`fabric.Fabric` ask :func:`fabric_arg` of it, so a
spec string, ``None`` or a networkx graph where a fabric is due is one TypeError saying what
builds a fabric (``'torus:4x4'`` gave "'str' object has no attribute 'graph'", naming nothing).
The exceptions read a fabric's attributes from any object, as their docstrings say
(:func:`fabric.rack_chips`, :func:`fabric.runtime_arch`; :func:`fabric.unreachable_findings`,
whose no-router branch is tested through a proxy).

It lives in this leaf module, not beside :class:`fabric.Fabric`: ``fabric._fabric`` imports
the modules of ``route``, ``without``, ``layout_regions``, ``loadstore_domains`` ... (its
methods call them), and they could not import it back (``tests/test_imports.py``: no import
cycle). The isinstance test stands on :class:`FabricBase`, an empty base class here that
:class:`fabric.Fabric` is the one subclass of.
"""

from ._units import kind_error

__all__ = []


class FabricBase:
    """The base class of :class:`fabric.Fabric` (and of nothing else): what
    :func:`fabric_arg` tests, in a module every fabric module can import."""

    __slots__ = ()


def fabric_arg(value, what="fabric"):
    """``value`` where a :class:`fabric.Fabric` is due, else a TypeError naming ``what``: a
    spec or preset name (a str) is not built here, and the message says what builds it.

    >>> fabric_arg("torus:4x4")
    Traceback (most recent call last):
    ...
    TypeError: fabric must be a fabric.Fabric (topologies.build makes one from a spec or a
    preset's name), got 'torus:4x4' (a str)
    """
    if not isinstance(value, FabricBase):
        raise kind_error(value, what, "a fabric.Fabric (topologies.build makes one from a spec "
                                      "or a preset's name)")
    return value
