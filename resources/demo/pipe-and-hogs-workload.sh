#!/bin/sh
( timeout 0.3 sh -c 'while :; do :; done' ) &
( nice -n 5 timeout 0.3 sh -c 'while :; do :; done' ) &
sleep 0.05
perf bench sched pipe -l 200 >/dev/null 2>&1
wait
