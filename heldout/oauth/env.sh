# source me: the isolated environment of the OAuth cases (HOME, config, data dir, stand-in browser)
export HOME=/tmp/oatest/home XDG_CONFIG_HOME=/tmp/oatest/home/.config AGENTUI_CONFIG=/tmp/oatest/config.toml AGENTUI_DATA_DIR=/tmp/oatest/data
export BROWSER="/work/wt/oatest/.venv/bin/python /work/wt/oatest/tests/mcpserver/browser.py %s"
export AGENTUI_TEST_BROWSER_LOG=/tmp/oatest/browser.log
A=/work/wt/oatest/.venv/bin/agentui
PY=/work/wt/oatest/.venv/bin/python
cd /work/wt/oatest
