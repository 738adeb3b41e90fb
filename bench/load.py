"""Load: concurrent chats through the web UI's `/ask` endpoint (gradio_client) and threads
through the Python API, for a fixed number of questions each; every answer is checked
against the JSON contract.

`python -m bench.load [--clients 20] [--threads 8] [--per-worker 3] [--backend extractive]`
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from assistant import Assistant, CiteqaError, Settings
from assistant.answer import contract_problems

QUESTIONS = [
    "Which papers study neural collapse?",
    "By how much does GaLore reduce optimizer memory?",
    "How does Mamba-2 relate to transformers?",
    "What does AlphaPruning do to LLaMA-7B?",
    "Which paper proposes a multi-task vehicle routing solver?",
    "Which paper forecasts electricity demand with time-series models?",
]


@dataclass
class LoadResult:
    """Latencies, errors and contract violations of one load run."""

    name: str
    workers: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.latencies) + len(self.errors)

    def summary(self) -> dict:
        ordered = sorted(self.latencies) or [0.0]
        return {
            "name": self.name,
            "workers": self.workers,
            "requests": self.requests,
            "errors": len(self.errors),
            "invalid_answers": len(self.invalid),
            "throughput_per_s": round(self.requests / self.seconds, 2) if self.seconds else 0.0,
            "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 1),
        }


def run_load(
    name: str, workers: int, per_worker: int, ask: Callable[[int, str], dict]
) -> LoadResult:
    """Each of `workers` threads asks `per_worker` questions through `ask(worker, question)`."""
    result = LoadResult(name, workers)
    lock = threading.Lock()

    def worker(number: int) -> None:
        for turn in range(per_worker):
            question = QUESTIONS[(number + turn) % len(QUESTIONS)]
            started = time.perf_counter()
            try:
                data = ask(number, question)
            except Exception as exc:  # a load test counts every failure, whatever its kind
                with lock:
                    result.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            elapsed = time.perf_counter() - started
            with lock:
                result.latencies.append(elapsed)
                result.invalid += contract_problems(data)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.perf_counter() - started
    return result


def python_api_load(
    assistant: Assistant, threads: int, per_worker: int, backend: str
) -> LoadResult:
    def ask(_: int, question: str) -> dict:
        return assistant.ask(question, backend=backend).to_json()

    return run_load("python api", threads, per_worker, ask)


def ui_load(url: str, clients: int, per_worker: int, backend: str) -> LoadResult:
    from gradio_client import Client

    connections = [Client(url, verbose=False) for _ in range(clients)]

    def ask(worker: int, question: str) -> dict:
        return connections[worker].predict(
            question, backend, None, None, None, None, api_name="/ask"
        )

    return run_load("web ui /ask", clients, per_worker, ask)


def seeded_settings(data_dir: Path) -> Settings:
    settings = Settings(data_dir=data_dir)
    settings.llm.backend = "extractive"
    Assistant(settings).ensure_index()
    return settings


def run(clients: int, threads: int, per_worker: int, backend: str) -> list[dict]:
    """Both load runs on a fresh seed index; returns their summaries."""
    from ui.app import start

    with tempfile.TemporaryDirectory() as folder:
        settings = seeded_settings(Path(folder))
        assistant = Assistant(settings)
        assistant.ask(QUESTIONS[0], backend=backend)
        app, url = start(settings, host="127.0.0.1", port=_free_port())
        try:
            results = [
                ui_load(url, clients, per_worker, backend),
                python_api_load(assistant, threads, per_worker, backend),
            ]
        finally:
            app.close()
    return [
        result.summary()
        | {"sample_errors": result.errors[:3], "sample_invalid": result.invalid[:3]}
        for result in results
    ]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--per-worker", type=int, default=3)
    parser.add_argument("--backend", default="extractive")
    args = parser.parse_args()
    try:
        summaries = run(args.clients, args.threads, args.per_worker, args.backend)
    except CiteqaError as exc:
        raise SystemExit(f"error: {exc}") from None
    for summary in summaries:
        print(summary)


if __name__ == "__main__":
    main()
