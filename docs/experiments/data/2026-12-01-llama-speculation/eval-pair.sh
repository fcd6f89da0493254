#!/bin/bash
# Issue 48, session 16: does n-gram speculation slow a 4-slot evaluation? humaneval val, 16 tasks, 2 turns, greedy.
cd /work/wt16
for v in none ngram-simple; do
  rm -rf /root/runs/s16/spec/eval-home-$v
  date -u +%FT%TZ > /root/runs/s16/spec/eval-$v.started
  COBALT__SERVER__LLAMA__SPECULATIVE=$v COBALT_HOME=/root/runs/s16/spec/eval-home-$v COBALT__PATHS__CACHE_DIR=/root/.cache/cobalt /work/main/.venv/bin/python -m assistant.cli eval -b humaneval --split val --limit 16 --turns 2 --temperature 0 --model qwen-coder-1.5b --adapter base --out /root/runs/s16/spec/eval-$v > /root/runs/s16/spec/eval-$v.log 2>&1
  echo "rc $?" >> /root/runs/s16/spec/eval-$v.log
  pkill -f "llama-server.*--port 8011"; sleep 2
  date -u +%FT%TZ > /root/runs/s16/spec/eval-$v.ended
done
