#!/usr/bin/env bash
# Before/after Nexmark throughput of Weir on a machine whose speed drifts: runs the before and the
# after checkout alternately (before, after, before, after, ...), one run each per round and query,
# so that both see the same machine. Use a git worktree for the before checkout, e.g.
#   git worktree add /tmp/base <rev> && runner/benchmarks/interleave.sh /tmp/base "$PWD" /tmp/bench
# Writes /tmp/bench/il-{base,head}/<timestamp>/ (the driver's results) and /tmp/bench/il.txt (one
# line per run: time, round, query, side, events/s). Knobs: ROUNDS (3), QUERIES ("0 3 5 11"),
# EVENTS (1000000), NEXMARK_ARGS (more driver flags for both sides, e.g. a longer warm-up:
# "--warmup-seconds 60 --warmup-max-seconds 120"), HEAD_OPTIONS (pipeline options for the after runs only, e.g.
# "--metricsHttpPort=9464"), SCRAPE (a URL fetched every second while an after run runs, e.g.
# http://127.0.0.1:9464/metrics: a Prometheus scraping the job). Do not edit either checkout while
# it runs: bin/weir rebuilds on newer sources.
set -u
base=${1:?before checkout}; head=${2:?after checkout}; out=${3:-/tmp/bench}
mkdir -p "$out"
for rep in $(seq 1 "${ROUNDS:-3}"); do
  for q in ${QUERIES:-0 3 5 11}; do
    for side in base head; do
      dir=$base; extra=(); scraper=""
      if [ "$side" = head ]; then
        dir=$head
        [ -n "${HEAD_OPTIONS:-}" ] && extra=(-- ${HEAD_OPTIONS})
        if [ -n "${SCRAPE:-}" ]; then
          (while true; do curl -s -o /dev/null "$SCRAPE"; sleep 1; done) &
          scraper=$!
        fi
      fi
      (cd "$dir" && bin/weir nexmark --runners weir --queries "$q" --events "${EVENTS:-1000000}" --no-check-pass \
        ${NEXMARK_ARGS:-} --out "$out/il-$side" "${extra[@]}" >> "$out/il-$side.log" 2>&1)
      [ -n "$scraper" ] && kill "$scraper" 2>/dev/null
      echo "$(date +%T) rep $rep Q$q $side: $(grep 'ok,' "$out/il-$side.log" | tail -1 | sed 's/.*ok, \([^ ]*\) events.*/\1/')" >> "$out/il.txt"
    done
  done
done
echo DONE >> "$out/il.txt"
