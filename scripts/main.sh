#!/usr/bin/env bash
# The main job: Neural-BO and random search on Ackley-10 (paper noise), 10 initial points,
# 200 iterations, 4 seeds vmapped. Progress bars while it runs, a summary table at the end,
# results (histories.npz, config.json, summary.md, regret.png) in results/ackley10 (or $1).
source "$(dirname "${BASH_SOURCE[0]}")/_setup.sh"
out="${1:-results/ackley10}"
exec $UV run --locked nbo-jax run --algorithm neural-bo,random --problem ackley --dim 10 \
  --noise paper --n-init 10 --iterations 200 --seeds 4 --out "$out"
