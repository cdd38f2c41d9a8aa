"""System files: a TOML description of a fabric and its address plan.

A system file names a topology (a preset or builder spec) and describes the
address plan: layout, extra regions and interleave sets, windows per host,
grants, a symmetric heap and the hardware limits. Sizes and addresses are written the human way (``"96GiB"``,
``"0x4000_0000"``) and parsed by :mod:`fabric._units`; plain integers are bytes.
Every table is optional except ``[system]``::

    [system]
    topology = "sd200-ultra"        # preset or spec (required)
    chip = "sd200-chip"             # optional: override the chip
    name = "my system"

    [address]                       # fields of fabric.AddressPlan
    layout = "owner-bits"           # "owner-bits" | "packed" | "explicit"
    width = 57
    host_memory = "1TiB"
    nic_mmio = "32MiB"
    storage = "0"
    alignment = "1GiB"              # packed layout
    hbm_bytes = "64GB"              # default: the chip's
    default_windows = true          # a window per remote chip for every host

    [limits]                        # fabric.DomainLimits
    translation_entries = 1024
    page_size = "2MiB"
    alignment = "size"              # "size" (NTB) | "page" (ZMMU)

    [[regions]]                     # placed where they say
    name = "cxl.pool"
    base = "0x7f00_0000_0000"
    size = "256GiB"
    owner = "host0"                 # or owners = [...] with granularity = "4KiB"
    kind = "dram"
    permissions = "rw"

    [[interleave]]                  # placed by the layout; under layout = "explicit", a
                                    # [[regions]] entry with owners and a base instead
    name = "pool"
    owners = ["host0", "host1"]
    granularity = "4KiB"
    size = "2TiB"
    kind = "dram"

    [[windows]]
    host = "host0"
    name = "pool"
    local_base = "0x1000_0000_0000"
    target = "pool"                 # a region or owner; or global_base = "0x..."
    target_offset = "0"
    size = "2TiB"                   # default: the rest of the target region
    page_size = "2MiB"
    permissions = "rw"

    [[grants]]                      # none: everything granted; grants = [] (a key
                                    # before the first table): nothing but each
                                    # host's own chips and memory
    host = "host0"
    target = "chip9"                # region name, owner, or "*"
    permissions = "r"

    [heap]                          # fabric.SymmetricHeap
    size = "16GiB"
    offset = "32GiB"
    alignment = "2MiB"

A malformed file (bad TOML, a missing or unknown topology) raises
:class:`~fabric.SpecError` naming the file, line and column. A well-formed file
with bad values loads, and each bad value becomes a finding (code ``invalid``,
with the file and line) that :func:`fabric.check` reports with the rest.
"""

import math
import os
import re
import tomllib
from dataclasses import dataclass, field

from ._address import Finding, Region
from ._domains import DomainLimits, Grant, Window
from ._errors import SpecError
from ._plan import AddressPlan
from ._symmetric import SymmetricHeap
from ._units import is_int, kind_error, parse_address, parse_size, show_value, unknown_fault

#: Floats hold every whole number below this (2**53); a TOML float size at or above it may
#: already be another number (a float address is refused by its kind).
_FLOAT_EXACT = float(2**53)

__all__ = ["System", "load_system", "read_system"]


@dataclass(frozen=True, eq=False)
class System:
    """A fabric with its address plan, as read from a system file.

    Attributes
    ----------
    fabric : Fabric
        With ``address_plan`` set from the file.
    path : str
    findings : tuple of Finding
        Faults of the file's values, reported by :func:`fabric.check`.
    """

    fabric: object
    path: str = "<string>"
    findings: tuple = field(default=())

    @property
    def plan(self):
        """The address plan in force (the fabric's :attr:`~fabric.Fabric.plan`)."""
        return self.fabric.plan


_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")
#: A table header: ``[name]``, ``[[name]]``, the name bare or quoted (``[["windows"]]`` is
#: ``[[windows]]`` in TOML).
_HEADER = re.compile(r"""^\s*(\[\[?)\s*(?:"([A-Za-z0-9_\-]+)"|'([A-Za-z0-9_\-]+)'|([A-Za-z0-9_.\-]+))"""
                     r"\s*\]\]?")

_KEYS = {
    "system": {"topology", "chip", "name"},
    "address": {"layout", "width", "host_memory", "nic_mmio", "storage", "alignment",
                "hbm_bytes", "default_windows"},
    "limits": {"translation_entries", "page_size", "alignment"},
    "regions": {"name", "base", "size", "owner", "owners", "kind", "permissions",
                "granularity"},
    "interleave": {"name", "owners", "granularity", "size", "kind", "permissions"},
    "windows": {"host", "name", "local_base", "size", "global_base", "target",
                "target_offset", "page_size", "permissions"},
    "grants": {"host", "target", "permissions"},
    "heap": {"size", "offset", "alignment", "name", "chips"},
}
_STRS = {"topology", "chip", "name", "layout", "host", "target", "permissions", "kind",
         "owner"}
_BOOLS = {"default_windows"}
_INTS = {"width", "translation_entries"}
_SIZES = {"host_memory", "nic_mmio", "storage", "alignment", "hbm_bytes", "page_size",
          "size", "granularity", "offset", "target_offset"}
_ADDRESSES = {"base", "local_base", "global_base"}


def _kind(table, key):
    """``(test, due, forms)`` of the field ``key``: whether a TOML value is of the kind it
    takes (a TOML date or time is of none), that kind in words for
    :func:`~fabric._units.kind_error`'s sentence, and for a field of addresses or sizes the
    string form it reads, as an example (else None)."""
    if table == "limits" and key == "alignment" or key in _STRS:
        # limits.alignment: "size" or "page", not bytes
        return (lambda v: isinstance(v, str)), "a str", None
    if key in _BOOLS:
        return (lambda v: isinstance(v, bool)), "true or false", None
    if key in _INTS:
        return is_int, "an integer", None       # TOML's ints (its true is a bool)
    if key == "owners":
        return (lambda v: isinstance(v, list) and all(isinstance(o, str) for o in v),
                "a list of names", None)
    if key in _ADDRESSES:
        # an address is decimal or hex text or an integer: a TOML float is of the wrong kind,
        # as parse_address's (session 38: '4096.0' was read, exact below 2**53)
        return ((lambda v: isinstance(v, (int, str)) and not isinstance(v, bool)),
                "an integer or a string such as '0x4000_0000'", "'0x4000_0000'")
    if key in _SIZES:
        # a size is decimal with an optional unit (parse_size refuses hex); TOML reads a
        # number as an int or a float (a size is a real number of bytes)
        return ((lambda v: isinstance(v, (int, float, str)) and not isinstance(v, bool)),
                "an integer or a string such as '16PiB'", "'16PiB'")
    raise LookupError(f"no kind for the system-file field {key!r}")    # a key _KEYS added


def _lines(text, doc):
    """Line number of each table header: ``{name: [line, ...]}`` in file order.

    A line scan, not a TOML parser: a header-like line inside a multi-line string looks like
    a header. So a table's lines are kept only where the headers seen match the entries TOML
    read (one per entry of an array of tables, one for a table); otherwise its findings name
    no line rather than another entry's.
    """
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            out.setdefault(m.group(2) or m.group(3) or m.group(4), []).append(n)
    return {k: v for k, v in out.items()
            if len(v) == (len(doc[k]) if isinstance(doc.get(k), list) else 1)}


class _Reader:
    def __init__(self, path, text, doc):
        self.path = path
        self.lines = _lines(text, doc)
        self.findings = []

    def where(self, table, i=None):
        lines = self.lines.get(table, [])
        k = 0 if i is None else i
        line = f":{lines[k]}" if k < len(lines) else ""
        label = table if i is None else f"{table}[{i}]"
        return f"{self.path}{line} {label}"

    def bad(self, where, msg):
        self.findings.append(Finding(code="invalid", severity="error", message=msg, where=where))

    def value(self, table, key, v, where):
        """Parse one field; None (and a finding) if it cannot be read. Each message says the
        key and the value once: a value of another kind (:func:`_kind`; a TOML date or time is
        of none) by kind_error's sentence ('layout = 5: layout must be a str, got 5' said both
        twice); one that parse_size or parse_address refuses by "key: " and their sentence,
        which quotes the value ("host_memory = '12QB': cannot read size '12QB': ..." did
        twice); a float this reader refuses by "key = value: why"."""
        test, due, forms = _kind(table, key)
        if not test(v):
            self.bad(where, str(kind_error(v, key, due)))
            return None
        if forms is None:
            return v
        if isinstance(v, float) and not math.isfinite(v):
            self.bad(where, f"{key} = {show_value(v)}: is not a finite number; write an integer "
                            f"or a string such as {forms}")
            return None
        if isinstance(v, float) and not abs(v) < _FLOAT_EXACT:
            # TOML gave a float: above 2**53 it has already lost the low bits
            # (18014398509481985.0 reads as ...984), so the plan would be checked and
            # translated at an address or size the file does not say
            self.bad(where, f"{key} = {show_value(v)}: a float is exact only below 2**53 "
                            f"({_FLOAT_EXACT:.4g}); write it as an integer or a string such as "
                            f"{forms}")
            return None
        try:
            return parse_address(v) if key in _ADDRESSES else parse_size(v)
        except (TypeError, ValueError) as e:      # their every message quotes the value
            self.bad(where, f"{key}: {e}")
            return None

    def fields(self, table, data, i=None, required=()):
        where = self.where(table, i)
        if not isinstance(data, dict):
            self.bad(where, str(kind_error(data, f"[{table}]", "a table")))
            return None, where
        unknown = sorted(set(data) - _KEYS[table])
        if unknown:
            self.bad(where, f"[{table}]: " + unknown_fault(unknown, "keys", _KEYS[table]))
        missing = [k for k in required if k not in data]
        if missing:
            self.bad(where, f"[{table}] needs {', '.join(missing)}")
            return None, where
        out = {}
        for k, v in data.items():
            if k in _KEYS[table] and k != "chips":
                parsed = self.value(table, k, v, where)
                if parsed is None:
                    return None, where
                out[k] = parsed
        return out, where

    def make(self, cls, where, **kwargs):
        """``cls(**kwargs)``; None (and a finding) if a field has the wrong kind."""
        try:
            return cls(where=where, **kwargs)
        except TypeError as e:
            self.bad(where, str(e))
            return None

    def items(self, doc, table):
        items = doc.get(table, [])
        if not isinstance(items, list):
            self.bad(self.where(table), f"{table} must be an array of tables ([[{table}]])")
            return []
        return items

    def records(self, doc, table, cls, required=()):
        """``cls`` of each entry of the array of tables ``[[table]]``, in file order: None
        where a field has the wrong kind, left out where one cannot be read (a finding
        each)."""
        out = []
        for i, item in enumerate(self.items(doc, table)):
            f, where = self.fields(table, item, i, required=required)
            if f is not None:
                out.append(self.make(cls, where, **f))
        return out


def read_toml(text, path="<string>"):
    """The TOML document ``text`` (of the file ``path``) as a dict: the one reader of the
    project's TOML files (system files, model files).

    Raises
    ------
    SpecError
        Naming the file, and the line and column where TOML says, for malformed TOML; an
        integer of more than 4300 digits (Python refuses to read one: ValueError) or arrays
        nested past Python's recursion limit (RecursionError), which no size, address or
        count needs.

    >>> read_toml("x = " + "[" * 5000 + "]" * 5000, "m.toml")
    Traceback (most recent call last):
    ...
    fabric.SpecError: m.toml: arrays or tables nested too deeply to read (no field nests more than a few levels)
    """
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise SpecError(f"{path}: arrays or tables nested too deeply to read (no field nests "
                        "more than a few levels)") from None
    except ValueError as e:
        if not isinstance(e, tomllib.TOMLDecodeError):
            # Python refuses to read an integer of more than 4300 digits; no size or
            # address is anywhere near that long
            m = re.search(r"[0-9][0-9_]{4000,}", text)
            line = f": line {text.count(chr(10), 0, m.start()) + 1}" if m else ""
            raise SpecError(f"{path}{line}: an integer of more than 4300 digits cannot be a "
                            "size, an address or a count") from None
        msg = str(e)
        m = _TOML_POSITION.search(msg)
        if m:
            msg = _TOML_POSITION.sub("", msg).strip()
            raise SpecError(f"{path}: line {m.group(1)}, column {m.group(2)}: invalid TOML: "
                            f"{msg}") from None
        raise SpecError(f"{path}: invalid TOML: {msg}") from None


def read_system(text, path="<string>", *, build):
    """Read a system from TOML text; see :func:`load_system`.

    Parameters
    ----------
    text : str
        The TOML text of a system file (the format of :func:`load_system`).
    path : str
        The name findings and errors give as the file's, shown whole as given (a path is read
        whole, not cut as a long value is: its end names the file; lead's decision, session 37).
    build : callable
        ``spec -> Fabric`` (``topologies.build``).

    Returns
    -------
    System

    Examples
    --------
    >>> import topologies
    >>> s = read_system('[system]\\ntopology = "torus:4x4,chip=h100"\\n', build=topologies.build)
    >>> s.fabric.n_endpoints
    16
    """
    if not isinstance(text, str):
        # a path or bytes raised "'PosixPath' object has no attribute 'removeprefix'"
        hint = (" (to read a file, load_system(path))" if isinstance(text, os.PathLike) else
                " (decode it first, or load_system(path) for a file)"
                if isinstance(text, (bytes, bytearray)) else "")
        raise kind_error(text, "read_system's text", "the TOML text of a system file (a str)",
                         tail=hint)
    text = text.removeprefix("\ufeff")     # a UTF-8 byte order mark, as some editors write
    doc = read_toml(text, path)
    r = _Reader(path, text, doc)
    sysw = r.where("system")
    system = doc.get("system")
    if not isinstance(system, dict) or "topology" not in system:
        raise SpecError(f"{sysw.split(' ')[0]}: a system file needs a [system] table with "
                        "topology = \"<preset or spec>\"")
    unknown = sorted(set(doc) - set(_KEYS))
    if unknown:
        r.bad(f"{path}", unknown_fault(unknown, "tables", _KEYS))
    sys_fields, _ = r.fields("system", system, required=("topology",))
    if not isinstance(system["topology"], str):
        raise SpecError(f"{sysw}: topology must be a string naming a preset or spec (e.g. "
                        f"\"sd200-ultra\"), got {show_value(system['topology'])}")
    try:
        fabric = build(system["topology"])
    except SpecError as e:
        raise SpecError(f"{sysw}: topology {show_value(system['topology'])}: {e}") from None
    try:
        if sys_fields and "chip" in sys_fields:     # its figures replace the old chip's
            fabric = fabric.with_chip(sys_fields["chip"])
        if sys_fields and "name" in sys_fields:
            fabric = fabric.replace(name=sys_fields["name"])
    except SpecError as e:
        raise SpecError(f"{sysw}: {e}") from None

    plan = {}
    if "address" in doc:
        f, _ = r.fields("address", doc["address"])
        plan.update(f or {})
    limits = {}
    if "limits" in doc:
        f, where = r.fields("limits", doc["limits"])
        limits.update(f or {}, where=where)
    regions = []
    for i, item in enumerate(r.items(doc, "regions")):
        f, where = r.fields("regions", item, i, required=("base", "size"))
        if f is None:
            continue
        if "owner" in f and "owners" in f:
            r.bad(where, f"[regions] gives owner = {show_value(f['owner'])} and owners = "
                  f"{show_value(f['owners'])}: give one of them")
            continue
        owner = f.pop("owners", None) or f.pop("owner", None)
        if owner is None:
            r.bad(where, "[regions] needs owner or owners")
            continue
        f.pop("owner", None)
        regions.append(r.make(Region, where, owner=owner, **f))
    interleave = []
    for i, item in enumerate(r.items(doc, "interleave")):
        f, where = r.fields("interleave", item, i, required=("owners", "granularity", "size"))
        if f is not None and plan.get("layout") == "explicit":
            # placed by the layout, and the explicit layout places nothing: the set would
            # sit at base 0, which the file does not say
            r.bad(where, "an [[interleave]] set is placed by the layout, and the explicit "
                  "layout places only what says where: give the set as [[regions]] with "
                  "owners, granularity and base")
        elif f is not None:
            interleave.append(r.make(Region, where, base=0, owner=tuple(f.pop("owners")),
                                     kind=f.pop("kind", "dram"), **f))
    windows = r.records(doc, "windows", Window, required=("host", "local_base"))
    grants = None
    if "grants" in doc:
        grants = r.records(doc, "grants", Grant, required=("host", "target"))
    heap = None
    if "heap" in doc:
        f, where = r.fields("heap", doc["heap"], required=("size",))
        chips_doc = doc["heap"].get("chips") if isinstance(doc["heap"], dict) else None
        if f is not None and chips_doc is not None:
            if not isinstance(chips_doc, dict) or not all(isinstance(v, dict)
                                                          for v in chips_doc.values()):
                r.bad(where, "[heap.chips] must hold one table per chip, e.g. "
                      "[heap.chips.chip5] with offset and size")
                f = None
            else:
                chips = {}
                for chip, ov in chips_doc.items():
                    unknown = sorted(set(ov) - {"offset", "size"})
                    if unknown:
                        r.bad(where, f"[heap.chips.{chip}]: "
                              + unknown_fault(unknown, "keys", ("offset", "size")))
                    o = {k: r.value("heap", k, v, where) for k, v in ov.items()
                         if k in ("offset", "size")}
                    chips[chip] = {k: v for k, v in o.items() if v is not None}
                f["chips"] = chips or None
        if f is not None:
            heap = r.make(SymmetricHeap, where, **f)
    regions = [x for x in regions if x is not None]
    interleave = [x for x in interleave if x is not None]
    windows = [x for x in windows if x is not None]
    if grants is not None:
        grants = [x for x in grants if x is not None]
    try:
        plan_obj = AddressPlan(
            interleave=interleave, regions=regions, windows=windows, grants=grants, heap=heap,
            limits=DomainLimits(**limits), **plan)
    except TypeError as e:
        raise SpecError(f"{path}: {e}") from None
    fabric = fabric.replace(address_plan=plan_obj)
    return System(fabric, path, tuple(r.findings))


def load_system(path, *, build):
    r"""Read a system file.

    The fabric package does not know the topology builders (they import it, not the
    other way round), so the caller passes the function that turns the file's
    ``topology`` spec into a Fabric; ``topologies.load_system(path)`` passes
    ``topologies.build``.

    Parameters
    ----------
    path : str or os.PathLike
    build : callable
        ``spec -> Fabric``.

    Returns
    -------
    System

    Raises
    ------
    OSError
        If the file cannot be read.
    SpecError
        If it is not valid TOML (with line and column) or names no usable topology.

    Examples
    --------
    >>> import pathlib, tempfile, topologies
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d) / "s.toml"
    ...     _ = path.write_text('[system]\ntopology = "torus:4x4,chip=h100"\n')
    ...     load_system(path, build=topologies.build).fabric.n_endpoints
    16
    """
    path = file_name(path, "path")      # (its str() named a file: 5 read a file called '5')
    return read_system(read_text(path), path, build=build)


def file_name(path, what=""):
    """``path`` as a string, refused (:class:`~fabric.SpecError`, naming ``what`` and the name)
    if it holds a NUL character, which no file name can (the operating system's call would
    raise ValueError, not OSError): the one check of every file the project reads or writes.
    A name is a str, bytes or a path-like object; anything else is a TypeError (its ``str()``
    named a file: ``None`` read or wrote a file called "None", an object one called
    "<object object at 0x...>").

    >>> file_name("a\\x00b", "--out")
    Traceback (most recent call last):
    ...
    fabric.SpecError: --out 'a\\x00b': no file is named with a NUL character
    >>> file_name(None, "--out")
    Traceback (most recent call last):
    ...
    TypeError: --out must be a file name (a str, bytes or a path-like object), got None (a NoneType)
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise kind_error(path, what or "path",
                         "a file name (a str, bytes or a path-like object)")
    text = os.fsdecode(path)
    if "\0" in text:
        raise SpecError(f"{what + ' ' if what else ''}{show_value(text)}: no file is named with "
                        "a NUL character")
    return text


def read_text(path):
    """The text of the file at ``path`` as UTF-8 (a byte order mark accepted and dropped): what
    every TOML file the project reads is (system files, model files).

    Raises
    ------
    OSError
        If the file cannot be read.
    SpecError
        Naming the file and the first byte that is not UTF-8, or a name holding a NUL
        character, which no file has (``open`` would raise a ValueError).

    >>> read_text("a\\x00.toml")
    Traceback (most recent call last):
    ...
    fabric.SpecError: 'a\\x00.toml': no file is named with a NUL character
    """
    with open(file_name(path), "rb") as fh:
        raw = fh.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not UTF-8 text (byte {e.start})") from None
