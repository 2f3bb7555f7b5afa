"""What the session's endpoints offer: the models they list and each model's context window.

An editor draws a context meter from `usage_update`'s `used` and `size`, so `size` must be the
model's real window. `[acp] context_window` sets it; otherwise it is read from the endpoint:
the `/models` listing (vLLM's `max_model_len`, LM Studio's `max_context_length`, and the
`context_length`/`context_window` other servers use, or llama.cpp's `meta.n_ctx_train`),
llama.cpp's `/props` (`n_ctx` of the running server), or Ollama's `/api/show`. Every probe is
bounded by a short timeout; a window that cannot be found is 0 ("unknown"), never a guess.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from agentui.config import Config

PROBE_TIMEOUT_S = 1.5
LOCAL_N_CTX = 4096  # the `local` provider's llama.cpp context (llm/local.py)
_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")


@dataclass
class Models:
    listed: list[str] = field(default_factory=list)  # every model id the endpoints list
    windows: dict[str, int] = field(default_factory=dict)  # model id → context window (tokens)
    default_window: int = 0  # for a model not in `windows` (a one-model server's /props)
    fixed: int = 0  # `[acp] context_window`: the window whatever the endpoints say

    def window(self, model: str) -> int:
        """The model's window; a reply that names its model differently from the listing (an alias,
        a path) falls back to the one window the endpoints listed, if they listed one."""
        if self.fixed:
            return self.fixed
        if model in self.windows:
            return self.windows[model]
        only = set(self.windows.values())
        return only.pop() if len(only) == 1 else self.default_window


def _window_of(entry: dict[str, Any]) -> int:
    for source in (entry, entry.get("meta") if isinstance(entry.get("meta"), dict) else {}):
        for key in (*_WINDOW_KEYS, "n_ctx_train"):
            value = source.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return 0


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


async def _probe(client: Any, base_url: str, api_key: str | None, models: Models) -> None:
    from agentui.llm import normalise_base_url

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    base = normalise_base_url(base_url).rstrip("/")
    with contextlib.suppress(Exception):
        r = await client.get(base + "/models", headers=headers)
        if r.status_code == 200:
            for entry in r.json().get("data", []):
                if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                    models.listed.append(entry["id"])
                    if w := _window_of(entry):
                        models.windows[entry["id"]] = w
    if models.default_window:
        return
    with contextlib.suppress(Exception):  # llama.cpp's server: the running context
        r = await client.get(_root(base) + "/props", headers=headers)
        if r.status_code == 200:
            props = r.json()
            settings = props.get("default_generation_settings") or {}
            n = settings.get("n_ctx") or props.get("n_ctx")
            if isinstance(n, int) and n > 0:
                models.default_window = n
                return
    for model in [m for m in models.listed if m not in models.windows][:4]:
        with contextlib.suppress(Exception):  # Ollama: the model's trained context
            r = await client.post(_root(base) + "/api/show", json={"model": model}, headers=headers)
            if r.status_code == 200:
                info = r.json().get("model_info") or {}
                n = next((v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)), 0)
                if n > 0:
                    models.windows[model] = n


async def discover(config: Config) -> Models:
    """The models the configured endpoints list, with their windows (bounded: a few seconds at most)."""
    import httpx

    models = Models(fixed=config.acp.context_window)
    urls = {(e.base_url, e.api_key) for e in (config.endpoint("brain"), config.endpoint("tool")) if e.base_url}
    if config.llm.provider == "local" or (not urls and config.llm.gguf):
        models.default_window = LOCAL_N_CTX
    if not urls:
        return models
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as client:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(_probe(client, u, k, models) for u, k in sorted(
                urls, key=lambda x: x[0] or ""))), PROBE_TIMEOUT_S * 3)
    models.listed = sorted(set(models.listed))
    return models
