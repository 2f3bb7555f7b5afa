#!/bin/bash
# start_evil.sh NAME MODE [OTHER_URL]: starts evil_server.py in MODE, adds it as MCP server NAME; prints its URL
source "$(dirname "$0")/env.sh"
rm -f /tmp/oatest/$1.port
nohup $PY heldout/oauth/evil_server.py /tmp/oatest/$1.port $2 --log /tmp/oatest/evil.log ${3:+--other $3} > /tmp/oatest/$1.out 2>&1 &
echo $! > /tmp/oatest/$1.pid
for i in $(seq 50); do [ -s /tmp/oatest/$1.port ] && break; sleep 0.1; done
U=http://127.0.0.1:$(cat /tmp/oatest/$1.port)/mcp
$A mcp remove $1 >/dev/null 2>&1
$A mcp add --url $U $1 >/dev/null
echo $U
