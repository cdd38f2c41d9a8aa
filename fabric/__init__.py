"""cofabric's model: the fabric graph, units, link technologies, addressing and routing.

The public names are re-exported here from underscored modules; each module
declares ``__all__`` and ``tests/test_public_api.py`` pins the set.
"""

from . import (
           _access,
           _address,
           _check,
           _chips,
           _costs,
           _domains,
           _errors,
           _exchange,
           _fabric,
           _failures,
           _forwarding,
           _params,
           _plan,
           _routing,
           _runtime,
           _schema,
           _structure,
           _symmetric,
           _system,
           _tech,
           _transport,
           _units,
)
from ._access import *
from ._address import *
from ._check import *
from ._chips import *
from ._costs import *
from ._domains import *
from ._errors import *
from ._exchange import *
from ._fabric import *
from ._failures import *
from ._forwarding import *
from ._params import *
from ._plan import *
from ._routing import *
from ._runtime import *
from ._schema import *
from ._structure import *
from ._symmetric import *
from ._system import *
from ._tech import *
from ._transport import *
from ._units import *

#: cofabric's version, written once here (``setup.cfg`` reads it; ``cofabric --version``).
__version__ = "0.1.0"

__all__ = (_errors.__all__ + _units.__all__ + _params.__all__ + _schema.__all__
           + _tech.__all__ + _chips.__all__ + _structure.__all__ + _fabric.__all__
           + _routing.__all__ + _transport.__all__ + _runtime.__all__ + _exchange.__all__
           + _failures.__all__ + _access.__all__
           + _forwarding.__all__
           + _address.__all__ + _plan.__all__ + _domains.__all__ + _symmetric.__all__
           + _system.__all__ + _check.__all__ + _costs.__all__)
