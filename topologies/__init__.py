"""Topology builders: spec strings and parameters -> :class:`fabric.Fabric`.

>>> import topologies
>>> topologies.build("sd200-ultra").n_endpoints
128
"""

from fabric import SpecError

from . import _clos, _files, _hypermesh, _presets, _spec, _switched
from ._clos import *
from ._files import *
from ._hypermesh import *
from ._presets import *
from ._spec import *
from ._switched import *

__all__ = (["SpecError"] + _hypermesh.__all__ + _clos.__all__ + _switched.__all__
           + _spec.__all__ + _presets.__all__ + _files.__all__)
