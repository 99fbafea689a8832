"""Robustness study: does a relational bundle survive a geometry change that coordinates do not?

For every placement task whose reference bundle passes, three perturbations — the board 20 % smaller,
20 % larger, and every land pattern 25 % smaller — and six ways to answer them, all judged by the same
verifier against the task's reference relations:

- ``relational``: re-solve the unchanged relation bundle on the new geometry;
- ``frozen``: reuse the original coordinates as they are;
- ``affine``: scale the original coordinates with the board;
- ``empty``: the solver with no relations (legal, relation-blind);
- ``preserve_legal``: keep the original coordinates and repair only what became illegal;
- ``best_of_3``: per case, the best of the three numeric answers (frozen, affine, preserve_legal).

Reported per method and perturbation: clean-pass rate with a 95 % interval from a bootstrap that
resamples task *families* (so correlated variants of one family do not narrow it), and *adaptation*:
the share of relation verdicts that hold.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rac_fw.domains.pcb.artifact import BoardArtifact, PartPlacement
from rac_fw.domains.pcb.board import Board, PcbTask, Placement
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.place import legalize
from rac_fw.domains.pcb.realize import realize_board
from rac_fw.domains.pcb.tasks import all_tasks
from rac_fw.domains.pcb.verify import check_board

PERTURBATIONS = {"board_shrink_20": ("board", 0.8), "board_expand_20": ("board", 1.2),
                 "footprint_shrink_25": ("footprint", 0.75)}
METHODS = ("relational", "frozen", "affine", "empty", "preserve_legal", "best_of_3")


def perturb(task: PcbTask, name: str) -> PcbTask:
    what, f = PERTURBATIONS[name]
    if what == "board":
        b = task.board
        regions = tuple(dataclasses.replace(r, x0=r.x0 * f, y0=r.y0 * f, x1=r.x1 * f, y1=r.y1 * f,
                                            polygon=tuple((x * f, y * f) for x, y in r.polygon)) for r in b.regions)
        board = Board(round(b.width * f / 0.25) * 0.25, round(b.height * f / 0.25) * 0.25, b.layers, b.rules, regions)

        def keep(v: float, old: float, new: float) -> float:  # a fixed part keeps its distance to the nearer edge
            return v if v <= old / 2 else new - (old - v)
        comps = tuple(c if c.fixed is None else dataclasses.replace(
            c, fixed=Placement(keep(c.fixed.x, b.width, board.width), keep(c.fixed.y, b.height, board.height),
                               c.fixed.rot)) for c in task.components)
        return dataclasses.replace(task, name=f"{task.name}+{name}", board=board, components=comps)
    comps = tuple(dataclasses.replace(c, scale=f) for c in task.components)
    return dataclasses.replace(task, name=f"{task.name}+{name}", components=comps)


@dataclass(frozen=True)
class Case:
    task: str
    family: str
    perturbation: str
    method: str
    seed: int
    clean: bool
    held: int
    relations: int


def _judge(task: PcbTask, action: PcbAction, art: BoardArtifact) -> tuple[bool, int]:
    check = check_board(task, action, art.model_dump(mode="json"))
    return (all(v.passed for v in check.verdicts) and not check.evidence), sum(r.passed for r in check.relations)


def _with(placements: dict[str, Placement]) -> BoardArtifact:
    return BoardArtifact(placements={r: PartPlacement(x=p.x, y=p.y, rot=p.rot) for r, p in sorted(placements.items())})


def study(tasks: Iterable[str] | None = None, seeds: Iterable[int] = (0, 1, 2),
          progress: Callable[[Case], None] | None = None) -> list[Case]:
    suite = all_tasks()
    names = list(tasks) if tasks is not None else [n for n, t in suite.items() if t.category == "placement"]
    cases: list[Case] = []
    for name in names:
        base = suite[name]
        action = PcbAction.model_validate(base.reference)
        n_rel = len(action.relations)
        for seed in seeds:
            original, _ = realize_board(base, action, seed)
            if not _judge(base, action, original)[0]:
                continue  # only tasks whose reference passes enter the study
            coords = {r: Placement(p.x, p.y, p.rot) for r, p in original.placements.items()}
            for pert in PERTURBATIONS:
                task = perturb(base, pert)
                f = PERTURBATIONS[pert][1] if PERTURBATIONS[pert][0] == "board" else 1.0
                answers = {
                    "relational": realize_board(task, action, seed)[0],
                    "frozen": _with(coords),
                    "affine": _with({r: Placement(round(p.x * f / 0.25) * 0.25, round(p.y * f / 0.25) * 0.25, p.rot)
                                     for r, p in coords.items()}),
                    "empty": realize_board(task, PcbAction(relations=[]), seed)[0],
                }
                answers["preserve_legal"] = _with(legalize(task, coords, seed).placements)
                results = {m: _judge(task, action, art) for m, art in answers.items()}
                results["best_of_3"] = max((results[m] for m in ("frozen", "affine", "preserve_legal")),
                                           key=lambda r: (r[0], r[1]))
                for method in METHODS:
                    clean, held = results[method]
                    case = Case(name, base.family, pert, method, seed, clean, held, n_rel)
                    cases.append(case)
                    if progress is not None:
                        progress(case)
    return cases


def bootstrap(cases: list[Case], resamples: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Clean-pass rate and its 95 % interval, resampling families with replacement."""
    if not cases:
        return 0.0, 0.0, 0.0
    by_family: dict[str, list[Case]] = {}
    for c in cases:
        by_family.setdefault(c.family, []).append(c)
    families = sorted(by_family)
    rng = random.Random(seed)
    rates = []
    for _ in range(resamples):
        picked = [c for fam in (rng.choice(families) for _ in families) for c in by_family[fam]]
        rates.append(sum(c.clean for c in picked) / len(picked))
    rates.sort()
    point = sum(c.clean for c in cases) / len(cases)
    return point, rates[int(0.025 * resamples)], rates[min(resamples - 1, int(0.975 * resamples))]
