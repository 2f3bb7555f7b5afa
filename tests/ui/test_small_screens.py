"""80×24 and below: every action's result is on screen, the footer under a dialog names what its
keys do, and at 60×18 the bus and the result keep rows of their own."""

from __future__ import annotations

from textual.widgets import Input

from agentui.contracts import ConfirmationRequest
from agentui.ui.modals import ConfirmModal
from tests.ui.test_app import wait_for
from tests.ui.test_product import _closed_port, _no_llm_app
from tests.ui.test_slow_model import _app


async def test_the_footer_under_an_approval_says_esc_denies(fakellm, tmp_path):
    app = _app(fakellm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        req = ConfirmationRequest(request_id="r1", task_id="t1", tool="shell", command="rm -rf build",
                                  reasons=["rm deletes build"], scopes=["once", "task"])
        answers = []
        app.push_screen(ConfirmModal(req), answers.append)
        from textual.widgets import Footer
        from textual.widgets._footer import FooterKey

        await wait_for(pilot, lambda: app.screen.query(FooterKey))  # drawn a frame or two after the dialog
        keys = {k.description: k.key_display for k in app.screen.query(FooterKey)}
        assert keys.get("Deny") == "esc" and "Abort task" not in keys, keys
        assert app.screen.query_one(Footer).region.y == 23  # it covers the main screen's footer
        await pilot.press("escape")
        await wait_for(pilot, lambda: answers)
        assert answers[0].value == "deny"


async def test_at_60x18_the_bus_and_the_result_keep_rows(fakellm, tmp_path):
    app = _app(fakellm, tmp_path)
    async with app.run_test(size=(60, 18)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        app.query_one("#hint").display = True  # a first run: the hint is up
        await pilot.pause(0.1)
        assert app.query_one("#bus").region.height >= 3, app.query_one("#bus").region
        assert app.query_one("#result-box").region.height >= 2, app.query_one("#result-box").region
        assert app.query_one("#task").region.height >= 1 and app.query_one("#task").region.bottom <= 17


async def test_detect_probes_the_url_typed_beside_it(fakellm, tmp_path):
    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        scr = app.screen
        scr.query_one("#set-url", Input).value = fakellm.base_url.removesuffix("/v1")  # host:port is enough
        scr.query_one("#detect").press()
        await wait_for(pilot, lambda: scr.found, steps=100)
        assert scr.found[0].name == "typed URL" and scr.found[0].base_url == fakellm.base_url, scr.found
        status = scr.query_one("#set-status")
        assert "typed URL" in str(status.render()) and status.region.bottom <= 23


async def test_save_on_a_refusing_endpoint_says_so_on_screen_at_80x24(tmp_path):
    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        scr = app.screen
        scr.query_one("#set-url", Input).value = f"http://127.0.0.1:{_closed_port()}/v1"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "not saved" in str(scr.query_one("#set-status").render()), steps=200)
        assert scr.query_one("#set-status").region.bottom <= 23  # on screen, not below the fold
        await pilot.press("ctrl+s")  # again: saved anyway
        await wait_for(pilot, lambda: (tmp_path / "c.toml").exists(), steps=200)


async def test_at_60x18_the_footer_offers_abort_only_while_a_task_runs(fakellm, tmp_path):
    from textual.widgets._footer import FooterKey

    from tests.fakellm import Reply
    from tests.ui.test_app import make_app, script_happy, type_task

    script_happy(fakellm)
    fakellm._scripts["executor"].clear()
    fakellm.script("executor", [Reply.json({"tool": "shell", "args": {"command": "echo 2"}}, delay_s=1.5),
                                Reply.json({"tool": "finish", "output": "2"})])
    app = make_app(fakellm, tmp_path)

    def keys() -> dict[str, str]:
        return {k.description: k.key_display for k in app.screen.query(FooterKey)}

    async with app.run_test(size=(60, 18)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None and keys())
        assert "Abort task" not in keys(), keys()
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: keys().get("Abort task") == "esc")  # offered while it runs
        await wait_for(pilot, lambda: app.current is None)
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: keys() and "Abort task" not in keys())
        await pilot.pause(0.3)
        assert "Abort task" not in keys(), keys()
        app.query_one("#bus").focus()  # Esc with no task still brings the input back
        await pilot.pause(0.05)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.focused is app.query_one("#task"))
