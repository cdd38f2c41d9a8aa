"""Audit session 9: the closed-loop benchmark simulation against a step-by-step brute force.

analysis._serving._run_steps jumps over runs of decode-only steps (to the next completion);
the reference below takes every engine step one at a time, with the same rules stated in
its docstring: at most ``concurrency`` requests in flight, the next request sent when one
completes, each step one decode token per request past its prefill plus prompt chunks
first come first served in the rest of the token budget.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._serving import _run_steps


def _reference(ins, outs, concurrency, budget, decode_seconds, prefill_per_token):
    n = len(ins)
    start, first, end = [None] * n, [None] * n, [None] * n
    prompt_left = list(ins)
    out_left = [o - 1 for o in outs]          # tokens after the first
    t, steps, sent = 0.0, 0, 0
    live = []                                  # requests sent and not finished, in send order
    while any(e is None for e in end):
        while sent < n and len(live) < concurrency:
            start[sent] = t
            live.append(sent)
            sent += 1
        decoding = [i for i in live if first[i] is not None]
        left = budget - len(decoding)
        chunk, finished = 0, []
        for i in live:
            if first[i] is None and left > 0:
                take = min(prompt_left[i], left)
                prompt_left[i] -= take
                left -= take
                chunk += take
                if prompt_left[i] == 0:
                    finished.append(i)
        b = len(decoding)
        t += (decode_seconds(b) if b else 0.0) + chunk * prefill_per_token
        steps += 1
        for i in decoding:
            out_left[i] -= 1
            if out_left[i] == 0:
                end[i] = t
        for i in finished:
            first[i] = t
            if out_left[i] == 0:
                end[i] = t
        live = [i for i in live if end[i] is None]
    return start, first, end, steps


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 12)), min_size=1, max_size=12),
       st.integers(1, 6), st.integers(0, 40), st.sampled_from([0.25, 0.5, 1.0]),
       st.sampled_from([0.0, 0.125, 0.5]))
def test_run_steps_is_the_step_by_step_simulation(reqs, concurrency, extra, base, per_token):
    ins, outs = [r[0] for r in reqs], [r[1] for r in reqs]
    budget = concurrency + extra

    def decode_seconds(b):           # exact in binary: sums are order-free
        return base + 0.125 * b

    got = _run_steps(ins, outs, concurrency, budget, decode_seconds, per_token)
    want = _reference(ins, outs, concurrency, budget, decode_seconds, per_token)
    assert got == want
