"""Topology builders: spec strings and parameters -> :class:`fabric.Fabric`.

>>> import topologies
>>> topologies.build("sd200-ultra").n_endpoints
128
"""

from fabric import SpecError

from . import _clos, _files, _hypermesh, _presets, _spec, _switched
from ._clos import *  # noqa: F401,F403
from ._files import *  # noqa: F401,F403
from ._hypermesh import *  # noqa: F401,F403
from ._presets import *  # noqa: F401,F403
from ._spec import *  # noqa: F401,F403
from ._switched import *  # noqa: F401,F403

__all__ = (["SpecError"] + _hypermesh.__all__ + _clos.__all__ + _switched.__all__
           + _spec.__all__ + _presets.__all__ + _files.__all__)
