"""`python -m bench [retrieval|answers|verify|formats|all] [--quick]`: run, print the tables, save
the JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from rich.console import Console

from . import verify
from .corpora import answer_questions, dev_questions
from .report import answer_rows, format_rows, print_table, retrieval_rows, targets, verify_rows
from .runner import SYSTEMS, cold_seconds, run_worker
from .stats import load_average

RESULTS = Path(__file__).resolve().parent / "results"
COLD_SEARCH_RUNS = 5
COLD_ASK_RUNS = 3

console = Console(width=None if sys.stdout.isatty() else 150)
progress = Console(stderr=True)


def _workers(task: str, workdir: Path, options: list[str]) -> dict[str, dict]:
    """Run `task` for each system in turn, logging progress and the load average."""
    results = {}
    for system in SYSTEMS:
        started = time.perf_counter()
        progress.log(f"{task}: {system} … (load {load_average()})")
        results[system] = run_worker(task, system, workdir, options)
        progress.log(f"{task}: {system} done in {time.perf_counter() - started:.0f} s")
    return results


def run_retrieval(workdir: Path, quick: bool) -> dict:
    """Both systems' retrieval figures, then cold searches on citeqa's largest index."""
    part = _workers("retrieval", workdir, ["--quick"] if quick else [])
    index_dir = Path(part["citeqa"]["index_dir"])
    progress.log(f"cold citeqa search × {COLD_SEARCH_RUNS} (load {load_average()})")
    question = dev_questions()[0].question
    part["cold"] = {"search": cold_seconds(["search", question], index_dir, COLD_SEARCH_RUNS)}
    return part


def run_answers(workdir: Path, rounds: int) -> dict:
    """Both systems' answer figures, then cold asks on citeqa's seed index."""
    part = _workers("answers", workdir, ["--answer-rounds", str(rounds)])
    index_dir = Path(part["citeqa"]["index_dir"])
    question = answer_questions()[0]
    progress.log(f"cold citeqa ask × {COLD_ASK_RUNS} per backend (load {load_average()})")
    part["cold"] = {
        "ask --backend extractive": cold_seconds(
            ["ask", question, "--backend", "extractive"], index_dir, COLD_ASK_RUNS
        ),
        "ask (default backend: auto = extractive)": cold_seconds(
            ["ask", question], index_dir, COLD_ASK_RUNS
        ),
    }
    return part


def run_formats(workdir: Path, rounds: int) -> dict:
    """BibTeX against JSONL ingest of the same corpus, citeqa only (in one process)."""
    progress.log(f"formats: citeqa, {rounds} round(s) … (load {load_average()})")
    return run_worker("formats", "citeqa", workdir, ["--rounds", str(rounds)])


def report(results: dict) -> None:
    """Print the tables and the targets' tally; add the targets to `results`."""
    rows = []
    if "retrieval" in results:
        part = retrieval_rows(results["retrieval"])
        print_table(console, "Retrieval", "llama-index VectorStoreIndex", part)
        rows += part
    if "answers" in results:
        part = answer_rows(results["answers"])
        print_table(console, "Answers", "llama-index CitationQueryEngine", part)
        rows += part
    if "verify" in results:
        part = verify_rows(results["verify"])
        print_table(console, "Verification and extractive answers", "—", part)
        rows += part
    if "formats" in results:
        part = format_rows(results["formats"])
        print_table(console, "Formats (citeqa)", "JSONL", part, ours="BibTeX (Zotero-style)")
        rows += part
    results["targets"] = targets(rows)
    passed = sum(target["passed"] for target in results["targets"])
    console.print(
        f"targets: {passed}/{len(results['targets'])} pass · {results['seconds'] / 60:.1f} min · "
        f"{os.cpu_count()} CPUs · load average {results['load_start']} at start, "
        f"{results['load_end']} at end"
    )


def save(results: dict, stamp: str) -> Path:
    """Write `results` to bench/results/<stamp>.json."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{stamp}.json"
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "part",
        nargs="?",
        default="all",
        choices=("retrieval", "answers", "verify", "formats", "all"),
    )
    parser.add_argument("--quick", action="store_true", help="skip the 5,564-abstract parts")
    parser.add_argument(
        "--answer-rounds",
        type=int,
        default=3,
        help="passes over the ~15 answer questions (the local model is slow on a busy machine)",
    )
    parser.add_argument(
        "--format-rounds",
        type=int,
        default=1,
        help="full ingests of the 5,564 abstracts per format (about 5 minutes each)",
    )
    args = parser.parse_args()
    stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
    started = time.perf_counter()
    results: dict = {"started": stamp, "options": vars(args), "load_start": load_average()}
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-") as workdir:
        if args.part in ("retrieval", "all"):
            results["retrieval"] = run_retrieval(Path(workdir), args.quick)
            save(results, stamp)  # a later failure keeps what was measured
        if args.part in ("answers", "all"):
            results["answers"] = run_answers(Path(workdir), args.answer_rounds)
            save(results, stamp)
        if args.part in ("verify", "all"):
            progress.log(f"verify … (load {load_average()})")
            results["verify"] = verify.run()
        if args.part in ("formats", "all"):
            results["formats"] = run_formats(Path(workdir), args.format_rounds)
    results["seconds"] = time.perf_counter() - started
    results["load_end"] = load_average()
    report(results)
    console.print(f"results: {save(results, stamp)}")


if __name__ == "__main__":
    main()
