"""The 'degraded == built so' oracle (audit, sessions 19-20): a fabric degraded by failures and
the fabric a spec builds with what is left are one graph, so every higher layer must price
them alike. Shared by tests/test_audit_s19_degraded.py (switched nodes) and
tests/test_audit_s20_rail_degraded.py (rail clusters)."""

import pathlib

import analysis
from fabric import FabricError

SMALL = str(pathlib.Path(__file__).parent / "data" / "model_small.toml")


def same(a, b):
    """Whether ``a()`` and ``b()`` agree: equal floats (to 1e-12), or both refused alike."""
    try:
        x = a()
    except FabricError as e:
        x = ("refused", type(e).__name__)
    try:
        y = b()
    except FabricError as e:
        y = ("refused", type(e).__name__)
    return x == y or (isinstance(x, float) and isinstance(y, float)
                      and abs(x - y) <= 1e-12 * max(abs(x), abs(y)))


def collective_alike(g, h, op, size, runtime):
    return same(lambda: analysis.cost(g, op, size, runtime=runtime).time,
                lambda: analysis.cost(h, op, size, runtime=runtime).time)


def exchange_alike(g, h, kernel, tokens, routing):
    """Every live rank an EP rank, DeepSeek-V3's shapes, FP8 dispatch and BF16 combine."""
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2, "routing": routing}

    def run(fab):
        r = analysis.moe_exchange(fab, "deepseek-v3", tokens, fab.n_endpoints, **kw)
        return r.dispatch + r.combine

    return same(lambda: run(g), lambda: run(h))


def decode_serving_prefill_alike(g, h, batch, layout):
    """The small model's decode step, serving point and prefill under ``layout``."""
    kw = {"layout": layout}
    return (same(lambda: analysis.decode_step(SMALL, g, batch=batch, context=2048, **kw).time,
                 lambda: analysis.decode_step(SMALL, h, batch=batch, context=2048, **kw).time)
            and same(lambda: analysis.serving_point(SMALL, g, isl=512, osl=256, batch=batch,
                                                    **kw).tpot,
                     lambda: analysis.serving_point(SMALL, h, isl=512, osl=256, batch=batch,
                                                    **kw).tpot)
            and same(lambda: analysis.prefill_time(SMALL, g, isl=512, **kw).total,
                     lambda: analysis.prefill_time(SMALL, h, isl=512, **kw).total))
