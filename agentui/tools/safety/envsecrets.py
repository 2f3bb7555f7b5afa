"""Secrets in the environment: a command that prints them hands them to the LLM.

Tool processes get a scrubbed environment (`tool_environment`): only variables on a list of
harmless ones (PATH, HOME, LANG, LC_*, TERM, TMPDIR, USER, SHELL, toolchain homes …) and never a
secret-looking one (`*_KEY`, `*_TOKEN`, `*SECRET*`, a value shaped like a credential), nor
agentui's own keys. A user can pass more names with AGENTUI_TOOL_ENV (space separated), never a
secret-looking one. Expanding a secret-named variable (`$GITHUB_TOKEN`) or dumping the
environment (`env`, `printenv`, `set`, `export -p`) still asks; when a secret is in what a tool
would see, a person must answer: never `--yes`, never a stored approval.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_SECRET = re.compile(
    r"(^|_)(API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|KEY|SECRET|SECRETS|TOKEN|TOKENS|PASSWORD|PASSWD|PASS|"
    r"CREDENTIALS?|AUTH|PAT|SESSION|COOKIE|DSN)(_|$)"
    r"|^(DATABASE|DB|REDIS|MONGO|MONGODB|POSTGRES|POSTGRESQL|PG|MYSQL|AMQP|RABBITMQ|SENTRY)_(URL|URI|DSN)$",
    re.IGNORECASE,
)
_AGENT_KEY = re.compile(r"AGENTUI_(\w+_)?API_KEY")
# Values shaped like a credential whatever the variable is called (`OPENAI=sk-…`, `CI_X=ghp_…`):
# provider key prefixes, AWS key ids, Slack/GitLab/HF/Stripe tokens, JWTs, PEM blocks, URLs with a password.
_SECRET_VALUE = re.compile(
    r"^(sk-|sk_live_|rk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abpors]-|hf_|AIza|ya29\.|npm_|pypi-)"
    r"[A-Za-z0-9_\-]{16,}"
    r"|^(AKIA|ASIA)[0-9A-Z]{16}$|^eyJ[A-Za-z0-9_\-]{10,}\.eyJ|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|^[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@",
)


# Variables a tool process may see: locations, locale and terminal settings, no credentials.
_TOOL_ENV_NAMES = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TMP", "TEMP", "TZ",
    "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "HOSTNAME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
    "XDG_DATA_HOME", "XDG_STATE_HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "GOPATH", "GOROOT", "GOCACHE",
    "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "PYENV_ROOT", "NVM_DIR", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
    "https_proxy", "no_proxy", "SOURCE_DATE_EPOCH",
}
PASS_ENV = "AGENTUI_TOOL_ENV"  # extra variable names the user lets tools see (never secret-looking ones)


def tool_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of `environ` (default: ours) a tool process may see: the harmless list, the
    names in AGENTUI_TOOL_ENV, and none that is named or shaped like a secret."""
    env = os.environ if environ is None else environ
    extra = set(env.get(PASS_ENV, "").split())
    return {k: v for k, v in env.items()
            if (k in _TOOL_ENV_NAMES or k in extra or k.startswith("LC_"))
            and not secret_name(k, env) and not agent_key(k)}


def agent_key(name: str) -> bool:
    """One of agentui's own LLM keys: dropped from every tool process's environment."""
    return bool(_AGENT_KEY.fullmatch(name))


def secret_name(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """A variable named like a secret, or (when set here) holding a value shaped like one."""
    if _SECRET.search(name):
        return True
    value = (os.environ if environ is None else environ).get(name, "")
    return bool(value) and bool(_SECRET_VALUE.search(value))


def secret_vars(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret-looking variables a tool process would get (agentui's own keys are dropped)."""
    env = os.environ if environ is None else environ
    return sorted(k for k, v in env.items() if v and secret_name(k, env) and not agent_key(k))


def dumps_environment(name: str, texts: list[str]) -> bool:
    """Does this simple command print every variable (values included)?"""
    words = [t for t in texts if not t.startswith("-")]
    if name == "env":  # `env` alone, or with only options/assignments; with a command it runs it
        return all("=" in t for t in words)
    if name == "printenv":
        return not words
    if name == "set":
        return not texts
    if name == "export":
        return not words and (not texts or "-p" in texts)
    if name in ("declare", "typeset", "local", "readonly"):
        return not words and all(set(t[1:]) <= set("pxgarilntu") for t in texts)
    return False


def parameter_names(node: object) -> list[str]:
    """The variable names a bashlex word (or assignment) expands: `$X`, `${X:-y}`, `"…$X…"`."""
    out: list[str] = []
    for part in getattr(node, "parts", None) or []:
        kind = getattr(part, "kind", "")
        if kind == "parameter":
            value = str(getattr(part, "value", ""))
            m = re.match(r"#?(!?)([A-Za-z_][A-Za-z0-9_]*)", value)
            if m:  # `${!x}`: the name is only known at run time ("!x")
                out.append(m.group(1) + m.group(2))
        elif kind not in ("commandsubstitution", "processsubstitution"):  # those are walked as commands
            out.extend(parameter_names(part))
    return out
