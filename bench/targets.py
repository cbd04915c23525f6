#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the benchmark cases that shiftpool's performance targets name and
prints, for each target, what one run measured and whether it was met.

Every ratio is a ratio of medians from one bench run, so the rows it
compares were interleaved run by run.  Beside each ratio stands the same
ratio for the floor (the same work with no allocator at all): a target
that asks for less than the floor's own ratio is out of reach on this
machine, whatever the allocator does, and is marked so.

    bench/targets.py [--bench=bench/bench] [--pair-cost=bench/pair-cost]
                     [--quick] [--csv-dir=DIR]

The instruction counts come from valgrind's callgrind, when valgrind is
installed; otherwise their rows say so.  Exit status: 0 when every case
ran (met or not), 1 when a run failed, 2 for bad usage.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time

PEERS = ("glibc", "tcmalloc", "jemalloc", "mimalloc")
# The rows the targets compare; bench's other peers (glibc-notrim) would
# only lengthen the runs.
ALLOCATORS = "--allocator=" + ",".join(
    PEERS + ("pool-single", "pool-locked", "pool-per-thread", "floor"))

# (name, bench arguments).  Each group is one bench run.
GROUPS = (
    ("held", ["--workload=held", "--n=50,100,500,1024,10000"]),
    ("lighttpd", ["--workload=lighttpd"]),
    ("parallel-64", ["--workload=parallel", "--len=8", "--threads=2,4"]),
    ("parallel-4k", ["--workload=parallel", "--len=512",
                     "--threads=1,2,4"]),
    ("xthread", ["--workload=xthread", "--threads=1,2"]),
    ("footprint", ["--workload=footprint", "--sizes=16"]),
)

# footprint at 16-byte blocks: RSS beyond the blocks' bytes, % of them.
FOOTPRINT_LIMITS = (("pool-single", 2.0), ("pool-locked", 2.0),
                    ("pool-per-thread", 4.0))


def fail(message):
    print("targets: " + message, file=sys.stderr)
    sys.exit(1)


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d CPUs online, %s %s" % (model, os.cpu_count() or 0,
                                          os.uname().sysname,
                                          os.uname().release)


def run_group(bench, name, args, quick, csv_dir, commands):
    path = os.path.join(csv_dir, name + ".csv")
    command = [bench] + args + [ALLOCATORS, "--csv=" + path]
    if quick:
        command.append("--quick")
    commands.append(" ".join([os.path.basename(bench)] + args +
                             [ALLOCATORS] + (["--quick"] if quick else [])))
    print("targets: " + " ".join(command), file=sys.stderr)
    done = subprocess.run(command, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        fail("%s exited with %d" % (" ".join(command), done.returncode))
    rows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["status"] == "ok":
                rows[(row["case"], row["allocator"])] = row
            elif row["status"] == "failed":
                # bench fails too then; a row that failed is no result.
                fail("%s %s %s failed: %s" % (name, row["case"],
                                              row["allocator"],
                                              row["message"]))
    return rows


def median(rows, case, allocator):
    row = rows.get((case, allocator))
    return float(row["ns_per_op_median"]) if row else None


class Report:
    def __init__(self):
        self.lines = []
        self.met = self.missed = self.unreachable = self.absent = 0

    def ratio(self, what, value, limit, floor=None, higher_is_better=False):
        """One target: value compared with limit; floor is the floor's
        own value of the same ratio, when there is one."""
        if value is None:
            self.absent += 1
            self.lines.append((what, "-", "-", "not measured (not built)"))
            return
        ok = value >= limit if higher_is_better else value <= limit
        bound = ""
        verdict = "met" if ok else "missed"
        if floor is not None:
            bound = "%.2f" % floor
            floor_ok = floor >= limit if higher_is_better else floor <= limit
            if not ok and not floor_ok:
                verdict = "out of reach"
        if verdict == "met":
            self.met += 1
        elif verdict == "missed":
            self.missed += 1
        else:
            self.unreachable += 1
        self.lines.append((what, "%.2f" % value, bound, verdict))

    def count(self, what, value, limit, why_not=None):
        if value is None:
            self.absent += 1
            self.lines.append((what, "-", "-",
                               "not measured (%s)" % why_not))
            return
        ok = value <= limit
        self.met += ok
        self.missed += not ok
        self.lines.append((what, "%.1f" % value, "",
                           "met" if ok else "missed"))

    def print(self):
        width = max(len(line[0]) for line in self.lines)
        print("%-*s  %8s  %8s  %s" % (width, "target", "measured", "floor",
                                      "verdict"))
        for what, value, bound, verdict in self.lines:
            print("%-*s  %8s  %8s  %s" % (width, what, value, bound,
                                          verdict))
        print()
        print("%d met, %d missed, %d out of reach (the floor itself "
              "misses them), %d not measured"
              % (self.met, self.missed, self.unreachable, self.absent))


def div(a, b):
    return a / b if a is not None and b else None


def held_targets(report, rows):
    for n in (50, 100, 500, 1024):
        case = "N=%d" % n
        pool = median(rows, case, "pool-single")
        tc = median(rows, case, "tcmalloc")
        floor = median(rows, case, "floor")
        report.ratio("held %s: pool-single / tcmalloc <= 0.70" % case,
                     div(pool, tc), 0.70, div(floor, tc))
        report.ratio("held %s: pool-single / floor <= 1.50" % case,
                     div(pool, floor), 1.50)
    for n in (500, 1024, 10000):
        case = "N=%d" % n
        pool = median(rows, case, "pool-single")
        glibc = median(rows, case, "glibc")
        floor = median(rows, case, "floor")
        report.ratio("held %s: pool-single / glibc <= 0.10" % case,
                     div(pool, glibc), 0.10, div(floor, glibc))


def lighttpd_targets(report, rows):
    case = "fixed order"
    pool = median(rows, case, "pool-single")
    floor = median(rows, case, "floor")
    glibc = median(rows, case, "glibc")
    tc = median(rows, case, "tcmalloc")
    report.ratio("lighttpd: pool-single / glibc <= 0.10", div(pool, glibc),
                 0.10, div(floor, glibc))
    report.ratio("lighttpd: pool-single / tcmalloc <= 0.95", div(pool, tc),
                 0.95, div(floor, tc))
    report.ratio("lighttpd: pool-single / floor <= 1.05", div(pool, floor),
                 1.05)
    for mode in ("pool-locked", "pool-per-thread"):
        report.ratio("lighttpd: %s / tcmalloc <= 1.00" % mode,
                     div(median(rows, case, mode), tc), 1.00,
                     div(floor, tc))
    rss = {a: float(r["peak_rss_kib"]) for (c, a), r in rows.items()
           if c == case}
    lowest = min((rss[a] for a in PEERS if a in rss), default=None)
    for mode in ("pool-single", "pool-locked", "pool-per-thread"):
        report.ratio("lighttpd: %s peak RSS / lowest peer's <= 1.00" % mode,
                     div(rss.get(mode), lowest), 1.00,
                     div(rss.get("floor"), lowest))


def parallel_targets(report, small, large):
    # ops/s ratios: the other row's ns over this row's.
    for t in (2, 4):
        case = "T=%d" % t
        pool = median(small, case, "pool-per-thread")
        floor = median(small, case, "floor")
        for other, limit in (("tcmalloc", 1.5), ("mimalloc", 1.5),
                             ("pool-locked", 3.0)):
            ns = median(small, case, other)
            report.ratio("parallel 64 B %s: per-thread ops/s / %s >= %.1f"
                         % (case, other, limit), div(ns, pool), limit,
                         div(ns, floor), higher_is_better=True)
    for t in (1, 2, 4):
        case = "T=%d" % t
        pool = median(large, case, "pool-per-thread")
        floor = median(large, case, "floor")
        for peer in PEERS:
            ns = median(large, case, peer)
            report.ratio("parallel 4 KiB %s: per-thread ns / %s <= 1.00"
                         % (case, peer), div(pool, ns), 1.00,
                         div(floor, ns))


def xthread_targets(report, rows):
    for case in ("1+1", "2+2"):
        pool = median(rows, case, "pool-per-thread")
        floor = median(rows, case, "floor")
        for peer in ("tcmalloc", "mimalloc"):
            ns = median(rows, case, peer)
            report.ratio("xthread %s: per-thread ns / %s <= 1.00"
                         % (case, peer), div(pool, ns), 1.00,
                         div(floor, ns))


def footprint_targets(report, rows):
    overhead = {a: float(r["footprint_overhead_pct"])
                for (c, a), r in rows.items() if r["size"] == "16"}
    for mode, limit in FOOTPRINT_LIMITS:
        report.ratio("footprint 16 B: %s RSS overhead %% <= %.0f"
                     % (mode, limit), overhead.get(mode), limit,
                     overhead.get("floor"))


def callgrind_count(pair_cost, mode, count):
    env = dict(os.environ, SHIFTPOOL_DEBUG="no-valgrind")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         "--toggle-collect=pool_malloc", "--toggle-collect=pool_free",
         pair_cost, mode, str(count)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        universal_newlines=True)
    if done.returncode != 0:
        fail("callgrind of %s %s %d failed:\n%s"
             % (pair_cost, mode, count, done.stderr))
    for line in done.stderr.splitlines():
        if "refs:" in line:
            return int(line.split("refs:")[1].replace(",", ""))
    fail("no instruction count in callgrind's output")


def instruction_targets(report, pair_cost, quick, skip):
    why_not = skip
    if why_not is None and shutil.which("valgrind") is None:
        why_not = "valgrind not found"
    small, large = (1000, 2000) if quick else (100000, 200000)
    for mode, limit in (("single", 40), ("locked", 110), ("per-thread", 54)):
        value = None
        if why_not is None:
            a = callgrind_count(pair_cost, mode, small)
            b = callgrind_count(pair_cost, mode, large)
            value = (b - a) / (large - small)
        report.count("instructions, one pool_malloc + pool_free pair, %s "
                     "<= %d" % (mode, limit), value, limit, why_not)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Measures shiftpool against its performance targets.")
    parser.add_argument("--bench", default=os.path.join(here, "bench"))
    parser.add_argument("--pair-cost",
                        default=os.path.join(here, "pair-cost"))
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: bench --quick, short counts "
                        "(not a measurement)")
    parser.add_argument("--csv-dir",
                        help="keep each run's CSV in this directory")
    parser.add_argument("--no-instructions", action="store_true",
                        help="skip the callgrind counts (a sanitized "
                        "build: valgrind and the sanitizers do not mix)")
    options = parser.parse_args()

    for program in (options.bench, options.pair_cost):
        if not os.access(program, os.X_OK):
            print("targets: %s is not a program; build first (make)"
                  % program, file=sys.stderr)
            sys.exit(2)

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = load_average()
    commands = []
    with tempfile.TemporaryDirectory() as scratch:
        csv_dir = options.csv_dir or scratch
        os.makedirs(csv_dir, exist_ok=True)
        results = {name: run_group(options.bench, name, args, options.quick,
                                   csv_dir, commands)
                   for name, args in GROUPS}

    report = Report()
    held_targets(report, results["held"])
    lighttpd_targets(report, results["lighttpd"])
    parallel_targets(report, results["parallel-64"],
                     results["parallel-4k"])
    xthread_targets(report, results["xthread"])
    footprint_targets(report, results["footprint"])
    instruction_targets(report, options.pair_cost, options.quick,
                        "skipped" if options.no_instructions else None)

    print("shiftpool performance targets, %s" % started)
    print("machine:  %s" % machine())
    print("load:     %s before, %s after (1, 5, 15 minute averages)"
          % (load_before, load_average()))
    print("runs:     one bench run per line; every ratio is of two medians "
          "of one run")
    for command in commands:
        print("          " + command)
    print("          instructions: valgrind --tool=callgrind "
          "--toggle-collect=pool_malloc --toggle-collect=pool_free "
          "pair-cost MODE N, (count(2N) - count(N)) / N")
    print("floor:    the same ratio for the floor (no allocator); a target "
          "the floor misses too is out of reach")
    if options.quick:
        print("(--quick: a smoke run, not a measurement)")
    print()
    report.print()


if __name__ == "__main__":
    main()
