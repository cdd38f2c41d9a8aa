"""Brute-force reference of analysis._serving._run_steps: one engine step at a time, straight
from the description, every attention-DP rank scheduling its own requests (one rank: the single
scheduler), no runs of steps taken at once."""

import heapq


def route(rule, new, ins, ranks, state, turn):
    """The engines' placement, each written as its source reads: TensorRT-LLM's heap of
    (active tokens, active requests, rank) over the ranks below the expected count, the new
    requests longest prompt first; SGLang's counter; vLLM's scan for the least 4 x waiting +
    running. ``state[r]`` = [active, tokens, waiting, running]."""
    if rule == "sglang":
        return [(i, (turn + j) % ranks) for j, i in enumerate(new)], turn + len(new)
    if rule == "vllm":
        counts = [[s[2], s[3]] for s in state]
        out = []
        for i in new:
            best, score = 0, None
            for r in range(ranks):
                v = counts[r][0] * 4 + counts[r][1]
                if score is None or v < score:
                    best, score = r, v
            counts[best][0] += 1
            out.append((i, best))
        return out, turn
    active = [s[0] for s in state]
    expected = max((sum(active) + len(new) + ranks - 1) // ranks, max(active))
    heap = [(state[r][1], state[r][0], r) for r in range(ranks) if state[r][0] < expected]
    heapq.heapify(heap)
    out = []
    for i in sorted(new, key=lambda x: ins[x], reverse=True):
        tok, cnt, r = heapq.heappop(heap)
        out.append((i, r))
        if cnt + 1 < expected:
            heapq.heappush(heap, (tok + ins[i], cnt + 1, r))
    return out, turn


def reference(ins, outs, concurrency, budget, step, per_token, shared=None, alone=None,
              whole=False, ranks=1, rule="trtllm", rank_pass=None):
    """One engine step at a time, every rank scheduling its own requests in its own budget
    (whole: a prompt only whole, the walk stopping at the first that does not fit what the
    rank's step has left), the step priced at ranks x the largest rank's running batch and the
    largest rank's chunk. ``per_token``: seconds per prompt token, or the seconds of a step's
    whole chunk as a function of its tokens; ``shared(b, chunk)``: what a step running both
    saves (one forward pass; ``shared(b, chunk, k)`` with ``rank_pass``, k the ranks running
    chunks: the one MoE module of the step's tokens, session 22); ``alone(b)``: a step with no prompt chunk, priced its own way (a
    padded graph); ``rank_pass(c, k)``: the prompt part of a step whose k ranks run chunks, the
    largest c tokens (None: per_token of the largest). Returns (start, first, end, steps,
    peaks)."""
    n = len(ins)
    start, first, end = [None] * n, [None] * n, [None] * n
    left_of, made, rank = list(ins), [0] * n, [None] * n
    order = [[] for _ in range(ranks)]            # each rank's requests in its scheduler's order
    t, steps, turn, peaks = 0.0, 0, 0, [0] * ranks
    while any(e is None for e in end):
        new = []
        for i in range(n):
            flying = sum(1 for j in range(n) if start[j] is not None and end[j] is None)
            if start[i] is None and flying < concurrency:
                start[i] = t
                new.append(i)
        if ranks == 1:
            pairs = [(i, 0) for i in new]
        else:
            state = []
            for r in range(ranks):
                mine = [i for i in order[r] if end[i] is None]
                state.append([len(mine), sum(ins[i] for i in mine),
                              sum(1 for i in mine if first[i] is None),
                              sum(1 for i in mine if first[i] is not None)])
            pairs, turn = route(rule, new, ins, ranks, state, turn)
        for i, r in pairs:
            rank[i] = r
            order[r].append(i)
        running = [[i for i in order[r] if first[i] is not None and end[i] is None]
                   for r in range(ranks)]
        chunks, finished = [0] * ranks, []
        for r in range(ranks):
            left = budget - len(running[r])
            for i in order[r]:
                if first[i] is not None:
                    continue
                if left <= 0 or whole and left_of[i] > left:
                    break
                take = min(left_of[i], left)
                left_of[i] -= take
                left -= take
                chunks[r] += take
                if left_of[i] == 0:
                    finished.append(i)
            peaks[r] = max(peaks[r], len(running[r]) + sum(
                1 for i in order[r] if first[i] is None and left_of[i] < ins[i]))
        b, chunk = ranks * max(len(x) for x in running), max(chunks)
        f = alone if alone is not None and not chunk else step     # a step with no prompt
        if rank_pass is not None and chunk:
            priced = rank_pass(chunk, sum(1 for c in chunks if c > 0))
        else:
            priced = per_token(chunk) if callable(per_token) else chunk * per_token
        cost = (f(b) if b else 0.0) + (priced if chunk else 0.0)
        if b and chunk and shared is not None:     # with ranks' passes: how many ran chunks
            cost -= (shared(b, chunk) if rank_pass is None
                     else shared(b, chunk, sum(1 for c in chunks if c > 0)))
        t += cost
        steps += 1
        for r in range(ranks):
            for i in running[r]:
                made[i] += 1
                if made[i] == outs[i]:
                    end[i] = t
        for i in finished:
            first[i] = t
            made[i] = 1
            if outs[i] == 1:
                end[i] = t
    return start, first, end, steps, peaks
