"""One typed settings object: defaults, then `citeqa.toml`, then `CITEQA_*` environment variables.

Nested sections use a double underscore in environment variables, for example
`CITEQA_LLM__BACKEND=openai` or `CITEQA_CHROMA__HOST=127.0.0.1`. Nothing is ignored
silently: an unknown key, an unknown `CITEQA_*` variable, a `CITEQA_CONFIG` that is not a
file or a file that is not UTF-8 TOML stops with one `SettingsError` sentence.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import Any, Literal

import tomllib
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .errors import SettingsError

ENV_PREFIX = "CITEQA_"
CONFIG_ENV = "CITEQA_CONFIG"
DEFAULT_CONFIG = Path("citeqa.toml")
MAX_K = 50  # passages per question at most


def _error(message: str) -> SettingsError:
    """A `SettingsError` on one line, whatever the paths and names quoted in it hold."""
    return SettingsError(" ".join(message.split()))


def _expanded(path: Path) -> Path:
    """`path` with `~` expanded; a `ValueError` (a validation message) when it cannot be."""
    if "\x00" in str(path):
        raise ValueError(f"{str(path)!r} contains a NUL character")
    try:
        return path.expanduser()
    except RuntimeError:
        raise ValueError(f"cannot expand {path}: no such user") from None


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "citeqa"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbeddingSettings(_Section):
    """Which model turns text into vectors."""

    provider: Literal["onnx-minilm", "sentence-transformers", "openai"] = "onnx-minilm"
    model: str | None = Field(
        None, description="sentence-transformers model folder, or model name for `openai`"
    )
    base_url: str | None = None
    api_key: SecretStr | None = None
    batch_size: int = Field(4, ge=1, le=512)
    max_tokens: int = Field(256, ge=16, le=8192)


class ChromaSettings(_Section):
    """Where the vectors live: embedded by default, a `chroma run` server when host is set."""

    host: str | None = None
    port: int = Field(8000, ge=1, le=65535)
    collection: str = Field("citeqa", min_length=3, max_length=40)


class ChunkSettings(_Section):
    """How abstracts are cut into sentence-aligned chunks."""

    chunk_tokens: int = Field(192, ge=16, le=2048)
    overlap_tokens: int = Field(0, ge=0, le=512)


class RetrievalSettings(_Section):
    """Hybrid dense + keyword retrieval."""

    k: int = Field(5, ge=1, le=MAX_K)
    list_k: int = Field(12, ge=1, le=MAX_K, description="Passages for a 'which papers' question")
    candidates: int = Field(40, ge=5, le=500)
    per_paper_cap: int = Field(2, ge=1, le=20)
    rrf_k: int = Field(60, ge=1)
    dense_weight: float = Field(1.0, ge=0.0)
    keyword_weight: float = Field(1.0, ge=0.0)


class AnswerSettings(_Section):
    """How answers are composed and verified."""

    # 0.1: over the 23 tuning sets' 112 list questions, key-fact recall 65.7 -> 68.0 against
    # 0.2 (0.0 gives the same); the listing model weighs relevance already.
    min_relevance: float = Field(
        0.1, ge=0.0, le=1.0, description="Relevance a paper needs to be listed in a list answer"
    )
    min_confidence: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Estimated probability that the papers answer, below which citeqa refuses",
    )
    min_answer_chance: float = Field(
        0.02,
        ge=0.0,
        le=1.0,
        description="A verified generated sentence stays only when some sentence of a paper "
        "it cites has at least this chance of answering the question (the answer model's)",
    )
    verifier: Literal["local", "llm"] = Field(
        "local",
        description="Who checks generated sentences: the offline scorer, or the `llm` model",
    )
    entailment: bool = Field(
        True,
        description="The local verifier also reads each claim with its evidence through the "
        "bundled cross-encoder",
    )
    max_history_turns: int = Field(3, ge=0, le=20)


class LLMSettings(_Section):
    """The answering backend."""

    backend: Literal["auto", "local", "openai", "extractive"] = "auto"
    model_path: Path | None = Field(None, description="GGUF file for `local`; default: SmolLM2")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint for `openai`")
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    timeout: float = Field(60.0, gt=0, description="Seconds an API call may wait for a reply")
    max_retries: int = Field(3, ge=0, le=10)
    deadline: float = Field(
        120.0, gt=0, description="Seconds one whole answer may take, retries included"
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(120, ge=16, le=8192)
    source_tokens: int | None = Field(
        None,
        ge=0,
        description="Tokens of each source in the prompt, its most relevant sentences first; "
        "0: the whole abstract; unset: the backend's default (local 64, openai whole)",
    )
    context_tokens: int = Field(4096, ge=512)
    threads: int = Field(2, ge=1)

    @field_validator("model_path")
    @classmethod
    def _model_file_exists(cls, path: Path | None) -> Path | None:
        if path is None:
            return None
        if not _expanded(path).is_file():
            raise ValueError(f"no GGUF file at {path}")
        return _expanded(path)

    @property
    def api_configured(self) -> bool:
        return bool(self.base_url or self.api_key)


class JudgeSettings(_Section):
    """The OpenAI-compatible model `citeqa eval --judge llm` asks; unset fields use `llm`'s."""

    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str | None = None


class UISettings(_Section):
    """The Gradio app."""

    host: str = "127.0.0.1"
    port: int = Field(7860, ge=1, le=65535)
    username: str | None = None
    password: SecretStr | None = None


class Settings(BaseSettings):
    """All of citeqa's configuration in one place."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    max_question_chars: int = Field(2000, ge=10)
    embedding: EmbeddingSettings = EmbeddingSettings()
    chroma: ChromaSettings = ChromaSettings()
    chunking: ChunkSettings = ChunkSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    answer: AnswerSettings = AnswerSettings()
    llm: LLMSettings = LLMSettings()
    ui: UISettings = UISettings()
    judge: JudgeSettings = JudgeSettings()

    @field_validator("data_dir")
    @classmethod
    def _folder_or_creatable(cls, path: Path) -> Path:
        """The data directory, or where it will be created, must not be a file."""
        path = _expanded(path)
        existing = next((p for p in (path, *path.parents) if os.path.lexists(p)), None)
        if existing is not None and not os.path.isdir(existing):
            raise ValueError(f"cannot use the data directory {path}: {existing} is not a directory")
        return path

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _Environment(settings_cls), _TomlFile(settings_cls, config_file()))


class _TomlFile(TomlConfigSettingsSource):
    """The settings in the TOML file; one that cannot be read or parsed is a `SettingsError`."""

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        try:
            return super()._read_file(file_path)
        except UnicodeDecodeError:
            raise _error(f"{file_path} is not UTF-8 text; save it as UTF-8") from None
        except tomllib.TOMLDecodeError as exc:
            raise _error(f"{file_path} is not valid TOML: {exc}") from None
        except RecursionError:
            raise _error(f"{file_path} nests values too deeply to be read") from None
        except OSError as exc:
            raise _error(f"cannot read {file_path}: {exc.strerror or exc}") from None


class _Environment(EnvSettingsSource):
    """The `CITEQA_*` variables; an unknown name or a section that is not JSON is a
    `SettingsError`."""

    def __call__(self) -> dict[str, Any]:
        unknown = sorted(
            name
            for name in os.environ
            if name.upper().startswith(ENV_PREFIX) and name.upper() not in setting_variables()
        )
        if unknown:
            listed = ", ".join(_with_suggestion(name) for name in unknown)
            plural = "s" if len(unknown) > 1 else ""
            raise _error(
                f"unknown environment variable{plural} {listed}; correct or unset "
                f"{'them' if plural else 'it'} (citeqa reads only the names of its settings)"
            )
        return super().__call__()

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except (ValueError, RecursionError) as exc:
            name = f"{ENV_PREFIX}{field_name.upper()}"
            reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            raise _error(
                f"environment variable {name} is not a JSON object ({reason}); set the "
                f"section's settings one at a time instead, e.g. {name}__{_first_field(field)}"
            ) from None


def _first_field(field: FieldInfo) -> str:
    section = field.annotation
    if isinstance(section, type) and issubclass(section, BaseModel):
        return next(iter(section.model_fields)).upper()
    return "NAME"


def setting_variables() -> set[str]:
    """Every environment variable citeqa reads, in upper case."""
    names = {CONFIG_ENV}
    for name, field in Settings.model_fields.items():
        variable = f"{ENV_PREFIX}{name.upper()}"
        names.add(variable)
        section = field.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names.update(f"{variable}__{sub.upper()}" for sub in section.model_fields)
    return names


def _with_suggestion(name: str) -> str:
    """`name`, followed by the setting variable it most likely meant, if one is close
    (compared without the prefix and underscores, which are what gets misplaced)."""

    def letters(variable: str) -> str:
        return variable.upper().removeprefix(ENV_PREFIX).replace("_", "")

    known = {letters(variable): variable for variable in setting_variables()}
    close = difflib.get_close_matches(letters(name), known, n=1)
    return f"{name} (did you mean {known[close[0]]}?)" if close else name


def config_file() -> Path:
    """The TOML file read: `$CITEQA_CONFIG`, which must then be a file (or /dev/null),
    else `./citeqa.toml` (which may be absent)."""
    named = os.environ.get(CONFIG_ENV)
    if named is None:
        if os.path.lexists(DEFAULT_CONFIG) and not DEFAULT_CONFIG.is_file():
            raise _error(f"{DEFAULT_CONFIG.absolute()} is not a file")
        return DEFAULT_CONFIG
    if not named.strip():
        raise _error(f"{CONFIG_ENV} is set but empty; point it at a TOML file or unset it")
    try:
        path = _expanded(Path(named))
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise _error(f"{CONFIG_ENV} names {named}, which does not exist") from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else exc
        raise _error(f"{CONFIG_ENV} names {named}, which cannot be read: {reason}") from None
    if not stat.S_ISREG(mode) and path != Path(os.devnull):  # /dev/null: no settings
        raise _error(f"{CONFIG_ENV} names {named}, which is not a file")
    return path


def load_settings(**overrides: object) -> Settings:
    """Build the settings, turning any validation problem into one clear `SettingsError`."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(part) for part in first["loc"]) or "settings"
        message = first["msg"].removeprefix("Value error, ")
        raise _error(f"setting {name!r}: {message}") from None
