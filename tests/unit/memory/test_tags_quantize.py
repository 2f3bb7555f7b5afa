from __future__ import annotations

import pytest

from agentui.contracts import MacroState
from agentui.memory import (
    ENV_LOCAL,
    intent_space,
    megram_params,
    parse_blocked_target,
    path_entity,
    slug,
    tool_space,
)


def test_quantization_matrix() -> None:
    assert megram_params(MacroState.ABANDON) == (0.95, -1.0, 0.05)
    assert megram_params("accept") == (0.90, 1.0, 0.05)
    assert megram_params(MacroState.CHANGE_APPROACH) == (0.85, -1.0, 0.05)
    assert megram_params(MacroState.SUCCESS) == (0.80, 1.0, 0.05)
    assert megram_params(MacroState.BREAK_SYMMETRY) == (0.75, 1.0, 0.05)
    assert megram_params(MacroState.CHANGE_PATH) == (0.30, 0.0, 0.2)
    assert megram_params(MacroState.REFINE) == (0.10, 0.5, 0.5)
    with pytest.raises(ValueError):
        megram_params(MacroState.INIT)
    with pytest.raises(ValueError):
        megram_params("bogus")


def test_slug_ascii_and_stable() -> None:
    assert slug("Fix the Login-Bug!!") == "fix-the-login-bug"
    assert slug("ＦＩＸ") == "fix"  # NFKC folds full-width
    assert slug("Straße") == slug("STRASSE")  # casefold
    # words outside the lexicon: the first three content words (filler such as "the" skipped)
    assert intent_space("Fix the login bug now") == "intent:fix_login_bug"


def test_slug_unicode_never_empty() -> None:
    zh = intent_space("修复登录页面的错误")
    emoji = intent_space("🚀🔥")
    other = intent_space("🐛 bug")
    assert zh == "intent:修复登录页面的错误"
    assert emoji.startswith("intent:") and len(emoji) > len("intent:")
    assert len({zh, emoji, other}) == 3
    assert slug("???") and slug("???") == slug("???")
    assert slug("???") != slug("!!!")
    assert intent_space("   ") != "intent:"
    assert slug("नमस्ते दुनिया") == "नमस्ते-दुनिया"


def test_tag_helpers() -> None:
    assert tool_space("shell") == "tool:shell"
    assert path_entity("/tmp/a:b") == "path:/tmp/a:b"
    assert ENV_LOCAL == "env:local"
    assert parse_blocked_target("shell:ls /nope") == ("shell", "ls /nope")
    assert parse_blocked_target("fetch:https://x.y/z") == ("fetch", "https://x.y/z")
    assert parse_blocked_target("bare") == ("?", "bare")
