#!/usr/bin/env bash
# Same code, scraped once a second vs not, at steady state (long warm-up, 30 s measured), in ABBA
# order (scrape off, off scrape, ...) so that neither mode always runs first in a round.
cd "${1:-.}"
out=${OUT:-/tmp/abba}; mkdir -p $out
for rep in $(seq 1 "${ROUNDS:-4}"); do
  if (( rep % 2 == 1 )); then modes="scrape off"; else modes="off scrape"; fi
  for mode in $modes; do
    extra=(); sc=""
    [ "$mode" = scrape ] && extra=(-- --metricsHttpPort=9464)
    if [ "$mode" = scrape ]; then (while true; do curl -s -o /dev/null http://127.0.0.1:9464/metrics; sleep 1; done) & sc=$!; fi
    bin/weir nexmark --runners weir --queries "${Q:-0}" --events 1000000 --no-check-pass --warmup-seconds 60 --warmup-max-seconds 120 --measured-seconds 30 --out $out/$mode "${extra[@]}" >> $out/$mode.log 2>&1
    [ -n "$sc" ] && kill $sc
    echo "$(date +%T) rep $rep $mode: $(grep 'ok,' $out/$mode.log | tail -1 | sed 's/.*ok, \([^ ]*\) events.*/\1/')" >> $out/order.txt
  done
done
echo DONE >> $out/order.txt
