#!/usr/bin/env bash
# The main job, on the sample videos in testdata/: filled in as the engine grows.
set -euo pipefail
cd "$(dirname "$0")/.."
bin/framesweep version
