#!/usr/bin/env bash
# Same code, three settings, alternately: scrape (server + 1/s scrape), server (no scrape), off.
cd "${1:-.}"
for rep in 1 2 3 4; do
  for mode in scrape off; do
    extra=(); sc=""
    [ "$mode" != off ] && extra=(-- --metricsHttpPort=9464)
    if [ "$mode" = scrape ]; then (while true; do curl -s -o /dev/null http://127.0.0.1:9464/metrics; sleep 1; done) & sc=$!; fi
    bin/weir nexmark --runners weir --queries 5 --events 1000000 --no-check-pass --out /tmp/samecode/$mode "${extra[@]}" >> /tmp/samecode/$mode.log 2>&1
    [ -n "$sc" ] && kill $sc
    echo "$(date +%T) rep $rep $mode: $(grep 'ok,' /tmp/samecode/$mode.log | tail -1 | sed 's/.*ok, \([^ ]*\) events.*/\1/')" >> /tmp/samecode/abc.txt
  done
done
echo DONE >> /tmp/samecode/abc.txt
