"""Everything computed over a Fabric: metrics, traffic, collectives, decode, reports, CLI.

Public names are re-exported from underscored modules; each declares ``__all__``.
"""

from . import (
           _bom,
           _closed_form,
           _collectives,
           _decode,
           _engine_allreduce,
           _export,
           _failure_cost,
           _fair,
           _gemm,
           _metrics,
           _models,
           _moe_exchange,
           _plots,
           _progress,
           _provenance,
           _report,
           _scaling,
           _schedules,
           _schedules_multi,
           _serving,
           _speculative,
           _style,
           _sweep,
           _throughput,
           _traffic,
)
from ._bom import *
from ._closed_form import *
from ._collectives import *
from ._decode import *
from ._engine_allreduce import *
from ._export import *
from ._failure_cost import *
from ._fair import *
from ._gemm import *
from ._gemm_measured import *
from ._metrics import *
from ._mla_measured import *
from ._models import *
from ._moe_exchange import *
from ._plots import *
from ._progress import *
from ._provenance import *
from ._report import *
from ._scaling import *
from ._schedules import *
from ._schedules_multi import *
from ._serving import *
from ._speculative import *
from ._style import *
from ._sweep import *
from ._throughput import *
from ._traffic import *

__all__ = ([] + _metrics.__all__ + _style.__all__ + _progress.__all__ + _sweep.__all__ + _plots.__all__ + _report.__all__ + _models.__all__ + _moe_exchange.__all__ + _decode.__all__ + _speculative.__all__
           + _serving.__all__ + _engine_allreduce.__all__
           + _closed_form.__all__ + _schedules.__all__ + _schedules_multi.__all__
           + _collectives.__all__
           + _traffic.__all__ + _throughput.__all__ + _bom.__all__
           + _fair.__all__ + _gemm.__all__ + _provenance.__all__ + _export.__all__
           + _scaling.__all__ + _failure_cost.__all__)
