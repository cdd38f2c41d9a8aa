"""Units: the one place where human quantities are parsed and printed.

Internally cofabric is SI throughout: sizes in bytes (``int``), times in
seconds, bandwidths in bytes per second **per direction**. This module turns
strings such as ``"96GiB"``, ``"400Gb/s"``, ``"0.69us"`` or ``"0x4000_0000"``
into those numbers and back. Decimal prefixes are powers of ten (``GB = 10**9``,
as nccl-tests and link data sheets use), binary prefixes powers of two
(``GiB = 2**30``). A lowercase ``b`` is a bit, an uppercase ``B`` a byte.

Examples
--------
>>> parse_size("96GiB")
103079215104
>>> parse_bandwidth("400Gb/s")
50000000000.0
>>> parse_time("0.69us")
6.9e-07
>>> parse_address("0x4000_0000")
1073741824
>>> format_size(3 * GiB)
'3GiB'
>>> format_bandwidth(450e9)
'450GB/s'
>>> format_time(6.9e-07)
'690ns'
"""

import functools
import math
import numbers
import re
import sys
from collections.abc import Mapping
from fractions import Fraction

from ._errors import SpecError

__all__ = [
    "GB",
    "MB",
    "PB",
    "TB",
    "GiB",
    "KiB",
    "MiB",
    "PiB",
    "TiB",
    "format_address",
    "format_bandwidth",
    "format_size",
    "format_time",
    "kB",
    "ms",
    "ns",
    "parse_address",
    "parse_bandwidth",
    "parse_size",
    "parse_time",
    "us",
]

kB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12
PB = 10**15
KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40
PiB = 2**50

ns = 1e-9
us = 1e-6
ms = 1e-3

_DECIMAL = {"": 1, "k": kB, "K": kB, "M": MB, "G": GB, "T": TB, "P": PB}
_BINARY = {"Ki": KiB, "Mi": MiB, "Gi": GiB, "Ti": TiB, "Pi": PiB}
_TIME = {"s": 1, "ms": 10**3, "us": 10**6, "µs": 10**6, "ns": 10**9, "ps": 10**12}  # divisors

#: ASCII digits, one ``_`` allowed between two (``1_024``): :func:`parse_integer`'s grouping.
_GROUPED = r"[0-9]+(?:_[0-9]+)*"
_NUMBER = (rf"([+-]?{_GROUPED}(?:\.(?:{_GROUPED})?)?(?:[eE][+-]?[0-9]+)?"
           rf"|[+-]?\.{_GROUPED}(?:[eE][+-]?[0-9]+)?)")
_QUANTITY = re.compile(r"^\s*" + _NUMBER + r"\s*([A-Za-zµ/]*)\s*$")


def _split(text, what):
    if not isinstance(text, str):
        raise kind_error(text, what, "a string or a number")
    m = _QUANTITY.match(text)
    if not m and re.fullmatch(r"\s*[+-]?0[xX][0-9a-fA-F_]*\s*", text):
        raise SpecError(f"cannot read {what} {show_value(text)}: a {what} is decimal with an "
                        f"optional unit; hex is read only as an address")
    if not m:
        raise SpecError(f"cannot read {what} {show_value(text)}: expected a number and a unit")
    # Exact rational arithmetic: "9007199254740993B" and "5.85ms" come out exact or
    # correctly rounded, which a float product would not guarantee.
    try:
        return Fraction(m.group(1).replace("_", "")), m.group(2)
    except ValueError:        # Python reads no integer of more than 4300 digits
        raise SpecError(f"cannot read {what} {show_value(text)}: a number of more than 4300 "
                         "digits is no quantity") from None


def _fits_float(result, what, text):
    """``result`` (an exact Fraction), refused when no float holds it: every model computes
    in floats, so ``"1e400"`` would overflow in the first division."""
    if abs(result) > _LARGEST_FLOAT:
        raise SpecError(f"cannot read {what} {show_value(text)}: larger than the largest float "
                        f"({float(_LARGEST_FLOAT):.4g})")
    return result


_LARGEST_FLOAT = Fraction(1.7976931348623157e308)


def _number(value, what):
    """``value``, a plain number where a ``what`` (size, bandwidth, time) may be text or a
    number: a real one (:func:`is_real`; np.True_ was read as 1 byte, None and a list raised
    Python's "must be real number" naming nothing) that a float holds (10**400: a bare
    OverflowError), else a TypeError or a SpecError naming ``what``."""
    if not is_real(value):
        raise kind_error(value, what, f"a number or text such as {_EXAMPLES[what]!r}")
    if not is_finite(value):
        raise SpecError(f"{what} must be a finite number within a float's range, got "
                        f"{show_value(value)}")
    return value


#: What :func:`_number`'s message shows as the text its readers take.
_EXAMPLES = {"size": "4KiB", "bandwidth": "400Gb/s", "time": "0.69us"}


def _byte_multiplier(unit, what, text):
    # unit is the part before an optional '/s': '', 'B', 'KiB', 'kB', 'b', 'Gb'...
    if unit == "":
        return 1, 8
    bits = unit.endswith("b")
    if not unit.endswith(("B", "b")):
        raise SpecError(f"cannot read {what} {show_value(text)}: unknown unit {show_value(unit)}")
    prefix = unit[:-1]
    if prefix in _BINARY:
        mult = _BINARY[prefix]
    elif prefix in _DECIMAL:
        mult = _DECIMAL[prefix]
    else:
        raise SpecError(f"cannot read {what} {show_value(text)}: unknown prefix "
                        f"{show_value(prefix)}")
    return mult, (1 if bits else 8)


@functools.cache
def _integer_re(hex=False, grouping=False, signed=False):
    """The regular expression of an integer written as text (see :func:`parse_integer`)."""
    def digits(d):       # with grouping, _GROUPED's rule for digits d
        return f"{d}+(?:_{d}+)*" if grouping else f"{d}+"
    number = digits("[0-9]")
    if hex:
        # a decimal number has no leading zero: C and Python 2 read 0777 as octal
        number = f"0[xX]{digits('[0-9a-fA-F]')}|0|[1-9]{'(?:_?[0-9])*' if grouping else '[0-9]*'}"
    return re.compile(("-?" if signed else "") + f"(?:{number})")


def integer_form(hex=False, grouping=False):
    """What :func:`parse_integer` takes, as its error message says it (a sign is not
    mentioned: where one is read, a negative number meets its own range check)."""
    return ("ASCII digits 0-9" + (", or hex after 0x" if hex else "")
            + ("; one '_' may split two groups of digits" if grouping else ""))


def parse_integer(text, what, *, hex=False, grouping=False, signed=False):
    """Return the ``int`` that ``text`` writes: the one reader of integers written as text.

    A number is ASCII decimal digits (``"12"``); with ``signed`` a ``-`` may come first;
    with ``hex`` also ``0x`` and hex digits (``"0x4000"``), and then a decimal number has
    no leading zero (C reads ``0777`` as octal); with ``grouping`` one ``_`` may stand
    between two digits (``"0x4000_0000"``, ``"1_024"``). Surrounding spaces are ignored.
    ``int()`` would also read other scripts' digits (``"\u0664\u0663"`` is 43), fullwidth
    digits, ``0b``/``0o`` literals, a ``+`` and ``_`` anywhere: each is refused here, so a
    number reads the same wherever the project takes one (an address, a CLI flag, a spec
    through :func:`is_numeral`).

    Raises
    ------
    TypeError
        If ``text`` is not a string.
    SpecError
        (a ``ValueError``) naming ``what`` and the form it takes.

    >>> parse_integer("4096", "batch"), parse_integer("0x1_0000", "address", hex=True, grouping=True)
    (4096, 65536)
    >>> parse_integer("\uff18", "--batch")
    Traceback (most recent call last):
    ...
    fabric.SpecError: --batch '\uff18' is not a number: ASCII digits 0-9
    """
    text_of(text, what or "text")
    body = text.strip()
    head = f"{what} {show_value(text)}".lstrip()      # what="": the caller names the value
    if _integer_re(hex, grouping, signed).fullmatch(body) is None:
        raise SpecError(f"{head} is not a number: {integer_form(hex, grouping)}")
    body = body.replace("_", "")
    negative = body.startswith("-")
    body = body.lstrip("-")
    try:
        value = int(body, 16) if body[:2] in ("0x", "0X") else int(body)
    except ValueError:          # Python reads no decimal integer of more than 4300 digits
        raise SpecError(f"{head} has more than 4300 digits") from None
    return -value if negative else value


#: The words ``float()`` reads for the values that are not finite, which a reader of a plain
#: number passes through so that a caller's own finiteness check names its parameter.
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


#: What :func:`parse_real` takes, as its error message says it.
REAL_FORM = "ASCII digits 0-9, one '.', an exponent"


def parse_real(text, what):
    """Return the ``float`` that ``text`` writes: ASCII digits with an optional sign, one
    ``.``, an exponent and ``_`` between two digits (the number :func:`parse_size` and
    :func:`parse_time` read before their unit), or ``nan`` / ``inf`` / ``infinity``.

    ``float()`` would also read other scripts' digits (``"\u0663"`` is 3.0) and fullwidth
    ones; those are refused here, as :func:`parse_integer` refuses them in integers. A
    value out of a float's range reads as ``inf`` (as ``float()`` reads it), for the
    caller's finiteness check to name.

    >>> parse_real("0.85", "acceptance"), parse_real("1_000.5", "x"), parse_real("-1e3", "x")
    (0.85, 1000.5, -1000.0)
    >>> parse_real("\u0663", "--skew")
    Traceback (most recent call last):
    ...
    fabric.SpecError: --skew '\u0663' is not a number: ASCII digits 0-9, one '.', an exponent
    """
    text_of(text, what or "text")
    body = text.strip()
    if _NON_FINITE.fullmatch(body):
        return float(body)
    if re.fullmatch(_NUMBER, body) is None:
        raise SpecError(f"{what} {show_value(text)} is not a number: {REAL_FORM}".lstrip())
    return float(body.replace("_", ""))


def is_numeral(text):
    """True when ``text`` is a whole number written in ASCII digits, optionally after a minus
    sign (``"12"``, ``"-3"``): what a spec, a rank or a layout accepts as a number
    (:func:`parse_integer`'s rule with ``signed``, without surrounding spaces).

    ``int()`` and ``str.isdecimal`` also take other scripts' digits (``"4\u0663"`` is 43),
    fullwidth digits, a ``+`` and ``_`` separators; a spec that reads ``torus:4\u0663`` as 43
    chips would be a surprise, so those are refused where text is read as a number. So is a
    numeral longer than ``int()`` reads (Python's limit, 4300 digits by default): every caller
    reads a numeral with ``int()``, which raised a bare ValueError for 5000 digits (``cofabric
    cost torus:9...9x4``, ``--ranks``, ``--layout tp=``, ``--fail-chip``: internal errors).

    >>> is_numeral("12"), is_numeral("-3"), is_numeral("1_000"), is_numeral("+3")
    (True, True, False, False)
    >>> is_numeral("4\u0663"), is_numeral(""), is_numeral("-"), is_numeral("9" * 5000)
    (False, False, False, False)
    """
    if _integer_re(False, False, True).fullmatch(text) is None:
        return False
    most = sys.get_int_max_str_digits()         # 0: no limit
    return most == 0 or len(text.lstrip("-")) <= most


def parse_size(value):
    """Return a size in bytes (an ``int``) from ``"96GiB"``, ``"4 kB"`` or a number.

    A plain number is bytes. Fractional results are refused: a size is a
    whole number of bytes.

    Parameters
    ----------
    value : str or real number
        A number and a byte unit (``B``, ``kB`` = 1000 B, ``KiB`` = 1024 B, ... ``PiB``; a
        space between them allowed), or a number of bytes.

    Returns
    -------
    int
        Bytes, >= 0.

    Raises
    ------
    TypeError
        For a value that is neither text nor a number (a bool included).
    SpecError
        For text that does not read as a size (a bit unit ``b``, an unknown unit), a
        negative size or one that is not a whole number of bytes.

    Examples
    --------
    >>> parse_size("1.5KiB")
    1536
    >>> parse_size(4096)
    4096
    """
    if not isinstance(value, str):
        value = _number(value, "size")
        if value != int(value):
            raise SpecError(f"size must be a whole number of bytes, got {show_value(value)}")
        if value < 0:
            raise SpecError(f"a size is >= 0 bytes, got {show_value(value)}")
        return int(value)
    number, unit = _split(value, "size")
    if number < 0:
        raise SpecError(f"a size is >= 0 bytes, got {show_value(value)}")
    mult, per_byte = _byte_multiplier(unit, "size", value)
    if per_byte == 1:
        raise SpecError(f"cannot read size {show_value(value)}: a size is in bytes (B), not "
                        "bits (b)")
    result = _fits_float(number * mult, "size", value)
    if result != int(result):
        raise SpecError(f"size {show_value(value)} is not a whole number of bytes")
    return int(result)


def parse_bandwidth(value):
    """Return a bandwidth in bytes per second from ``"400Gb/s"``, ``"50GB/s"`` or a number.

    Bits are divided by 8. A plain number is bytes per second.

    Parameters
    ----------
    value : str or real number
        A number and a unit of bytes (``B/s``, ``GB/s``, ``GiB/s`` ...) or bits (``b/s``,
        ``Gb/s`` ...) per second, or a number of bytes per second.

    Returns
    -------
    float
        Bytes per second; a negative value is read as given (unlike a size): it is the
        inverse of :func:`format_bandwidth`, which prints a negative value with its sign.

    Raises
    ------
    TypeError
        For a value that is neither text nor a number (a bool included).
    SpecError
        For text that does not read as a bandwidth (no ``/s``, an unknown unit).

    Examples
    --------
    >>> parse_bandwidth("25GB/s")
    25000000000.0
    """
    if not isinstance(value, str):
        return float(_number(value, "bandwidth"))
    number, unit = _split(value, "bandwidth")
    if not unit.endswith("/s"):
        raise SpecError(f"cannot read bandwidth {show_value(value)}: the unit must end in '/s'")
    mult, per_byte = _byte_multiplier(unit[:-2], "bandwidth", value)
    if unit[:-2] == "":
        raise SpecError(f"cannot read bandwidth {show_value(value)}: say B/s or b/s")
    return float(_fits_float(number * mult / (8 if per_byte == 1 else 1), "bandwidth", value))


def parse_time(value):
    """Return a time in seconds from ``"0.69us"``, ``"120ns"``, ``"5.85ms"`` or a number.

    Parameters
    ----------
    value : str or real number
        A number and a unit (``s``, ``ms``, ``us``, ``ns``, ``ps``), or a number of seconds.

    Returns
    -------
    float
        Seconds; a negative value is read as given (unlike a size): it is the inverse of
        :func:`format_time`, which prints a negative value with its sign.

    Raises
    ------
    TypeError
        For a value that is neither text nor a number (a bool included).
    SpecError
        For text that does not read as a time (an unknown unit).

    Examples
    --------
    >>> parse_time("120ns")
    1.2e-07
    """
    if not isinstance(value, str):
        return float(_number(value, "time"))
    number, unit = _split(value, "time")
    if unit not in _TIME:
        raise SpecError(f"cannot read time {show_value(value)}: unit must be one of s, ms, us, "
                        "ns, ps")
    return float(_fits_float(number / Fraction(_TIME[unit]), "time", value))


#: What :func:`parse_address` takes, for the TypeError refusing another kind.
_ADDRESS_KINDS = "an integer or text such as '0x4000_0000'"


def parse_address(value):
    """Return an address (a non-negative ``int``) from ``"0x4000_0000"``, ``"4096"`` or an int.

    Text is read by :func:`parse_integer`: ASCII decimal (no leading zero) or hex after
    ``0x``, one ``_`` between two digits; other scripts' digits, ``0b``/``0o`` and ``+``
    are refused.

    Parameters
    ----------
    value : str or int
        A byte address: text as above, or an integer (Python's or numpy's). A float is of
        the wrong kind (STYLE's rule, as :func:`fabric._address.validate_address`): an
        address is whole, and a float holds whole numbers only below 2**53.

    Returns
    -------
    int
        The address, >= 0.

    Raises
    ------
    TypeError
        For a value that is neither text nor an integer (a float, a bool, None).
    SpecError
        For text that does not read, or a negative address (a ValueError too).

    Examples
    --------
    >>> parse_address("0x1_0000")
    65536
    >>> parse_address(4096.0)
    Traceback (most recent call last):
    ...
    TypeError: address must be an integer or text such as '0x4000_0000', got 4096.0 (a float)
    """
    if isinstance(value, str):
        address = parse_integer(value, "address", hex=True, grouping=True, signed=True)
    elif is_int(value):
        address = int(value)
    else:
        raise kind_error(value, "address", _ADDRESS_KINDS)
    if address < 0:
        raise SpecError(f"address must be non-negative, got {show_value(value)}")
    return address


#: Longest text of a value quoted in an error message; longer ones are abbreviated.
SHOWN_DIGITS = 40


def show_value(value):
    """``repr(value)`` for an error message, abbreviated when it is very long.

    A 5000-digit integer cannot even be turned into decimal text (Python's limit
    is 4300 digits), and a message should fit on a line: long integers are shown
    as their leading digits and their length, a long text as :func:`shorten` cuts it.

    >>> show_value(2**200)
    '1606938044258990275541962092341162602522... (61 digits)'
    >>> show_value("4KiB")
    "'4KiB'"

    A set is shown with its items' texts sorted, wherever it sits (its own repr follows its
    hashes, so the same message read differently from one PYTHONHASHSEED to the next):

    >>> show_value({"chip3", "chip1"}), show_value([("a", {"chip3", "chip1"})])
    ("{'chip1', 'chip3'}", "[('a', {'chip1', 'chip3'})]")
    """
    if isinstance(value, int) and not isinstance(value, bool):
        n = abs(value)
        k = max(0, int(n.bit_length() * 0.30103) - SHOWN_DIGITS)
        head = str(n // 10**k)            # never more than ~42 digits: no str() of n itself
        if len(head) + k <= SHOWN_DIGITS:
            return repr(value)
        sign = "-" if value < 0 else ""
        return f"{sign}{head[:SHOWN_DIGITS]}... ({len(head) + k} digits)"
    try:
        if isinstance(value, (set, frozenset)):
            text = _stable_repr(value, set())
        else:
            text = repr(value)
            if "{" in text and type(value) in _WALKED:      # a set may sit inside: walk it
                text = _stable_repr(value, set())
    except (ValueError, RecursionError):  # e.g. a numpy object array holding a huge int
        return f"<{type(value).__name__}>"
    return shorten(text)


#: The containers :func:`show_value` walks for a set inside (their reprs are their items').
_WALKED = (set, frozenset, list, tuple, dict)


def _stable_repr(value, seen):
    """``repr(value)`` with every set's items sorted by their own texts; ``seen`` holds the
    ids of the containers being walked (a list holding itself reads ``[...]`` as repr says)."""
    kind = type(value)
    if isinstance(value, (set, frozenset)):
        if not value:
            return repr(value)
        inner = "{" + ", ".join(sorted(show_value(x) for x in value)) + "}"
        return inner if kind is set else f"{kind.__name__}({inner})"
    if kind not in _WALKED:
        return repr(value)
    if id(value) in seen:
        return {list: "[...]", tuple: "(...)"}.get(kind, "{...}")
    seen.add(id(value))
    if kind is dict:
        text = "{" + ", ".join(f"{_stable_repr(k, seen)}: {_stable_repr(v, seen)}"
                               for k, v in value.items()) + "}"
    else:
        items = [_stable_repr(x, seen) for x in value]
        text = (f"[{', '.join(items)}]" if kind is list
                else f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})")
    seen.discard(id(value))
    return text


def shorten(text):
    """``text`` for a message: past ``2 * SHOWN_DIGITS`` characters, its first
    ``SHOWN_DIGITS`` and its length. The one cut of a long echoed text.

    >>> shorten("torus:4x4"), shorten("x" * 100)
    ('torus:4x4', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (100 characters)')
    """
    if len(text) > 2 * SHOWN_DIGITS:
        return text[:SHOWN_DIGITS] + f"... ({len(text)} characters)"
    return text


def show_count(count):
    """An integer count for a message, with thousands separators (``2,097,152``); one too
    long for a line is abbreviated as :func:`show_value` abbreviates an integer.

    >>> show_count(2**21), show_count(10**50)
    ('2,097,152', '1000000000000000000000000000000000000000... (51 digits)')
    """
    return f"{count:,}" if abs(count) < 10**SHOWN_DIGITS else show_value(count)


#: The prefixes :func:`format_size` and :func:`format_bandwidth` print, largest first.
_PRINTED_BINARY = (("Pi", PiB), ("Ti", TiB), ("Gi", GiB), ("Mi", MiB), ("Ki", KiB))
_PRINTED_DECIMAL = (("P", PB), ("T", TB), ("G", GB), ("M", MB), ("k", kB))
#: The prefixes :func:`format_time` prints (before ``s``), largest first.
_PRINTED_TIME = (("", 1), ("m", ms), ("u", us), ("n", ns))

#: Significant digits the format helpers show.
SHOWN_SIGNIFICANT = 4

#: Numbers at or above this (in the largest prefix) print whole, without an exponent
#: (``12345s``, ``1048576PiB``); beyond it the digits would be noise: exponent.
_WHOLE_BELOW = 1e15


def name_list(names, most=4):
    """Names for a message or a page, as written: ``'a, b and c'``; past ``most``, the first
    ``most - 1`` and how many more (``'a, b, c and 5 more'``); ``most=None``: every name.
    The one spelling of such a list in the packages.

    >>> name_list(["'chip0'"]), name_list(["a", "b", "c"]), name_list("abcdefgh")
    ("'chip0'", 'a, b and c', 'a, b, c and 5 more')
    >>> name_list("abcdef", most=None)
    'a, b, c, d, e and f'
    """
    names = list(names)
    if most is not None and len(names) > most:
        names = names[:most - 1] + [f"{len(names) - most + 1} more"]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def items_of(values):
    """``values``' items as a list, or None for one value given bare: a string or bytes (not
    read letter by letter), anything that is not iterable (a number, ``None``, a 0-d
    array: Python's "object is not iterable" names no parameter), and a set or a mapping,
    which hold no sequence (a set's order is its hashes', so a set of names paired sources
    with destinations differently from one PYTHONHASHSEED to the next; a mapping read as
    its keys dropped its values). Where one value may stand for all, the caller checks it
    by its own rule; where a sequence is due, :func:`sequence_of`. The one test of the
    packages for "a sequence or one value".

    >>> items_of((4, 4)), items_of(4), items_of("4x4"), items_of({4}), items_of({4: 4})
    ([4, 4], None, None, None, None)
    """
    if isinstance(values, (str, bytes, set, frozenset, Mapping)):
        return None
    try:
        it = iter(values)
    except TypeError:
        return None
    return list(it)


def sequence_of(values, what, items):
    """``values`` as a list where a sequence of ``items`` is due (:func:`items_of`), else a
    TypeError naming the parameter ``what``.

    >>> sequence_of(range(2), "chips", "node names or ranks")
    [0, 1]
    >>> sequence_of("chip0", "chips", "node names or ranks")
    Traceback (most recent call last):
    ...
    TypeError: chips must be a sequence of node names or ranks, got 'chip0' (a str)
    """
    out = items_of(values)
    if out is None:
        raise kind_error(values, what, f"a sequence of {items}")
    return out


def is_bool(x):
    """True for Python's and numpy's bools (by type name: this module does not import numpy):
    the one bool test of the packages. A bool is an int to ``isinstance`` and numpy's bool
    is neither, so a check for a number, a count or a flag asks this first."""
    return isinstance(x, bool) or type(x).__name__ in ("bool", "bool_")


def flag_of(value, what, *, optional=False):
    """``value`` as a Python bool where a flag is due (:func:`is_bool`: numpy's too), else a
    TypeError naming the parameter ``what``: ``'no'``, ``None`` or ``1`` is not read by its
    truth. ``optional``: None passes too (a flag whose None means "the default"), and the
    message says so. The one flag check of the packages.

    >>> import numpy as np
    >>> flag_of(np.True_, "cuda_graphs"), flag_of(False, "pdl"), flag_of(None, "binary", optional=True)
    (True, False, None)
    >>> flag_of("no", "pdl")
    Traceback (most recent call last):
    ...
    TypeError: pdl must be True or False, got 'no' (a str)
    >>> flag_of(1, "binary", optional=True)
    Traceback (most recent call last):
    ...
    TypeError: binary must be True, False or None, got 1 (an int)
    """
    if optional and value is None:
        return None
    if not is_bool(value):
        raise kind_error(value, what, "True, False or None" if optional else "True or False")
    return bool(value)


def kind_of(value):
    """``value``'s type with its article, for a TypeError's message: ``"a bool"``, ``"an int"``,
    ``"an object"``, by the sound the name starts with: a vowel letter but u (numpy's unsigned
    ints and a UUID, pronounced "you", take ``"a"``), or numpy's ``nd`` names, read letter by
    letter ("an ndarray"). The one spelling of a value's kind in the packages' messages
    (:func:`kind_error` the one message refusing a kind).

    >>> import numpy as np
    >>> kind_of(True), kind_of(5), kind_of(object()), kind_of(np.uint8(1)), kind_of(None)
    ('a bool', 'an int', 'an object', 'a uint8', 'a NoneType')
    >>> kind_of(np.zeros(2))
    'an ndarray'
    """
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeioAEIO' or kind.startswith('nd') else 'a'} {kind}"


def kind_error(value, what, due, tail=""):
    """The TypeError refusing ``value`` where ``due`` ("a str", "MLA or GQA") is due: "``what``
    must be ``due``, got value (its kind)``tail``", the value abbreviated (:func:`show_value`),
    its kind by :func:`kind_of`. STYLE's rule; the one wrong-kind message (:func:`text_of`,
    :func:`flag_of` and :func:`sequence_of` raise it; :func:`check_count` and
    :func:`error_for` name a number's kind in their own rule's words).

    >>> kind_error({"kv_heads": 8}, "attention", "MLA or GQA")
    TypeError("attention must be MLA or GQA, got {'kv_heads': 8} (a dict)")
    """
    return TypeError(f"{what} must be {due}, got {show_value(value)} ({kind_of(value)}){tail}")


def text_of(value, what, *, optional=False):
    """``value`` where text is due (a str: a record's name, source or description, a choice's
    name), else a TypeError naming the parameter ``what`` (STYLE's rule: a wrong kind):
    ``5`` or ``None`` is not written into a report or a parameter's name as its repr.
    ``optional``: None passes too. The one text check of the packages (:func:`flag_of` of a
    flag); a choice from a set asks this first, then its set (:func:`check_choice`).

    >>> text_of("h100", "chip name")
    'h100'
    >>> text_of(5, "chip name")
    Traceback (most recent call last):
    ...
    TypeError: chip name must be a str, got 5 (an int)
    """
    if isinstance(value, str) or (optional and value is None):
        return value
    raise kind_error(value, what, f"a str{' or None' if optional else ''}")


def check_choice(value, what, choices, *, optional=False):
    """``value`` if it is one of ``choices`` (a tuple of names, a mapping's keys or a set: the
    message lists them in their order, a set's sorted), else an error naming the parameter
    ``what``: its kind first (:func:`text_of`'s TypeError: ``5`` or a list is no name), then
    the set, a SpecError (a ValueError) "``what`` must be one of a, b, c, got value".
    ``optional`` (a flag): None passes too, and the message says so ("or None"; an absent
    value's own word, "unset", is :func:`choice_fault`'s, for a file). The one choice check
    of the packages; a lookup of a registry by name (a chip, a runtime, a model: an open table) is
    :func:`lookup`'s, "unknown ...; known: ..." (:func:`unknown_fault`).

    >>> check_choice("ring", "connect", ("full", "ring"))
    'ring'
    >>> check_choice(None, "generation", ("hopper", "blackwell"), optional=True) is None
    True
    >>> check_choice("star", "connect", ("full", "ring", "line", "switch"))
    Traceback (most recent call last):
    ...
    fabric.SpecError: connect must be one of full, ring, line, switch, got 'star'
    >>> check_choice(5, "connect", ("full", "ring"))
    Traceback (most recent call last):
    ...
    TypeError: connect must be a str, got 5 (an int)
    """
    optional = flag_of(optional, "optional")    # 'unset' is a file's word: choice_fault's
    if text_of(value, what, optional=optional) is None or value in choices:
        return value
    raise SpecError(choice_fault(value, what, choices, optional=optional))


def _listed(names):
    """Names for a message, each by ``str`` (numbers too), joined: "a, b, c"; "none" for no
    name. :func:`one_of`'s and :func:`unknown_fault`'s one listing."""
    return ", ".join(map(str, names)) or "none"


def one_of(choices, optional=False):
    """The one spelling of a set of choices in a message, "one of a, b, c": the choices in
    their order (a set's sorted by ``str``, as :func:`unknown_fault` sorts: ``{1, "a"}`` has
    no other order; each by ``str``: numbers too). ``optional``: None passes too ("or
    None"), or the word given for an absent value (``"unset"``: a file's key left out).
    :func:`choice_fault`'s, and a rule's where a fault list has its own form ("has carries
    'x'; it must be one of ...", a count's rule).

    >>> one_of({"ring", "full"}), one_of((1, 2, 4), optional="unset"), one_of({1, "a"})
    ('one of full, ring', 'one of 1, 2, 4 or unset', 'one of 1, a')
    """
    names = sorted(choices, key=str) if isinstance(choices, (set, frozenset)) else choices
    absent = f" or {'None' if optional is True else optional}" if optional else ""
    return f"one of {_listed(names)}{absent}"


def choice_fault(value, what, choices, *, optional=False):
    """The one sentence refusing ``value`` where one of ``choices`` goes: "``what`` must be
    one of a, b, c, got value" (:func:`one_of`, ``optional`` as there), the value by
    :func:`show_value`. :func:`check_choice` raises it; a list of faults (a plan's, a
    file's) holds it, after what it belongs to ("region 'r' [...]: ").

    >>> choice_fault("star", "connect", ("full", "ring"))
    "connect must be one of full, ring, got 'star'"
    >>> choice_fault(5, "ways", (1, 2, 4), optional="unset")
    'ways must be one of 1, 2, 4 or unset, got 5'
    """
    return f"{what} must be {one_of(choices, optional)}, got {show_value(value)}"


def unknown_fault(name, what, known, tail=""):
    """The one sentence for a name an open table does not hold (a registry by name: a chip,
    a runtime, a model, a traffic pattern, a report's sections): "unknown ``what`` 'd';
    known: a, b, c``tail``", the table's names SORTED (a registry's order is the order its
    entries were written in; ``"none"`` for an empty one), the name by :func:`show_value`
    (several unknown names: their list). :func:`lookup` raises it as a SpecError; a caller
    with a context says it before (``"router_limit: " + ...``), a further choice after
    (``tail``: ", or native (...)"). A choice from a closed set is :func:`choice_fault`'s.

    >>> unknown_fault("b400", "chip", {"h100": 1, "b200": 2})
    "unknown chip 'b400'; known: b200, h100"
    >>> unknown_fault(["x"], "families", ("torus", "fattree"), tail=" (see --help)")
    "unknown families ['x']; known: fattree, torus (see --help)"
    """
    return f"unknown {what} {show_value(name)}; known: {_listed(sorted(known, key=str))}{tail}"


def lookup(table, name, what, *, tail=""):
    """``table[name]`` where ``name`` must name an entry of the open table ``table`` (a
    mapping: a registry): its kind first (:func:`text_of`'s TypeError: ``5`` or None is no
    name), then a SpecError in :func:`unknown_fault`'s sentence. The one lookup by name of
    the packages (:func:`check_choice` of a choice from a closed set).

    >>> lookup({"rdma": 1, "loadstore": 2}, "rdma", "transport")
    1
    >>> lookup({"rdma": 1, "loadstore": 2}, "pigeon", "transport")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown transport 'pigeon'; known: loadstore, rdma
    """
    try:
        return table[text_of(name, what)]
    except KeyError:
        raise SpecError(unknown_fault(name, what, table, tail)) from None


def is_int(x):
    """True for Python's and numpy's integers (numpy's by its module's name: this module does
    not import numpy), False for a bool, Python's or numpy's (a flag is not a count), and for
    any other :class:`numbers.Integral`, which the packages would hand on to numpy and
    arithmetic they were not written for (refused where it is checked, by name): the one int
    test of the packages.

    >>> import numpy as np
    >>> [is_int(x) for x in (3, np.int64(3), np.uint8(0), True, np.True_, 3.0, "3", None)]
    [True, True, True, False, False, False, False, False]
    """
    if isinstance(x, int):          # the common case first: this is asked per element
        return not isinstance(x, bool)
    return type(x).__module__ == "numpy" and isinstance(x, numbers.Integral)


def int_of(value, what, *, optional=False):
    """``value`` as a Python int where an integer is due (:func:`is_int`: numpy's too, not a
    bool), else a TypeError naming ``what`` (:func:`kind_error`); ``optional``: None passes
    too. The kind check of a record's integer field, :func:`text_of`'s twin; a range is the
    record's checker's (:func:`check_count` checks the kind and a range at once).

    Two checks on purpose (session 37's F14, decided in session 38): ``int_of`` is a record
    field's kind at construction, its range the record checker's finding (an address or a
    size is an exact int: ``10**400`` is "beyond the address width", not check_count's
    "beyond a float's range"); :func:`check_count` is an argument's kind and range at once.

    >>> import numpy as np
    >>> int_of(np.int64(4096), "Region size"), int_of(None, "page_size", optional=True)
    (4096, None)
    >>> int_of(1.5, "Window local_base")
    Traceback (most recent call last):
    ...
    TypeError: Window local_base must be an int, got 1.5 (a float)
    """
    if is_int(value):
        return int(value)
    if optional and value is None:
        return None
    raise kind_error(value, what, f"an int{' or None' if optional else ''}")


def check_count(value, name, minimum=0, rule=None, *, below=None, error=SpecError):
    """``value`` as a Python int if it is an integer (:func:`is_int`: numpy's too, not a bool)
    ``>= minimum`` (any integer with ``minimum=None``) and ``< below`` (when given): the
    packages' one count check. STYLE's rule: a value of another kind (a float, a string, a
    bool) is a TypeError, an integer out of range an ``error`` (SpecError, a ValueError; the
    address functions pass AddressMapError, NodeError or TranslationError), each saying
    "``name`` must be ``rule``, got ``name``=value"; ``rule`` defaults to "an integer >=
    ``minimum``" (a caller with a further bound says it, e.g. "an integer >= 1 (routed
    experts)", "an integer in [0, 4096)"). A count beyond a float's range (``10**400``,
    :func:`is_finite`) is out of range too: the models compute in floats.

    >>> import numpy as np
    >>> check_count(np.int64(8), "batch", 1)
    8
    >>> check_count(2.5, "batch", 1)
    Traceback (most recent call last):
    ...
    TypeError: batch must be an integer >= 1, got batch=2.5 (a float)
    >>> check_count(0, "batch", 1)
    Traceback (most recent call last):
    ...
    fabric.SpecError: batch must be an integer >= 1, got batch=0
    >>> check_count(8, "position", 0, below=8)
    Traceback (most recent call last):
    ...
    fabric.SpecError: position must be an integer in [0, 8), got position=8
    >>> check_count(-10**400, "shift", None)
    Traceback (most recent call last):
    ...
    fabric.SpecError: shift must be an integer, got shift=-1000000000000000000000000000000000000000... (401 digits): beyond a float's range (+-1.798e+308), which the models compute in
    """
    if rule is None:
        if below is None:
            rule = "an integer" if minimum is None else f"an integer >= {minimum}"
        else:
            rule = f"an integer < {below}" if minimum is None else \
                f"an integer in [{minimum}, {below})"
    if not is_int(value):
        raise TypeError(f"{name} must be {rule}, got {name}={show_value(value)} "
                        f"({kind_of(value)})")
    if (minimum is not None and value < minimum) or (below is not None and value >= below):
        raise error(f"{name} must be {rule}, got {name}={show_value(value)}")
    if not is_finite(value):
        # every model computes in floats: 10**400 tokens overflowed the first product with
        # an OverflowError naming nothing (session 32's probe); a caller's own bound (the
        # memory fit, MAX_BYTES, an array's length) names the smaller counts it cannot take
        raise error(f"{name} must be {rule}, got {name}={show_value(value)}: beyond a "
                    f"float's range (+-{float(_LARGEST_FLOAT):.4g}), which the models "
                    "compute in")
    return int(value)


def is_real(x):
    """True for a real number: Python's and numpy's ints and floats and any other
    :class:`numbers.Real` (a Fraction); False for a bool, Python's or numpy's (a flag is not a
    quantity), and for what is no :class:`numbers.Real` (a Decimal, a complex, a string, a 0-d
    array). Whether it is finite or in range is each caller's own rule: the one real-number
    test of the packages (:func:`is_int` for a count).

    >>> import numpy as np
    >>> from fractions import Fraction
    >>> [is_real(x) for x in (3, 2.5, np.float32(1), Fraction(1, 2), float("nan"), True,
    ...                       np.True_, "3", None)]
    [True, True, True, True, True, False, False, False, False]
    """
    if isinstance(x, (int, float)):     # the common case first: this is asked per element
        return not isinstance(x, bool)
    return isinstance(x, numbers.Real) and not is_bool(x)


def is_float(x):
    """True for a binary float, Python's or numpy's (np.float16, np.float32, np.longdouble:
    numpy's by its module's name, as :func:`is_int`), False for ints, bools, Fractions and
    Decimals. A float holds whole numbers exactly only below 2**53, and a formatter writes
    it with float digits: an np.float32 prints as the float it is, ``float(x)`` (exact), not
    as numpy's shortest text of a float32 (:func:`is_real` for any real number).

    >>> import numpy as np
    >>> [is_float(x) for x in (2.5, np.float32(2.5), np.float64(1), 3, np.int64(3), True)]
    [True, True, True, False, False, False]
    """
    if isinstance(x, float):
        return True
    return type(x).__module__ == "numpy" and isinstance(x, numbers.Real) \
        and not isinstance(x, numbers.Integral)


def _checked(value, name, what):
    """``value`` if it is a finite real number; else a TypeError (:func:`is_real`: a bool is
    not a quantity) or SpecError (nan has no digits) naming it and the formatter ``name``
    refusing it. Not :func:`check_number`: a formatter prints any sign, and an int beyond a
    float's range as its digits, exactly (``format_size(2**1100)``)."""
    if not is_real(value):
        raise TypeError(f"{name}: {show_value(value)} is not a number of {what} "
                        f"({kind_of(value)})")
    if type(value).__module__ == "numpy":
        value = value.item()      # np.float16: comparing it with 1e15 warns of an overflow
    try:
        finite = math.isfinite(value)
    except OverflowError:         # an int or Fraction beyond a float is finite
        finite = True
    if not finite:
        raise SpecError(f"{name}: {float(value)!r} is not a finite number of {what}")
    return value


def is_finite(x):
    """True for a real number (:func:`is_real`) that a float holds as a finite number; False
    for nan and +-inf, for an int too large for a float (``math.isfinite(10**400)`` raises
    OverflowError: a check refuses it by name rather than crash), and for what :func:`is_real`
    refuses (a bool, a string). The one finite-number test of the packages.

    >>> [is_finite(x) for x in (3, 2.5, float("nan"), float("inf"), 10**400, True, "3")]
    [True, True, False, False, False, False, False]
    """
    if not is_real(x):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:       # an int beyond a float's range
        return False


def error_for(value, message, error=SpecError):
    """The error that refuses ``value`` where a number goes, saying ``message`` (the check's
    own rule): a TypeError for what is no real number (:func:`is_real`: a bool, a string,
    None; STYLE's rule), its kind named as :func:`check_count` and :func:`check_number` name
    it (``message`` + " (a bool)"), else ``error`` (a number out of range: nan, inf, a negative
    time). For checks whose own message names the rule (:func:`check_number` is the common
    one): ``raise error_for(v, f"... got {v!r}")``.

    >>> error_for("2", "x must be a number, got '2'")
    TypeError("x must be a number, got '2' (a str)")
    >>> error_for(float("nan"), "x must be finite"), error_for(-1, "x must be >= 0", ValueError)
    (SpecError('x must be finite'), ValueError('x must be >= 0'))
    """
    return error(message) if is_real(value) else TypeError(f"{message} ({kind_of(value)})")


def check_number(name, value, minimum=0, unit="", *, strict=False, tail=""):
    """``value`` as a float if it is a finite real number (:func:`is_finite`) >= ``minimum``
    (> with ``strict``; any finite number with ``minimum=None``), else an error naming it:
    "``name`` must be a finite number >= ``minimum````unit````tail``, got ``name``=value",
    the rule's words derived from ``minimum``, ``strict`` and ``unit`` (" rows per group",
    " seconds": what is counted), so they cannot disagree with the test (session 38: four
    callers wrote them out, "a finite number of bytes > 0"); a TypeError for a value of
    another kind (a bool, a string, None: STYLE's rule, as :func:`check_count`'s; session
    32), a SpecError for a number out of range (nan, inf, an int beyond a float's range,
    below ``minimum``). A float, so that a numpy float16 or float32 (or a Fraction) computes
    as the number it is. The packages' one check of a number (:func:`check_fraction` of one
    in a range; :func:`check_count` of a count): the decode, serving and speculative
    models', traffic's, the GEMM and MLA tables'.

    >>> check_number("launch", 2, unit=" seconds"), check_number("x", 1.5, 1, strict=True)
    (2.0, 1.5)
    >>> check_number("launch", -1, unit=" seconds")
    Traceback (most recent call last):
    ...
    fabric.SpecError: launch must be a finite number >= 0 seconds, got launch=-1
    >>> check_number("skew", True)
    Traceback (most recent call last):
    ...
    TypeError: skew must be a finite number >= 0, got skew=True (a bool)
    >>> check_number("base", float("inf"), None)
    Traceback (most recent call last):
    ...
    fabric.SpecError: base must be a finite number, got base=inf
    """
    if not (is_finite(value) and (minimum is None or (value > minimum if strict
                                                      else value >= minimum))):
        bound = "" if minimum is None else f" {'>' if strict else '>='} {minimum}"
        raise error_for(value, f"{name} must be a finite number{bound}{unit}{tail}, got "
                               f"{name}={show_value(value)}")
    return float(value)


def check_fraction(name, value, lo, hi, lo_open=False, tail=""):
    """``value`` as a float if it is a finite real number in ``[lo, hi]`` (``(lo, hi]`` with
    ``lo_open``), else an error naming it: "``name`` must be in [lo, hi]``tail``", a TypeError
    for a value of another kind (:func:`check_number`'s rule), a SpecError for a number out
    of the range.

    >>> check_fraction("usable_hbm", 0.9, 0, 1, lo_open=True)
    0.9
    >>> check_fraction("usable_hbm", 0, 0, 1, lo_open=True)
    Traceback (most recent call last):
    ...
    fabric.SpecError: usable_hbm must be in (0, 1], got usable_hbm=0
    """
    if not (is_finite(value) and (value > lo if lo_open else value >= lo) and value <= hi):
        bound = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
        raise error_for(value, f"{name} must be in {bound}{tail}, got "
                               f"{name}={show_value(value)}")
    return float(value)


def _flag(all_digits, name):
    """``all_digits`` if it is a bool: ``'no'`` or ``None`` is not read by its truth."""
    return flag_of(all_digits, f"{name}: all_digits")


def _numeral(q, all_digits):
    """``q`` (a float) to :data:`SHOWN_SIGNIFICANT` digits; ``all_digits`` keeps trailing zeros."""
    text = f"{q:#.{SHOWN_SIGNIFICANT}g}" if all_digits else f"{q:.{SHOWN_SIGNIFICANT}g}"
    if "e" in text and 1 <= abs(q) < _WHOLE_BELOW:
        return f"{q:.0f}"         # 12345 and 9999.5 (1e+04 at four digits): whole digits
    return text.replace(".e", "e").rstrip(".")


def _format(value, prefixes, unit, all_digits=False):
    """``value`` with the largest of ``prefixes`` (``(name, multiplier)``, largest first)
    it reaches, or the last one below all of them; ``0`` prints bare (``0s``, ``0B``).
    A value that rounds up to the next prefix takes it (``1MB/s``, not ``1000kB/s``)."""
    if value == 0:
        return f"0{unit}"
    for i, (name, mult) in enumerate(prefixes):
        if abs(value) >= mult or i == len(prefixes) - 1:
            break
    try:
        text = _numeral(float(value / mult), all_digits)
        if i > 0 and abs(float(text)) >= round(prefixes[i - 1][1] / mult):
            name, mult = prefixes[i - 1]
            text = _numeral(float(value / mult), all_digits)
    except OverflowError:         # beyond a float (an int of 1000+ bits): digits, no prefix
        return f"{show_value(int(value))} {unit}"
    return f"{text}{name}{unit}"


def format_size(nbytes, binary=None):
    """Format bytes with binary or decimal prefixes, up to four significant digits; trailing
    zeros are never shown (``96GiB``, not ``96.00GiB``).

    Parameters
    ----------
    nbytes : real number
        Bytes.
    binary : bool or None
        ``None`` (the default) writes a size exactly where either kind of prefix can: binary
        (``1MiB``, ``1.5KiB``) unless only decimal ones do (``10**6`` bytes is ``1MB``, not
        ``976.6KiB``), binary where neither does. ``True`` or ``False`` picks the kind.

    Returns
    -------
    str
        The size and its unit, ``B`` with a prefix.

    Raises
    ------
    TypeError
        For an ``nbytes`` that is a bool or not a number, a ``binary`` that is neither a
        bool nor None (``1`` is not read by its truth).
    SpecError
        For nan or infinity (a ValueError too).

    Examples
    --------
    >>> format_size(96 * GiB), format_size(3 * 10**9, binary=False), format_size(1536)
    ('96GiB', '3GB', '1.5KiB')
    >>> format_size(10**6), format_size(10**6, binary=True), format_size(1234567)
    ('1MB', '976.6KiB', '1.177MiB')
    >>> format_size(2**70), format_size(0)
    ('1048576PiB', '0B')
    """
    nbytes = _checked(nbytes, "format_size", "bytes")
    binary = flag_of(binary, "format_size: binary", optional=True)   # None is a choice: said
    text = _format(nbytes, (_PRINTED_DECIMAL if binary is False else _PRINTED_BINARY)
                   + (("", 1),), "B")
    if binary is None and not _reads_exactly(text, nbytes):
        decimal = _format(nbytes, _PRINTED_DECIMAL + (("", 1),), "B")
        if _reads_exactly(decimal, nbytes):
            return decimal
    return text


def _reads_exactly(text, nbytes):
    """Whether ``text`` (a format_size text) reads back as exactly ``nbytes``."""
    try:
        return parse_size(text) == nbytes
    except SpecError:             # '976.6KiB' is no whole number of bytes
        return False


def format_bandwidth(bytes_per_s, all_digits=False):
    """Format bytes per second with decimal prefixes (``GB/s`` is 1e9 B/s), four
    significant digits.

    Parameters
    ----------
    bytes_per_s : real number
        Bytes per second.
    all_digits : bool
        Keep trailing zeros, so every value shows four significant digits: use it where
        bandwidths stand in a column or side by side (``64.00GB/s`` beside ``13.89GB/s``,
        not ``64GB/s``).

    Returns
    -------
    str
        The bandwidth and its unit, ``B/s`` with a decimal prefix.

    Raises
    ------
    TypeError
        For a value that is a bool or not a number, an ``all_digits`` other than a bool.
    SpecError
        For nan or infinity (a ValueError too).

    Examples
    --------
    >>> format_bandwidth(450e9)          # bytes/s per direction
    '450GB/s'
    >>> format_bandwidth(64e9, all_digits=True), format_bandwidth(13.888e9, all_digits=True)
    ('64.00GB/s', '13.89GB/s')
    >>> format_bandwidth(999.96e3)       # rounds up to the next prefix
    '1MB/s'
    """
    bytes_per_s = _checked(bytes_per_s, "format_bandwidth", "bytes per second")
    return _format(bytes_per_s, _PRINTED_DECIMAL + (("", 1),), "B/s",
                   _flag(all_digits, "format_bandwidth"))


def format_time(seconds, all_digits=False):
    """Format seconds as s, ms, us or ns, four significant digits.

    Times of 10,000 s and more print whole (``12345s``).

    Parameters
    ----------
    seconds : real number
        Seconds.
    all_digits : bool
        Keep trailing zeros, so every value shows four significant digits: use it where
        times stand in a column or side by side (``1.400ms`` beside ``2.977ms``,
        ``20.00us``).

    Returns
    -------
    str
        The time and its unit.

    Raises
    ------
    TypeError
        For seconds given as a bool or not as a number; for an ``all_digits`` other than
        a bool.
    SpecError
        For nan or infinity seconds (a ValueError too).

    Examples
    --------
    >>> format_time(6.9e-07)             # seconds
    '690ns'
    >>> format_time(1.4e-3, all_digits=True), format_time(2.9771e-3, all_digits=True)
    ('1.400ms', '2.977ms')
    >>> format_time(0), format_time(12345.0), format_time(9999.5), format_time(0.99996)
    ('0s', '12345s', '10000s', '1s')
    >>> format_time(float("nan"))
    Traceback (most recent call last):
    ...
    fabric.SpecError: format_time: nan is not a finite number of seconds
    """
    seconds = _checked(seconds, "format_time", "seconds")
    return _format(seconds, _PRINTED_TIME, "s", _flag(all_digits, "format_time"))


def format_address(address):
    """Format an address as lowercase hex with a ``0x`` prefix.

    A value far beyond any address width (more than 256 bits) is abbreviated, so
    that an error message about it stays one readable line.

    Parameters
    ----------
    address : int
        A byte address (numpy's integers too; a bool is not one).

    Returns
    -------
    str
        ``0x`` and the address's hex digits; a negative value keeps its sign (``-0x10``): no
        address is negative, but a window's refused ``local_base = -16`` is shown so in
        :func:`fabric.check`'s finding, as given.

    Raises
    ------
    TypeError
        For an address that is not an integer: a float, a bool, text (:func:`parse_address`
        reads text).

    Examples
    --------
    >>> format_address(2**40)
    '0x10000000000'
    >>> format_address(2**5000)
    '0x1000000000000000... (5001 bits)'
    >>> format_address(-16)
    '-0x10'
    """
    if not is_int(address):
        raise kind_error(address, "format_address: address", "an integer")
    address = int(address)
    if abs(address).bit_length() > 256:
        return f"{address:#x}"[:18] + f"... ({address.bit_length()} bits)"
    return f"{address:#x}"
