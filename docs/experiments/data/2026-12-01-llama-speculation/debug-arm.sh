#!/bin/bash
# Issue 48, session 16: the ngram-simple arm (server.llama.speculative, the s16 worktree's code).
cd /work/wt16
v=${ARM:-ngram-simple}
rm -rf /root/runs/s16/spec/home-$v
date -u +%FT%TZ > /root/runs/s16/spec/$v.started
COBALT__SERVER__LLAMA__SPECULATIVE=$v COBALT_HOME=/root/runs/s16/spec/home-$v COBALT__PATHS__CACHE_DIR=/root/.cache/cobalt /work/main/.venv/bin/python -m assistant.cli bench debug --set debug --sample 16 --modes model --turns 1 --model qwen-coder-1.5b --out /root/runs/s16/spec/$v.json > /root/runs/s16/spec/$v.log 2>&1
echo "rc $?" >> /root/runs/s16/spec/$v.log
pkill -f "llama-server.*--port 8011"
date -u +%FT%TZ > /root/runs/s16/spec/$v.ended
