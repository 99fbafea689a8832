"""Compiled inner loops of the bounded backend (numba): decoding, evaluation and tabu search.

A solution is a *machine order* (doubly linked lists ``mach_pred``/``mach_succ`` over dense operation
ids). Evaluating it is one longest-path pass over the disjunctive graph (job arcs, machine arcs and the
hard end-before-start pairs) in topological order: the heads are the semi-active start times, and a
cycle (a swap that contradicts a hard pair) shows as an incomplete topological order. Everything is
int64 arrays so numba compiles each function once (cached on disk) and the search runs without the
interpreter; the Python wrapper is :mod:`.bounded`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MASK_SHIFT_A = np.uint64(13)
_MASK_SHIFT_B = np.uint64(7)
_MASK_SHIFT_C = np.uint64(17)


@njit(cache=True)
def _rand(state: np.ndarray, bound: int) -> np.int64:
    """xorshift64: a tiny deterministic generator whose stream is the same on every platform."""
    x = state[0]
    x ^= x << _MASK_SHIFT_A
    x ^= x >> _MASK_SHIFT_B
    x ^= x << _MASK_SHIFT_C
    state[0] = x
    return np.int64(x % np.uint64(bound))


@njit(cache=True)
def evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg, queue):
    """Heads (earliest starts) of every operation for the machine order; returns the makespan or -1.

    -1 means the order plus job arcs plus hard pairs contains a cycle (no schedule realizes it).
    ``indeg`` and ``queue`` are scratch arrays of length n.
    """
    n = dur.shape[0]
    top = 0
    for v in range(n):
        d = pin_ptr[v + 1] - pin_ptr[v]
        if job_pred[v] >= 0:
            d += 1
        if mach_pred[v] >= 0:
            d += 1
        indeg[v] = d
        head[v] = 0
        if d == 0:
            queue[top] = v
            top += 1
    done = 0
    cmax = 0
    while done < top:
        v = queue[done]
        done += 1
        end = head[v] + dur[v]
        if end > cmax:
            cmax = end
        s = job_succ[v]
        if s >= 0:
            if end > head[s]:
                head[s] = end
            indeg[s] -= 1
            if indeg[s] == 0:
                queue[top] = s
                top += 1
        s = mach_succ[v]
        if s >= 0:
            if end > head[s]:
                head[s] = end
            indeg[s] -= 1
            if indeg[s] == 0:
                queue[top] = s
                top += 1
        for e in range(pout_ptr[v], pout_ptr[v + 1]):
            s = pout_dst[e]
            if end > head[s]:
                head[s] = end
            indeg[s] -= 1
            if indeg[s] == 0:
                queue[top] = s
                top += 1
    if done < n:
        return -1
    return cmax


@njit(cache=True)
def giffler_thompson(dur, machine, job, job_first, job_len, rank, pin_ptr, pout_ptr, pout_dst, n_machines,
                     mach_pred, mach_succ, mwkr):
    """Active schedule by Giffler–Thompson; conflicts go to the lower job ``rank`` or, with ``mwkr``, to
    the job with most work remaining (rank breaking ties).

    An operation becomes eligible only when its job predecessor and every hard-pair predecessor are
    scheduled, so the resulting machine order always respects the pairs. Fills ``mach_pred/succ``.
    """
    n = dur.shape[0]
    n_jobs = job_first.shape[0]
    next_k = np.zeros(n_jobs, dtype=np.int64)
    job_ready = np.zeros(n_jobs, dtype=np.int64)
    mach_ready = np.zeros(n_machines, dtype=np.int64)
    mach_last = np.full(n_machines, -1, dtype=np.int64)
    pair_ready = np.zeros(n, dtype=np.int64)
    pair_missing = np.zeros(n, dtype=np.int64)
    remaining = np.zeros(n_jobs, dtype=np.int64)
    for v in range(n):
        remaining[job[v]] += dur[v]
    for v in range(n):
        pair_missing[v] = pin_ptr[v + 1] - pin_ptr[v]
        mach_pred[v] = -1
        mach_succ[v] = -1
    for _ in range(n):
        best_ect = -1
        best_m = -1
        for j in range(n_jobs):
            if next_k[j] >= job_len[j]:
                continue
            v = job_first[j] + next_k[j]
            if pair_missing[v] > 0:
                continue
            est = max(job_ready[j], mach_ready[machine[v]], pair_ready[v])
            ect = est + dur[v]
            if best_ect < 0 or ect < best_ect:
                best_ect = ect
                best_m = machine[v]
        chosen = -1
        chosen_est = 0
        for j in range(n_jobs):
            if next_k[j] >= job_len[j]:
                continue
            v = job_first[j] + next_k[j]
            if pair_missing[v] > 0 or machine[v] != best_m:
                continue
            est = max(job_ready[j], mach_ready[best_m], pair_ready[v])
            if est < best_ect or est + dur[v] == best_ect:
                better = chosen < 0
                if not better:
                    c = job[chosen]
                    by_work = mwkr and remaining[j] != remaining[c]
                    better = remaining[j] > remaining[c] if by_work else rank[j] < rank[c]
                if better:
                    chosen = v
                    chosen_est = est
        v = chosen
        end = chosen_est + dur[v]
        j = job[v]
        next_k[j] += 1
        remaining[j] -= dur[v]
        job_ready[j] = end
        m = machine[v]
        mach_ready[m] = end
        last = mach_last[m]
        if last >= 0:
            mach_succ[last] = v
            mach_pred[v] = last
        mach_last[m] = v
        for e in range(pout_ptr[v], pout_ptr[v + 1]):
            s = pout_dst[e]
            if end > pair_ready[s]:
                pair_ready[s] = end
            pair_missing[s] -= 1


@njit(cache=True)
def _unlink(x, mach_pred, mach_succ):
    a = mach_pred[x]
    b = mach_succ[x]
    if a >= 0:
        mach_succ[a] = b
    if b >= 0:
        mach_pred[b] = a
    mach_pred[x] = -1
    mach_succ[x] = -1


@njit(cache=True)
def _insert_after(x, y, mach_pred, mach_succ):
    b = mach_succ[y]
    mach_succ[y] = x
    mach_pred[x] = y
    mach_succ[x] = b
    if b >= 0:
        mach_pred[b] = x


@njit(cache=True)
def _insert_before(x, y, mach_pred, mach_succ):
    a = mach_pred[y]
    mach_pred[y] = x
    mach_succ[x] = y
    mach_pred[x] = a
    if a >= 0:
        mach_succ[a] = x


@njit(cache=True)
def _apply(x, y, kind, mach_pred, mach_succ):
    """Move ``x`` right after ``y`` (kind 1, ``x`` earlier) or right before ``y`` (kind 0, ``x`` later).

    Returns the operation ``x`` followed before the move (-1: it was first), for :func:`_undo`.
    """
    old = mach_pred[x]
    anchor = mach_succ[x]
    _unlink(x, mach_pred, mach_succ)
    if kind == 1:
        _insert_after(x, y, mach_pred, mach_succ)
    else:
        _insert_before(x, y, mach_pred, mach_succ)
    return old if old >= 0 else -2 - anchor


@njit(cache=True)
def _undo(x, old, mach_pred, mach_succ):
    _unlink(x, mach_pred, mach_succ)
    if old >= 0:
        _insert_after(x, old, mach_pred, mach_succ)
    else:
        _insert_before(x, -2 - old, mach_pred, mach_succ)


@njit(cache=True)
def _add(moves, count, x, y, kind):
    moves[count, 0] = x
    moves[count, 1] = y
    moves[count, 2] = kind
    return count + 1


@njit(cache=True)
def _critical_moves(dur, job_pred, mach_pred, pin_ptr, pin_src, head, cmax, path, moves):
    """N5 moves on one critical path: swap the first two and the last two operations of each block.

    Returns the number of moves ``(x, y, kind)`` written into ``moves``. The path is traced back from
    an operation ending at ``cmax``, preferring machine arcs so that blocks are as long as possible.
    """
    n = dur.shape[0]
    v = -1
    for i in range(n):
        if head[i] + dur[i] == cmax:
            v = i
            break
    length = 0
    while v >= 0:
        path[length] = v
        length += 1
        nxt = -1
        p = mach_pred[v]
        if p >= 0 and head[p] + dur[p] == head[v]:
            nxt = p
        else:
            p = job_pred[v]
            if p >= 0 and head[p] + dur[p] == head[v]:
                nxt = p
            else:
                for e in range(pin_ptr[v], pin_ptr[v + 1]):
                    p = pin_src[e]
                    if head[p] + dur[p] == head[v]:
                        nxt = p
                        break
        v = nxt
    count = 0
    i = length - 1
    first_block = True
    while i >= 0:
        s = i
        while i - 1 >= 0 and mach_pred[path[i - 1]] == path[i]:
            i -= 1
        e = i  # the block runs path[s] (first) … path[e] (last) — path is stored end → start
        last_block = e == 0
        size = s - e + 1
        if size >= 2:
            if not first_block:
                count = _add(moves, count, path[s - 1], path[s], 0)
            if not last_block and (size > 2 or first_block):
                count = _add(moves, count, path[e + 1], path[e], 1)
        first_block = False
        i -= 1
    return count


@njit(cache=True)
def _kick(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg, queue, cur,
          evals, budget, state):
    """Swap 2–5 random machine-adjacent pairs anywhere (each evaluated, so counted; a swap that closes
    a cycle is undone). Critical moves alone can keep the search inside a tiny basin; this leaves it.
    Returns ``(makespan, evals)`` with ``head`` matching the new order."""
    n = dur.shape[0]
    for _ in range(2 + _rand(state, 4)):
        if evals >= budget:
            break
        x = _rand(state, n)
        y = mach_succ[x]
        if y < 0:
            y = x
            x = mach_pred[y]
            if x < 0:
                continue
        old = _apply(y, x, 0, mach_pred, mach_succ)
        val = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg,
                       queue)
        evals += 1
        if val < 0:
            _undo(y, old, mach_pred, mach_succ)
        else:
            cur = val
    cur = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg, queue)
    return cur, evals


@njit(cache=True)
def tabu_search(dur, machine, job, job_pred, job_succ, job_first, job_len, rank, pin_ptr, pin_src, pout_ptr,
                pout_dst, n_machines, mach_local, lower_bound, budget, restarts, seed, best_head, tenure, patience):
    """Seeded tabu search (N5 neighbourhood) over machine orders, restarted from kicked copies of the best.

    The start is the better of two Giffler–Thompson decodings seeded by the priority ``rank``: the
    priority taken literally, and most-work-remaining with the priority breaking ties (a literal input
    order is a weak schedule; the agent's priority wins whenever it is the better start). A restart
    happens after ``patience`` evaluations without a new best, or when every feasible move is tabu;
    it kicks the best order with a few random critical moves. Every candidate order whose makespan is
    computed counts against ``budget``; the search stops early at ``lower_bound`` (proven optimal).
    Writes the best heads into ``best_head``; returns ``(makespan, evaluations)``.
    ``tabu[a, mach_local[b]] > it`` forbids putting ``a`` before ``b`` (same machine) again; indexing
    by the position among the machine's operations keeps the table n × (operations per machine).
    """
    n = dur.shape[0]
    state = np.empty(1, dtype=np.uint64)
    state[0] = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x2545F4914F6CDD1D)
    mach_pred = np.empty(n, dtype=np.int64)
    mach_succ = np.empty(n, dtype=np.int64)
    best_pred = np.empty(n, dtype=np.int64)
    best_succ = np.empty(n, dtype=np.int64)
    head = np.empty(n, dtype=np.int64)
    indeg = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    path = np.empty(n, dtype=np.int64)
    moves = np.empty((2 * n + 2, 3), dtype=np.int64)
    tabu = np.zeros((n, mach_local.max() + 1), dtype=np.int64)

    # two seeds: the priority realized literally, and most-work-remaining with the priority breaking ties
    best = -1
    for mwkr in (False, True):
        giffler_thompson(dur, machine, job, job_first, job_len, rank, pin_ptr, pout_ptr, pout_dst, n_machines,
                         mach_pred, mach_succ, mwkr)
        cur = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg,
                       queue)
        if best < 0 or cur < best:
            best = cur
            best_pred[:] = mach_pred
            best_succ[:] = mach_succ
    evals = 2
    mach_pred[:] = best_pred
    mach_succ[:] = best_succ
    cur = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg, queue)
    it = 0
    for r in range(restarts):
        if best <= lower_bound or evals >= budget:
            break
        last_gain = evals
        if r > 0:
            mach_pred[:] = best_pred
            mach_succ[:] = best_succ
            cur = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head,
                           indeg, queue)
            cur, evals = _kick(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head,
                               indeg, queue, cur, evals, budget, state)
            tabu[:, :] = 0
        while evals < budget and best > lower_bound:
            if r < restarts - 1 and evals - last_gain > patience:
                break
            it += 1
            count = _critical_moves(dur, job_pred, mach_pred, pin_ptr, pin_src, head, cur, path, moves)
            if count == 0:
                break  # one block spans the critical path: no N5 move can shorten it
            pick = -1
            pick_val = -1
            for k in range(count):
                if evals >= budget:
                    break
                x = moves[k, 0]
                y = moves[k, 1]
                kind = moves[k, 2]
                old = _apply(x, y, kind, mach_pred, mach_succ)
                val = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head,
                               indeg, queue)
                evals += 1
                _undo(x, old, mach_pred, mach_succ)
                if val < 0:
                    continue
                until = tabu[y, mach_local[x]] if kind == 1 else tabu[x, mach_local[y]]
                if until > it and val >= best:
                    continue
                if pick < 0 or val < pick_val:
                    pick = k
                    pick_val = val
            if pick < 0:
                # trapped: every feasible move is tabu — shake the current order instead of oscillating
                # (re-evaluate first: ``head`` holds the last neighbour's heads)
                cur = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head,
                               indeg, queue)
                cur, evals = _kick(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head,
                                   indeg, queue, cur, evals, budget, state)
                tabu[:, :] = 0
            else:
                x = moves[pick, 0]
                y = moves[pick, 1]
                kind = moves[pick, 2]
                _apply(x, y, kind, mach_pred, mach_succ)
                if kind == 1:
                    tabu[x, mach_local[y]] = it + tenure + _rand(state, tenure)
                else:
                    tabu[y, mach_local[x]] = it + tenure + _rand(state, tenure)
                cur = evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head,
                               indeg, queue)
            if cur < best:
                best = cur
                last_gain = evals
                best_pred[:] = mach_pred
                best_succ[:] = mach_succ
    best = evaluate(dur, job_pred, job_succ, best_pred, best_succ, pin_ptr, pout_ptr, pout_dst, best_head, indeg,
                    queue)
    return best, evals


@njit(cache=True)
def evaluate_many(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, repeats):
    """Evaluate the same order ``repeats`` times; the benchmark's measure of raw evaluations per second."""
    n = dur.shape[0]
    head = np.empty(n, dtype=np.int64)
    indeg = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    total = 0
    for _ in range(repeats):
        total += evaluate(dur, job_pred, job_succ, mach_pred, mach_succ, pin_ptr, pout_ptr, pout_dst, head, indeg,
                          queue)
    return total
