"""(claim, evidence, label) pairs from labelled answer sets, exactly as the local verifier
pairs them (the claim with a reference back resolved, the sentences it is aligned to), plus
the even rows of `eval/judge_pairs.jsonl`: the real, reworded half of the cross-encoder's
training data (`tools/train_entailment.py`). Run with the project's own environment:

    .venv/bin/python tools/labelled_pairs.py /tmp/labelled_pairs.jsonl \\
        eval/answers_dev.jsonl eval/answers_test.jsonl tools/data/answers_train_*.jsonl

Answer sets about papers outside the index (the training sets in `tools/data/`, written
about non-seed abstracts) find their papers in `bench/data/abstracts_2024.jsonl`. Only
training and tuning sets belong here: `answers_test2` and `answers_test3` choose the
thresholds, `answers_test4` is held out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from assistant.answering import verify
from assistant.answering.claims import parse_citations, read_draft
from assistant.answering.passages import PaperText
from assistant.answering.question import analyse
from assistant.corpus import load_corpus
from assistant.evaluation.dataset import load_answer_set
from assistant.evaluation.run import eval_assistant
from assistant.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
JUDGE_PAIRS = ROOT / "eval" / "judge_pairs.jsonl"
CORPUS = ROOT / "bench" / "data" / "abstracts_2024.jsonl"


def answer_pairs(files: list[str]) -> list[dict]:
    settings = load_settings()
    rules_only = settings.answer.model_copy(update={"entailment": False})
    pairs = {}
    with eval_assistant(settings.model_copy(update={"answer": rules_only})) as assistant:
        assistant.ensure_index()
        answerer = assistant.answerer
        papers = {p.paper_id: p for p in load_corpus([CORPUS])} | assistant.index.snapshot().papers
        for row in (row for name in files for row in load_answer_set(Path(name))):
            texts = [PaperText(papers[paper_id], rank) for rank, paper_id in enumerate(row.papers)]
            question = analyse(row.question, row.question, answerer.catalog())
            for labelled in row.answers:
                draft = read_draft(labelled.text, len(texts))
                label = {parse_citations(s.text, len(texts))[0]: s for s in labelled.sentences}
                for sentence in draft.sentences:
                    if sentence.opener or sentence.text not in label:
                        continue
                    item = verify._item(question, sentence, verify._cited(sentence, texts), draft)
                    evidence = answerer.scorer.aligned_evidence(*item)
                    if evidence:
                        truth = label[sentence.text]
                        pairs[item[0], evidence] = {
                            "claim": item[0],
                            "evidence": evidence,
                            "label": int(truth.supported),
                            "kind": truth.kind or "faithful",
                        }
    return list(pairs.values())


def judge_pairs() -> list[dict]:
    rows = [json.loads(line) for line in JUDGE_PAIRS.read_text().splitlines() if line.strip()]
    return [
        {
            "claim": r["claim"],
            "evidence": r["passage"],
            "label": int(r["supported"]),
            "kind": r["kind"],
        }
        for r in rows
        if int(r["id"].lstrip("j")) % 2 == 0  # the odd rows stay held out (test_support.py)
    ]


def main() -> None:
    """Writes the answer sets' pairs to OUT and the judge pairs beside it (OUT_judge.jsonl),
    since training weighs them differently."""
    out, files = Path(sys.argv[1]), sys.argv[2:]
    for path, pairs in ((out, answer_pairs(files)), (_judge_file(out), judge_pairs())):
        path.write_text("".join(json.dumps(pair) + "\n" for pair in pairs))
        print(f"{len(pairs)} pairs -> {path}")


def _judge_file(out: Path) -> Path:
    return out.with_name(f"{out.stem}_judge.jsonl")


if __name__ == "__main__":
    main()
