"""Named parameters: every number a model uses, with its unit and source.

A :class:`Parameter` is how a model records an assumption so that a report can
list it in its assumptions table. Nothing here computes; it only describes.
"""

from dataclasses import dataclass

from ._units import text_of

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

    def __post_init__(self):
        # its labels are text: Parameter(5, ...) or a None source reached the report's
        # assumptions table as '5' and 'None' (a value may be anything the model records)
        text_of(self.name, "parameter name")
        text_of(self.unit, f"parameter {self.name!r}: unit")
        text_of(self.source, f"parameter {self.name!r}: source")
