"""Answering: understand the question, compose or generate an answer, verify it, cite it."""
