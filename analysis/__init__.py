"""Everything computed over a Fabric: metrics, traffic, collectives, decode, reports, CLI.

Public names are re-exported from underscored modules; each declares ``__all__``.
"""

from . import _metrics
from . import _style
from . import _progress
from . import _sweep
from . import _plots
from . import _report
from . import _models
from . import _decode
from . import _speculative
from . import _closed_form
from . import _schedules
from . import _collectives
from . import _traffic
from . import _throughput
from ._metrics import *  # noqa: F401,F403
from ._style import *  # noqa: F401,F403
from ._progress import *  # noqa: F401,F403
from ._sweep import *  # noqa: F401,F403
from ._plots import *  # noqa: F401,F403
from ._report import *  # noqa: F401,F403
from ._models import *  # noqa: F401,F403
from ._decode import *  # noqa: F401,F403
from ._speculative import *  # noqa: F401,F403
from ._closed_form import *  # noqa: F401,F403
from ._schedules import *  # noqa: F401,F403
from ._collectives import *  # noqa: F401,F403
from ._traffic import *  # noqa: F401,F403
from ._throughput import *  # noqa: F401,F403

__all__ = ([] + _metrics.__all__ + _style.__all__ + _progress.__all__ + _sweep.__all__ + _plots.__all__ + _report.__all__ + _models.__all__ + _decode.__all__ + _speculative.__all__
           + _closed_form.__all__ + _schedules.__all__ + _collectives.__all__
           + _traffic.__all__ + _throughput.__all__)
