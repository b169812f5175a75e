#!/usr/bin/env python3
"""alternate.py N NAME CMD... [-- NAME CMD...]...: whole processes, interleaved.

Runs each command once per round, N rounds, in the order given, so that all
see the same host load, and prints for each its median wall time, first
quartile and minimum, and its median CPU time (user + system, all threads,
from wait4). Output and errors are discarded. Example, two builds on w8a:

    python3 bench/alternate.py 30 \\
        before /tmp/adaspdc-base train -quiet -data ../shared/data/w8a -loss logistic -lambda 1e-5 -- \\
        after  /tmp/adaspdc-new  train -quiet -data ../shared/data/w8a -loss logistic -lambda 1e-5
"""
import os
import statistics
import subprocess
import sys
import time


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    rounds = int(argv[1])
    cmds, cur = [], []
    for a in argv[2:]:
        if a == "--":
            cmds.append(cur)
            cur = []
        else:
            cur.append(a)
    cmds.append(cur)
    if any(len(c) < 2 for c in cmds):
        sys.exit("alternate.py: each command needs a name and a program")
    wall = {c[0]: [] for c in cmds}
    cpu = {c[0]: [] for c in cmds}
    for _ in range(rounds):
        for c in cmds:
            t = time.perf_counter()
            p = subprocess.Popen(c[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, ru = os.wait4(p.pid, 0)
            wall[c[0]].append(time.perf_counter() - t)
            cpu[c[0]].append(ru.ru_utime + ru.ru_stime)
    for name, w in wall.items():
        w.sort()
        print(f"{name}: wall median {statistics.median(w)*1e3:.1f} ms q1 {w[len(w)//4]*1e3:.1f} "
              f"min {w[0]*1e3:.1f} | cpu median {statistics.median(cpu[name])*1e3:.1f} ms  n={len(w)}")


if __name__ == "__main__":
    main(sys.argv)
