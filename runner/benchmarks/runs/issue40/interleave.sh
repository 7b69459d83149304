#!/usr/bin/env bash
# A B A B: base (dae1256, /tmp/base: Weir for Beam 2.70) and head (/work/main: Weir for Beam 2.73 with
# the TestStream/metadata changes), one run each per round, per query
set -u
for rep in 1 2 3; do
  for q in 0 3 5 11; do
    for side in base head; do
      dir=/tmp/base; [ $side = head ] && dir=/work/main
      (cd $dir && bin/weir nexmark --runners weir --queries $q --events 1000000 --no-check-pass --out /tmp/bench/il-$side >> /tmp/bench/il-$side.log 2>&1)
      echo "$(date +%T) rep $rep Q$q $side: $(grep 'ok,' /tmp/bench/il-$side.log | tail -1 | sed 's/.*ok, \([^ ]*\) events.*/\1/')" >> /tmp/bench/il.txt
    done
  done
done
echo DONE >> /tmp/bench/il.txt
