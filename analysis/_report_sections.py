"""Report sections computed from a fabric directly: structure, access latency,
all-to-all link utilization, failures, topology drawings, assumptions.

Each ``<section>_section(fabrics)`` returns a :class:`~analysis._report_parts.Section`
and its findings; the sweep-based sections are in :mod:`analysis._report_sweeps`.
"""

import functools

import numpy as np

from . import _metrics, _plots
from ._report_findings import (
    BEST_ROUTING_METRIC,
    failure_findings,
    latency_findings,
    structure_findings,
    utilization_findings,
)
from ._report_parts import (
    NO_RUNTIME,
    Column,
    FigureSpec,
    Section,
    Table,
    computed_bandwidth,
    computed_time,
    fmt_float,
    fmt_optional,
    fmt_value,
    integer_locator,
    loadstore_everywhere,
    new_figure,
    report_fabric,
    slug,
)

__all__ = []


# -- structure --------------------------------------------------------------------------


def _draw_hops(hops):
    fig = new_figure()
    ax = fig.subplots()
    names = list(hops)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        counts = hops[name]
        h = np.arange(len(counts))
        frac = counts / counts.sum()
        ax.bar(h[1:] + (i - (len(names) - 1) / 2) * width, frac[1:], width=width, label=name)
    ax.set_xlabel("hops between chips")
    ax.set_ylabel("fraction of chip pairs")
    ax.xaxis.set_major_locator(integer_locator())
    # below the axes: inside, it sat on the tallest bars (nvl72 at 2 hops, cluster-128 at 6)
    ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
              frameon=False)
    return fig


def structure_section(fabrics):
    import fabric as fab

    rows, hops = [], {}
    for name, f in fabrics.items():
        m = _metrics.metrics(f)
        counts, _ = _metrics.hop_distribution(f)
        hops[name] = counts
        try:
            ft = fab.forwarding_tables(f)
        except fab.AddressMapError:
            ft = None  # no address map without a chip (its HBM size): no tables to size
        rows.append({
            "system": name, "family": f.family, "endpoints": m.endpoints,
            "switches": m.switches, "links": m.links, "diameter_hops": m.diameter,
            "mean_hops": m.avg_hops, "bisection_links": m.bisection_links,
            "bisection_bandwidth_Bps": m.bisection_bandwidth,
            "bisection_exact": m.bisection_exact,
            "bisection_per_chip_Bps": m.bisection_bandwidth / m.endpoints,
            "injection_bandwidth_Bps": m.injection_bandwidth,
            "switch_ports": m.switch_ports, "ports": m.ports,
            "a2a_throughput_per_chip_Bps": _all_to_all(f)["throughput"],
            "forwarding_entries_max": None if ft is None else ft.max_entries,
            "forwarding_entries_per_dimension": None if ft is None else ft.per_dimension_entries,
        })
    # Shown compactly (no horizontal scroll); every field, switches, links and ports
    # included, is in summary.csv. Parts counted like for like are in the cost section.
    columns = (
        Column("system", "system"), Column("endpoints", "chips"),
        Column("diameter_hops", "diameter (hops)"),
        Column("mean_hops", "mean hops", fmt_float(3)),
        Column("bisection_per_chip_Bps", "bisection per chip", computed_bandwidth),
        Column("injection_bandwidth_Bps", "injection per chip", computed_bandwidth),
        Column("a2a_throughput_per_chip_Bps", "all-to-all per chip", computed_bandwidth),
        Column("forwarding_entries_max", "forwarding entries", fmt_optional),
    )
    caption = ("Bandwidths are per direction. Mean hops over distinct ordered chip pairs. "
               "All-to-all per chip: uniform all-to-all routed by the fabric's policy (see "
               f"below; routed link loads, {NO_RUNTIME}). Forwarding entries: the largest "
               "per-node table from address ranges to ports after merging (per-dimension tables, where the owner bits are the "
               "chip's coordinates, in summary.csv). Switches, links and ports: summary.csv; "
               "parts counted the same way on every system: Cost and power.")
    inexact = [r["system"] for r in rows if not r["bisection_exact"]]
    caption = ("Links count parallel cables one by one (cables); ports are link ends; "
               "bandwidths are per direction. Mean hops over distinct ordered chip pairs. "
               "All-to-all per chip: uniform all-to-all routed by the fabric's policy (see "
               f"below; routed link loads, {NO_RUNTIME}). Forwarding entries: the largest "
               "per-node table from address ranges to ports after merging; per-dimension: the entries per node when the owner "
               "bits of the address are the chip's coordinates (hyper-meshes with "
               "power-of-two sides).")
    if inexact:
        caption += (" Bisection of " + ", ".join(inexact) + " is that of a balanced structural "
                    "cut: an upper bound on the minimum bisection.")
    table = Table("summary", "Summary per system", columns, tuple(rows), caption)
    fig = FigureSpec("hops", "Hops between chip pairs",
                     "Distribution of the hop count over distinct ordered chip pairs.",
                     functools.partial(_draw_hops, hops))
    section = Section("structure", "Structure", tables=(table,), figures=(fig,))
    return section, structure_findings(rows)


# -- access latency ---------------------------------------------------------------------

#: Payload of the accesses in the latency distributions: one 64 B cache line.
ACCESS_BYTES = 64


def _transport_curves(f):
    """(label, transport description, latencies per op) for one system.

    Every system gets its load/store distribution; a system where load/store does not
    reach every chip (a cluster: NICs, InfiniBand) is shown as it is used, the native
    transport per pair (:func:`fabric.reach`): load/store inside a load/store domain
    (a server's NVLink), RDMA across.
    """
    import fabric as fab

    curves = []
    if not loadstore_everywhere(f):
        per_op = {op: fab.access_latencies(f, op=op, size=ACCESS_BYTES, transport="native")[2]
                  for op in ("store", "load")}
        # the legend names both transports: the pairs inside a host (the curve's first
        # step) are load/store, not RDMA
        how = "load/store in a host, RDMA across hosts"
        curves.append((f"{f.name} {how}", how, per_op))
    else:
        per_op = {op: fab.access_latencies(f, op=op, size=ACCESS_BYTES,
                                           transport="loadstore")[2]
                  for op in ("store", "load")}
        curves.append((f"{f.name} load/store", "load/store", per_op))
    return curves


def _draw_latency(samples):
    fig = new_figure()
    axes = fig.subplots(1, 2, sharey=True)
    for ax, op in zip(axes, ("store", "load")):
        what = "store, one way" if op == "store" else "load, round trip"
        _plots.plot_latency_cdf({k: v[op] for k, v in samples.items()}, ax=ax,
                                xlabel=f"64 B {what}")
        ax.get_legend().remove()
    axes[1].set_ylabel("")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 2))
    return fig


def latency_section(fabrics):
    import fabric as fab

    rows, samples, used = [], {}, []
    for name, f in fabrics.items():
        nics = not loadstore_everywhere(f)
        for t in ("loadstore", "rdma") if nics else ("loadstore",):
            used += [(name, p) for p in fab.transport(t).parameters()]
        for label, how, per_op in _transport_curves(f):
            samples[label] = per_op
            for op, lat in per_op.items():
                st = fab.latency_stats(lat)
                rows.append({"system": name, "transport": how, "op": op,
                             "size_bytes": ACCESS_BYTES, "pairs": st.count, "min_s": st.min,
                             "mean_s": st.mean, "p50_s": st.p50, "p99_s": st.p99,
                             "max_s": st.max})
    columns = (Column("system", "system"), Column("transport", "transport"),
               Column("op", "op"), Column("min_s", "min", computed_time),
               Column("mean_s", "mean", computed_time), Column("p50_s", "median", computed_time),
               Column("p99_s", "p99", computed_time), Column("max_s", "max", computed_time))
    table = Table("latency", "Access latency over all chip pairs", columns, tuple(rows),
                  "A 64B load or store from every chip to every other chip's memory: "
                  "requester stages, path (hops and wires), serialization at the narrowest "
                  "link, responder stages, and for a load the return: the transport's own "
                  f"costs, {NO_RUNTIME}. Transport parameters are listed under Assumptions.")
    fig = FigureSpec("latency", "Access latency over chip pairs",
                     "Distribution over all ordered chip pairs of a 64B store (one way) and "
                     "load (round trip): memory-semantic load/store; where load/store does "
                     "not reach every chip, load/store inside a host (the curve's first "
                     f"step) and RDMA across hosts; the transport's own costs, {NO_RUNTIME}.",
                     functools.partial(_draw_latency, samples), column="double")
    return Section("latency", "Access latency", tables=(table,), figures=(fig,),
                   parameters=tuple(used)), latency_findings(rows)


# -- all-to-all, link utilization and failures ------------------------------------------

#: Bytes each chip sends to each other chip in the all-to-all of the failure table.
A2A_BYTES_PER_PAIR = 2**20


def _all_to_all(f, chips=None):
    """Uniform all-to-all among ``chips`` (default all), one byte per ordered pair, routed.

    Returns the per-directed-link seconds per byte (load / bandwidth), the drain
    time (the busiest link's), each chip's throughput ((n - 1) bytes sent in the
    drain time) and the one-way path latencies of the pairs.
    """
    r = f.router
    ep = f.endpoint_indices if chips is None else np.array(
        [f.node_index[c] for c in chips], dtype=np.int64)
    src, dst = np.meshgrid(ep, ep, indexing="ij")
    off = src != dst
    src, dst = src[off], dst[off]
    seconds = r.loads(src, dst, 1.0) / r.link_bandwidth
    drain = float(seconds.max())
    return {"seconds": seconds, "drain": drain, "throughput": (len(ep) - 1) / drain,
            "latency": r.latency(src, dst)}


def _draw_utilization(util):
    fig = new_figure()
    ax = fig.subplots()
    _plots.plot_link_utilization(util, ax=ax)
    return fig


def utilization_section(fabrics):
    rows, util = [], {}
    for name, f in fabrics.items():
        a2a = _all_to_all(f)
        u = a2a["seconds"] / a2a["drain"]
        util[name] = u
        k = int(np.argmax(a2a["seconds"]))
        tail, head = f.router.link_name(k)
        rows.append({"system": name, "a2a_throughput_per_chip_Bps": a2a["throughput"],
                     "busiest_link": f"{tail}->{head}", "links_directed": len(u),
                     "links_idle": int(np.sum(u == 0)),
                     "links_over_half": int(np.sum(u > 0.5)),
                     "mean_utilization": float(u.mean())})
    columns = (Column("system", "system"),
               Column("a2a_throughput_per_chip_Bps", "all-to-all per chip", computed_bandwidth),
               Column("mean_utilization", "mean link utilization", fmt_float(2)),
               Column("links_over_half", "links > 50%"), Column("links_idle", "idle links"),
               Column("links_directed", "directed links"),
               Column("busiest_link", "a busiest link"))
    table = Table("all_to_all", "Uniform all-to-all, routed", columns, tuple(rows),
                  "Every chip sends the same amount to every other; routes by each fabric's "
                  "policy, bytes split over its equal-cost paths (evenly; in proportion to "
                  "link bandwidth on switched fabrics). Throughput per chip = "
                  "bytes a chip sends / time the busiest link needs (routed link loads, "
                  f"{NO_RUNTIME}). Utilization = a link's "
                  "load / bandwidth over the busiest link's.")
    fig = FigureSpec("link-utilization", "All-to-all link utilization",
                     "Utilization of every directed link under uniform all-to-all, busiest "
                     f"first (1 = the bottleneck link); routed link loads, {NO_RUNTIME}.",
                     functools.partial(_draw_utilization, util))
    return Section("utilization", "All-to-all and link utilization", tables=(table,),
                   figures=(fig,)), utilization_findings(rows)


def _reduce_link(f, u, v):
    """``f`` with one physical link of the edge (u, v) failed: a bundle loses one lane
    (and that share of its bandwidth); a single link is removed. Either way
    :attr:`fabric.Fabric.failures` records it (:meth:`fabric.Fabric.without`)."""
    return f.without(lanes=[(u, v)])


def _failure_candidates(f):
    """Edges whose failure is a fabric link failing: switch-switch links, or chip-chip
    links of a direct network; where there are none (one switch tier), every edge."""
    G = f.graph
    kinds = {n: k for n, k in G.nodes(data="kind")}
    core = [i for i, (u, v) in enumerate(G.edges)
            if kinds[u] == kinds[v] and kinds[u] in ("switch", "chip")]
    return core or list(range(G.number_of_edges()))


def _best_routing_change(f, degraded, chips=None):
    """The 1MiB all-to-all of ``chips`` (default every chip) at its max-concurrent-flow
    optimum (:func:`analysis.throughput`) on ``f`` and on ``degraded``: healthy and degraded
    seconds and the change in percent. The fabric's own routing (a local repair on grids)
    is the table's 'all-to-all time'; this is the best any routing of the same links does."""
    from ._throughput import throughput

    def a2a(fab, keep):
        n = fab.n_endpoints
        m = np.full((n, n), float(A2A_BYTES_PER_PAIR))
        np.fill_diagonal(m, 0.0)
        if keep is not None:
            out = [i for i, c in enumerate(fab.endpoints) if c not in set(keep)]
            m[out, :] = 0.0
            m[:, out] = 0.0
        return throughput(fab, m).time

    h, d = a2a(f, chips), a2a(degraded, None)
    return {"healthy": h, "degraded": d, "change": 100.0 * (d - h) / h}


def _failure_rows(name, f):
    from fabric import RoutingError

    healthy = _all_to_all(f)
    per_edge = healthy["seconds"].reshape(-1, 2).max(axis=1)
    cand = _failure_candidates(f)
    e = cand[int(np.argmax(per_edge[cand]))]
    u, v = list(f.graph.edges)[e]
    victim = f.endpoints[0]
    survivors = [c for c in f.endpoints if c != victim]
    cases = (("one link", f"{u}-{v}", lambda: _reduce_link(f, u, v), None),
             ("one chip", str(victim), lambda: f.without(chips=[victim]), survivors))
    rows = []
    for failure, what, degrade, chips in cases:
        base = healthy if chips is None else _all_to_all(f, chips)
        try:
            bad = _all_to_all(degrade())
        except RoutingError as err:
            rows.append({"system": name, "failure": failure, "failed": what,
                         "metric": "all-to-all time",
                         "healthy": base["drain"] * A2A_BYTES_PER_PAIR,
                         "degraded": float("inf"), "change": float("inf"),
                         "note": f"disconnects: {err}"})
            continue
        best = {"system": name, "failure": failure, "failed": what,
                "metric": BEST_ROUTING_METRIC, **_best_routing_change(f, degrade(), chips),
                "note": ""}
        for metric, key in (("all-to-all time", "drain"), ("mean path latency", "latency"),
                            ("worst path latency", "latency")):
            if key == "drain":
                h, d = base["drain"] * A2A_BYTES_PER_PAIR, bad["drain"] * A2A_BYTES_PER_PAIR
            elif metric == "mean path latency":
                h, d = float(base["latency"].mean()), float(bad["latency"].mean())
            else:
                h, d = float(base["latency"].max()), float(bad["latency"].max())
            rows.append({"system": name, "failure": failure, "failed": what, "metric": metric,
                         "healthy": h, "degraded": d, "change": 100.0 * (d - h) / h,
                         "note": ""})
            if key == "drain":
                rows.append(best)
    return rows


def _draw_failures(rows):
    fig = new_figure()
    ax = fig.subplots()
    # each failure twice: under the fabric's own routing (on a grid a local repair, an
    # upper bound) and under the best routing of what survives
    label = {"all-to-all time": "the fabric's routing", BEST_ROUTING_METRIC: "best routing"}
    shown = [dict(r, failure=f"{r['failure']}, {label[r['metric']]}") for r in rows
             if r["metric"] in label and np.isfinite(r["change"])]
    _plots.plot_failure_cost(shown, ax=ax)
    ax.set_xlabel("all-to-all time change (%)")
    # four bars per system: the legend below the axes, where it hides no bar or value
    handles, labels = ax.get_legend_handles_labels()
    ax.get_legend().remove()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize="x-small",
               frameon=False)
    return fig


def failure_section(fabrics):
    rows = []
    for name, f in fabrics.items():
        rows.extend(_failure_rows(name, f))
    columns = (Column("system", "system"), Column("failure", "failure"),
               Column("failed", "what failed"), Column("metric", "metric"),
               Column("healthy", "healthy", _fmt_metric), Column("degraded", "degraded",
                                                                 _fmt_metric),
               Column("change", "change (%)", lambda v: f"{v:+.1f}"),
               Column("note", "note"))
    table = Table("failures", "The cost of one failure", columns, tuple(rows),
                  "One link: the busiest fabric link under all-to-all (one cable of a bundle "
                  "loses its share of the bundle's bandwidth, and ECMP keeps splitting evenly; "
                  "a single cable is removed: on a grid routed in dimension order its traffic "
                  "takes one bypass between its ends, a local repair that adds all its bytes "
                  "to the bypass's links (fabric._routing): an upper bound, since a fabric "
                  "that re-routes around the link globally loses less; on switched fabrics "
                  "routes take the shortest paths left). One chip: the first chip (on a grid "
                  "repaired link by link: what each neighbour sent into it leaves that "
                  "neighbour by one fixed stand-in link, and the run through it becomes one "
                  "shortest path between stand-ins; again an upper bound), "
                  "compared with the healthy fabric carrying the same survivors' all-to-all. "
                  "All-to-all time: 1MiB from every chip to every other (seconds in the CSV), "
                  f"the busiest link's load over its bandwidth ({NO_RUNTIME}), "
                  "under the fabric's own routing; best routing: the same work at its "
                  "max-concurrent-flow optimum before and after (analysis.throughput; any "
                  "paths, chips relaying included, so a failed chip can cost it a relay the "
                  "fabric's routing never used), what a fabric that re-routes globally could "
                  "reach.")
    fig = FigureSpec("failures", "Cost of one failed link and one failed chip",
                     "Change of the all-to-all time after one failure, under the fabric's own "
                     "routing (the busiest link's load over its bandwidth, "
                     f"{NO_RUNTIME}; on a grid a local repair, an upper bound) and under the best routing before and after "
                     "(max-concurrent flow).", functools.partial(_draw_failures, rows))
    return Section("failures", "Failures", tables=(table,), figures=(fig,)), \
        failure_findings(rows)


def _fmt_metric(v):
    return "disconnected" if v == float("inf") else computed_time(v)


# -- topology drawings and assumptions --------------------------------------------------


def _draw_topology(name):
    fabric = report_fabric(name)
    fig = new_figure()
    coords = [fabric.graph.nodes[n].get("coord") for n in fabric.endpoints]
    three_d = all(c is not None and len(c) == 3 for c in coords)
    ax = fig.add_subplot(projection="3d" if three_d else None)
    _plots.plot_topology(fabric, ax=ax)
    return fig


def _topology_stem(name, names):
    """A drawing's file name: a preset with another chip (``nvl72:chip=h100``) draws the
    preset's fabric, so it is named after the preset unless that name is taken."""
    base = name.partition(":chip=")[0]
    if base != name and sum(n.partition(":chip=")[0] == base for n in names) == 1 \
            and base not in names:
        return f"topology-{slug(base)}"
    return f"topology-{slug(name)}"


def topology_section(fabrics):
    figures = []
    for name, f in fabrics.items():
        m = f.graph.number_of_edges()
        figures.append(FigureSpec(
            _topology_stem(name, list(fabrics)), f"Topology of {name}",
            f"{name}: {f.n_endpoints} chips, {m} graph edges (a bundle of parallel links is "
            "one edge). Hyper-meshes and tori are drawn in 3D by chip coordinate (links "
            "between non-neighbours of a line as arcs); switched fabrics in layers by tier.",
            functools.partial(_draw_topology, name), height=3.0))
    return Section("topology", "Topology drawings", figures=tuple(figures)), []


def _source_key(source):
    """A source's citation: the text before the first ': ' (the fact follows it), if any;
    a citation that ends a sentence before the colon ("the seed system's link. bandwidth:
    ...") is cut at its full stop, the rest being the fact."""
    head, sep, tail = source.partition(": ")
    if sep and ". " in head:
        head, _, first = head.partition(". ")
        tail = f"{first}: {tail}"
    if head.count("(") != head.count(")"):   # the colon is inside a parenthesis: no cut
        return source, ""
    return (head, tail) if sep and len(head) >= 12 else (source, "")


def _by_source(rows, systems):
    """Rows grouped by source: each source once, with the parameters it gives and who uses
    them (read once instead of a source string per parameter)."""
    groups = {}
    for r in rows:
        head, fact = _source_key(r["source"])
        g = groups.setdefault(head, {"params": {}, "systems": [], "who": {}})
        shown = f"{r['parameter']} = {fmt_value(r['value'], r['unit'])}"
        g["params"].setdefault(shown, fact)
        g["who"].setdefault(shown, (r["parameter"], []))[1].append(r["system"])
        if r["system"] not in g["systems"]:
            g["systems"].append(r["system"])
    out = []
    for head, g in groups.items():
        # a parameter with different values on different systems says which system has which
        names = [name for name, _ in g["who"].values()]
        g["params"] = {(shown + f" [{', '.join(g['who'][shown][1])}]"
                        if names.count(g["who"][shown][0]) > 1 else shown): fact
                       for shown, fact in g["params"].items()}
        used = "all" if len(g["systems"]) == len(systems) > 1 else ", ".join(g["systems"])
        facts = set(g["params"].values())
        if len(facts) == 1:
            # one fact for every parameter of the source: said once, with the source
            fact = facts.pop()
            source = f"{head}: {fact}" if fact else head
            params = "; ".join(g["params"])
        else:
            source = head
            params = "; ".join(p + (f" ({fact})" if fact else "")
                               for p, fact in g["params"].items())
        out.append({"source": source, "parameters": params, "systems": used})
    return tuple(out)


#: The software runtimes whose constants the report's times rest on (beside 'ideal', which
#: has none): NCCL's tuner model and the symmetric-memory kernels.
REPORT_RUNTIMES = ("nccl", "symmetric-memory")


def _citations(sources):
    """Sources cited in a few words, each once: files of one repository named together
    ("NVIDIA/nccl v2.30.7-1: tuning.cc, topo.h"), any other citation up to its first
    ': ' or ' ('.

    >>> _citations(["NVIDIA/nccl src/graph/tuning.cc (release tag v2.30.7-1) x",
    ...             "NVIDIA/nccl src/include/device.h MAXCHANNELS 64",
    ...             "NVIDIA/nccl issue 1940: the least time"])
    'NVIDIA/nccl source (tuning.cc, device.h); NVIDIA/nccl issue 1940'
    """
    import re

    files, others = {}, []
    for src in sources:
        # a repository's own files: the citation opens with them ("NVIDIA/nccl [v2.30.7-1]
        # src/graph/tuning.cc ..."); a file named later is the fact's, not the citation's
        repo = re.match(r"([\w.-]+/[\w.-]+)(?: v[\w.-]+)? src/", src)
        found = re.findall(r"\bsrc/[\w/]+\.\w+", src)
        if repo:
            repo = re.match(r"[\w.-]+/[\w.-]+", src)
            names = files.setdefault(repo.group(0), [])
            names.extend(f.rsplit("/", 1)[-1] for f in found
                         if f.rsplit("/", 1)[-1] not in names)
        else:
            head = re.split(r": | \(", src, maxsplit=1)[0]
            if head not in others:
                others.append(head)
    return "; ".join([f"{repo} source ({', '.join(names)})" for repo, names in files.items()]
                     + others)


def runtime_parameters_table(names=REPORT_RUNTIMES):
    """The runtimes' own constants: one row per runtime (how many Parameters, of which
    kinds, from which sources), every Parameter with its value, unit and source in the
    CSV. The systems' Parameters table does not hold them (they are the software's, the
    same on every system), yet every time quoted under a runtime rests on them."""
    from fabric import runtime

    from ._report_parts import runtime_label

    shown, every = [], []
    for name in names:
        ps = runtime(name).parameters()
        if not ps:
            continue
        kinds = {}
        for p in ps:
            kind = p.name.split(".")[1] if p.name.count(".") >= 1 else p.name
            kinds[kind] = kinds.get(kind, 0) + 1
        label = runtime_label(name)
        shown.append({"runtime": f"'{name}'" + (f" ({label})" if name not in label else ""),
                      "count": len(ps),
                      "kinds": ", ".join(f"{k} {n}" for k, n in kinds.items()),
                      "sources": _citations(dict.fromkeys(p.source for p in ps))})
        every.extend({"runtime": name, "parameter": p.name, "value": p.value,
                      "unit": p.unit, "source": p.source} for p in ps)
    if not shown:
        return None
    return Table("runtime_parameters", "The runtimes' constants",
                 (Column("runtime", "runtime"), Column("count", "parameters"),
                  Column("kinds", "of which"), Column("sources", "sources")),
                 tuple(shown),
                 "The software between the fabric and the times quoted under a runtime "
                 "(the runtimes table and the symmetric-memory figure's right panel; the "
                 "1GiB all-reduces of the equal-cost and sensitivity findings; decode's "
                 "tensor-parallel collectives and its exchange kernels' synchronisation): "
                 "the same on every system, so not in the table above. Every constant with "
                 "its value, unit and source in runtime_parameters.csv. Runtime 'ideal' has "
                 f"none ({runtime_label('ideal')}).",
                 csv_columns=("runtime", "parameter", "value", "unit", "source"),
                 csv_rows=tuple(every))


def assumptions_section(fabrics, extra=(), runtimes=REPORT_RUNTIMES):
    """Every Parameter each system's model used: the fabric's own (links, chip, builder)
    and ``extra`` (system, Parameter) pairs from the sections (transports...); then the
    ``runtimes``' own constants (:func:`runtime_parameters_table`)."""
    rows = []
    for name, f in fabrics.items():
        params = list(f.assumptions)
        for system, p in extra:
            if system == name and p not in params:
                params.append(p)
        for p in params:
            rows.append({"system": name, "parameter": p.name, "value": p.value,
                         "unit": p.unit, "source": p.source})
    table = Table("assumptions", "Every parameter the systems use, by source",
                  (Column("source", "source"), Column("parameters", "parameters"),
                   Column("systems", "used by")), _by_source(rows, list(fabrics)),
                  "Values in SI units in assumptions.csv (one row per system and parameter).",
                  csv_columns=("system", "parameter", "value", "unit", "source"),
                  csv_rows=tuple(rows))
    rt = runtime_parameters_table(runtimes) if runtimes else None
    return Section("assumptions", "Assumptions",
                   tables=(table,) if rt is None else (table, rt)), []
