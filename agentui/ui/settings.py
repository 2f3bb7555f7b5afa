"""The settings screen: endpoint, model, per-tier models, API key (environment or OS keychain, never
a file), theme, workspace. "Check" runs the same preflight as `agentui doctor`; "Save & apply"
checks, writes config.toml (its path is shown) and restarts the runtime in place."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Select, Static

from agentui.config import ENV_VARS, Config
from agentui.ui.markup import escape


def candidate_config(base: Config, values: dict[str, str]) -> Config:
    """`base` with the screen's values: the one the check runs against and the app applies."""
    doc = base.model_dump(mode="json")
    llm = doc["llm"]
    llm["base_url"] = values.get("base_url") or None
    llm["model"] = values.get("model") or None
    llm["brain"]["model"] = values.get("brain_model") or None
    llm["tool"]["model"] = values.get("tool_model") or None
    if values.get("base_url"):
        llm["provider"] = "auto" if llm.get("provider") == "local" else llm.get("provider", "auto")
    if values.get("api_key"):
        llm["api_key"] = values["api_key"]
    doc["ui"]["theme"] = values.get("theme") or doc["ui"]["theme"]
    if "workspace" in values:  # absent = untouched: the directory agentui starts in stays the workspace
        doc["tools"]["workspace"] = values["workspace"] or None
    return Config.model_validate(doc)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint (scheme, host, port), in one line; None when it can be."""
    from urllib.parse import urlsplit

    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https"):
        return f"not a URL: {url!r} — use http://host:port/v1"
    try:
        port = parts.port  # raises on a port out of 0–65535 or not a number
    except ValueError:
        return f"not a URL: {url!r} — the port must be a number from 1 to 65535"
    if not parts.hostname or " " in parts.netloc:
        return f"not a URL: {url!r} — give a host, e.g. http://127.0.0.1:11434/v1"
    if port == 0:
        return f"not a URL: {url!r} — the port must be a number from 1 to 65535"
    return None


async def check_endpoint(cfg: Config, timeout_s: float = 10.0, *, patience_s: float = 0.0,
                         waiting: Callable[[str, float, str], None] | None = None) -> tuple[bool, str]:
    """The doctor's LLM check; any failure is a message. Without patience it ends by `timeout_s`
    whatever happens; with it, a server that answers but is slow is waited for (`waiting` is told
    about once a second) — its message then starts "slow"."""
    import math

    for url in (cfg.llm.base_url, cfg.llm.brain.base_url, cfg.llm.tool.base_url):
        if url and (problem := url_problem(url)):
            return False, problem
    bound = timeout_s + patience_s + 5.0 if patience_s else timeout_s
    try:
        return await asyncio.wait_for(_preflight(cfg, timeout_s, patience_s, waiting),
                                      timeout=None if math.isinf(bound) else bound)
    except TimeoutError:
        return False, f"slow: no answer within {bound:g} s"
    except Exception as e:  # noqa: BLE001 - the screen shows one line, never hangs on a dead worker
        return False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def is_slow(message: str) -> bool:
    """A check that failed only because the server has not completed yet (not refused, not a no)."""
    return message.startswith("slow") or "slow:" in message


async def _preflight(cfg: Config, timeout_s: float, patience_s: float = 0.0,
                     waiting: Callable[[str, float, str], None] | None = None) -> tuple[bool, str]:
    """agentui.llm preflight: model list + one tiny completion (the doctor's LLM check)."""
    from agentui.llm import LLMError, LLMPool

    if not (cfg.llm.base_url or cfg.llm.brain.base_url or cfg.llm.tool.base_url or cfg.llm.gguf):
        return False, "no endpoint: type one or pick a detected server"
    try:
        pool = LLMPool(cfg, env={"AGENTUI_NO_AUTODETECT": "1"})
    except LLMError as e:
        return False, str(e)
    try:
        results = await pool.preflight(timeout_s=timeout_s, patience_s=patience_s, waiting=waiting)
    finally:
        await pool.aclose()
    bad = [r for r in results if not r.ok]
    if bad:
        return False, "; ".join(r.error for r in bad)
    r = results[0]
    return True, f"{r.model or '?'} @ {r.url} answered {r.reply!r} in {r.latency_s:.2f} s"


def env_overrides(keys: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The environment variables that will override these config keys at the next start."""
    env = dict(os.environ) if env is None else env
    out = []
    for key, names in ENV_VARS:
        if key in keys:
            out.extend(n for n in names if env.get(n))
    return out


def api_key_source(cfg: Config) -> str:
    for key, names in ENV_VARS:
        if key == "llm.api_key":
            for n in names:
                if os.environ.get(n):
                    return f"from the environment ({n})"
    if cfg.llm.api_key:
        return "set in the config file (consider the keychain instead)"
    return "none (local servers need none)"


class SettingsScreen(Screen[Config | None]):
    window_s = 10.0  # the check's window; past it a server that answers is "slow", never refused
    # Ctrl+S (the app's Settings key) saves here; F5 checks (Ctrl+K/W belong to the inputs)
    # Ctrl+S reaches the app's priority binding, which saves here; this one names it in the footer
    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("f5", "check", "Check"),
                Binding("ctrl+s", "save", "Save", priority=True)]

    def __init__(self, config: Config, config_file: Path, workspace: Path, themes: list[str]) -> None:
        super().__init__()
        self.config = config
        self.config_file = config_file
        self.workspace = workspace
        self.themes = themes
        self.checked: Config | None = None  # the candidate the last check passed
        self.rejected: Config | None = None  # the candidate the last save refused (saved on the next Ctrl+S)
        self.found: list[Any] = []

    def compose(self) -> ComposeResult:
        llm = self.config.llm
        with VerticalScroll(id="settings"):
            yield Static(f"[b]Settings[/b] — Ctrl+S checks and saves to [b]{escape(str(self.config_file))}[/b]",
                         id="set-path")
            yield Label("Endpoint (OpenAI-compatible base URL)")
            with Horizontal(classes="set-row"):
                yield Input(llm.base_url or "", placeholder="http://127.0.0.1:11434/v1", id="set-url")
                yield Button("Detect", id="detect")
            yield Select[str]([], prompt="detected servers and their models", id="set-found", allow_blank=True)
            yield Label("Model (empty = the server's first)")
            yield Input(llm.model or "", placeholder="e.g. qwen2.5:7b", id="set-model")
            yield Label("Brain tier model (Perceiver, Planner, Meta-Validator) · Tool tier model (Executor, Validator)")
            with Horizontal(classes="set-row"):
                yield Input(llm.brain.model or "", placeholder="brain: same as above", id="set-brain")
                yield Input(llm.tool.model or "", placeholder="tool: same as above", id="set-tool")
            yield Label(f"API key — now {api_key_source(self.config)}; a key typed here goes to the OS "
                        "keychain, never to a file", id="set-key-label")
            yield Input("", placeholder="leave empty to keep the current one", password=True, id="set-key")
            yield Label("Theme · Workspace (the directory the tools act in)")
            with Horizontal(classes="set-row"):
                opts = [(t, t) for t in self.themes]
                cur = self.app.theme if self.app.theme in self.themes else (self.themes[0] if self.themes else None)
                yield Select[str](opts, value=cur if cur else Select.BLANK, allow_blank=not opts, id="set-theme")
                yield Input(str(self.workspace), id="set-ws")
            with Horizontal(classes="set-row", id="set-buttons"):
                yield Button("Check (F5)", id="check")
                yield Button("Save & apply (Ctrl+S)", id="save", variant="primary")
        # outside the scroll, above the footer: what F5, Ctrl+S and Detect did is visible at 80×24
        yield Static("[dim]F5 checks the endpoint · Ctrl+S saves · Detect finds local servers[/dim]",
                     id="set-status")
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        from agentui.ui.modals import steady_cursors

        steady_cursors(self)
        self.initial = self.values()  # what is shown now: only keys the user changes are written
        self.query_one("#set-url", Input).focus()

    def changed(self) -> dict[str, str]:
        vals = self.values()
        return {k: v for k, v in vals.items() if v != self.initial.get(k)}

    def values(self) -> dict[str, str]:
        def v(wid: str) -> str:
            return self.query_one(wid, Input).value.strip()

        theme = self.query_one("#set-theme", Select).value
        return {"base_url": v("#set-url"), "model": v("#set-model"), "brain_model": v("#set-brain"),
                "tool_model": v("#set-tool"), "api_key": v("#set-key"), "workspace": v("#set-ws"),
                "theme": theme if isinstance(theme, str) else ""}

    def say(self, text: str, ok: bool | None = None) -> None:
        colour = {True: "$success", False: "$error", None: "$text-muted"}[ok]
        self.query_one("#set-status", Static).update(f"[{colour}]{escape(text)}[/]")

    # -- detection ------------------------------------------------------------------------------
    @on(Button.Pressed, "#detect")
    def _detect_pressed(self) -> None:
        self.detect()

    @work(exclusive=True, group="settings-detect", exit_on_error=False, description="probing local servers")
    async def detect(self, candidates: tuple[tuple[str, str], ...] | None = None) -> None:
        from agentui.config_write import KNOWN_SERVERS, detect_servers

        typed = self.query_one("#set-url", Input).value.strip()
        if candidates is None:
            candidates = KNOWN_SERVERS
            if typed and not url_problem(typed):  # the URL typed beside the button is probed first
                from agentui.llm.http import normalise_base_url

                url = normalise_base_url(typed)
                candidates = (("typed URL", url), *((n, u) for n, u in KNOWN_SERVERS if u != url))
        where = f"{typed} and " if typed else ""
        self.say(f"looking for servers at {where}Ollama, LM Studio and llama.cpp on this machine…")
        self.found = await detect_servers(candidates)
        opts = [(f"{s.name} — {m}", f"{s.base_url}\t{m}") for s in self.found for m in (s.models or [""])]
        self.query_one("#set-found", Select).set_options(opts)
        if self.found:
            self.say(f"found {', '.join(f'{s.name} ({len(s.models)} model(s))' for s in self.found)}: "
                     "pick one in the list under the endpoint", True)
        else:
            names = ", ".join(f"{n} {u}" for n, u in candidates)
            self.say(f"no server answered ({names})", False)

    @on(Select.Changed, "#set-found")
    def _picked(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and "\t" in event.value:
            url, model = event.value.split("\t", 1)
            self.query_one("#set-url", Input).value = url
            self.query_one("#set-model", Input).value = model

    # -- check, save, apply ---------------------------------------------------------------------
    @on(Button.Pressed, "#check")
    def _check_pressed(self) -> None:
        self.action_check()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    def _candidate(self) -> Config | None:
        vals = self.values()
        if "workspace" not in self.changed():
            del vals["workspace"]
        ws = vals.get("workspace")
        if problem := url_problem(vals["base_url"]):
            self.say(problem, False)
            return None
        if ws and not Path(ws).expanduser().is_dir():
            self.say(f"workspace {ws} is not a directory: pick an existing one", False)
            return None
        try:
            return candidate_config(self.config, vals)
        except Exception as e:  # noqa: BLE001 - pydantic's message, in one line
            self.say(f"not valid: {str(e).splitlines()[0]}", False)
            return None

    def _waiting(self, what: str) -> Callable[[str, float, str], None]:
        def tell(url: str, elapsed: float, why: str) -> None:
            self.say(f"{what}: waiting for the model ({why}, {elapsed:.0f} s) — slow, not down; "
                     "still checking · Ctrl+S saves anyway")
        return tell

    @work(exclusive=True, group="settings-check", exit_on_error=False, description="checking the endpoint")
    async def action_check(self) -> bool:
        import math

        cfg = self._candidate()
        if cfg is None:
            return False
        self.say("checking the endpoint (model list and one tiny completion)…")
        # no wall: a slow server is waited for, with the seconds shown, until it answers
        ok, msg = await check_endpoint(cfg, self.window_s, patience_s=math.inf, waiting=self._waiting("check"))
        self.say(("ok: " if ok else "rejected: ") + msg, ok)
        self.checked = cfg if ok else None
        return ok

    @work(exclusive=True, group="settings-save", exit_on_error=False, description="saving the settings")
    async def action_save(self) -> None:
        from agentui.config import ConfigError
        from agentui.config_write import key_account, store_api_key, write_config

        cfg = self._candidate()
        if cfg is None:
            return
        note = ""
        if self.checked is None or self.checked != cfg:
            self.say(f"checking the endpoint before saving (up to {self.window_s:g} s; a slow one is saved anyway)…")
            ok, msg = await check_endpoint(cfg, self.window_s)
            if not ok and is_slow(msg):
                note = f"; the model has not answered yet ({msg}) — agentui keeps checking"
            elif not ok and not (cfg.llm.base_url or cfg.llm.brain.base_url or cfg.llm.tool.base_url or cfg.llm.gguf):
                self.say(f"not saved — {msg}", False)
                return
            elif not ok and self.rejected != cfg:
                # refused, or the server said no: one more Ctrl+S saves it anyway (it may be started later)
                self.rejected = cfg
                self.say(f"not saved — {msg} · Ctrl+S again saves it anyway", False)
                return
            elif not ok:
                note = f"; saved anyway: {msg}"
        vals, changed = self.values(), self.changed()
        keys = {"base_url": "llm.base_url", "model": "llm.model", "brain_model": "llm.brain.model",
                "tool_model": "llm.tool.model", "theme": "ui.theme", "workspace": "tools.workspace"}
        # only what the user changed: an untouched field (the cwd as workspace) must not get pinned
        updates = {keys[k]: (v.removeprefix("agentui-") if k == "theme" else v)
                   for k, v in changed.items() if k in keys}
        try:
            await asyncio.to_thread(write_config, self.config_file, updates)
        except (ConfigError, OSError) as e:
            self.say(f"not saved: {e}", False)
            return
        if vals["api_key"]:
            try:
                where = await asyncio.to_thread(store_api_key, key_account(vals["base_url"]), vals["api_key"])
                note += f"; the API key is in {where}"
            except (RuntimeError, OSError) as e:
                note += f"; the API key is kept for this session only — {e}"
        shadow = env_overrides([k for k, v in updates.items() if v])
        if shadow:  # applied now, but the environment wins when agentui starts again
            note += f"; note: {', '.join(shadow)} in your environment override the file at the next start"
        self.notify(f"saved {self.config_file}{note}", timeout=10)
        self.dismiss(cfg)
