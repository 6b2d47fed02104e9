#!/usr/bin/env bash
# Debian's Chromium, which the report test renders report.html in (headless). Installed with
# apt-get when missing; prints its path.
set -euo pipefail
if ! command -v chromium >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q chromium >&2 || { apt-get update -q >&2 && apt-get install -y -q chromium >&2; }
fi
command -v chromium
