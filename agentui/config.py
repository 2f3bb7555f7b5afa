"""Configuration: pydantic models, a TOML file, environment variables, CLI flags (in that order,
later wins).

Every field is documented here; `agentui doctor` prints where each effective value came from.
Invalid config raises :class:`ConfigError` naming the key and the file; the CLI turns it into one
message and exit code 2.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from agentui.config_checks import ApiKey, BaseUrl, check_api_key, check_base_url  # noqa: F401 - re-exported
from agentui.paths import default_config_file, default_data_dir


class Tier(StrEnum):
    """Model tiers (DESIGN §4). Order matters: brain ≥ tool."""

    TOOL = "tool"
    BRAIN = "brain"

    @property
    def rank(self) -> int:
        return {Tier.TOOL: 0, Tier.BRAIN: 1}[self]


class _Section(BaseModel):
    # inf / nan are never a meaningful weight, limit or interval
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _whole_numbers(cls, v: Any, info: Any) -> Any:
        """A float where a whole number belongs (``max_tokens = 1e12``) is a mistake, not a count
        to round: pydantic would take 1e12 as 1000000000000."""
        field_ = cls.model_fields.get(info.field_name) if info.field_name else None
        if isinstance(v, float) and field_ is not None and field_.annotation in (int, "int"):
            raise ValueError(f"a whole number is expected, not {v!r}")
        return v


class TierConfig(_Section):
    """Per-tier override of the shared endpoint; unset fields fall back to `[llm]`."""

    base_url: BaseUrl = None
    model: str | None = None
    api_key: ApiKey = None


class RoleBudgets(_Section):
    """Completion-token budget per role: the reply schema's bounded size plus headroom over the
    replies measured with small models; a reply that reaches it is cut and counted as a
    parse failure of the role. `[llm] max_tokens` caps them all."""

    perceiver: int = Field(256, ge=16)
    planner: int = Field(512, ge=16)
    executor: int = Field(768, ge=16, description="room for a write_file's content")
    agent_validator: int = Field(384, ge=16)
    meta_validator: int = Field(512, ge=16)
    dreamer: int = Field(512, ge=16)


class LLMConfig(_Section):
    provider: Literal["auto", "http", "local"] = Field(
        "auto", description="auto: configured URL, else Ollama on localhost, else a local GGUF"
    )
    base_url: BaseUrl = Field(None, description="OpenAI-compatible endpoint, with or without /v1")
    model: str | None = None
    api_key: ApiKey = None
    gguf: str | None = Field(None, description="path to a GGUF for the `local` provider")
    connect_timeout_s: float = Field(5.0, gt=0)
    read_timeout_s: float = Field(120.0, gt=0, description="wait for the first token (prompt processing)")
    stream: bool = Field(True, description="stream replies (SSE); non-streaming servers are detected")
    idle_timeout_s: float = Field(30.0, gt=0, description="longest gap between streamed tokens")
    call_deadline_s: float = Field(300.0, gt=0, description="a streamed reply is cut here")
    idle_wait_s: float = Field(60.0, ge=0, description="after a timeout, wait this long for the endpoint to be idle")
    max_parallel: int = Field(
        1, ge=1, le=64, description="LLM calls in flight per endpoint (local servers run one generation at a time)"
    )
    max_retries: int = Field(3, ge=0, le=10)
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(8.0, ge=0)
    max_tokens: int = Field(1024, ge=16, description="budget of other calls; caps every role budget")
    budgets: RoleBudgets = Field(default_factory=RoleBudgets)
    temperature: float = Field(0.0, ge=0, le=2)
    structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    brain: TierConfig = Field(default_factory=TierConfig)
    tool: TierConfig = Field(default_factory=TierConfig)

    def budget_for(self, role: str) -> int:
        """Completion tokens a call of `role` may use: its budget, capped by max_tokens."""
        own = getattr(self.budgets, role, None) if role in RoleBudgets.model_fields else None
        return min(own, self.max_tokens) if isinstance(own, int) else self.max_tokens


class RolesConfig(_Section):
    """Which model tier each LLM role uses. R4b's tier must be ≥ R2's (v0.7 §R4b)."""

    perceiver: Tier = Tier.BRAIN
    planner: Tier = Tier.BRAIN
    executor: Tier = Tier.TOOL
    agent_validator: Tier = Tier.TOOL
    meta_validator: Tier = Tier.BRAIN
    dreamer: Tier = Tier.BRAIN

    @model_validator(mode="after")
    def _r4b_at_least_r2(self) -> RolesConfig:
        if self.meta_validator.rank < self.planner.rank:
            raise ValueError(
                "meta_validator must use a tier at least as strong as planner's "
                f"(planner={self.planner.value}, meta_validator={self.meta_validator.value}); "
                "R4b is the independent check on R2"
            )
        return self


class GGSConfig(_Section):
    """Loss hyperparameters, v0.8 defaults."""

    alpha: float = Field(0.6, ge=0)
    beta: float = Field(0.3, ge=0)
    lam: float = Field(0.4, ge=0, description="λ, weight on Ω")
    w1: float = Field(0.6, ge=0, description="Ω sub-weight for replan count")
    w2: float = Field(0.4, ge=0, description="Ω sub-weight for elapsed time")
    epsilon: float = Field(0.1, gt=0, description="|∇L| below this → plateau")
    delta: float = Field(0.3, ge=0, le=1, description="D at or below this → success")
    rho: float = Field(0.5, ge=0, le=1, description="P above this → logical")
    theta: float = Field(0.8, gt=0, description="Ω at or above this → abandon")
    time_budget_ms: int = Field(300_000, gt=0)
    max_replans: int = Field(3, ge=1)
    law2_kill: int = Field(2, ge=1, description="consecutive worsening rounds → abandon")
    model_output_retries: int = Field(0, ge=0, le=3, description="re-send a directive after unusable plans")


class PipelineConfig(_Section):
    executor_max_steps: int = Field(8, ge=1, le=64)
    correction_budget: int = Field(2, ge=0, le=10, description="R4a CorrectionSignal retries")
    fan_in_timeout_s: float = Field(600.0, gt=0, description="R4b waits this long for outcomes")
    plan_reasks: int = Field(2, ge=0, le=5, description="plan-validator re-asks before abandon")
    clarification_rounds: int = Field(2, ge=0, le=2)
    history_turns: int = Field(4, ge=0, le=20, description="session turns R1 sees as context")
    max_task_chars: int = Field(16_000, ge=1000, description="longer task text is cut to this for the "
                                "roles (with a warning); the task log keeps it verbatim")


class ToolsConfig(_Section):
    timeout_s: float = Field(60.0, gt=0)
    output_cap_chars: int = Field(4000, ge=200, description="head+tail kept for the LLM")
    workspace: str | None = Field(None, description="default workspace; the cwd when unset")
    web_search_url: str = "https://html.duckduckgo.com/html/"


class MemoryConfig(_Section):
    write_queue_size: int = Field(1024, ge=1)
    dreamer_debounce_s: float = Field(5.0, ge=0)
    dreamer_interval_s: float = Field(1800.0, ge=0, description="0 disables the timer")


class AuditConfig(_Section):
    report_interval_s: float = Field(300.0, ge=0, description="0 disables periodic reports")
    window: int = Field(50, ge=1, description="calls per window for repair/error rates")
    parse_repair_rate: float = Field(0.3, ge=0, le=1)
    tool_error_rate: float = Field(0.5, ge=0, le=1)
    stall_timeout_s: float = Field(300.0, gt=0)


class UIConfig(_Section):
    theme: str = "dark"
    bus_history: int = Field(2000, ge=100)


_SERVER_NAME = r"^[A-Za-z0-9_-]{1,40}$"
_HEADER_NAME = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$"  # an RFC 9110 token


class McpServerConfig(_Section):
    """One MCP server: a stdio command, or a Streamable HTTP `url`. Its tools are named
    `<server>.<tool>` and ask before each call unless listed in `allow`."""

    command: str | None = Field(None, description="executable started with stdio transport")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="extra env; ${VAR} is expanded")
    cwd: str | None = Field(None, description="working directory; the workspace when unset")
    url: str | None = Field(None, description="Streamable HTTP endpoint instead of a command")
    transport: Literal["streamable-http", "sse"] = Field(
        "streamable-http", description="for a `url`: Streamable HTTP, or the legacy HTTP+SSE transport")
    headers: dict[str, str] = Field(default_factory=dict,
                                    description="HTTP headers sent to `url` (auth); ${VAR} is expanded")
    allow: list[str] = Field(default_factory=list, description="tools that run without asking")
    trust_read_only: bool = Field(False, description="tools the server marks readOnlyHint run without "
                                  "asking (a destructiveHint always asks)")
    timeout_s: float | None = Field(None, gt=0, description="per call; [tools] timeout_s when unset")
    startup_timeout_s: float = Field(15.0, gt=0)
    enabled: bool = True
    _literal: bool = PrivateAttr(default=False)  # given by an ACP client: its values are not ${VAR}-expanded

    @property
    def own_authorization(self) -> bool:
        """Its `headers` carry an `Authorization` value (then no stored OAuth sign-in is used)."""
        return any(k.lower() == "authorization" for k in self.headers)

    @model_validator(mode="after")
    def _command_xor_url(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("give exactly one of `command` (stdio) or `url` (Streamable HTTP)")
        if self.transport != "streamable-http" and not self.url:
            raise ValueError("`transport` applies to a `url` server only")
        if self.headers and not self.url:
            raise ValueError("`headers` are sent to a `url` server only; a stdio server takes `env`")
        for name, value in self.headers.items():
            if not re.match(_HEADER_NAME, name):
                raise ValueError(f"header name {name!r} must be letters, digits or -_.!#$%&'*+^`|~")
            if any(c in value for c in "\r\n\0"):
                raise ValueError(f"header {name!r} has a line break or NUL in its value")
        return self


class McpConfig(_Section):
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names(self) -> McpConfig:
        import re

        for name in self.servers:
            if not re.match(_SERVER_NAME, name):
                raise ValueError(f"MCP server name {name!r} must be letters, digits, '_' or '-'")
        return self


class AcpConfig(_Section):
    permission_timeout_s: float = Field(300.0, ge=0, description="an editor's unanswered permission "
                                        "request is a denial after this; 0 waits until the turn is cancelled")
    context_window: int = Field(0, ge=0, description="the model's context window in tokens, for an editor's "
                                "context meter; 0 reads it from the endpoint")


class Config(_Section):
    data_dir: str | None = None
    llm: LLMConfig = Field(default_factory=LLMConfig)
    roles: RolesConfig = Field(default_factory=RolesConfig)
    ggs: GGSConfig = Field(default_factory=GGSConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    ui: UIConfig = Field(default_factory=UIConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    acp: AcpConfig = Field(default_factory=AcpConfig)

    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser() if self.data_dir else default_data_dir()

    def endpoint(self, tier: Tier | str) -> Endpoint:
        """The effective endpoint of a tier: the tier's own settings, else the shared ones."""
        tier = Tier(tier)
        t = self.llm.brain if tier is Tier.BRAIN else self.llm.tool
        return Endpoint(
            tier=tier,
            base_url=t.base_url or self.llm.base_url,
            model=t.model or self.llm.model,
            api_key=t.api_key or self.llm.api_key,
        )

    def role_endpoint(self, role: str) -> Endpoint:
        return self.endpoint(getattr(self.roles, role))


@dataclass(frozen=True)
class Endpoint:
    tier: Tier
    base_url: str | None
    model: str | None
    api_key: str | None

    @property
    def configured(self) -> bool:
        return bool(self.base_url)


class ConfigError(Exception):
    """Invalid configuration: says which key, which file (or env var / flag), and what is wrong."""

    def __init__(self, message: str, *, key: str | None = None, source: str | None = None) -> None:
        self.key = key
        self.source = source
        where = f" in {source}" if source else ""
        what = f" at '{key}'" if key else ""
        super().__init__(f"invalid configuration{where}{what}: {message}")


# Environment variables: (dotted key, [names in priority order])
ENV_VARS: list[tuple[str, list[str]]] = [
    ("llm.base_url", ["AGENTUI_BASE_URL", "OPENAI_BASE_URL"]),
    ("llm.model", ["AGENTUI_MODEL", "OPENAI_MODEL"]),
    ("llm.api_key", ["AGENTUI_API_KEY", "OPENAI_API_KEY"]),
    ("llm.gguf", ["AGENTUI_GGUF"]),
    ("llm.provider", ["AGENTUI_PROVIDER"]),
    ("llm.brain.base_url", ["AGENTUI_BRAIN_BASE_URL"]),
    ("llm.brain.model", ["AGENTUI_BRAIN_MODEL"]),
    ("llm.brain.api_key", ["AGENTUI_BRAIN_API_KEY"]),
    ("llm.tool.base_url", ["AGENTUI_TOOL_BASE_URL"]),
    ("llm.tool.model", ["AGENTUI_TOOL_MODEL"]),
    ("llm.tool.api_key", ["AGENTUI_TOOL_API_KEY"]),
    ("data_dir", ["AGENTUI_DATA_DIR"]),
]


@dataclass
class LoadedConfig:
    config: Config
    file: Path
    file_exists: bool
    sources: dict[str, str] = field(default_factory=dict)  # dotted key → where it came from

    def source_of(self, key: str) -> str:
        return self.sources.get(key, "default")


def _set_dotted(d: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    for p in parts[:-1]:
        nxt = d.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise ConfigError("expected a table", key=key)
        d = nxt
    d[parts[-1]] = value


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _first_error(err: ValidationError) -> tuple[str, str]:
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e.get("loc", ()) if p != "__root__")
    msg = e.get("msg", "invalid value").removeprefix("Value error, ")
    if e.get("type") == "extra_forbidden":
        msg = "unknown key"
    return loc, msg


def load_config(
    path: Path | str | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Defaults < TOML file < environment < `overrides` (CLI flags, dotted keys, None = unset)."""
    env = os.environ if env is None else env
    file = Path(path).expanduser() if path else default_config_file()
    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    exists = file.is_file()
    if not exists and os.path.lexists(file) and not file.is_dir():  # a FIFO, device, dangling or looping link
        raise ConfigError("is not a regular file (a FIFO, a device or a broken symlink); give a TOML file",
                          source=str(file))
    if file.is_dir():
        raise ConfigError("is a directory, not a TOML file (give the file: --config DIR/config.toml)",
                          source=str(file))
    if path is not None and not exists:
        raise ConfigError("file not found", source=str(file))
    if exists:
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"not valid TOML ({e})", source=str(file)) from e
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read ({e})", source=str(file)) from e
        for key in _flatten(data):
            sources[key] = f"file {file}"
        try:
            Config.model_validate(data)
        except ValidationError as e:
            key, msg = _first_error(e)
            raise ConfigError(msg, key=key, source=str(file)) from e

    for key, names in ENV_VARS:
        for name in names:
            val = env.get(name)
            if val:
                _set_dotted(data, key, val)
                sources[key] = f"env {name}"
                break

    for key, val in (overrides or {}).items():
        if val is None:
            continue
        _set_dotted(data, key, val)
        sources[key] = "command line"

    try:
        cfg = Config.model_validate(data)
    except ValidationError as e:
        key, msg = _first_error(e)
        raise ConfigError(msg, key=key, source=sources.get(key, str(file))) from e
    return LoadedConfig(config=cfg, file=file, file_exists=exists, sources=sources)
