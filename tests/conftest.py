"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server on 127.0.0.1, fresh for each test."""
    with FakeOpenAIServer() as server:
        yield server
