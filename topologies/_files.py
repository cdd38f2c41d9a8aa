"""System files (TOML) resolved with the topology builders.

:func:`fabric.load_system` reads a system file but cannot resolve its
``topology`` spec on its own: the fabric package does not import the builders.
These wrappers pass :func:`topologies.build`, so that a user writes

>>> import topologies
>>> system = topologies.load_system("examples/sd200-ultra.toml")  # doctest: +SKIP
"""

import fabric

from ._spec import build

__all__ = ["load_system", "read_system"]


def load_system(path):
    """Read a system file; its topology spec is built with :func:`topologies.build`.

    See :func:`fabric.load_system` for the format and the errors.

    Parameters
    ----------
    path : str, bytes or os.PathLike
        A TOML system file (``examples/sd200-ultra.toml`` documents the format).

    Returns
    -------
    fabric.System
        The fabric, its address plan and the findings of values the file gives that cannot
        be read (``fabric.check`` reports them with the rest).
    """
    return fabric.load_system(path, build=build)


def read_system(text, path="<string>"):
    """Read a system from TOML text; see :func:`load_system`.

    Parameters
    ----------
    text, path : str
        As :func:`fabric.read_system`, whose ``build`` is :func:`topologies.build` here.

    Returns
    -------
    fabric.System

    Examples
    --------
    >>> s = read_system('[system]\\ntopology = "torus:4x4,chip=h100"\\n')
    >>> s.fabric.n_endpoints
    16
    """
    return fabric.read_system(text, path, build=build)
