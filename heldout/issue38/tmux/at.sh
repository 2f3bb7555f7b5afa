#!/bin/bash
# at.sh SESSION PORT 'goal' : send goal, show toast area and perceiver prompt tail
: > /tmp/adv/req-$2.jsonl
tmux send-keys -t $1 -l "$3"; tmux send-keys -t $1 Enter; sleep ${4:-4}
echo "--- screen (bottom)"; tmux capture-pane -p -t $1 | tail -${5:-8}
echo "--- perceiver text"
python3 - $2 <<'P'
import json,sys
rows=[json.loads(l) for l in open(f'/tmp/adv/req-{sys.argv[1]}.jsonl')]
for r in rows:
    if r['role']=='perceiver':
        t=r['text']; print(t[t.find('User message:'):][:700]); break
else: print('(no perceiver call)')
P
