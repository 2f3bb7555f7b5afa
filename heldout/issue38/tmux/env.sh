# usage: source /tmp/adv/env.sh NAME URL
H=/tmp/adv/h-$1; rm -rf $H; mkdir -p $H/.config/agentui $H/ws
export HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share XDG_CACHE_HOME=$H/.cache AGENTUI_NO_AUTODETECT=1
unset AGENTUI_CONFIG AGENTUI_DATA_DIR OPENAI_API_KEY OPENAI_BASE_URL
if [ -n "$2" ]; then printf '[llm]\nbase_url = "%s"\nmodel = "fake-model"\n' "$2" > $H/.config/agentui/config.toml; fi
printf 'one two three\nfour five\nsix\nseven eight nine ten\neleven\ntwelve\nthirteen\n' > $H/ws/notes.txt
