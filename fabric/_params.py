"""Named parameters: every number a model uses, with its unit and source.

A :class:`Parameter` is how a model records an assumption so that a report can
list it in its assumptions table. Nothing here computes; it only describes.
"""

from dataclasses import dataclass

__all__ = ["Parameter"]


@dataclass(frozen=True)
class Parameter:
    """One named model parameter.

    Parameters
    ----------
    name : str
        Short identifier, e.g. ``"sd200.link.latency"``.
    value : float or int or str
        The value in SI units (bytes, seconds, bytes/s).
    unit : str
        The unit of ``value`` (``"B/s"``, ``"s"``, ``"B"``, ``""`` for a count).
    source : str
        Where the number comes from; says "assumption" when it is one.

    Examples
    --------
    >>> Parameter("nvlink4.bandwidth", 25e9, "B/s", "NVIDIA/nccl-tests issue 212").unit
    'B/s'
    """

    name: str
    value: object
    unit: str
    source: str
