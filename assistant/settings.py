"""One typed settings object: defaults, then `citeqa.toml`, then `CITEQA_*` environment variables.

Nested sections use a double underscore in environment variables, for example
`CITEQA_LLM__BACKEND=openai` or `CITEQA_CHROMA__HOST=127.0.0.1`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import tomllib
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .errors import SettingsError

CONFIG_ENV = "CITEQA_CONFIG"


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

    k: int = Field(5, ge=1, le=50)
    list_k: int = Field(12, ge=1, le=50, description="Passages for a 'which papers' question")
    candidates: int = Field(40, ge=5, le=500)
    per_paper_cap: int = Field(2, ge=1, le=20)
    rrf_k: int = Field(60, ge=1)
    dense_weight: float = Field(1.0, ge=0.0)
    keyword_weight: float = Field(1.0, ge=0.0)


class AnswerSettings(_Section):
    """How answers are composed and verified."""

    min_relevance: float = Field(
        0.35, ge=0.0, le=1.0, description="Relevance a paper needs to be listed in a list answer"
    )
    min_confidence: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Estimated probability that the papers answer, below which citeqa refuses",
    )
    min_sentence_relevance: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="Relevance a verified generated sentence needs to stay in the answer",
    )
    verifier: Literal["local", "llm"] = Field(
        "local",
        description="Who checks generated sentences: the offline scorer, or the `llm` model",
    )
    max_history_turns: int = Field(3, ge=0, le=20)


class LLMSettings(_Section):
    """The answering backend."""

    backend: Literal["auto", "local", "openai", "extractive"] = "auto"
    model_path: Path | None = Field(None, description="GGUF file for `local`; default: SmolLM2")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint for `openai`")
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
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
        if path is not None and not path.expanduser().is_file():
            raise ValueError(f"no GGUF file at {path}")
        return path.expanduser() if path else None

    @property
    def api_configured(self) -> bool:
        return bool(self.base_url or self.api_key)


class JudgeSettings(BaseModel):
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
        env_prefix="CITEQA_",
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file())
        return (init_settings, env_settings, toml)


def config_file() -> Path:
    """The TOML file read: `$CITEQA_CONFIG`, else `./citeqa.toml`."""
    return Path(os.environ.get(CONFIG_ENV, "citeqa.toml"))


def load_settings(**overrides: object) -> Settings:
    """Build the settings, turning any validation problem into one clear `SettingsError`."""
    path = config_file()
    try:
        return Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(part) for part in first["loc"]) or "settings"
        message = first["msg"].removeprefix("Value error, ")
        raise SettingsError(f"setting {name!r}: {message}") from None
