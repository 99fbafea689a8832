"""Where episodes run: on a thread pool in this process (``local``) or on warmed Ray actors (``ray``).

An episode is described by a plain, picklable :class:`EpisodeSpec`; :func:`run_spec` turns one into an
``EpisodeResult`` document in whatever process runs it, so both executors produce the same documents.

* ``local`` runs episodes on a thread pool: an episode spends most of its time waiting for the model
  (seconds per call), which threads overlap; judging is short. This is what one machine needs.
* ``ray`` starts ``workers`` actors once (:class:`RayPool`), each warming the domains it will judge
  (imports, numba kernels, catalogs) before the first episode and then reused for every episode of the
  run — and of further runs while the pool is open — each serving several episodes at once on its own
  threads. Ray pays across machines (``--address`` joins an existing cluster; its workers must be able
  to import rac-fw and reach the model endpoint).

Results are delivered to ``on_result`` in the calling thread (the store's SQLite connection lives there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Literal

from rac_fw.eval.clients import AnthropicClient, ModelClient, ModelOptions, OpenAIChatClient
from rac_fw.eval.episode import EpisodeResult, run_episode

Provider = Literal["openai", "anthropic"]

#: Episodes one local process (or one Ray actor) runs at once by default: enough to overlap model latency.
DEFAULT_THREADS = 4


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
    """Run one episode (in any process or thread) and return its result document."""
    from rac_fw.eval.interfaces import get_interface

    interface = get_interface(spec.domain, spec.interface)
    result = run_episode(interface, spec.task, spec.model.client(), spec.seed, spec.budget, spec.options)
    return result.to_json()


def warm(domains: Iterable[str]) -> None:
    """Load what the first judgement of each domain would otherwise pay for (imports, kernels, catalogs)."""
    from rac_fw.domain import load_domain

    for name in dict.fromkeys(domains):
        load_domain(name).warm()


OnResult = Callable[[EpisodeResult], None]


def run_local(specs: Iterable[EpisodeSpec], on_result: OnResult, threads: int = DEFAULT_THREADS) -> None:
    """Run the episodes on ``threads`` threads of this process; ``on_result`` runs in the caller's thread."""
    todo = list(specs)
    if threads <= 1 or len(todo) <= 1:
        for spec in todo:
            on_result(EpisodeResult.from_json(run_spec(spec)))
        return
    with ThreadPoolExecutor(max_workers=min(threads, len(todo)), thread_name_prefix="rac-eval") as pool:
        pending: set[Future[dict[str, Any]]] = {pool.submit(run_spec, spec) for spec in todo}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                on_result(EpisodeResult.from_json(future.result()))


class ExecutorError(RuntimeError):
    """The executor cannot start (Ray not installed, cluster unreachable)."""


class _Worker:
    """A Ray actor's body: warmed once, then runs any number of episodes (several at once)."""

    def __init__(self, domains: list[str]):
        warm(domains)

    def ready(self) -> bool:
        return True

    def run(self, spec: EpisodeSpec) -> dict[str, Any]:
        return run_spec(spec)


class RayPool:
    """``workers`` warmed Ray actors, reused for every ``run`` until the pool is closed.

    Used as a context manager; it starts a local Ray instance (``num_cpus=workers``) or joins ``address``,
    and shuts Ray down on exit only if it started it.
    """

    def __init__(self, domains: Iterable[str], address: str | None = None, workers: int | None = None,
                 threads: int = DEFAULT_THREADS):
        self.domains, self.address, self.threads = list(dict.fromkeys(domains)), address, threads
        self.workers = workers
        self.actors: list[Any] = []
        self._started = False

    def __enter__(self) -> RayPool:
        try:
            import ray
        except ImportError:
            raise ExecutorError("the Ray executor needs the optional extra: pip install 'rac-fw[ray]'") from None
        self._ray = ray
        if not ray.is_initialized():
            try:
                if self.address is not None:
                    ray.init(address=self.address, log_to_driver=False)
                else:
                    ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"cannot start or reach the Ray cluster ({self.address or 'local'}): {exc}"
                                    ) from None
            self._started = True
        count = self.workers or max(1, int(ray.available_resources().get("CPU", 1)))
        actor = ray.remote(_Worker).options(num_cpus=1, max_restarts=0, max_concurrency=self.threads)
        self.actors = [actor.remote(self.domains) for _ in range(count)]
        ray.get([a.ready.remote() for a in self.actors])  # every actor warmed before the first episode
        return self

    def run(self, specs: list[EpisodeSpec], on_result: OnResult) -> None:
        """Episodes spread round-robin over the actors; results delivered as they complete."""
        ray = self._ray
        pending = [self.actors[i % len(self.actors)].run.remote(spec) for i, spec in enumerate(specs)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_result(EpisodeResult.from_json(ray.get(ref)))

    def __exit__(self, *exc: object) -> None:
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []
        if self._started:
            self._ray.shutdown()


def run_ray(specs: list[EpisodeSpec], on_result: OnResult, address: str | None = None,
            workers: int | None = None) -> None:
    """Episodes on a Ray pool opened for this call (see :class:`RayPool`)."""
    with RayPool({s.domain for s in specs}, address, workers) as pool:
        pool.run(specs, on_result)
