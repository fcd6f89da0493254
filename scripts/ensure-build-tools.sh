#!/usr/bin/env bash
# The tools llama.cpp's build needs (cmake, ninja, a C++ compiler): on Debian as root, installed
# when missing; anywhere else `cobalt engine build` names the missing one in a sentence.
set -euo pipefail
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing ${missing[*]} (Debian packages, to build llama.cpp)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
