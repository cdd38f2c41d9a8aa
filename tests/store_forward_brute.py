"""Brute-force references for the network's whole-step sends (session 16; lead's check of the
closed forms in ``analysis._runtime_cost``: ``nccl_ring_net_hops``, ``nccl_tree_net_depth``).

An event simulation of step dependencies, written without the model's code:

* a ring pass (``ring_pass``): the ranks of ``node_sizes`` in node order; rank r sends step s
  to r + 1 once it has received step s - 1 from r - 1 (its first step: at once), its own
  previous send is done and, with ``credits`` buffered steps (NCCL_STEPS), r + 1 has received
  step s - credits; the edge out of a node's last rank is a network edge;
* a chain (``chain_pass``): ``chunks`` chunks pushed along hops of the given classes (the
  tree's path up to the root and down again), each node forwarding a chunk once it has it
  and its previous send is done.

An NVLink edge is cut-through: the step takes ``t`` (every step at the tuner's bottleneck rate)
and then ``lat_nvl``. A network edge, cut-through (the tuner's model): ``t`` then ``lat_net``;
store-and-forward (NCCL's proxy, ``src/transport/net.cc``): the GPU writes the step (``tw``;
the GPU is then free), the NIC sends it whole (``t``, one step after another), then
``lat_net``. The time is when the last step arrives.

Which cut-through pass is the reference depends on what the model's bandwidth term already
charges (session 17): the tuner's ring and tree see only the send, so their reference steps at
``t``; NVLS-tree's schedule is min(in-switch, NICs), so its reference steps at the slower of
the write and the send (``chain_pass(..., max(t, tw), 0.0, ..., False)``).
"""


def _edges(node_sizes):
    owner = [k for k, size in enumerate(node_sizes) for _ in range(size)]
    p = len(owner)
    return p, [owner[r] != owner[(r + 1) % p] for r in range(p)]


def ring_pass(node_sizes, steps, t, tw, lat_nvl, lat_net, store_forward, credits=8):
    """Seconds of one pass of ``steps`` ring steps (see the module docstring)."""
    p, net = _edges(node_sizes)
    got = [[0.0] * steps for _ in range(p)]     # got[r][s]: r has step s from r - 1
    free = [[0.0] * steps for _ in range(p)]    # r's GPU done with its send of step s
    nic = [[0.0] * steps for _ in range(p)]     # r's NIC done with step s
    for s in range(steps):
        for r in range(p):
            start = max(got[r][s - 1] if s else 0.0, free[r][s - 1] if s else 0.0)
            if s >= credits:
                start = max(start, got[(r + 1) % p][s - credits])
            if net[r] and store_forward:
                made = start + tw
                nic[r][s] = max(made, nic[r][s - 1] if s else 0.0) + t
                free[r][s] = made
                got[(r + 1) % p][s] = nic[r][s] + lat_net
            else:
                free[r][s] = start + t
                got[(r + 1) % p][s] = free[r][s] + (lat_net if net[r] else lat_nvl)
    return max(got[r][steps - 1] for r in range(p))


def chain_pass(classes, chunks, t, tw, lat_nvl, lat_net, store_forward):
    """Seconds until the chain's last node has the last of ``chunks`` chunks; ``classes``
    holds one bool per hop, True for a network hop."""
    k = len(classes)
    got = [[0.0] * chunks for _ in range(k + 1)]
    free = [[0.0] * chunks for _ in range(k + 1)]
    nic = [[0.0] * chunks for _ in range(k + 1)]
    for h in range(k):
        for c in range(chunks):
            start = max(got[h][c] if h else 0.0, free[h][c - 1] if c else 0.0)
            if classes[h] and store_forward:
                made = start + tw
                nic[h][c] = max(made, nic[h][c - 1] if c else 0.0) + t
                free[h][c] = made
                got[h + 1][c] = nic[h][c] + lat_net
            else:
                free[h][c] = start + t
                got[h + 1][c] = free[h][c] + (lat_net if classes[h] else lat_nvl)
    return got[k][chunks - 1]
