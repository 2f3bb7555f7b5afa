#!/bin/bash
# ui2.sh NAME : reopen with the existing home
H=/tmp/adv/h-$1; export HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share XDG_CACHE_HOME=$H/.cache AGENTUI_NO_AUTODETECT=1
cd $H/ws; shift; exec ${AGENTUI_REPO:-/work/wt/adv38}/.venv/bin/agentui "$@"
