"""The benchmark inputs: seeds, the 5,564-abstract corpus, the dev set and the questions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assistant.corpus import shipped_seeds_dir

REPO = Path(__file__).resolve().parent.parent
SEEDS = shipped_seeds_dir()
ABSTRACTS_2024 = Path(__file__).resolve().parent / "data" / "abstracts_2024.jsonl"
DEV_SET = REPO / "eval" / "retrieval_dev.jsonl"
QUESTIONS = REPO / "eval" / "questions.jsonl"
ANSWER_QUESTIONS = 15


@dataclass(frozen=True)
class DevQuestion:
    """A retrieval question and the papers that answer it."""

    question: str
    gold_papers: tuple[str, ...]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def dev_questions() -> list[DevQuestion]:
    """The 40 retrieval dev questions."""
    return [DevQuestion(row["question"], tuple(row["gold_papers"])) for row in _rows(DEV_SET)]


def answer_questions(count: int = ANSWER_QUESTIONS) -> list[str]:
    """`count` questions spread evenly over `eval/questions.jsonl` (every question type)."""
    questions = [row["question"] for row in _rows(QUESTIONS)]
    step = max(1, len(questions) // count)
    return questions[::step][:count]
