"""citeqa: answers about research-paper abstracts, every sentence cited and verified."""

from ._offline import apply_offline_defaults

apply_offline_defaults()

from .answer import Answer, AnswerSentence, Citation  # noqa: E402
from .assistant import Assistant  # noqa: E402
from .corpus import Paper, load_corpus  # noqa: E402
from .errors import (  # noqa: E402
    BackendError,
    CiteqaError,
    CorpusError,
    IndexMismatchError,
    IndexUnavailableError,
    QuestionError,
    SettingsError,
)
from .index import IngestReport  # noqa: E402
from .retrieval import Filters, Hit  # noqa: E402
from .settings import Settings, load_settings  # noqa: E402

__all__ = [
    "Answer",
    "AnswerSentence",
    "Assistant",
    "BackendError",
    "Citation",
    "CiteqaError",
    "CorpusError",
    "Filters",
    "Hit",
    "IndexMismatchError",
    "IndexUnavailableError",
    "IngestReport",
    "Paper",
    "QuestionError",
    "Settings",
    "SettingsError",
    "load_corpus",
    "load_settings",
]
