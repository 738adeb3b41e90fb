"""Question understanding: intent, and the authors, venue, year and papers a question names,
recognised against the indexed papers."""

from __future__ import annotations

import pytest

from assistant import Paper
from assistant.answering.question import Catalog, analyse, intent_of, question_parts

PAPERS = [
    Paper(
        paper_id="ssl",
        title="Learning by Reconstruction Produces Uninformative Features For Perception",
        authors=["Randall Balestriero", "Yann LeCun"],
        venue="ICML 2024",
        abstract="Input space reconstruction is an attractive representation learning paradigm.",
    ),
    Paper(
        paper_id="nc",
        title="Linguistic Collapse: Neural Collapse in (Large) Language Models",
        authors=["Robert Wu", "Vardan Papyan"],
        venue="NeurIPS 2024",
        abstract="Neural collapse is observed in classification. We study CLMs with GaLore.",
    ),
    Paper(
        paper_id="galore",
        title="GaLore: Memory-Efficient LLM Training by Gradient Low-Rank Projection",
        authors=["Jiawei Zhao", "Zhenyu Zhang", "Anima Anandkumar", "Yuandong Tian"],
        venue="ICML 2024",
        abstract="We propose GaLore, which reduces memory by up to 65.5%.",
    ),
    Paper(
        paper_id="accent",
        title="Sharpness of Deep Linear Networks",
        authors=["Pierre Marion", "Lénaïc Chizat"],
        venue="NeurIPS 2024",
        abstract="We study the sharpness of deep linear networks.",
    ),
]
CATALOG = Catalog(PAPERS)


def understood(question: str):
    return analyse(question, question, CATALOG)


def catalog_with(paper_id: str, title: str, author: str) -> Catalog:
    """The test papers and one more."""
    extra = Paper(
        paper_id=paper_id, title=title, authors=[author], venue="ICML 2024", abstract="We study."
    )
    return Catalog([*PAPERS, extra])


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("Which papers study neural collapse?", "list"),
        ("Summarize the GaLore paper.", "summary"),
        ("Can you give me an overview of the GaLore paper?", "summary"),
        ("What is GaLore about?", "summary"),
        ("I'd like a quick overview of the GaLore paper.", "summary"),
        ("tl;dr of the GaLore paper?", "summary"),
        ("What's the gist of GaLore?", "summary"),
        ("Summarize GaLore. What memory does it save?", "summary"),
        ("What did the GaLore authors argue about LoRA?", "summary"),
        ("Does GaLore reduce optimizer memory?", "yes_no"),
        ("By how much does GaLore reduce memory?", "number"),
        ("What worst-group accuracy does GaLore reach on Waterbirds?", "number"),
        ("What PSNR gain does GaLore report?", "number"),
        ("What kind of gain does GaLore give?", "fact"),
        ("What does GaLore map gradients to?", "fact"),
        ("How does GaLore project gradients?", "method"),
        ("What problem does GaLore address?", "fact"),
        ("How do its heads differ from layer to layer?", "fact"),
        ("What does GaLore train its projector to do, and why?", "fact"),
    ],
)
def test_intent_from_the_wording(question, intent):
    assert understood(question).intent == intent


@pytest.mark.parametrize(
    "question",
    [
        "What's the short version of 'Sharpness of Deep Linear Networks'?",
        "Give me the key points of the GaLore paper: the problem, the method and the result.",
        "I'm presenting GaLore at a reading group. Can you summarize it: problem and gains?",
        "Please give me a concise summary of GaLore, covering the problem and the results.",
        "Could you give me a rundown of GaLore: the problem, its trick, and how it performs?",
        "Walk me through 'Sharpness of Deep Linear Networks': the problem and the results.",
        "In a few sentences, what does GaLore do? I'd like the setting and the outcome.",
        "What is 'GaLore: Memory-Efficient LLM Training by Gradient Low-Rank Projection' "
        "about, and what does it achieve?",
    ],
)
def test_a_summary_asked_for_in_other_words(question):
    assert understood(question).intent == "summary"


@pytest.mark.parametrize(
    "question",
    [
        "Walk me through how GaLore projects its gradients.",
        # a follow-up, after rewriting, still carries the earlier question
        "What is the GaLore paper about? How much memory does it save?",
    ],
)
def test_a_question_near_the_summary_wordings_is_no_summary(question):
    assert understood(question).intent != "summary"


def test_a_quoted_title_is_the_paper_summarised_not_titles_sharing_its_phrases():
    catalog = catalog_with(
        "shampoo", "4-bit Shampoo for Memory-Efficient Network Training", "Sike Wang"
    )
    question = (
        "Could you give me a rundown of '4-bit Shampoo for Memory-Efficient Network "
        "Training': the memory problem it addresses and how it performs?"
    )
    assert analyse(question, question, catalog).named_papers == {"shampoo"}


@pytest.mark.parametrize(
    "question",
    [
        "Which papers study neural collapse? What setting does each one use?",
        "Are there papers that study memory? What does each save?",
    ],
)
def test_a_list_asked_for_before_the_last_sentence(question):
    assert understood(question).intent == "list"


def test_which_methods_is_a_list_unless_the_question_names_its_paper():
    assert understood("Which methods reduce optimizer memory?").intent == "list"
    named = "Against which kinds of approaches does GaLore compare, and how often does it win?"
    assert understood(named).intent != "list"
    by_authors = "Which baseline methods do Marion and Chizat beat?"
    assert understood(by_authors).intent != "list"


def test_asked_what_the_experiments_show_is_no_summary():
    question = "What do the experiments in the GaLore paper show?"
    assert intent_of("What did the GaLore authors show?", named=1, identified=True) == "summary"
    assert intent_of(question, named=1, identified=True) != "summary"


def test_a_comparison_needs_two_named_papers():
    question = "How do GaLore and Linguistic Collapse differ in what they study?"
    assert understood(question).intent == "comparison"
    assert intent_of("How does monoculture compare with polyculture?") == "fact"


@pytest.mark.parametrize(
    "question",
    [
        "Both the GaLore paper and the sharpness study look at memory. What does each find?",
        "Two papers use low rank: one is GaLore, the other studies sharpness. Compare them.",
    ],
)
def test_a_comparison_of_a_named_paper_and_one_described(question):
    assert understood(question).intent == "comparison"


def test_a_described_paper_that_both_does_something_with_a_named_one_is_compared():
    question = (
        "The improved bounds for diffusion model training and the k-sparse parity paper "
        "both ask how much data a network needs. What does each one bound?"
    )
    assert intent_of(question, named=1) == "comparison"


def test_two_long_titles_each_asked_about_are_compared():
    question = (
        "How do 'Least Squares Regression Can Exhibit Under-Parameterized Double Descent' "
        "and 'Balanced Data, Imbalanced Spectra' each tie a generalization phenomenon to "
        "spectral properties of the data?"
    )
    assert intent_of(question, named=2) == "comparison"


@pytest.mark.parametrize(
    "question",
    [
        "GaLore and 'Linguistic Collapse' each train language models. How does each do it?",
        "Memory appears on opposite sides in GaLore and Linguistic Collapse: one saves it, "
        "the other spends it. How does each treat the memory of the training data sets, and "
        "what results does each report?",
    ],
)
def test_each_of_two_named_papers_asked_about_is_a_comparison(question):
    assert intent_of(question, named=2, identified=True) == "comparison"


def test_a_paper_named_by_its_kind_and_one_by_title_each_asked_about_are_compared():
    question = (
        "What do the asymmetric-valley study and 'Get rich quick' each say about how "
        "initialization shapes what a network learns?"
    )
    assert intent_of(question, named=1, identified=True) == "comparison"


def test_the_full_stop_of_et_al_ends_no_clause():
    question = (
        "Kiani and Weber's hardness paper and Gupta et al.'s bounds for diffusion training "
        "both ask what it takes to learn. Is each result negative or positive?"
    )
    assert intent_of(question, named=1, identified=True) == "comparison"


def test_a_phrase_several_titles_share_names_no_second_paper_to_compare():
    catalog = catalog_with("dln2", "Implicit Bias of Deep Linear Networks in Regression", "Ann")
    question = (
        "How does the reconstruction of Balestriero and LeCun compare with deep linear networks?"
    )
    assert analyse(question, question, catalog).intent != "comparison"


def test_each_of_two_things_in_one_paper_is_no_comparison():
    question = (
        "Balestriero and LeCun project images onto two subspaces. How many points separate "
        "them, and what share of variance does each subspace account for?"
    )
    assert intent_of(question, named=2, identified=True) != "comparison"


def test_both_of_two_things_one_paper_does_is_no_comparison():
    assert intent_of("Does GaLore reduce both memory and compute?", named=1) == "yes_no"
    within = "Wu and Papyan compare two losses. Which of the two can mimic the other?"
    assert intent_of(within, named=1) != "comparison"


def test_an_author_names_one_side_of_a_comparison_without_restricting_the_other():
    question = (
        "The Linguistic Collapse paper and Balestriero & LeCun's reconstruction paper both "
        "look at learned features; what does each find?"
    )
    result = understood(question)
    assert result.intent == "comparison"
    assert result.named_papers == {"nc", "ssl"}
    assert result.paper_ids is None


@pytest.mark.parametrize(
    "question",
    [
        "Summarize the work by Yann LeCun in this collection.",
        "summarize the work by yann lecun",
        "What did Y. LeCun show?",
        "What did LeCun and Balestriero show in their ICML 2024 paper?",
    ],
)
def test_authors_are_recognised_in_any_spelling(question):
    result = understood(question)
    assert "Yann LeCun" in result.authors
    assert result.paper_ids == frozenset({"ssl"})
    assert result.intent == "summary"
    assert "lecun" not in result.search_text.lower()


def test_names_without_diacritics_match_indexed_authors():
    result = understood("What did Pierre Marion and Lenaic Chizat prove?")
    assert set(result.authors) == {"Pierre Marion", "Lénaïc Chizat"}
    assert result.paper_ids == frozenset({"accent"})


def test_a_possessive_surname_names_its_author():
    result = understood("What do Marion & Chizat's results say about sharpness?")
    assert set(result.authors) == {"Pierre Marion", "Lénaïc Chizat"}
    assert result.paper_ids == frozenset({"accent"})


def test_a_surname_several_authors_share_still_means_the_joint_paper():
    catalog = catalog_with("other", "Another Study", "Wei Zhang")
    question = "Summarize the paper by Zhang and Tian."
    result = analyse(question, question, catalog)
    assert {"Zhenyu Zhang", "Wei Zhang", "Yuandong Tian"} <= set(result.authors)
    assert result.paper_ids == frozenset({"galore"})


def test_a_whole_author_list_means_the_joint_paper_with_no_other_author():
    shorter = Paper(
        paper_id="shorter",
        title="A Later Study",
        authors=["Jiawei Zhao", "Anima Anandkumar", "Yuandong Tian"],
        venue="NeurIPS 2024",
        abstract="We study memory.",
    )
    catalog = Catalog([*PAPERS, shorter])
    whole = "What does the paper by Jiawei Zhao, Anima Anandkumar and Yuandong Tian propose?"
    assert analyse(whole, whole, catalog).paper_ids == frozenset({"shorter"})
    two = "What do Zhao and Anandkumar propose?"
    assert analyse(two, two, catalog).paper_ids == frozenset({"galore", "shorter"})


def test_venue_and_year_restrict_the_papers():
    result = understood("Which NeurIPS 2024 papers study linear networks?")
    assert result.venue == "NeurIPS" and result.year == "2024"
    assert result.paper_ids == frozenset({"nc", "accent"})


def test_a_restriction_that_leaves_nothing_is_dropped_with_a_note():
    result = understood("What did Yann LeCun publish at NeurIPS?")
    assert result.paper_ids == frozenset({"ssl"})
    assert result.notes and "NeurIPS" in result.notes[0]


def test_a_title_given_whole_names_its_paper_not_others_sharing_a_phrase():
    titles = {
        "rl": "Dynamics of Supervised and Reinforcement Learning in the Non-Linear Perceptron",
        "dred": "DRED: Zero-Shot Transfer in Reinforcement Learning via Environment Design",
    }
    catalog = Catalog(
        [Paper(paper_id=i, title=t, abstract="An abstract.") for i, t in titles.items()]
    )
    question = (
        "Summarize the paper on supervised and reinforcement learning in the non-linear perceptron."
    )
    assert analyse(question, question, catalog).named_papers == frozenset({"rl"})
    question = "Summarize the paper on reinforcement learning via environment design."
    assert analyse(question, question, catalog).named_papers == frozenset({"dred"})


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "What does XRM train, and which requirement of earlier methods does it drop?",
            ("What does XRM train?", "which requirement of earlier methods does it drop?"),
        ),
        (
            "By how much does GaLore cut memory? How far does the 8-bit version go?",
            ("By how much does GaLore cut memory?", "How far does the 8-bit version go?"),
        ),
        ("Which papers study pruning and quantization?", ()),
        ("What is GaLore, and why?", ()),
    ],
)
def test_a_question_asking_several_things_is_read_as_its_parts(question, parts):
    assert question_parts(question) == parts


def test_papers_named_by_title_phrase_or_method_name():
    assert understood("What does Linguistic Collapse find?").named_papers == frozenset({"nc"})
    assert "galore" in understood("How much memory does GaLore save?").named_papers


def test_a_common_english_word_is_not_an_author():
    assert understood("Which papers use a Long training schedule?").authors == ()


def test_what_was_understood_is_part_of_the_answer_json():
    data = understood("Summarize the ICML 2024 work by Yann LeCun.").to_json()
    assert data["intent"] == "summary" and data["authors"] == ["Yann LeCun"]
    assert data["venue"] == "ICML" and data["year"] == "2024" and data["papers"] == ["ssl"]


def test_words_no_paper_uses_are_unfamiliar_unless_everyday_english():
    off_topic = understood("Which methods watermark text for later detection?")
    assert off_topic.unfamiliar_words == ("watermark",)  # "later", "detection": everyday words
    assert 0 < off_topic.unfamiliar_share < 1
    assert off_topic.to_json()["unfamiliar_words"] == ["watermark"]
    on_topic = understood("How much memory does GaLore save when training?")
    assert on_topic.unfamiliar_words == () and on_topic.unfamiliar_share == 0


def test_a_figure_with_its_unit_names_no_paper():
    catalog = Catalog(
        [
            Paper(paper_id="sdp", title="SDP4Bit", abstract="SDP4Bit quantizes to 4-bit."),
            Paper(paper_id="qlora", title="IR-QLoRA", abstract="A 4-bit LLaMA improves."),
            Paper(paper_id="other", title="Other", abstract="We study 8-bit training."),
        ]
    )
    question = "What does SDP4Bit quantize to 4-bit?"
    named = analyse(question, question, catalog)
    assert named.named_papers == frozenset({"sdp"}) and "4-bit" not in named.names


def test_a_compound_of_familiar_words_is_familiar():
    asked = understood("Which papers study low-memory training with GaLore?")
    assert asked.unfamiliar_words == () and asked.unfamiliar_share == 0


def _titled(paper_id: str, title: str) -> Paper:
    return Paper(paper_id=paper_id, title=title, authors=["Ada Lovelace"], abstract="We study.")


@pytest.mark.parametrize(
    ("others", "question", "compared"),
    [
        (
            # a phrase two other titles share
            [
                _titled("valley", "Exploring the Asymmetric Valley of Deep Neural Networks"),
                _titled("scaling", "Scaling Laws in Linear Regression"),
                _titled("sparse", "Attention Heads in Sparse Linear Regression"),
            ],
            "The asymmetric valley study and Marion & Chizat's deep linear regression paper "
            "both examine loss landscapes. What does each conclude?",
            {"valley", "accent"},
        ),
        (
            # a name GaLore's title has too
            [_titled("subspace", "Memory-Efficient LLM Training with Online Subspace Descent")],
            "'Memory-Efficient LLM Training with Online Subspace Descent' and 'Sharpness of "
            "Deep Linear Networks' both prove results. What does each guarantee?",
            {"subspace", "accent"},
        ),
    ],
)
def test_a_comparison_of_two_named_papers_drops_what_other_papers_share(others, question, compared):
    understood = analyse(question, question, Catalog([*PAPERS, *others]))
    assert understood.intent == "comparison"
    assert understood.named_papers == frozenset(compared)


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What does the CARE benchmark contain?", True),
        ("Which benchmark do the enzyme people care about?", False),
    ],
)
def test_a_short_title_that_is_an_everyday_word_names_its_paper_only_as_written(question, named):
    care = Paper(
        paper_id="care",
        title="CARE: a Benchmark Suite for the Classification and Retrieval of Enzymes",
        abstract="We introduce CARE, a benchmark for enzymes.",
    )
    assert ("care" in analyse(question, question, Catalog([*PAPERS, care])).named_papers) is named


def test_a_figure_the_question_gives_itself_is_no_answer_to_it():
    question = understood("What perplexity does GaLore reach at 80% sparsity?")
    assert question.wants_number
    assert not question.gives_figure("GaLore prunes LLaMA-7B to 80% sparsity.")
    assert question.gives_figure("At 80% sparsity GaLore reaches a perplexity of 12.3.")
