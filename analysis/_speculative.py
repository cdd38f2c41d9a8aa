"""Speculative decoding on top of the decode model.

A draft proposes ``k`` tokens; the target model verifies them in one step that
processes ``k + 1`` tokens per sequence. With each drafted token accepted
independently with probability ``a``, the expected number of tokens a cycle
produces is (Leviathan, Kalman, Matias, "Fast Inference from Transformers via
Speculative Decoding", ICML 2023, eq. 1)

``E[tokens] = (1 - a^(k+1)) / (1 - a)``  (``k + 1`` when ``a = 1``),

and a cycle takes ``k x draft time + verification time`` (the terms add: the
draft runs before verification). With verification as fast as a plain step and
a draft costing ``c`` plain steps per token, the speedup is the paper's
``(1 - a^(k+1)) / ((1 - a)(c k + 1))`` (Theorem 3.8). Here the verification
time comes from :func:`~analysis.decode_step` with ``tokens_per_sequence = k+1``,
so a step that is not purely weight-bound (KV, compute, dispatch all grow with
the tokens) caps the gain: ``speedup_bound`` is the speedup at ``a = 1``.

Examples
--------
>>> round(expected_accepted_tokens(4, 0.8), 4)
3.3616
>>> round(speculative_speedup(4, 0.8, 0.05), 4)
2.8013
"""

from dataclasses import dataclass

from fabric import SpecError
from fabric._units import check_count, check_fraction, check_number, show_value

from ._decode import decode_step

__all__ = ["SpeculativeResult", "expected_accepted_tokens", "speculative_decode",
           "speculative_speedup"]


def _check_k(k):
    # numpy integers are integers (taken as plain ints); a bool is not a length
    return check_count(k, "draft_length", 0)


def expected_accepted_tokens(draft_length, acceptance):
    """Expected tokens per verification cycle: ``(1 - a^(k+1)) / (1 - a)``.

    Includes the token the target model always contributes (so ``k = 0`` gives 1).

    Parameters
    ----------
    draft_length : int
        Draft tokens proposed per cycle (``k``), >= 0.
    acceptance : float
        Probability each draft token is accepted (``a``), in [0, 1].

    Returns
    -------
    float
        Tokens.

    Examples
    --------
    >>> expected_accepted_tokens(3, 1.0), expected_accepted_tokens(3, 0.0)
    (4.0, 1.0)
    """
    k, a = _check_k(draft_length), check_fraction("acceptance", acceptance, 0, 1)
    if a == 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def speculative_speedup(draft_length, acceptance, draft_cost):
    """Leviathan et al.'s speedup when verifying costs one plain step.

    ``draft_cost`` is ``c``: the draft's time per token over the target's step time.

    Parameters
    ----------
    draft_length : int
        Draft tokens per cycle (``k``), >= 0.
    acceptance : float
        Probability each draft token is accepted (``a``), in [0, 1].
    draft_cost : float
        ``c``, a ratio of times (>= 0).

    Returns
    -------
    float
        The expected speedup over plain decoding.

    Examples
    --------
    >>> speculative_speedup(0, 0.5, 0.1)
    1.0
    """
    check_number("draft_cost", draft_cost)
    k = _check_k(draft_length)
    return expected_accepted_tokens(k, acceptance) / (draft_cost * k + 1.0)


@dataclass(frozen=True)
class SpeculativeResult:
    """Result of :func:`speculative_decode` (times in seconds).

    Attributes
    ----------
    draft_length, acceptance : int, float
    expected_tokens : float
        Tokens per cycle, per sequence.
    draft_time : float
        Seconds per drafted token.
    base_time, verify_time, cycle_time : float
        Plain decode step; verification step (``k+1`` tokens per sequence);
        ``k * draft_time + verify_time``.
    tokens_per_s_user, tokens_per_s_system : float
    speedup : float
        Over plain decoding, ``tokens_per_s_user * base_time``.
    speedup_bound : float
        The speedup at acceptance 1: ``(k + 1) base_time / cycle_time``.
    base, verify : DecodeStep
    """

    draft_length: int
    acceptance: float
    expected_tokens: float
    draft_time: float
    base_time: float
    verify_time: float
    cycle_time: float
    tokens_per_s_user: float
    tokens_per_s_system: float
    speedup: float
    speedup_bound: float
    base: object
    verify: object


def speculative_decode(model, fabric, *, draft_length, acceptance, batch, context,
                       draft_time=None, draft_cost=None, **decode_kwargs):
    """Effective tokens per second with speculative decoding.

    Parameters
    ----------
    model, fabric, batch, context
        As for :func:`~analysis.decode_step`.
    draft_length : int
        ``k``, tokens drafted per cycle.
    acceptance : float in [0, 1]
        ``a``, probability that a drafted token is accepted.
    draft_time : float, optional
        Seconds per drafted token.
    draft_cost : float, optional
        Or: the draft's time per token as a fraction of the plain step time
        (Leviathan et al.'s ``c``). Give exactly one of the two.
    **decode_kwargs
        Passed to :func:`~analysis.decode_step` (layout, transport, collective, ...).

    Returns
    -------
    SpeculativeResult

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("sd200-ultra")
    >>> s = speculative_decode("kimi-k2", f, draft_length=3, acceptance=0.7, draft_cost=0.05,
    ...                        batch=8, context=4096, layout="tp=8")
    >>> round(s.expected_tokens, 3), s.verify_time >= s.base_time, s.speedup <= s.speedup_bound
    (2.533, True, True)
    """
    k, a = _check_k(draft_length), check_fraction("acceptance", acceptance, 0, 1)
    if (draft_time is None) == (draft_cost is None):
        raise SpecError("give exactly one of draft_time (seconds per drafted token) and "
                        "draft_cost (fraction of a step), got "
                        f"draft_time={show_value(draft_time)}, "
                        f"draft_cost={show_value(draft_cost)}")
    if "tokens_per_sequence" in decode_kwargs:
        raise SpecError("tokens_per_sequence is set by speculative_decode (draft_length + 1)")
    base = decode_step(model, fabric, batch=batch, context=context, **decode_kwargs)
    verify = decode_step(model, fabric, batch=batch, context=context,
                         tokens_per_sequence=k + 1, **decode_kwargs)
    if draft_time is None:
        draft_time = check_number("draft_cost", draft_cost) * base.time
    else:
        check_number("draft_time", draft_time, unit=" seconds")
    tokens = expected_accepted_tokens(k, a)
    cycle = k * draft_time + verify.time
    per_user = tokens / cycle
    return SpeculativeResult(draft_length=k, acceptance=a, expected_tokens=tokens,
                             draft_time=float(draft_time), base_time=base.time,
                             verify_time=verify.time, cycle_time=cycle,
                             tokens_per_s_user=per_user, tokens_per_s_system=per_user * base.batch,
                             speedup=per_user * base.time,
                             speedup_bound=(k + 1) * base.time / cycle, base=base, verify=verify)
