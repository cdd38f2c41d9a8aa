"""Message sizes and size ranges: the one reader of ``cofabric cost --size``,
``cofabric report --sizes`` and ``analysis.report(sizes=...)``.

Units: a plain number is bytes; ``B``, ``kB``, ``MB``, ``GB``, ``TB`` are powers of
1000 and ``KiB``, ``MiB``, ``GiB``, ``TiB`` powers of 1024 (the units
:func:`fabric.parse_size` reads); a size is a whole number of bytes, > 0 (or 0 where the
caller asks for an empty operation: ``cofabric cost``) and at most 2**63 - 1
(:data:`fabric._schema.MAX_BYTES`, the most :func:`analysis.cost` takes).

A token is a size (``4096``, ``1MiB``), a comma-separated list of tokens
(``1KiB,2KiB``) or a range ``START:STOP[:STEP]``, STOP included, STEP ``xF``
(multiply by a number F > 1, rounding to whole bytes; the default ``x2``) or
``+S`` (add the size S): ``1KiB:1GiB:x2`` is the 21 powers of two from 1 KiB to
1 GiB. The result is sorted, without repeats.

Examples
--------
>>> parse_sizes(["1KiB:8KiB", "100"])
[100, 1024, 2048, 4096, 8192]
>>> parse_sizes("1KiB:4KiB:+1KiB,2KiB")
[1024, 2048, 3072, 4096]
>>> parse_sizes("1MB:4MB:x1.5")
[1000000, 1500000, 2250000, 3375000]
"""

from fabric import SpecError, parse_size
from fabric._schema import MAX_BYTES
from fabric._units import flag_of, is_bool, is_real, parse_real, sequence_of, show_value

__all__ = ["MAX_SIZES", "parse_sizes"]

#: Most sizes one call gives: a longer range is almost certainly a typo (``x1.0000001``).
MAX_SIZES = 10_000


def parse_sizes(values, zero=False):
    """Sizes in bytes, sorted and without repeats, from size and range tokens.

    Parameters
    ----------
    values : str, number, or sequence (not a set) of str and numbers
        Tokens as the module docstring describes (a number is bytes, a whole number:
        ``4096.0`` is 4096 bytes, ``4096.5`` refused, as :func:`fabric.parse_size` reads it).
    zero : bool, default False
        Whether a size (not a range's START or STOP) may be 0: ``cofabric cost --size 0``
        asks what :func:`analysis.cost` answers for an empty operation; a sweep's sizes
        (``cofabric report --sizes``, a log axis) stay > 0.

    Raises
    ------
    fabric.SpecError
        (a ``ValueError``) naming the token and the rule it breaks: a size that does
        not parse, is <= 0 (< 0 with ``zero``) or is above 2**63 - 1 bytes, a malformed
        range, a STOP below START, a bad step, more than :data:`MAX_SIZES` sizes, no size at
        all. A long token is quoted shortened (:func:`fabric._units.show_value`).
    TypeError
        For ``values`` that are neither a token nor a sequence of them (``None``, a set), a
        bool for a size, ``zero`` not a bool.

    Examples
    --------
    >>> parse_sizes(["1KiB:1GiB"])[:3], len(parse_sizes(["1KiB:1GiB"]))
    ([1024, 2048, 4096], 21)
    >>> parse_sizes("0,1KiB", zero=True)
    [0, 1024]
    """
    zero = flag_of(zero, "zero")            # 'yes' or 1 is not read by its truth
    # one token given bare is read as the list of it: one number, one rule (a bare
    # np.int64(4096) or 4096.0 was refused while [np.int64(4096)] and [4096.0] were read);
    # a bool reaches parse_size's own refusal
    if isinstance(values, str) or is_real(values) or is_bool(values):
        values = [values]
    values = sequence_of(values, "sizes", "sizes (text such as '1KiB:1GiB' or bytes)")
    out = set()
    for tok in values:
        if isinstance(tok, str):
            parts = [p.strip() for p in tok.split(",")]
            if not any(parts):
                raise SpecError(f"size {show_value(tok)}: no size given")
        else:
            parts = [tok]
        for part in parts:
            if part == "":
                continue
            if isinstance(part, str) and ":" in part:
                out.update(_range(part))
            else:
                out.add(_positive(part, part, zero))
            if len(out) > MAX_SIZES:
                raise SpecError(f"sizes: more than {MAX_SIZES} sizes (at {show_value(part)})")
    if not out:
        raise SpecError("sizes: give at least one size")
    return sorted(out)


def _positive(value, token, zero=False):
    n = parse_size(value)
    if n < 0 or (n == 0 and not zero):
        raise SpecError(f"size {show_value(token)} must be > 0 bytes")
    if n > MAX_BYTES:
        raise SpecError(f"size {show_value(token)} must be at most 2**63 - 1 bytes (an int64), "
                        "as for an access (route, latency)")
    return n


def _range(token):
    fields = [f.strip() for f in token.split(":")]
    if len(fields) not in (2, 3):
        raise SpecError(f"size range {show_value(token)} must be START:STOP or START:STOP:STEP")
    try:
        start = _positive(fields[0], fields[0])
        stop = _positive(fields[1], fields[1])
    except SpecError as e:          # name the range, not only its field
        raise SpecError(f"size range {show_value(token)}: {e}") from None
    if stop < start:
        raise SpecError(f"size range {show_value(token)}: STOP is below START")
    step = fields[2] if len(fields) == 3 else "x2"
    sizes = []
    if step[:1] in ("x", "*"):
        try:
            factor = parse_real(step[1:], "")   # ASCII digits, as the sizes themselves
        except SpecError:
            raise SpecError(f"size range {show_value(token)}: step {show_value(step)} must be "
                            "xF with a number F > 1") from None
        if not factor > 1 or factor == float("inf"):
            raise SpecError(f"size range {show_value(token)}: the factor must be > 1 and finite, "
                            f"got {show_value(step)}")
        for k in range(MAX_SIZES + 2):      # a step count, not a size count: x1.0000001
            if factor.is_integer():          # exact: 1KiB:1EiB:x2 has no float rounding
                v = start * int(factor) ** k
            else:
                try:
                    v = round(start * factor ** k)
                except OverflowError:
                    break
            if v > stop:
                break
            if not sizes or v != sizes[-1]:
                sizes.append(v)
        else:
            raise SpecError(f"size range {show_value(token)} takes more than {MAX_SIZES} steps")
    elif step[:1] == "+":
        try:
            inc = _positive(step[1:], step)
        except SpecError as e:
            raise SpecError(f"size range {show_value(token)}: the increment "
                            f"{show_value(step)}: {e}") from None
        if (stop - start) // inc >= MAX_SIZES:
            sizes = range(MAX_SIZES + 1)          # too many: refused below, never built
        else:
            sizes = list(range(start, stop + 1, inc))
    else:
        raise SpecError(f"size range {show_value(token)}: step {show_value(step)} must be xF "
                        "(multiply) or +S (add)")
    if len(sizes) > MAX_SIZES:
        raise SpecError(f"size range {show_value(token)} gives more than {MAX_SIZES} sizes")
    return sizes
