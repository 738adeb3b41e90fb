"""The evaluation: metrics on hand-made answers, the judges, the baseline adapters,
determinism and `citeqa eval` writing its reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import EVAL
from fake_openai_server import Behaviour
from pydantic import SecretStr

from assistant import Assistant, Settings
from assistant.answer import REFUSAL, Answer, AnswerSentence, Citation
from assistant.backends.base import GenerationRequest
from assistant.errors import BackendError, SettingsError
from assistant.evaluation import (
    BackendLLM,
    CitationBaseline,
    EmbedderAdapter,
    EvalQuestion,
    EvalReport,
    LLMJudge,
    LocalJudge,
    Pair,
    Response,
    SystemResult,
    Thresholds,
    aggregate,
    eval_assistant,
    evaluate,
    evaluate_verifier,
    gate_failures,
    judge_quality,
    key_fact_recall,
    load_answer_set,
    load_judge_pairs,
    load_questions,
    load_thresholds,
    markdown,
    response_from_answer,
    retrieval_scores,
    score_responses,
    write_reports,
)
from assistant.openai_api import ApiEndpoint
from assistant.retrieval import Hit
from assistant.settings import JudgeSettings, LLMSettings

# ---- hand-made answers, judged by a judge whose verdicts a test can predict -----------------


class SubstringJudge:
    """Supported exactly when the passage contains the claim (without its full stop)."""

    name = "substring"

    def supports(self, pairs: list[Pair]) -> list[bool]:
        return [claim.rstrip(".").casefold() in passage.casefold() for claim, passage in pairs]


def hit(paper_id: str, text: str = "A passage.") -> Hit:
    return Hit(
        paper_id=paper_id,
        title=paper_id,
        display_title=paper_id,
        authors=[],
        venue=None,
        url=None,
        area=None,
        chunk_id=f"{paper_id}-0",
        text=text,
        start=0,
        end=len(text),
        sentences=[(0, len(text))],
        score=1.0,
    )


def answer(
    sentences: list[tuple[str, list[str]]] = (),
    *,
    raw: str = "",
    sources: list[Hit] = (),
) -> Answer:
    """An `Answer` whose sentences cite the given snippets (a refusal when there are none)."""
    numbers: dict[str, int] = {}
    for _, snippets in sentences:
        for snippet in snippets:
            numbers.setdefault(snippet, len(numbers) + 1)
    citations = [
        Citation(
            n=n,
            paper_id="p1",
            title=None,
            display_title="p1",
            authors=[],
            venue=None,
            url=None,
            snippet=snippet,
            display_snippet=snippet,
            start=0,
            end=len(snippet),
        )
        for snippet, n in numbers.items()
    ]
    refused = not sentences
    return Answer(
        question="q",
        answer=REFUSAL if refused else " ".join(text for text, _ in sentences),
        refused=refused,
        backend="extractive",
        sentences=[AnswerSentence(text=REFUSAL, display=REFUSAL, citations=[])]
        if refused
        else [
            AnswerSentence(text=text, display=text, citations=[numbers[s] for s in snippets])
            for text, snippets in sentences
        ],
        citations=citations,
        raw_answer=raw,
        sources=list(sources),
    )


def question(answerable: bool = True, **fields) -> EvalQuestion:
    defaults = {
        "id": "q",
        "type": "fact" if answerable else "unanswerable",
        "question": "What?",
        "gold_papers": ["p1"] if answerable else [],
        "key_facts": [["alpha"]] if answerable else [],
        "answerable": answerable,
    }
    return EvalQuestion(**{**defaults, **fields})


def metrics(*pairs: tuple[EvalQuestion, Answer]):
    questions = [q for q, _ in pairs]
    responses = [response_from_answer(a, {h.paper_id: h.text for h in a.sources}) for _, a in pairs]
    return aggregate(score_responses(questions, responses, SubstringJudge()))


# ---- metrics ----------------------------------------------------------------------------------


def test_a_refusal_on_an_unanswerable_question_counts_for_refusal_recall() -> None:
    result = metrics(
        (question(answerable=False), answer()),
        (question(), answer([("Alpha holds.", ["Alpha holds."])])),
    )
    assert (result.refusal_recall, result.refusal_precision, result.answer_rate) == (1, 1, 1)
    assert result.refusals == 1 and result.sentences == 1 and result.faithfulness == 1


def test_answering_an_unanswerable_question_misses_refusal_recall() -> None:
    result = metrics((question(answerable=False), answer([("Alpha.", ["Alpha."])])))
    assert result.refusal_recall == 0 and result.refusal_precision is None


def test_a_refused_answerable_question_scores_zero_facts_and_lowers_precision() -> None:
    result = metrics(
        (question(answerable=False), answer()),
        (question(), answer()),
    )
    assert result.key_fact_recall == 0 and result.answer_rate == 0
    assert result.refusal_precision == 0.5
    assert result.faithfulness is None and result.sentences == 0


def test_an_unsupported_sentence_lowers_faithfulness() -> None:
    supported = ("Alpha helps.", ["Alpha helps."])
    made_up = ("Beta hurts.", ["Gamma is unrelated."])
    result = metrics((question(), answer([supported, made_up])))
    assert result.faithfulness == 0.5 and result.citation_recall == 0.5
    assert result.citation_precision == 0.5  # as in ALCE: its citation is not precise either


def test_an_unneeded_citation_lowers_precision() -> None:
    result = metrics((question(), answer([("Alpha helps.", ["Alpha helps.", "Gamma."])])))
    assert result.citation_recall == 1 and result.citations == 2
    assert result.citation_precision == 0.5


def test_citations_that_are_needed_together_are_all_precise() -> None:
    result = metrics((question(), answer([("alpha beta", ["alpha", "beta"])])))
    assert result.citation_recall == 1 and result.citation_precision == 1


def test_faithfulness_looks_at_all_cited_snippets_citation_recall_at_its_own() -> None:
    swapped = [("Alpha.", ["Beta."]), ("Beta.", ["Alpha."])]
    result = metrics((question(), answer(swapped)))
    assert result.faithfulness == 1 and result.citation_recall == 0


def test_raw_sentences_are_scored_separately_and_uncited_ones_count_as_unsupported() -> None:
    raw = "Alpha helps [1]. Delta was never said [1]. Uncited alpha helps."
    reply = answer(
        [("Alpha helps.", ["Alpha helps."])], raw=raw, sources=[hit("p1", "Alpha helps.")]
    )
    result = metrics((question(), reply))
    assert result.faithfulness == 1 and result.sentences == 1
    assert result.raw_sentences == 3 and result.raw_faithfulness == pytest.approx(1 / 3)
    assert result.raw_citations == 2 and result.raw_citation_precision == 0.5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It reaches SOTA on cifar-n with boosted trees.", 2 / 3),
        ("CIFAR-N, CatBoost and 98 datasets.", 1.0),
        ("Nothing relevant.", 0.0),
    ],
)
def test_key_facts_match_any_wording_ignoring_case(text: str, expected: float) -> None:
    facts = [["CIFAR-N"], ["CatBoost", "boosted trees"], ["98"]]
    reply = response_from_answer(answer([(text, ["x"])]))
    assert key_fact_recall(question(key_facts=facts), reply) == pytest.approx(expected)


def test_key_facts_do_not_apply_to_unanswerable_questions() -> None:
    reply = response_from_answer(answer([("Alpha.", ["Alpha."])]))
    assert key_fact_recall(question(answerable=False), reply) is None


def test_retrieval_recall_at_5_and_reciprocal_rank() -> None:
    assert retrieval_scores(["b"], ["a", "b", "c"]) == (1.0, 0.5)
    assert retrieval_scores(["b", "z"], ["a", "b"]) == (0.5, 0.5)
    assert retrieval_scores(["f"], ["a", "b", "c", "d", "e", "f"]) == (0.0, pytest.approx(1 / 6))
    assert retrieval_scores([], ["a"]) == (None, None)


def test_every_metric_is_broken_down_by_question_type() -> None:
    questions = [question(id="1"), question(answerable=False, id="2")]
    responses = [
        response_from_answer(answer([("Alpha.", ["Alpha."])])),
        Response("", True, (), (), ()),
    ]
    scores = score_responses(questions, responses, SubstringJudge())
    by_type = SystemResult("x", "backend", responses, scores, 1.0).by_type()
    assert list(by_type) == ["fact", "unanswerable"]
    assert by_type["fact"].faithfulness == 1 and by_type["fact"].refusal_recall is None
    assert by_type["unanswerable"].refusal_recall == 1 and by_type["unanswerable"].sentences == 0


def test_the_gate_names_each_metric_below_its_minimum() -> None:
    responses = [response_from_answer(answer([("Beta.", ["Alpha."])]))]
    scores = score_responses([question()], responses, SubstringJudge())
    report = EvalReport(
        "set",
        "substring",
        [
            SystemResult("extractive", "backend", responses, scores, 1.0),
            SystemResult("baseline-local", "baseline", responses, scores, 1.0),
        ],
    )
    limits = Thresholds(("extractive",), {"faithfulness": 0.9, "refusal_recall": 0.8})
    assert gate_failures(report, limits) == [
        "extractive: faithfulness 0.000 < 0.9",
        "extractive: refusal_recall – < 0.8",
    ]


def test_the_shipped_thresholds_load(tmp_path) -> None:
    limits = load_thresholds(EVAL / "thresholds.toml")
    assert limits.backends == ("extractive", "local")
    assert limits.minimum["faithfulness"] == 0.95
    assert limits.verifier["faithful_kept"] > 0
    bad = tmp_path / "bad.toml"
    bad.write_text('backends = ["local"]\n[minimum]\nfaithfullness = 0.9\n')
    with pytest.raises(SettingsError, match="faithfullness"):
        load_thresholds(bad)


# ---- judges -----------------------------------------------------------------------------------


def test_the_local_judge_agrees_with_the_labelled_pairs(assistant: Assistant) -> None:
    quality = judge_quality(
        LocalJudge(assistant.answerer.scoring_embedder),
        load_judge_pairs(EVAL / "judge_pairs.jsonl"),
    )
    assert quality.pairs == 282
    assert quality.balanced_accuracy >= 0.84, quality


def endpoint(base_url: str) -> ApiEndpoint:
    return ApiEndpoint(base_url, None, "fake-model", timeout=5.0, max_retries=0)


def test_the_llm_judge_decomposes_once_and_needs_every_statement(fake_openai) -> None:
    fake_openai.script(
        [
            Behaviour.answer("- SSMs use complex weights.\n- They need a small dimension."),
            Behaviour.answer("1: yes\n2: no"),
            Behaviour.answer("1. yes\n2. yes"),
        ]
    )
    judge = LLMJudge(endpoint(fake_openai.base_url))
    claim = "SSMs use complex weights and need a small dimension."
    assert judge.supports([(claim, "first passage"), (claim, "second passage")]) == [False, True]
    requests = fake_openai.requests_to("/chat/completions")
    assert len(requests) == 3
    assert claim in requests[0].body["messages"][0]["content"]
    verify = requests[1].body["messages"][0]["content"]
    assert "first passage" in verify and "2. They need a small dimension." in verify
    assert requests[1].body["temperature"] == 0


def test_the_llm_judge_counts_a_missing_verdict_as_unsupported(fake_openai) -> None:
    fake_openai.script([Behaviour.answer("One fact."), Behaviour.answer("I am not sure.")])
    assert LLMJudge(endpoint(fake_openai.base_url)).supports([("One fact.", "p")]) == [False]


def test_the_llm_judge_quality_is_measured_like_any_judge(fake_openai) -> None:
    pairs = load_judge_pairs(EVAL / "judge_pairs.jsonl")[:2]
    assert [pair.supported for pair in pairs] == [True, False]
    verdicts = ["1: yes", "1: yes"]  # calls the unsupported pair supported
    fake_openai.script([Behaviour.answer(text) for v in verdicts for text in ("A fact.", v)])
    quality = judge_quality(LLMJudge(endpoint(fake_openai.base_url)), pairs)
    assert (quality.true_positive_rate, quality.true_negative_rate) == (1.0, 0.0)
    assert quality.balanced_accuracy == 0.5


def test_the_llm_judge_settings_fall_back_to_the_llm_ones(fake_openai) -> None:
    settings = Settings(
        llm=LLMSettings(base_url=fake_openai.base_url, model="answerer", max_retries=0),
        judge=JudgeSettings(model="judge-model"),
    )
    fake_openai.script([Behaviour.answer("A fact."), Behaviour.answer("1: yes")])
    assert LLMJudge.from_settings(settings).supports([("A fact.", "A fact.")]) == [True]
    assert {r.body["model"] for r in fake_openai.requests_to("/chat/completions")} == {
        "judge-model"
    }


def test_an_llm_judge_failure_is_one_clear_sentence(fake_openai) -> None:
    fake_openai.script([Behaviour.unauthorized()])
    judge = LLMJudge(ApiEndpoint(fake_openai.base_url, SecretStr("sk-x"), "fake-model", 5.0, 0))
    with pytest.raises(BackendError, match="rejected the key") as caught:
        judge.supports([("claim", "passage")])
    assert "sk-x" not in str(caught.value)


# ---- the llama-index baseline ----------------------------------------------------------------


class EchoBackend:
    name = "echo"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    def generate(self, request: GenerationRequest):
        self.requests.append(request)
        yield from ("It ", "works [1].")

    def status(self) -> str:
        return "ready"


def test_a_backend_serves_as_a_llama_index_llm() -> None:
    backend = EchoBackend()
    llm = BackendLLM(backend=backend, max_tokens=33)
    assert llm.complete("Say it.").text == "It works [1]."
    assert [piece.delta for piece in llm.stream_complete("Say it.")] == ["It ", "works [1]."]
    assert backend.requests[0].messages == [{"role": "user", "content": "Say it."}]
    assert backend.requests[0].max_tokens == 33


def test_the_embedder_serves_as_a_llama_index_embedding(assistant: Assistant) -> None:
    adapter = EmbedderAdapter(assistant.index.embedder)
    vectors = adapter.get_text_embedding_batch(["neural collapse", "pruning"])
    assert len(vectors) == 2 and len(vectors[0]) == 384
    assert adapter.get_query_embedding("neural collapse") == pytest.approx(vectors[0], abs=1e-5)


def test_the_baseline_cites_node_texts_and_is_scored_as_is(seeded_dir, fake_openai) -> None:
    settings = Settings(
        data_dir=seeded_dir, llm=LLMSettings(base_url=fake_openai.base_url, model="fake-model")
    )
    fake_openai.answer_text = "Neural collapse is studied [1]. The moon is cheese [2]."
    assistant = Assistant(settings)
    baseline = CitationBaseline(assistant, "openai")
    reply = baseline.answer(question(question="Which papers study neural collapse?"))
    assert not reply.refused and len(reply.sentences) == 2
    assert reply.sentences == reply.raw_sentences
    assert reply.papers and all(len(s.evidence) == 1 for s in reply.sentences)
    cited = reply.sentences[0].evidence[0]
    assert not cited.startswith("Source") and cited in assistant.index.snapshot().chunk_texts
    prompt = fake_openai.requests_to("/chat/completions")[0].body["messages"][-1]["content"]
    assert "Source 1:" in prompt and "Which papers study neural collapse?" in prompt


# ---- whole runs -------------------------------------------------------------------------------


def one_of_each_type() -> list[EvalQuestion]:
    questions = load_questions(EVAL / "questions.jsonl")
    return list({q.type: q for q in reversed(questions)}.values())


def test_two_runs_give_identical_numbers(assistant: Assistant) -> None:
    questions = one_of_each_type()
    runs = [
        evaluate(assistant, questions, ["extractive"], baseline=False).to_json() for _ in range(2)
    ]
    for run in runs:
        for system in run["systems"]:
            system.pop("seconds")
    assert runs[0] == runs[1]
    assert runs[0]["systems"][0]["metrics"]["questions"] == len(questions) == 8


def test_citeqa_eval_writes_the_reports_and_gates(seeded_dir, tmp_path) -> None:
    subset = tmp_path / "questions.jsonl"
    subset.write_text("".join(q.model_dump_json() + "\n" for q in one_of_each_type()[:3]))
    limits = tmp_path / "thresholds.toml"
    limits.write_text('backends = ["extractive"]\n[minimum]\nfaithfulness = 1.01\n')
    env = {**os.environ, "CITEQA_DATA_DIR": str(seeded_dir)}
    command = [sys.executable, "-m", "assistant", "eval", "--backend", "extractive"]
    command += ["--no-baseline", "--gate", "--set", str(subset), "--name", "run"]
    command += ["--thresholds", str(limits), "--reports", str(tmp_path / "reports")]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "extractive: faithfulness 1.000 < 1.01" in result.stderr
    assert "faithfulness" in result.stdout and "Traceback" not in result.stderr
    report = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert [s["name"] for s in report["systems"]] == ["extractive"]
    assert report["gate"]["failures"] == ["extractive: faithfulness 1.000 < 1.01"]
    assert report["systems"][0]["metrics"]["questions"] == 3
    assert "| faithfulness | 1.010 |" in (tmp_path / "reports" / "run.md").read_text()
    assert (tmp_path / "reports" / "run.png").read_bytes().startswith(b"\x89PNG")


def test_the_verifier_is_measured_on_labelled_answers(assistant: Assistant, tmp_path) -> None:
    rows = load_answer_set(EVAL / "answers_dev.jsonl")[:3]
    report = evaluate_verifier(assistant, rows, "answers_dev.jsonl")
    metrics = report.metrics()
    labelled = [s for row in rows for a in row.answers for s in a.sentences]
    assert len(report.sentences) == len(labelled)
    assert metrics["faithful_sentences"] == sum(s.supported for s in labelled)
    assert len(report.answers) == sum(len(row.answers) for row in rows)
    # a faithful answer that came back as generated kept at least one of its sentences
    for outcome in report.answers:
        if outcome.faithful and outcome.returned_as_generated:
            assert any(
                s.kept
                for s in report.sentences
                if s.question == outcome.question and s.variant == outcome.variant
            )
    assert 0 < metrics["faithful_kept"] <= 1 and 0 < metrics["unfaithful_removed"] <= 1
    full = EvalReport("q.jsonl", "local", [], verifier=report)
    text = markdown(full, "run")
    assert "## Verifier on `answers_dev.jsonl`" in text and "| faithful_kept |" in text
    write_reports(full, tmp_path, "run")
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["verifier"]["metrics"]["faithful_sentences"] == metrics["faithful_sentences"]


def test_an_empty_index_is_evaluated_in_a_private_data_dir(tmp_path, seeded_dir) -> None:
    settings = Settings(data_dir=tmp_path / "user")
    with eval_assistant(settings) as assistant:
        private = assistant.settings.data_dir
        assert private != settings.data_dir and private.is_dir()
    assert not private.exists()
    with eval_assistant(Settings(data_dir=seeded_dir)) as assistant:
        assert assistant.settings.data_dir == seeded_dir


@pytest.mark.parametrize(
    ("answers", "row_id", "opening"),
    [
        # read as an opener and a claim: judged by its pieces, not counted unread
        ("answers_test5.jsonl", "n17", "No. XRM comes"),
        # a synthesis of two papers, which the entailment model (one passage per claim)
        # would veto
        ("answers_test5.jsonl", "n05", "Two papers do, one on cluster deletion"),
    ],
)
def test_faithful_sentences_the_verifier_once_lost_are_kept(
    assistant, answers, row_id, opening
) -> None:
    row = next(r for r in load_answer_set(EVAL / answers) if r.id == row_id)
    faithful = next(a for a in row.answers if a.variant == "faithful")
    report = evaluate_verifier(assistant, [row.model_copy(update={"answers": [faithful]})])
    sentence = next(s for s in report.sentences if s.text.startswith(opening))
    assert sentence.kept and sentence.correctly_cited, sentence.reason
