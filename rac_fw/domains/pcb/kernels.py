"""The router's compiled inner loop (numba): A* over a flat grid of layers × rows × columns.

Arrays only (flat uint8 masks, float64 costs, int64 indices) so numba compiles it once and caches it
on disk; the Python side prepares the masks and turns the returned cell indices into a path.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

SQRT2 = 1.4142135623730951


@njit(cache=True)
def astar_flat(open_t: np.ndarray, open_v: np.ndarray, cost_f: np.ndarray, pen: np.ndarray, layers: np.ndarray,
               allow_vias: bool, via_cost: float, bend_cost: float, nx: int, ny: int, nl: int, sources: np.ndarray,
               targets: np.ndarray, box: np.ndarray, max_expansions: int) -> np.ndarray:
    """Cheapest path (flat indices, source first) from any source to any cell with ``targets[k] == 1``;
    empty when none exists within ``max_expansions``. ``bend_cost`` is added where a move turns from the
    move that reached its cell (by the parent found so far: an approximate bend penalty that keeps runs
    straight instead of jogging early, leaving room for a neighbour such as a pair's other half).
    ``cost_f``/``pen`` may be empty (no factor/penalty);
    ``box`` = (x0, x1, y0, y1) bounds the targets for the octile heuristic."""
    plane = nx * ny
    size = plane * nl
    best = np.full(size, np.inf)
    parent = np.full(size, -1, np.int64)
    closed = np.zeros(size, np.uint8)
    use_f = cost_f.size > 0
    use_p = pen.size > 0
    bx0, bx1, by0, by1 = box[0], box[1], box[2], box[3]
    heap = [(0.0, 0.0, np.int64(0))]
    heap.pop()
    for s in sources:
        rem = s % plane
        iy, ix = rem // nx, rem % nx
        dx = max(0, bx0 - ix, ix - bx1)
        dy = max(0, by0 - iy, iy - by1)
        best[s] = 0.0
        heapq.heappush(heap, (max(dx, dy) + (SQRT2 - 1) * min(dx, dy), 0.0, np.int64(s)))
    dxs = (-1, 1, 0, 0, -1, -1, 1, 1)
    dys = (0, 0, -1, 1, -1, 1, -1, 1)
    cs = (1.0, 1.0, 1.0, 1.0, SQRT2, SQRT2, SQRT2, SQRT2)
    expansions = 0
    found = np.int64(-1)
    while len(heap) > 0:
        f, g, k = heapq.heappop(heap)
        if closed[k]:
            continue
        closed[k] = 1
        if targets[k]:
            found = k
            break
        expansions += 1
        if expansions > max_expansions:
            break
        layer = k // plane
        rem = k % plane
        iy, ix = rem // nx, rem % nx
        pk = parent[k]
        in_dx, in_dy = 0, 0
        if pk >= 0 and pk // plane == layer:  # the move that reached k (none after a via)
            in_dx = ix - (pk % plane) % nx
            in_dy = iy - (pk % plane) // nx
        for d in range(8):
            x2, y2 = ix + dxs[d], iy + dys[d]
            if x2 < 0 or x2 >= nx or y2 < 0 or y2 >= ny:
                continue
            k2 = k + dys[d] * nx + dxs[d]
            if not open_t[k2] or closed[k2]:
                continue
            step = cs[d]
            if (in_dx != 0 or in_dy != 0) and (in_dx != dxs[d] or in_dy != dys[d]):
                step += bend_cost
            if use_f:
                step *= cost_f[k2]
            if use_p:
                step += pen[k2]
            g2 = g + step
            if g2 < best[k2]:
                best[k2] = g2
                parent[k2] = k
                ddx = max(0, bx0 - x2, x2 - bx1)
                ddy = max(0, by0 - y2, y2 - by1)
                heapq.heappush(heap, (g2 + max(ddx, ddy) + (SQRT2 - 1) * min(ddx, ddy), g2, np.int64(k2)))
        if allow_vias and open_v[rem]:
            for l2 in layers:
                if l2 == layer:
                    continue
                k2 = l2 * plane + rem
                if not open_t[k2] or closed[k2]:
                    continue
                g2 = g + via_cost
                if g2 < best[k2]:
                    best[k2] = g2
                    parent[k2] = k
                    hx = max(0, bx0 - ix, ix - bx1)
                    hy = max(0, by0 - iy, iy - by1)
                    heapq.heappush(heap, (g2 + max(hx, hy) + (SQRT2 - 1) * min(hx, hy), g2, np.int64(k2)))
    if found < 0:
        return np.empty(0, np.int64)
    n = 0
    cur = found
    while cur != -1:
        n += 1
        cur = parent[cur]
    out = np.empty(n, np.int64)
    cur = found
    for i in range(n - 1, -1, -1):
        out[i] = cur
        cur = parent[cur]
    return out
