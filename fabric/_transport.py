"""Transports: how a chip reaches remote memory, as named parameter sets with sources.

Two paradigms on the same graph (DESIGN.md s.1):

``"loadstore"``
    Memory-semantic load/store (Co-Fabric, NVLink, UALink): the requester
    translates the address (a shadow window / ZMMU lookup), the transaction is
    forwarded hop by hop by address, the responder checks permission. No
    software and no NIC on the path.
``"rdma"``
    Message passing through NICs (InfiniBand / RoCE verbs): software posts a
    work request, the sending NIC fetches it and the payload over PCIe and
    packetizes, the receiving NIC writes the payload to memory, software sees a
    completion; optionally the payload is staged through a registered bounce
    buffer (a copy on each side).

The RDMA stages are calibrated against a NIC-to-NIC figure: on a fabric that
models the GPU-NIC PCIe link as a graph edge (``cluster-128``), the path adds
those two PCIe hops on top, as GPUDirect RDMA moves the payload through them.

Every field is a named number with its unit and source (see
:meth:`Transport.parameters`). Latency figures for these mechanisms are rarely
published per stage; where a figure is an assumption its source says so, and
the RDMA stages are calibrated together against one published end-to-end
figure rather than sourced one by one.

Examples
--------
>>> t = transport("rdma")
>>> round(t.per_message_overhead * 1e6, 2)       # software + both NICs, seconds -> us
1.45
>>> round(transport("loadstore").per_message_overhead * 1e9)   # translation + check, ns
30
>>> transport("carrier-pigeon")
Traceback (most recent call last):
...
fabric.SpecError: unknown transport 'carrier-pigeon'; known: loadstore, rdma
"""

import dataclasses
import math

import numpy as np

from ._errors import RoutingError
from ._fabric_arg import fabric_arg
from ._params import Parameter
from ._tech import TECHNOLOGIES
from ._units import check_choice, check_count, check_number, flag_of, lookup, text_of

__all__ = ["NATIVE", "TRANSPORTS", "Transport", "loadstore_domains", "loadstore_reaches", "reach",
           "sends_messages", "transport", "transports_for"]

_SOURCES = {
    "requester_translation": (
        "assumption: a shadow-window / requester-ZMMU lookup that hits its translation cache, "
        "a few pipeline stages (~20 ns); no vendor publishes the figure (docs/sources.md s.3 "
        "describes the mechanism: PCIe NTB windows, Gen-Z requester ZMMU)"),
    "responder_check": (
        "assumption: a responder access-key / permission compare (Gen-Z responder ZMMU, "
        "docs/sources.md s.3), ~10 ns"),
    "ls_max_payload": (
        "UALink 1.0: reads/writes/atomics of 64-256 B per transaction (docs/sources.md s.1, "
        "second-hand); 256 B taken as the largest payload per packet"),
    "ls_header": (
        "assumption: 16 B of transaction header per packet (address, opcode, tags), the order "
        "of a UALink/PCIe TLP header (PCIe TLP header 12-16 B)"),
    "software_post": (
        "calibrated (stage split an assumption): building a work request and ringing the "
        "doorbell, ~150 ns; with nic_tx, nic_rx, completion and a one-switch InfiniBand path "
        "(2 x 130 ns) the sum is 1.71 us, inside the 1.7-1.8 us small-message RDMA latency "
        "through a NIC pair (NVIDIA perftest guidance, second-hand; docs/sources.md s.1)"),
    "nic_tx": (
        "calibrated (see software_post): the sending NIC fetches the work request and the "
        "payload over PCIe (two PCIe round trips) and packetizes, ~550 ns"),
    "nic_rx": (
        "calibrated (see software_post): the receiving NIC checks and DMA-writes the payload "
        "over PCIe, ~450 ns"),
    "completion": (
        "calibrated (see software_post): the completion entry is written and polled by "
        "software, ~300 ns"),
    "rdma_max_payload": "InfiniBand MTU of 4096 B (IBTA specification vol. 1, s.7.7)",
    "rdma_header": (
        "InfiniBand headers per packet: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B (IBTA "
        "specification vol. 1, ch. 5 and 7)"),
    "copy_bandwidth": (
        "assumption: a bounce-buffer copy by the CPU, ~25 GB/s (one socket's memcpy of order "
        "10-30 GB/s); used only when bounce=True"),
}


@dataclasses.dataclass(frozen=True)
class Transport:
    """A transport: the fixed overheads and packet format of one way to reach remote memory.

    Attributes
    ----------
    name : str
    kind : {"memory", "message"}
        ``"memory"``: load/store transactions; ``"message"``: NIC messages.
    requester_translation : float
        s, address translation at the requester (load/store).
    responder_check : float
        s, permission check at the responder (load/store).
    software_post : float
        s, software posting a work request (message).
    nic_tx, nic_rx : float
        s, sending / receiving NIC processing, including their PCIe transfers (message).
    completion : float
        s, completion written and seen by software (message).
    max_payload : int
        B, the largest payload of one packet (packetization).
    header : int
        B, header bytes added to each packet on the wire.
    copy_bandwidth : float
        B/s, bounce-buffer copy rate (used when ``bounce``).
    bounce : bool
        Stage the payload through a registered bounce buffer (a copy on each side).
    """

    name: str
    kind: str
    requester_translation: float = 0.0
    responder_check: float = 0.0
    software_post: float = 0.0
    nic_tx: float = 0.0
    nic_rx: float = 0.0
    completion: float = 0.0
    max_payload: int = 256
    header: int = 16
    copy_bandwidth: float = 25e9
    bounce: bool = False
    sources: tuple = ()

    def __post_init__(self):
        text_of(self.name, "transport name")
        check_choice(self.kind, "kind", ("memory", "message"))
        for f in ("requester_translation", "responder_check", "software_post", "nic_tx",
                  "nic_rx", "completion"):
            # True is no 1 s (a TypeError: no number)
            object.__setattr__(self, f, check_number(f, getattr(self, f), 0, " seconds"))
        # a count of the wrong kind is a TypeError, one out of range a SpecError
        object.__setattr__(self, "max_payload", check_count(
            self.max_payload, "max_payload", 1, "a positive int of bytes"))
        object.__setattr__(self, "header", check_count(
            self.header, "header", 0, "an int of bytes >= 0"))
        # numpy's numbers kept as the Python ones they equal (check_count's ints too), so a
        # packet count of np.uint8 cannot wrap
        object.__setattr__(self, "copy_bandwidth", check_number(
            "copy_bandwidth", self.copy_bandwidth, 0, " B/s", strict=True))
        object.__setattr__(self, "bounce", flag_of(self.bounce, "bounce"))

    @property
    def per_message_overhead(self):
        """Fixed seconds per message, excluding the path: collectives' alpha per message.

        Load/store: requester translation + responder check. Message passing:
        software post + NIC send + NIC receive + completion.
        """
        return (self.requester_translation + self.responder_check + self.software_post
                + self.nic_tx + self.nic_rx + self.completion)

    def packets(self, size):
        """Number of packets a payload of ``size`` bytes needs (at least one); ``size`` a count
        of bytes >= 0 (:func:`check_count`: ``-1`` or ``True`` was priced as one packet).

        >>> transport("rdma").packets(8193), transport("rdma").wire_bytes(8193)
        (3, 8271)
        """
        return max(1, math.ceil(check_count(size, "size") / self.max_payload))

    def wire_bytes(self, size):
        """Bytes on the wire for a payload of ``size`` bytes: payload + a header per packet."""
        return size + self.packets(size) * self.header

    def copy_time(self, size):
        """Seconds of bounce-buffer copying for ``size`` bytes (both sides), 0 if not bounced."""
        size = check_count(size, "size")
        return 2 * size / self.copy_bandwidth if self.bounce else 0.0

    def with_bounce(self, bounce=True):
        """A copy with the bounce-buffer copy switched on or off, named for it: ``+bounce``
        once when on, none when off (the name labels results and the assumptions table).

        >>> t = transport("rdma").with_bounce()
        >>> t.name, t.with_bounce().name, t.with_bounce(False).name
        ('rdma+bounce', 'rdma+bounce', 'rdma')
        """
        bounce = flag_of(bounce, "bounce")
        return dataclasses.replace(self, bounce=bounce, name=self.name.removesuffix("+bounce")
                                   + ("+bounce" if bounce else ""))

    def parameters(self):
        """Each figure as a :class:`~fabric.Parameter` with unit and source."""
        units = {"max_payload": "B", "header": "B", "copy_bandwidth": "B/s", "bounce": ""}
        out = []
        for key, src in self.sources:
            out.append(Parameter(f"{self.name}.{key}", getattr(self, key),
                                 units.get(key, "s"), src))
        return tuple(out)


TRANSPORTS = {
    "loadstore": Transport(
        "loadstore", "memory", requester_translation=20e-9, responder_check=10e-9,
        max_payload=256, header=16,
        sources=(("requester_translation", _SOURCES["requester_translation"]),
                 ("responder_check", _SOURCES["responder_check"]),
                 ("max_payload", _SOURCES["ls_max_payload"]),
                 ("header", _SOURCES["ls_header"]))),
    "rdma": Transport(
        "rdma", "message", software_post=150e-9, nic_tx=550e-9, nic_rx=450e-9,
        completion=300e-9, max_payload=4096, header=26, copy_bandwidth=25e9,
        sources=(("software_post", _SOURCES["software_post"]),
                 ("nic_tx", _SOURCES["nic_tx"]),
                 ("nic_rx", _SOURCES["nic_rx"]),
                 ("completion", _SOURCES["completion"]),
                 ("max_payload", _SOURCES["rdma_max_payload"]),
                 ("header", _SOURCES["rdma_header"]),
                 ("copy_bandwidth", _SOURCES["copy_bandwidth"]))),
}


def transport(name):
    """The :class:`Transport` called ``name`` (a Transport passes through).

    Parameters
    ----------
    name : str or Transport
        ``"loadstore"`` or ``"rdma"`` (:data:`TRANSPORTS`).

    Returns
    -------
    Transport
        Its per-message stages, each a sourced time in seconds.

    Examples
    --------
    >>> transport("rdma").name, transport("loadstore").kind
    ('rdma', 'memory')
    """
    if isinstance(name, Transport):
        return name
    return lookup(TRANSPORTS, name, "transport")


# -- which transport reaches: the one rule ------------------------------------------------

#: The transport name that means "the native choice per pair": load/store where it
#: reaches (:func:`reach`), message passing (RDMA) otherwise.
NATIVE = "native"


def transport_arg(transport):
    """The transport a collective, an MoE exchange or a decode step is asked for, checked
    once (``analysis.cost``, ``analysis.moe_exchange``, ``analysis.decode_step``): ``None``
    or ``"native"`` (each step its own: load/store where it reaches, RDMA otherwise) ->
    None; ``"loadstore"`` or ``"rdma"`` -> that name; a :class:`Transport` passes through
    (its stages priced as given).

    >>> transport_arg("native") is None, transport_arg(None) is None, transport_arg("rdma")
    (True, True, 'rdma')
    >>> transport_arg("pigeon")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown transport 'pigeon'; known: loadstore, rdma, or native (each step its own, the default)
    """
    if transport is None or isinstance(transport, Transport):
        return transport
    if text_of(transport, "transport") == NATIVE:   # a kind first (a TypeError), then the set
        return None
    # transport()'s lookup and sentence, naming native too
    lookup(TRANSPORTS, transport, "transport", tail=f", or {NATIVE} (each step its own, the "
           "default)")
    return transport


def _edge_carries(fabric):
    """What each edge carries (``fabric.graph.edges`` order): attribute, else technology."""
    ea = fabric.edge_arrays
    out = np.array(ea.carries, dtype=object)
    missing = out == ""
    for name in np.unique(ea.tech[missing]).tolist():  # one look-up per technology
        tech = TECHNOLOGIES.get(name)
        out[missing & (ea.tech == name)] = tech.carries if tech is not None else "loadstore"
    return out


def _nics(fabric):
    """Which nodes (``fabric.nodes`` order) are NICs."""
    G = fabric.graph
    return np.fromiter((G.nodes[n].get("kind") == "nic" for n in fabric.nodes), dtype=bool,
                       count=len(fabric.nodes))


def loadstore_domains(fabric):
    """The load/store domain of every node (``fabric.nodes`` order); -1 for a NIC.

    **The** rule for where load/store reaches, used by :func:`fabric.access`, the
    CLI, the collectives and the report: a load or store reaches from ``a`` to
    ``b`` when a path joins them that crosses no NIC (a NIC turns memory
    transactions into messages) and no link that carries messages only
    (``carries="messages"``: InfiniBand, RoCE; :attr:`fabric.LinkTech.carries`).
    The domains are the connected components of the graph without those. Cached
    on the fabric (:attr:`fabric.Fabric.loadstore_domains`). A NIC is in none, but its
    own registers (MMIO) are reached by load/store over its load/store links
    (:func:`loadstore_reaches`).

    Parameters
    ----------
    fabric : Fabric
        Its graph (a degraded copy's: a failed link or chip can split a domain).

    Returns
    -------
    numpy.ndarray
        One int per node: its load/store domain's number, -1 for a NIC.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("rail:servers=2,gpus=2")
    >>> d = loadstore_domains(f)
    >>> [int(d[f.node_index[n]]) for n in ("chip0", "chip1", "chip2", "nic0")]
    [0, 0, 1, -1]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    fabric = fabric_arg(fabric)
    N = len(fabric.nodes)
    nic = _nics(fabric)
    ea = fabric.edge_arrays
    keep = (_edge_carries(fabric) == "loadstore") & ~nic[ea.u] & ~nic[ea.v]
    A = coo_matrix((np.ones(int(keep.sum())), (ea.u[keep], ea.v[keep])), shape=(N, N))
    _, label = connected_components(A, directed=False)
    # number the domains by their first node, so labels do not depend on scipy's order
    label = label.astype(np.int64)
    label[nic] = -1
    first = {}
    out = np.full(N, -1, dtype=np.int64)
    for i, c in enumerate(label.tolist()):
        if c >= 0:
            out[i] = first.setdefault(c, len(first))
    out.flags.writeable = False
    return out


def sends_messages(fabric):
    """Whether each node (``fabric.nodes`` order) can send messages (RDMA): it is a NIC, has
    a NIC beside it, or has a link that carries messages only (a chip on InfiniBand).

    A fabric where no chip can (a supernode without NICs: sd200-ultra, TPU v4) offers no
    message passing as a *native* choice; a transport asked for by name is still modelled
    on its graph, as a what-if.

    Parameters
    ----------
    fabric : Fabric

    Returns
    -------
    numpy.ndarray
        One bool per node.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("cluster-128")
    >>> bool(sends_messages(f)[f.node_index["chip0"]]), bool(sends_messages(
    ...     topologies.build("sd200-ultra")).any())
    (True, False)
    """
    fabric = fabric_arg(fabric)
    nic = _nics(fabric)
    ea = fabric.edge_arrays
    msg = _edge_carries(fabric) == "messages"
    out = nic.copy()
    for a, b in ((ea.u, ea.v), (ea.v, ea.u)):
        out[a[nic[b] | msg]] = True
    return out


def loadstore_reaches(fabric, src, dst):
    """Whether load/store reaches from node index ``src[i]`` to ``dst[i]`` (vectorized).

    A node reaches itself; a NIC reaches nothing by load/store. See
    :func:`loadstore_domains` for the rule. A NIC's own registers (its MMIO, a PCIe BAR)
    are reached by load/store from the nodes a load/store link joins it to (its chip over
    PCIe: the route is that one link); from anywhere else a path to it leaves the domain
    (on a rail server up/down routes chip1 -> nic0 through nic1 and the InfiniBand
    rails), so it is a message, as before. The graph has no PCIe switch node, so another
    GPU of the same server does not reach a NIC's registers through the server's PCIe
    switch: no modelled kernel posts to a peer GPU's NIC (IBGDA posts to its own; NCCL's
    PXN hands data over NVLink to the peer GPU, whose own NIC sends), and a switch node
    would move every such rail fabric's hops and metrics for no modelled kernel (decided
    in session 27).

    Parameters
    ----------
    fabric : Fabric
    src, dst : sequence or numpy.ndarray of int
        Node indices (``fabric.node_index``), one pair per position.

    Returns
    -------
    numpy.ndarray of bool
        One per pair.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("rail:servers=2,gpus=2")
    >>> i = f.node_index
    >>> loadstore_reaches(f, [i["chip0"], i["chip1"], i["nic0"]],
    ...                   [i["nic0"], i["nic0"], i["chip0"]]).tolist()
    [True, False, False]
    """
    dom = fabric_arg(fabric).loadstore_domains
    s = fabric.node_indices(src, "src")
    d = fabric.node_indices(dst, "dst")
    ok = (s == d) | ((dom[s] >= 0) & (dom[s] == dom[d]))
    to_nic = _nics(fabric)[d]
    if to_nic.any():
        ea = fabric.edge_arrays
        nic, n = _nics(fabric), len(fabric.nodes)
        ls = _edge_carries(fabric) == "loadstore"
        keys = np.concatenate([b[ls & nic[b] & ~nic[a]] * n + a[ls & nic[b] & ~nic[a]]
                               for a, b in ((ea.u, ea.v), (ea.v, ea.u))])
        ok[to_nic] |= np.isin(d[to_nic] * n + s[to_nic], keys)
    return ok


def reach(fabric, src, dst):
    """The transport that reaches ``dst`` from ``src`` natively: ``"loadstore"`` or ``"rdma"``.

    Load/store where :func:`loadstore_domains` puts both in one domain; message
    passing (RDMA) where only a path through a NIC or a message-only link joins
    them.

    Parameters
    ----------
    fabric : Fabric
    src, dst : node name or rank

    Raises
    ------
    NodeError
        If either names no node (or a failed one).
    RoutingError
        If no path at all joins them (a degraded fabric).

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("cluster-128")
    >>> reach(f, "chip0", "chip7"), reach(f, "chip0", "chip8")
    ('loadstore', 'rdma')
    """
    fabric = fabric_arg(fabric)
    a, b = fabric.node(src, "src"), fabric.node(dst, "dst")
    idx = fabric.node_index
    s, d = idx[a], idx[b]
    if loadstore_reaches(fabric, [s], [d])[0]:
        return "loadstore"
    import networkx as nx

    if not nx.has_path(fabric.graph, a, b):
        raise RoutingError(f"{fabric.name}: no path from {a!r} to {b!r}"
                           f"{fabric.failures.explain(a, b)}")
    return "rdma"


def transports_for(fabric, name, src, dst):
    """The :class:`Transport` of each pair ``src[i] -> dst[i]`` (node indices) for ``name``.

    ``name`` is a transport name or :class:`Transport`, or :data:`NATIVE` for the
    native choice per pair (:func:`reach`). A memory transport (load/store) asked
    for a pair it cannot reach is refused.

    Parameters
    ----------
    fabric : Fabric
    name : str or Transport
        ``"loadstore"``, ``"rdma"``, a :class:`Transport`, or :data:`NATIVE`.
    src, dst : sequence or numpy.ndarray of int
        Node indices (``fabric.node_index``), one pair per position.

    Returns
    -------
    tuple of Transport
        One per pair.

    Raises
    ------
    RoutingError
        Naming the first pair load/store cannot reach, and why.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("cluster-128")
    >>> i = f.node_index                   # node indices, as the batched paths take them
    >>> [t.name for t in transports_for(f, "native", [i["chip0"], i["chip0"]],
    ...                                 [i["chip1"], i["chip8"]])]   # same server, next server
    ['loadstore', 'rdma']
    """
    # node_indices, the one node check (np.asarray(.., dtype=np.int64) read 0.7 as node 0,
    # True as node 1 and '3' as node 3)
    fabric = fabric_arg(fabric)
    s, d = fabric.node_indices(src, "src"), fabric.node_indices(dst, "dst")
    ok = loadstore_reaches(fabric, s, d)
    if isinstance(name, str) and name == NATIVE:
        ls, rd = transport("loadstore"), transport("rdma")
        return tuple(ls if x else rd for x in ok.tolist())
    t = transport(name)
    if t.kind == "memory" and not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        a, b = fabric.nodes[int(s[k])], fabric.nodes[int(d[k])]
        fabric.route(a, b)      # no path at all: the routing model's own error says why
        why = ("a NIC's registers are reached by load/store only over its own load/store "
               "links (from its chip)" if _nics(fabric)[int(d[k])] else
               "load/store does not cross a NIC or a message-only (InfiniBand/RoCE) link, "
               "and every path between them does")
        raise RoutingError(f"{fabric.name}: transport {t.name!r} cannot reach {b!r} from {a!r}: "
                           f"{why}; use transport='rdma' or 'native'")
    return (t,) * len(s)
