#!/bin/sh
# The main job: build ktune, then tune examples/vector_add on the GPU when a
# CUDA driver and GPU are present. Without one it REPLAYS real measurements
# recorded on an H100 (examples/data/), says so, and runs the same tuning loop,
# strategies and database on them. Results land in ./ktune-demo.db.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target ktune
DB=ktune-demo.db
if ./build/ktune devices; then
  echo "== GPU found: tuning examples/vector_add/vector_add.yaml for real"
  ./build/ktune tune examples/vector_add/vector_add.yaml --db "$DB"
else
  echo "== No usable GPU here: REPLAYING measurements recorded on an NVIDIA H100 (examples/data/)"
  echo "== (every time printed below was measured on that H100 by ktune; nothing runs on a GPU now)"
  ./build/ktune tune templates/vector_add/vector_add.yaml --simulate examples/data/vector_add_h100.json \
      --max-fevals 60 --db "$DB"
fi
./build/ktune best --db "$DB"
