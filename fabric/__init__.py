"""cofabric's model: the fabric graph, units, link technologies, addressing and routing.

The public names are re-exported here from underscored modules; each module
declares ``__all__`` and ``tests/test_public_api.py`` pins the set.
"""

from . import _chips, _errors, _fabric, _params, _schema, _tech, _units
from . import _access, _failures, _forwarding, _routing, _transport
from . import _address, _check, _domains, _symmetric, _system
from ._chips import *  # noqa: F401,F403
from ._errors import *  # noqa: F401,F403
from ._fabric import *  # noqa: F401,F403
from ._params import *  # noqa: F401,F403
from ._schema import *  # noqa: F401,F403
from ._tech import *  # noqa: F401,F403
from ._units import *  # noqa: F401,F403
from ._address import *  # noqa: F401,F403
from ._domains import *  # noqa: F401,F403
from ._symmetric import *  # noqa: F401,F403
from ._system import *  # noqa: F401,F403
from ._check import *  # noqa: F401,F403
from ._access import *  # noqa: F401,F403
from ._failures import *  # noqa: F401,F403
from ._forwarding import *  # noqa: F401,F403
from ._routing import *  # noqa: F401,F403
from ._transport import *  # noqa: F401,F403

__all__ = (_errors.__all__ + _units.__all__ + _params.__all__ + _schema.__all__
           + _tech.__all__ + _chips.__all__ + _fabric.__all__
           + _routing.__all__ + _transport.__all__ + _failures.__all__ + _access.__all__
           + _forwarding.__all__
           + _address.__all__ + _domains.__all__ + _symmetric.__all__ + _system.__all__
           + _check.__all__)
