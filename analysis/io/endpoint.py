"""An OpenAI-compatible chat-completions endpoint (a hosted API, vLLM, llama.cpp's server, Ollama), called with
retries, a concurrency limit and a timeout.

`ChatEndpoint(url, model, key_env=...)` posts `{url}/chat/completions` with the system and user messages at
temperature 0. The API key is read from the environment variable `key_env` at call time and sent as a bearer
token; it is never stored on the object's repr, in an error message, or anywhere referee writes. A 429, a 5xx,
a timeout or a dropped connection is retried up to `retries` times with exponential backoff (honouring a
Retry-After header); any other HTTP error fails at once. `complete_many(requests, concurrency)` runs calls
in a thread pool of `concurrency` workers and returns one `Reply` or `CallFailed` per request, in order.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx

RETRY_STATUS = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Reply:
    """One completion: the answer text, tokens in and out (as the endpoint reported them; 0 when it did not),
    and how many HTTP attempts it took."""

    text: str
    tokens_in: int
    tokens_out: int
    attempts: int


@dataclass(frozen=True)
class CallFailed:
    """A call that failed for good: why (status or error class, never the key) and after how many attempts."""

    reason: str
    attempts: int


class ChatEndpoint:
    """A chat-completions endpoint (module docstring). url : the base URL (e.g. http://localhost:8000/v1).
    model : the model name sent. key_env : environment variable holding the API key (None: no key).
    timeout : seconds per attempt. retries : extra attempts after a retryable failure. backoff : the first
    wait in seconds (doubled each retry)."""

    def __init__(self, url: str, model: str, key_env: str | None = "OPENAI_API_KEY", timeout: float = 60.0,
                 retries: int = 4, backoff: float = 1.0):
        self.url, self.model, self.key_env = url.rstrip("/"), model, key_env
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._client = httpx.Client(timeout=timeout)

    def __repr__(self) -> str:
        return f"ChatEndpoint({self.url!r}, model={self.model!r}, key from ${self.key_env})"

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _headers(self) -> dict:
        key = os.environ.get(self.key_env) if self.key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    def complete(self, system: str, prompt: str) -> Reply | CallFailed:
        """One completion, retried on 429 / 5xx / timeouts / dropped connections; never raises for HTTP trouble."""
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
        reason = "no attempt"
        for attempt in range(1, self.retries + 2):
            wait = self.backoff * 2 ** (attempt - 1)
            try:
                response = self._client.post(f"{self.url}/chat/completions", json=body, headers=self._headers())
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                reason = type(exc).__name__
            else:
                if response.status_code == 200:
                    try:
                        data = response.json()
                        text = data["choices"][0]["message"]["content"]
                    except (ValueError, KeyError, IndexError, TypeError):
                        return CallFailed("the endpoint's response is not a chat completion", attempt)
                    usage = data.get("usage") or {}
                    return Reply(text or "", int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)),
                                 attempt)
                reason = f"HTTP {response.status_code}"
                if response.status_code not in RETRY_STATUS:
                    return CallFailed(reason, attempt)
                after = response.headers.get("retry-after")
                if after and after.replace(".", "", 1).isdigit():
                    wait = max(wait, float(after))
            if attempt <= self.retries:
                time.sleep(wait)
        return CallFailed(reason, self.retries + 1)

    def complete_many(self, requests: list[tuple[str, str]], concurrency: int = 4) -> list[Reply | CallFailed]:
        """`complete` for each (system, prompt), at most `concurrency` at a time; results in request order."""
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            return list(pool.map(lambda r: self.complete(*r), requests))
