"""Cited answers: grounding, the backends through the whole chain, the JSON contract."""

from __future__ import annotations

import json

import pytest
from conftest import run_citeqa
from fake_openai_server import Behaviour

from assistant import Assistant, BackendError, Settings
from assistant.answer import JSON_KEYS, REFUSAL, Answer, contract_problems
from assistant.grounding import Grounder, parse_citations, split_claims
from assistant.settings import LLMSettings
from assistant.text import count_tokens, sentence_spans

GALORE_Q = "By how much does GaLore reduce memory used by optimizer states?"
GALORE_FACT = "Our approach reduces memory usage by up to 65.5% in optimizer states"


def assert_contract(answer: Answer, assistant: Assistant) -> dict:
    data = json.loads(json.dumps(answer.to_json()))
    assert contract_problems(data) == []
    assert set(data["timings_ms"]) == {"retrieve", "generate", "total"}
    abstracts = {p.paper_id: p.abstract for p in assistant.papers()}
    for c in data["citations"]:
        assert abstracts[c["paper_id"]][c["start"] : c["end"]] == c["snippet"]
    return data


def openai_assistant(seeded_dir, server, **llm) -> Assistant:
    settings = Settings(
        data_dir=seeded_dir,
        llm=LLMSettings(base_url=server.base_url, model="fake-model", max_retries=1, **llm),
    )
    return Assistant(settings)


# ---- parsing ------------------------------------------------------------------------


def test_citation_markers_are_parsed_and_out_of_range_numbers_dropped():
    text, numbers, invalid = parse_citations("GaLore saves memory [2][9], [1, 3] and [4-5].", 5)
    assert text == "GaLore saves memory, and."
    assert numbers == [2, 1, 3, 4, 5]
    assert invalid == 1


def test_markers_after_the_full_stop_stay_with_their_sentence():
    claims, invalid, refused = split_claims("First claim. [1] Second claim [2]. [7]", 5)
    assert [(c.text, c.cited) for c in claims] == [("First claim.", (0,)), ("Second claim.", (1,))]
    assert invalid == 1 and not refused


# ---- grounding through the chain (fake API answers what the test scripts) -------------


def test_invented_sentence_is_dropped_and_counted(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    hits = assistant.search(GALORE_Q)
    n = 1 + next(i for i, h in enumerate(hits) if GALORE_FACT in h.text)
    invented = "GaLore was trained on 4096 TPUs in Antarctica by a team of penguins"
    fake_openai.answer_text = f"{GALORE_FACT} [{n}]. {invented} [{n}]."
    answer = assistant.ask(GALORE_Q, backend="openai")
    assert answer.backend == "openai" and not answer.refused
    assert answer.dropped_sentences == 1
    assert "penguins" not in answer.answer and "penguins" in answer.raw_answer
    assert "65.5%" in answer.answer
    assert_contract(answer, assistant)


SALAD = (
    "GaLore reduces memory usage in optimizer states, which is a common feature of many "
    "neural networks"
)


def test_fluent_invention_from_the_source_words_is_dropped(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    hits = assistant.search(GALORE_Q)
    n = 1 + next(i for i, h in enumerate(hits) if GALORE_FACT in h.text)
    fake_openai.answer_text = f"{GALORE_FACT} [{n}]. {SALAD} [{n}]."
    answer = assistant.ask(GALORE_Q, backend="openai")
    assert answer.note is None and answer.dropped_sentences == 1
    assert "65.5%" in answer.answer and "common feature" not in answer.answer
    # the similarity check alone lets it through: the new-word limit is what drops it
    abstracts = {p.paper_id: p.abstract for p in assistant.papers()}
    lenient = Grounder(assistant.answerer.grounder.scorer, max_new_words=1.0)
    kept = lenient.ground(fake_openai.answer_text, hits, abstracts).sentences
    assert any("common feature" in sentence.text for sentence in kept)


def test_wrong_citation_is_repaired(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    hits = assistant.search(GALORE_Q)
    right = next(i for i, h in enumerate(hits) if GALORE_FACT in h.text)
    wrong = next(i for i, h in enumerate(hits) if h.paper_id != hits[right].paper_id)
    fake_openai.answer_text = f"{GALORE_FACT} [{wrong + 1}]."
    answer = assistant.ask(GALORE_Q, backend="openai")
    cited = answer.citations[answer.sentences[0].citations[0] - 1]
    assert cited.paper_id == hits[right].paper_id
    assert GALORE_FACT in cited.snippet


def test_out_of_range_citation_is_removed(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    fake_openai.answer_text = f"{GALORE_FACT} [9]."
    answer = assistant.ask(GALORE_Q, backend="openai", k=5)
    data = assert_contract(answer, assistant)
    assert all(c["n"] <= len(data["citations"]) for c in data["citations"])
    assert len(answer.sources) == 5 and not answer.refused


def test_unanswerable_question_is_refused_with_closest_papers(assistant):
    answer = assistant.ask(
        "Which paper forecasts electricity demand with time-series models?", backend="extractive"
    )
    assert answer.refused and answer.answer == REFUSAL
    assert answer.citations == [] and answer.sources
    assert_contract(answer, assistant)


def test_model_refusal_and_unsupported_answer_end_in_refusal(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    fake_openai.answer_text = "Electricity demand is forecast with an LSTM on smart-meter data [1]."
    answer = assistant.ask(
        "Which paper forecasts electricity demand with time-series models?", backend="openai"
    )
    assert answer.refused and answer.dropped_sentences >= 1


def test_streaming_yields_pieces_then_the_verified_answer(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    fake_openai.answer_text = f"{GALORE_FACT} [1]. It also helps [2]."
    parts = list(assistant.stream(GALORE_Q, backend="openai"))
    pieces, final = parts[:-1], parts[-1]
    assert len(pieces) > 1 and all(isinstance(p, str) for p in pieces)
    assert "".join(pieces) == fake_openai.answer_text
    assert isinstance(final, Answer) and final.citations


def test_failing_api_falls_back_to_the_extractive_answer_labelled(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    fake_openai.script([Behaviour.server_error()] * 3)
    answer = assistant.ask(GALORE_Q, backend="openai")
    assert answer.backend == "extractive" and "openai backend failed" in answer.note
    assert "65.5%" in answer.answer
    fake_openai.script([Behaviour.server_error()] * 3)
    with pytest.raises(BackendError, match="HTTP 500"):
        assistant.ask(GALORE_Q, backend="openai", fallback=False)


def test_follow_up_is_rewritten_with_the_api(seeded_dir, fake_openai):
    assistant = openai_assistant(seeded_dir, fake_openai)
    standalone = "How much memory does GaLore save in optimizer states?"
    fake_openai.script([Behaviour.answer(standalone), Behaviour.answer(f"{GALORE_FACT} [1].")])
    history = [
        {"role": "user", "content": "What is GaLore?"},
        {"role": "assistant", "content": "A memory-efficient training strategy [1]."},
    ]
    answer = assistant.ask("How much memory does it save?", history, backend="openai")
    assert answer.standalone_question == standalone
    rewrite_prompt = fake_openai.requests_to("/chat/completions")[0].body["messages"][-1]["content"]
    assert "What is GaLore?" in rewrite_prompt


def test_follow_up_without_an_api_uses_the_history(assistant):
    history = [
        {"role": "user", "content": "What is GaLore?"},
        {"role": "assistant", "content": "x"},
    ]
    answer = assistant.ask("How much optimizer memory does it save?", history, backend="extractive")
    assert answer.standalone_question.startswith("What is GaLore?")
    assert any(c.title and c.title.startswith("GaLore") for c in answer.citations)


def test_auto_never_picks_a_paid_api_on_its_own(seeded_dir, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-be-used")
    assert Assistant(Settings(data_dir=seeded_dir)).backend_status().startswith("local:")


# ---- the real local model ------------------------------------------------------------


def test_local_model_generates_and_the_answer_is_verified(assistant):
    answer = assistant.ask(GALORE_Q, backend="local")
    assert answer.raw_answer.strip(), "the local model generated nothing"
    assert answer.timings_ms["generate"] > 0
    data = assert_contract(answer, assistant)
    assert not data["refused"] and "65.5%" in data["answer"]
    if answer.backend == "extractive":
        assert "local backend" in answer.note


# ---- the command line ----------------------------------------------------------------


def test_cli_ask_json_is_exactly_the_contract(seeded_dir, assistant):
    result = run_citeqa(seeded_dir, "ask", GALORE_Q, "--backend", "extractive", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == JSON_KEYS and data["backend"] == "extractive"
    assert "65.5%" in data["answer"]


def test_cli_ask_prints_references_with_snippets(seeded_dir):
    result = run_citeqa(seeded_dir, "ask", GALORE_Q, "--backend", "extractive")
    assert result.returncode == 0, result.stderr
    assert "References" in result.stdout and "[1] GaLore" in result.stdout
    assert '"Our approach reduces memory usage by up to 65.5%' in result.stdout


def test_cli_unknown_backend_is_one_clear_sentence(seeded_dir):
    result = run_citeqa(seeded_dir, "ask", GALORE_Q, "--backend", "gpt9")
    assert result.returncode == 1
    assert "unknown backend 'gpt9'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("source_tokens", [0, 40])
def test_the_prompt_shows_each_source_within_its_token_budget(
    seeded_dir, fake_openai, source_tokens
):
    assistant = openai_assistant(seeded_dir, fake_openai, source_tokens=source_tokens)
    hits = assistant.search(GALORE_Q)
    assistant.ask(GALORE_Q, backend="openai")
    prompt = fake_openai.requests_to("/chat/completions")[-1].body["messages"][-1]["content"]
    shortened = []
    for n, hit in enumerate(hits, start=1):
        line = next(line for line in prompt.splitlines() if line.startswith(f"[{n}] "))
        shown = line.split("): ", 1)[1]
        sentences = [shown[a:b] for a, b in sentence_spans(shown)]
        assert sentences and all(sentence in hit.text for sentence in sentences)
        shortened.append(len(sentences) < len(sentence_spans(hit.text)))
        assert source_tokens == 0 or count_tokens(shown) <= 40 or len(sentences) == 1
    assert any(shortened) is bool(source_tokens)
