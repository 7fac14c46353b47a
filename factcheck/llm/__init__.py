"""The LLM layer: any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp's server)."""

from factcheck.llm.client import LLMAnswer, LLMSettings, chat, llm_settings
from factcheck.llm.jsonparse import parse_json_object

__all__ = ["LLMAnswer", "LLMSettings", "chat", "llm_settings", "parse_json_object"]
