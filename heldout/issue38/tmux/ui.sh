#!/bin/bash
# ui.sh NAME URL [extra args]
source /tmp/adv/env.sh $1 $2
cd $H/ws
shift 2
exec ${AGENTUI_REPO:-/work/wt/adv38}/.venv/bin/agentui "$@"
