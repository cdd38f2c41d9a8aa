"""``cofabric check`` and ``cofabric translate``: the address-plan commands.

``cofabric check FILE.toml [--json]`` prints every finding of a system file's
address plan; exit status 0 when it has no error finding (warnings allowed),
1 when it has one, 2 when the file cannot be read or parsed (one line saying
where). ``cofabric translate SYSTEM --host H ADDRESS [--json]`` translates one
host-local address, SYSTEM being a topology spec, a preset or a system file.
"""

import os
import re

from ._json_units import to_json

__all__ = []


def register(sub):
    p = sub.add_parser(
        "check", help="check a system file's address plan",
        description="Check the address plan of a system file (TOML) and print every finding: "
                    "overlap, misaligned, out-of-range, dangling-target, alias (a warning), "
                    "isolation, too-many-entries, symmetric-mismatch, roundtrip, unreachable, "
                    "capacity, invalid. Exit 0 when no finding is an error, 1 when one is, 2 "
                    "when the file cannot be read.")
    p.add_argument("file", metavar="FILE.toml", help="system file")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(func=run_check)

    p = sub.add_parser(
        "translate", help="translate a host-local address to a global address",
        description="Translate ADDRESS in host H's local address space to the global address, "
                    "the owner that holds it and the offset on that owner. SYSTEM is a "
                    "topology spec (hypermesh:4x4x4), a preset (sd200-ultra) with the default "
                    "address plan, or a system file (.toml).")
    p.add_argument("system", metavar="SYSTEM", help="spec, preset or system file")
    p.add_argument("--host", required=True, metavar="H", help="host domain, e.g. host0")
    p.add_argument("address", metavar="ADDRESS", help="local address, e.g. 0x1000 or 4096")
    # argparse reads '-0x10' or '-1e3' as an unknown option (its negative-number rule
    # is decimal digits only) and then says ADDRESS is missing; translate has no option
    # that starts with a digit, so any '-<digit>' argument is the address and meets
    # the address parser's own 'must be non-negative' error.
    p._negative_number_matcher = re.compile(r"^-\.?\d")
    p.add_argument("--write", action="store_true",
                   help="check the access as a store (default: a load)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_translate)


def run_check(args):
    from fabric import check
    from topologies import load_system

    system = load_system(args.file)
    findings = check(system)
    n_err = sum(f.severity == "error" for f in findings)
    n_warn = len(findings) - n_err
    if args.json:
        print(to_json({"file": args.file, "errors": n_err, "warnings": n_warn,
                          "findings": [{"code": f.code, "severity": f.severity,
                                        "message": f.message, "where": f.where}
                                       for f in findings]}))
    else:
        for f in findings:
            print(f"{f.where}: {f.severity}: {f.code}: {f.message}")
        verdict = "clean" if not findings else f"{n_err} error(s), {n_warn} warning(s)"
        print(f"{args.file}: {verdict}")
    return 1 if n_err else 0


def fabric_of(system):
    """The fabric a SYSTEM argument names: a system file (.toml) with its plan, or a spec.

    A system file with invalid values is refused (entries with bad values were left
    out of its plan). Shared by ``translate``, ``route`` and ``latency``.
    """
    from fabric import SpecError
    from topologies import load_system

    if system.endswith(".toml") or os.path.isfile(system):
        loaded = load_system(system)
        bad = [f for f in loaded.findings if f.severity == "error"]
        if bad:
            # entries with bad values were left out of the plan: translating through
            # what remains would answer for a different plan than the file describes
            raise SpecError(f"{system} has {len(bad)} invalid value(s), first: {bad[0].where}: "
                            f"{bad[0].message}; run cofabric check {system}")
        return loaded.fabric
    import topologies

    return topologies.build(system)


def run_translate(args):
    from fabric import format_address

    fabric = fabric_of(args.system)
    t = fabric.translate(args.host, args.address, op="write" if args.write else "read")
    result = {"host": t.host, "local": format_address(t.local_address),
              "global": format_address(t.global_address), "owner": str(t.owner),
              "offset": format_address(t.offset), "region": t.region, "window": t.window}
    if args.json:
        print(to_json(result))
    else:
        print(f"{t.host} {result['local']} -> global {result['global']}: {t.owner} offset "
              f"{result['offset']} (region {t.region}, window {t.window!r})")
    return 0
