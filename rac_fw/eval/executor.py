"""Where episodes run: in this process (``local``) or as Ray tasks (``ray``, the optional ``[ray]`` extra).

An episode is described by a plain, picklable :class:`EpisodeSpec`; :func:`run_spec` turns one into an
``EpisodeResult`` document in whatever process runs it, so the Ray executor ships specs to workers and
gets back the same documents the local one produces (``--address`` joins an existing cluster; its
workers must be able to import rac-fw and reach the model endpoint).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from rac_fw.eval.clients import AnthropicClient, ModelClient, ModelOptions, OpenAIChatClient
from rac_fw.eval.episode import EpisodeResult, run_episode

Provider = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ModelSpec:
    provider: Provider
    model: str
    base_url: str
    api_key_env: str | None

    def client(self) -> ModelClient:
        if self.provider == "anthropic":
            return AnthropicClient(self.model, self.base_url, self.api_key_env)
        return OpenAIChatClient(self.model, self.base_url, self.api_key_env)


@dataclass(frozen=True)
class EpisodeSpec:
    domain: str
    interface: str
    task: str
    seed: int
    model: ModelSpec
    budget: int
    options: ModelOptions


def run_spec(spec: EpisodeSpec) -> dict[str, Any]:
    """Run one episode (in any process) and return its result document."""
    from rac_fw.eval.interfaces import get_interface

    interface = get_interface(spec.domain, spec.interface)
    result = run_episode(interface, spec.task, spec.model.client(), spec.seed, spec.budget, spec.options)
    return result.to_json()


OnResult = Callable[[EpisodeResult], None]


def run_local(specs: Iterable[EpisodeSpec], on_result: OnResult) -> None:
    for spec in specs:
        on_result(EpisodeResult.from_json(run_spec(spec)))


class ExecutorError(RuntimeError):
    """The executor cannot start (Ray not installed, cluster unreachable)."""


def run_ray(specs: list[EpisodeSpec], on_result: OnResult, address: str | None = None,
            workers: int | None = None) -> None:
    """Episodes as Ray tasks; results are delivered as they complete (``on_result`` runs in the driver)."""
    try:
        import ray
    except ImportError:
        raise ExecutorError("the Ray executor needs the optional extra: pip install 'rac-fw[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        try:
            if address is not None:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(f"cannot start or reach the Ray cluster ({address or 'local'}): {exc}") from None
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(run_spec)
        pending = [remote.remote(spec) for spec in specs]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_result(EpisodeResult.from_json(ray.get(ref)))
    finally:
        if started_here:
            ray.shutdown()
