"""One system's benchmark in its own process, so its peak memory is its own.

`python -m bench.worker {retrieval,answers,formats} {citeqa,llama-index} WORKDIR OUT.json
[--quick] [--answer-rounds N] [--rounds N]`
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from assistant import Settings, load_corpus
from assistant.backends.local import LocalBackend, measure_tokens_per_second

from . import exports
from .corpora import ABSTRACTS_2024, SEEDS, DevQuestion, answer_questions, dev_questions
from .stats import load_average, median, peak_rss_mb, seconds, summary_ms
from .systems import CiteqaSystem, LlamaIndexSystem, Searcher, System, make_system

K = 5  # citeqa's default passages per question, used for both systems
SEED_RUNS = 3
RETRIEVAL_ROUNDS = 5
TOKENS_RUNS = 3
TOKENS_PROMPT = "Explain in a short paragraph what a neural network's loss function is."
PARSE_RUNS = 3

Asker = Callable[[str], str]
"""A question -> what became of it: `answered`, `refused`, `fallback` or `empty`."""


# ---- retrieval ------------------------------------------------------------------------


def ingest_seeds(name: str, workdir: Path) -> tuple[System, Path, list[float]]:
    """Ingest the seeds `SEED_RUNS` times into fresh indexes; the last one, its folder, times."""
    runs = []
    for run in range(SEED_RUNS):
        folder = workdir / f"seeds-{run}"
        system = make_system(name, folder)
        runs.append(seconds(lambda system=system: system.ingest([SEEDS])))
    return system, folder, runs


def reingest(system: System, paths: Sequence[Path]) -> dict[str, float]:
    """Seconds to ingest `paths` again into a reopened index, and the texts it embedded."""
    again = system.reopen()
    before = again.embedder.texts
    took = seconds(lambda: again.ingest(paths))
    return {"seconds": took, "embedded_texts": again.embedder.texts - before}


def recall(searchers: dict[str, Searcher], questions: list[DevQuestion]) -> dict[str, dict]:
    """Paper-level recall@1 and @K of each searcher (retrieved chunks mapped to papers)."""
    scores = {}
    for label, search in searchers.items():
        ranked = [list(dict.fromkeys(search(q.question))) for q in questions]
        scores[label] = {
            f"recall@{n}": sum(
                len(set(papers[:n]) & set(q.gold_papers)) / len(q.gold_papers)
                for papers, q in zip(ranked, questions, strict=True)
            )
            / len(questions)
            for n in (1, K)
        }
    return scores


def warm_latency(run: Callable[[str], object], questions: list[str], rounds: int) -> dict:
    """p50/p95 of `run` over `rounds` passes of `questions`, after one untimed call."""
    run(questions[0])
    samples = [seconds(lambda q=q: run(q)) for _ in range(rounds) for q in questions]
    return summary_ms(samples)


def retrieval(name: str, workdir: Path, options: argparse.Namespace) -> dict:
    """Ingest, re-ingest, recall, warm latency and peak memory of one system (with
    `options.quick`, on the seeds only)."""
    result: dict = {"system": name, "load_start": load_average()}
    result["seed_papers"] = len(load_corpus([SEEDS]))
    system, index_dir, result["seeds_ingest_s"] = ingest_seeds(name, workdir)
    result["seeds_reingest"] = reingest(system, [SEEDS])
    questions = dev_questions()
    result["recall"] = recall(system.searchers(K), questions)
    result["latency_index"] = "seeds"
    if not options.quick:
        index_dir = workdir / "abstracts_2024"
        system = make_system(name, index_dir)
        result["abstracts_papers"] = len(load_corpus([ABSTRACTS_2024]))
        result["abstracts_ingest_s"] = seconds(lambda: system.ingest([ABSTRACTS_2024]))
        result["abstracts_reingest"] = reingest(system, [ABSTRACTS_2024])
        result["latency_index"] = "abstracts_2024"
    texts = [q.question for q in questions]
    result["latency"] = {
        label: warm_latency(search, texts, RETRIEVAL_ROUNDS)
        for label, search in system.searchers(K).items()
    }
    result["index_dir"] = str(index_dir)
    result["peak_rss_mb"] = peak_rss_mb()
    result["load_end"] = load_average()
    return result


# ---- answers --------------------------------------------------------------------------


def citeqa_askers(system: CiteqaSystem) -> dict[str, Asker]:
    """`Assistant.ask` with each backend."""

    def asker(backend: str) -> Asker:
        def ask(question: str) -> str:
            answer = system.assistant.ask(question, backend=backend)
            if answer.note:
                return "fallback"
            return "refused" if answer.refused else "answered"

        return ask

    return {f"citeqa {backend}": asker(backend) for backend in ("extractive", "local")}


def llama_index_askers(system: LlamaIndexSystem) -> dict[str, Asker]:
    """llama-index's `CitationQueryEngine` on citeqa's local model and embedder."""
    from llama_index.core.query_engine import CitationQueryEngine

    from assistant.backends.local import LocalBackend
    from assistant.evaluation import BackendLLM

    settings = Settings().llm
    llm = BackendLLM(
        backend=LocalBackend(settings),
        context_window=settings.context_tokens,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
    )
    engine = CitationQueryEngine.from_args(system.index, llm=llm, similarity_top_k=K)

    def ask(question: str) -> str:
        return "answered" if str(engine.query(question)).strip() else "empty"

    return {"llama-index CitationQueryEngine (local)": ask}


def answer_latency(ask: Asker, questions: list[str], rounds: int) -> dict:
    """Warm end-to-end latency of `ask` and how its answers turned out."""
    ask(questions[0])
    outcomes: Counter[str] = Counter()
    samples = []
    for _ in range(rounds):
        for question in questions:
            samples.append(seconds(lambda q=question: outcomes.update([ask(q)])))
    return {**summary_ms(samples), "outcomes": dict(outcomes)}


def tokens_per_second(system: CiteqaSystem) -> float:
    """Median decoding speed of the local model over `TOKENS_RUNS` greedy answers."""
    backend = LocalBackend(system.settings.llm)
    return median([measure_tokens_per_second(backend, TOKENS_PROMPT) for _ in range(TOKENS_RUNS)])


def answers(name: str, workdir: Path, options: argparse.Namespace) -> dict:
    """Warm answer latency per backend on the seed index, `options.answer_rounds` passes
    over the questions (and the local model's tokens/s for citeqa)."""
    result: dict = {"system": name, "load_start": load_average()}
    index_dir = workdir / "answers"
    system = make_system(name, index_dir)
    system.ingest([SEEDS])
    askers = citeqa_askers(system) if name == "citeqa" else llama_index_askers(system)
    questions = answer_questions()
    result["latency"] = {
        label: answer_latency(ask, questions, options.answer_rounds)
        for label, ask in askers.items()
    }
    if name == "citeqa":
        result["tokens_per_second"] = tokens_per_second(system)
    result["index_dir"] = str(index_dir)
    result["peak_rss_mb"] = peak_rss_mb()
    result["load_end"] = load_average()
    return result


# ---- formats ----------------------------------------------------------------------------


def formats(name: str, workdir: Path, options: argparse.Namespace) -> dict:
    """The 5,564 abstracts as citeqa's JSONL and as a Zotero-style BibTeX export: parse
    times (median of `PARSE_RUNS`) and full ingests into fresh indexes, `options.rounds`
    of each, alternating which format goes first."""
    workdir.mkdir(parents=True, exist_ok=True)
    bib = workdir / "abstracts_2024.bib"
    bib.write_text(exports.bibtex(exports.read_rows(ABSTRACTS_2024)), encoding="utf-8")
    files = {"jsonl": ABSTRACTS_2024, "bibtex": bib}
    result: dict = {"system": name, "load_start": load_average(), "bib_bytes": bib.stat().st_size}
    result["papers"] = {label: len(load_corpus([path])) for label, path in files.items()}
    result["parse_s"] = {
        label: [seconds(lambda path=path: load_corpus([path])) for _ in range(PARSE_RUNS)]
        for label, path in files.items()
    }
    result["ingest_s"] = {label: [] for label in files}
    result["embedded_texts"] = {label: [] for label in files}
    for round_number in range(options.rounds):
        order = list(files) if round_number % 2 == 0 else list(reversed(files))
        for label in order:
            system = make_system(name, workdir / f"{label}-{round_number}")
            result["ingest_s"][label].append(
                seconds(lambda s=system, p=files[label]: s.ingest([p]))
            )
            result["embedded_texts"][label].append(system.embedder.texts)
    result["peak_rss_mb"] = peak_rss_mb()
    result["load_end"] = load_average()
    return result


TASKS = {"retrieval": retrieval, "answers": answers, "formats": formats}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.worker")
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("system", choices=("citeqa", "llama-index"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--answer-rounds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    result = TASKS[args.task](args.system, args.workdir / args.system, args)
    args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
