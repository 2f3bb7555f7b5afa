"""agentui.config: precedence (defaults < file < env < flags), fallbacks, clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentui.config import Config, ConfigError, Tier, load_config


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_defaults_are_v08_hyperparameters() -> None:
    g = Config().ggs
    assert (g.alpha, g.beta, g.lam, g.w1, g.w2) == (0.6, 0.3, 0.4, 0.6, 0.4)
    assert (g.epsilon, g.delta, g.rho, g.theta) == (0.1, 0.3, 0.5, 0.8)
    assert (g.time_budget_ms, g.max_replans, g.law2_kill) == (300_000, 3, 2)
    assert Config().pipeline.correction_budget == 2


def test_precedence_file_env_flags(tmp_path: Path) -> None:
    f = write(tmp_path, '[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\napi_key = "k"\n')
    env = {"AGENTUI_MODEL": "env-model", "OPENAI_BASE_URL": "http://openai-env"}
    loaded = load_config(f, env=env, overrides={"llm.base_url": "http://flag"})
    cfg = loaded.config
    assert cfg.llm.base_url == "http://flag"
    assert cfg.llm.model == "env-model"
    assert cfg.llm.api_key == "k"
    assert loaded.source_of("llm.base_url") == "command line"
    assert loaded.source_of("llm.model") == "env AGENTUI_MODEL"
    assert loaded.source_of("llm.api_key").startswith("file ")
    assert loaded.source_of("ggs.alpha") == "default"


def test_agentui_vars_win_over_openai_fallbacks() -> None:
    env = {"AGENTUI_BASE_URL": "http://a", "OPENAI_BASE_URL": "http://o", "OPENAI_API_KEY": "sk"}
    cfg = load_config(env=env).config
    assert cfg.llm.base_url == "http://a" and cfg.llm.api_key == "sk"


def test_tier_endpoints_fall_back_to_shared() -> None:
    env = {"AGENTUI_BASE_URL": "http://shared", "AGENTUI_MODEL": "small", "AGENTUI_BRAIN_MODEL": "big"}
    cfg = load_config(env=env).config
    assert cfg.endpoint(Tier.BRAIN).model == "big"
    assert cfg.endpoint(Tier.TOOL).model == "small"
    assert cfg.role_endpoint("meta_validator").model == "big"
    assert cfg.role_endpoint("executor").base_url == "http://shared"


def test_meta_validator_tier_must_not_be_below_planner(tmp_path: Path) -> None:
    f = write(tmp_path, '[roles]\nmeta_validator = "tool"\n')
    with pytest.raises(ConfigError) as e:
        load_config(f, env={})
    assert "roles" in str(e.value) and str(f) in str(e.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[ggs]\ntheta = -1\n", "ggs.theta"),
        ("[llm]\nread_timeout_s = 'slow'\n", "llm.read_timeout_s"),
        ("[pipeline]\nexecutor_max_steps = 0\n", "pipeline.executor_max_steps"),
        ("[llm]\nbase_urll = 'x'\n", "llm.base_urll"),
    ],
)
def test_invalid_values_name_key_and_file(tmp_path: Path, text: str, key: str) -> None:
    f = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_config(f, env={})
    assert e.value.key == key
    assert str(f) in str(e.value) and key in str(e.value)


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    f = write(tmp_path, "[llm\n")
    with pytest.raises(ConfigError) as e:
        load_config(f, env={})
    assert str(f) in str(e.value)


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_config(tmp_path / "nope.toml", env={})


def test_default_file_absent_is_fine(isolated_env: Path) -> None:
    loaded = load_config()
    assert not loaded.file_exists
    assert str(loaded.file).startswith(str(isolated_env))
    assert str(loaded.config.data_path()).startswith(str(isolated_env))


def test_cli_invalid_config_exits_2_with_one_message(tmp_path: Path) -> None:
    f = write(tmp_path, "[ggs]\ntheta = 'high'\n")
    proc = subprocess.run(
        [sys.executable, "-m", "agentui.cli", "--config", str(f), "audit"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert "ggs.theta" in proc.stderr and str(f) in proc.stderr
    assert "Traceback" not in proc.stderr
