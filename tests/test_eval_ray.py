"""``--executor ray`` reproduces the local results exactly (episodes as Ray tasks on a local instance)."""

from __future__ import annotations

from pathlib import Path

from rac_fw.eval.runner import EvalRequest, evaluate


def _comparable(outcome_episodes: list) -> list[tuple]:
    return [(e.task, e.seed, e.outcome, e.first_pass, [(c.tokens_in, c.tokens_out, c.token_source) for c in e.calls],
             [(p.status, p.codes) for p in e.proposals]) for e in outcome_episodes]


def test_ray_matches_local(tmp_path: Path) -> None:
    import ray  # noqa: F401  (a dev dependency: when it is missing this test fails, it does not skip)

    common = dict(domain="scheduling", interface="rac", model="scripted:repairing", tasks=["la01", "la02", "la03"],
                  seeds=2)
    local = evaluate(EvalRequest(**common, store=tmp_path / "local.sqlite"))  # type: ignore[arg-type]
    on_ray = evaluate(EvalRequest(**common, store=tmp_path / "ray.sqlite", executor="ray",  # type: ignore[arg-type]
                                  workers=2))
    assert len(local.episodes) == 6
    assert _comparable(on_ray.episodes) == _comparable(local.episodes)
