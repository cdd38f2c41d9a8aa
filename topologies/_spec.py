"""Spec strings: ``"family:positional,key=value,..."`` or a preset name -> Fabric.

Grammar: a family name, a colon, then comma-separated items. The first item may
be positional (a shape ``4x4x8`` or a number); the rest are ``key=value``.
Per-dimension values are separated by ``/`` (``connect=full/ring/line``).

=========================  =====================================================
spec                        builder call
=========================  =====================================================
``hypermesh:4x4x8``         ``hypermesh((4, 4, 8))`` (options: connect, links,
                            hosts, tech)
``torus:8x8x8``             ``torus((8, 8, 8))`` (links, hosts, tech)
``mesh:4x4x4``              ``mesh((4, 4, 4))``
``fattree:k=8``             ``fat_tree(8)`` (or ``fattree:8``; pods, hosts, tech)
``leafspine:k=16,over=3``   ``leaf_spine(16, 3)`` (leaves, hosts, tech)
``rail:servers=16,gpus=8``  ``rail_optimized(16, 8)`` (spines, chip, nic=ib-ndr or
                            roce-400g, scaleup=nvlink4, links=18, nvls=1, pix=1)
``switch:72,planes=18``     ``switched(72, 18)`` (links, tech, hosts)
``dragonfly:h=2``           ``dragonfly(2)`` (a, p, tech)
``sd200-ultra``             a preset: see :data:`PRESETS`
``sd200-ultra:chip=h100``   the preset with another chip (the fabric unchanged)
=========================  =====================================================

``chip=`` sets the compute chip (its memory, HBM bandwidth and FLOP/s) and never the
fabric, in every family and preset: its links stay the family's (``tech=``, or on ``rail``
``scaleup=`` and ``nic=``). So ``rail:servers=2,gpus=8,chip=b200`` is B200s on NVLink4,
the rail default; a B200 server is ``hgx-b200``, a cluster of them
``rail:...,chip=b200,scaleup=nvlink5``.

Examples
--------
>>> build("torus:4x4x4").n_endpoints
64
>>> build("sd200-ultra:chip=h100").chip.name
'h100'
>>> build("hypermesh:4x0x8")
Traceback (most recent call last):
...
fabric.SpecError: 'hypermesh:4x0x8': shape[1] must be an integer >= 1, got shape[1]=0
>>> build("fattree:k=7")
Traceback (most recent call last):
...
fabric.SpecError: 'fattree:k=7': fat-tree k must be even and >= 2, got k=7
"""

from fabric import Fabric, SpecError
from fabric._units import is_numeral, kind_error, show_value, text_of, unknown_fault

from ._clos import fat_tree, leaf_spine, rail_optimized
from ._hypermesh import hypermesh, mesh, torus
from ._presets import PRESETS
from ._switched import dragonfly, switched

__all__ = ["FAMILIES", "build", "parse_spec"]


def _shape(text):
    parts = [p.strip() for p in text.split("x")]
    if not all(is_numeral(p) for p in parts):
        raise SpecError(f"shape must look like 4x4x8, got {show_value(text)}")
    return tuple(int(p) for p in parts)


def _int(text, key):
    if not is_numeral(text.strip()):
        raise SpecError(f"{key} must be an integer, got {key}={show_value(text)}")
    return int(text)


def _dims(text, key, convert):
    parts = text.split("/")
    values = [convert(p, key) for p in parts]
    return values[0] if len(values) == 1 else tuple(values)


def _str(text, key):
    return text


def _bool(text, key):
    v = text.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise SpecError(f"{key} must be a yes/no flag (1/0, true/false), got {key}={show_value(text)}")


# family -> (builder, positional key, {option: (builder keyword, converter)})
FAMILIES = {
    "hypermesh": (hypermesh, "shape", {
        "shape": ("shape", lambda t, k: _shape(t)),
        "connect": ("connect", lambda t, k: _dims(t, k, _str)),
        "links": ("links", lambda t, k: _dims(t, k, _int)),
        "hosts": ("chips_per_host", _int), "tech": ("tech", _str), "chip": ("chip", _str)}),
    "torus": (torus, "shape", {
        "shape": ("shape", lambda t, k: _shape(t)),
        "links": ("links", lambda t, k: _dims(t, k, _int)),
        "hosts": ("chips_per_host", _int), "tech": ("tech", _str), "chip": ("chip", _str)}),
    "mesh": (mesh, "shape", {
        "shape": ("shape", lambda t, k: _shape(t)),
        "links": ("links", lambda t, k: _dims(t, k, _int)),
        "hosts": ("chips_per_host", _int), "tech": ("tech", _str), "chip": ("chip", _str)}),
    "fattree": (fat_tree, "k", {
        "k": ("k", _int), "pods": ("pods", _int), "hosts": ("chips_per_host", _int),
        "tech": ("tech", _str), "chip": ("chip", _str)}),
    "leafspine": (leaf_spine, "k", {
        "k": ("k", _int), "over": ("oversubscription", _int), "leaves": ("leaves", _int),
        "hosts": ("chips_per_host", _int), "tech": ("tech", _str), "chip": ("chip", _str)}),
    "rail": (rail_optimized, "servers", {
        "servers": ("servers", _int), "gpus": ("gpus_per_server", _int),
        "spines": ("spines", _int), "chip": ("chip", _str), "nic": ("nic_tech", _str),
        "scaleup": ("scaleup_tech", _str), "links": ("scaleup_links", _int),
        "nvls": ("reduction", _bool), "pix": ("nic_share", _int)}),
    "switch": (switched, "n", {
        "n": ("n", _int), "planes": ("planes", _int),
        "links": ("links", lambda t, k: _dims(t, k, _int)), "tech": ("tech", _str),
        "hosts": ("chips_per_host", _int), "chip": ("chip", _str)}),
    "dragonfly": (dragonfly, "h", {
        "h": ("h", _int), "a": ("a", _int), "p": ("p", _int), "tech": ("tech", _str),
        "chip": ("chip", _str)}),
}


def parse_spec(spec):
    """Split a spec string into ``(family, {builder keyword: value})``.

    Parameters
    ----------
    spec : str
        ``"family:options"``: a family of :data:`FAMILIES` (``hypermesh``, ``torus``,
        ``mesh``, ``fattree``, ``leafspine``, ``rail``, ``switch``, ``dragonfly``), then
        comma-separated ``key=value`` options, the first of which may be given bare (the
        family's positional one: ``torus:8x8x8`` is ``shape=8x8x8``). Values carry their
        units (``400Gb/s``, ``0.69us``).

    Returns
    -------
    tuple
        The family's name and a dict from its builder's keywords to the values read.

    Raises
    ------
    TypeError
        For a spec that is not a str.
    SpecError
        For an unknown family or option, an option given twice, a value that does not read,
        or a missing positional option.

    Examples
    --------
    >>> parse_spec("hypermesh:8x4x4,connect=switch")
    ('hypermesh', {'shape': (8, 4, 4), 'connect': 'switch'})
    """
    text_of(spec, "a spec")
    family, _, rest = spec.strip().partition(":")
    family = family.strip().lower()
    if family not in FAMILIES:
        known = sorted(FAMILIES) + sorted(PRESETS)
        hint = ""
        if spec.strip().lower().endswith(".toml"):
            hint = ("; a system file (.toml) is not a spec: it is read by "
                    "topologies.load_system, and in the CLI by check, translate, route and "
                    "latency")
        raise SpecError(unknown_fault(family, "topology family or preset", known, hint))
    _, positional, options = FAMILIES[family]
    kwargs = {}
    items = [i.strip() for i in rest.split(",")] if rest.strip() else []
    for n, item in enumerate(items):
        key, eq, value = item.partition("=")
        if not eq:
            if n != 0:
                raise SpecError(f"option {show_value(item)} needs key=value (only the first item "
                                "may be positional)")
            key, value = positional, item
        key = key.strip()
        if key not in options:
            raise SpecError(f"{family}: " + unknown_fault(key, "option", options))
        name, convert = options[key]
        if name in kwargs:
            raise SpecError(f"option {show_value(key)} is given twice")
        kwargs[name] = convert(value.strip(), key)
    if options[positional][0] not in kwargs:
        raise SpecError(f"{family} needs {positional} (e.g. {_EXAMPLES[family]})")
    return family, kwargs


_EXAMPLES = {"hypermesh": "hypermesh:4x4x8", "torus": "torus:8x8x8", "mesh": "mesh:4x4x4",
             "fattree": "fattree:k=8", "leafspine": "leafspine:k=16,over=3",
             "rail": "rail:servers=16,gpus=8", "switch": "switch:72,planes=18",
             "dragonfly": "dragonfly:h=2"}


def build(spec):
    """Build the Fabric a spec string or preset name describes (a Fabric passes through).

    Parameters
    ----------
    spec : str or fabric.Fabric
        A preset's name (``"sd200-ultra"``, ``"cluster-128"``, ...; :data:`PRESETS`), a preset
        with options (``"sd200-ultra:chip=h100"``), or a family and its options
        (``"torus:8x8x8"``, ``"fattree:k=8"``, ``"rail:servers=16,gpus=8"``; :func:`parse_spec`).
        Case and surrounding spaces are ignored.

    Returns
    -------
    fabric.Fabric
        A new fabric (``spec`` itself when it is one).

    Raises
    ------
    TypeError
        For a spec that is neither a str nor a Fabric.
    SpecError
        Naming the spec and what is wrong with it.

    Examples
    --------
    >>> f = build("torus:4x4")
    >>> f.n_endpoints, f.structure.shape
    (16, (4, 4))
    >>> build("sd200-ultra").n_endpoints
    128
    """
    if isinstance(spec, Fabric):
        return spec
    if not isinstance(spec, str):
        raise kind_error(spec, "spec", "a str (a spec or a preset's name) or a fabric.Fabric")
    if spec.strip().lower() in PRESETS:
        return PRESETS[spec.strip().lower()]()
    if spec.partition(":")[0].strip().lower() in PRESETS:
        return _preset_with_chip(spec)
    try:
        family, kwargs = parse_spec(spec)
    except SpecError as e:
        raise SpecError(f"{show_value(spec)}: {e}") from None
    try:
        return FAMILIES[family][0](name=spec.strip(), **kwargs)
    except SpecError as e:
        raise SpecError(f"{show_value(spec)}: {_as_spec_option(family, str(e))}") from None


def _as_spec_option(family, message):
    """A builder's error names its keyword (``nic_share must be ...``); a spec's reader
    typed the option (``pix=0``): name the option first, the keyword after.

    >>> _as_spec_option("rail", "nic_share must be an integer >= 1, got 0")
    'pix (nic_share) must be an integer >= 1, got 0'
    >>> _as_spec_option("rail", "nic_tech: unknown link technology 'foo'")
    "nic (nic_tech): unknown link technology 'foo'"
    """
    for key, (keyword, _) in FAMILIES[family][2].items():
        if key != keyword and message[len(keyword):len(keyword) + 1] in (" ", ":") \
                and message.startswith(keyword):
            return f"{key} ({keyword}){message[len(keyword):]}"
    return message


def _preset_with_chip(spec):
    """``"<preset>:chip=<chip>"``: the preset's fabric with another chip, for comparisons
    that hold the chip fixed; the chip's figures replace the old chip's in the assumptions."""
    from fabric import chip_spec

    preset, _, rest = spec.strip().partition(":")
    key, eq, value = rest.partition("=")
    if not eq or key.strip() != "chip" or "," in value:
        raise SpecError(f"{show_value(spec)}: a preset takes one option, chip=<name> (e.g. "
                        "sd200-ultra:chip=h100)")
    f = PRESETS[preset.strip().lower()]()
    try:
        chip = chip_spec(value.strip())
    except SpecError as e:
        raise SpecError(f"{show_value(spec)}: {e}") from None
    return f.with_chip(chip).replace(name=spec.strip())
