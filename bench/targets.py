#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the benchmark cases that shiftpool's performance targets name and
prints, for each target, what one run measured and whether it was met.

Every ratio is a ratio of medians from one bench run, so the rows it
compares were interleaved run by run.  Beside each ratio stands the same
ratio for the floor (the same work with no allocator at all): a target
that asks for less than the floor's own ratio is out of reach on this
machine, whatever the allocator does, and is marked so.  Targets on an
allocator's overhead compare ns/op minus the floor's ns/op of the same
case.

    bench/targets.py [--bench=bench/bench] [--pair-cost=bench/pair-cost]
                     [--pair-cost-inline=bench/pair-cost-inline]
                     [--quick] [--csv-dir=DIR] [--no-instructions]

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
# The fixed-size pools a user would pick instead of shiftpool.
FIXED = ("gslice", "dpdk", "boost-pool")
MODES = ("pool-single", "pool-locked", "pool-per-thread")
INLINE = ("pool-single-inline", "pool-per-thread-inline")
# The rows the targets compare; bench's other peers (glibc-notrim) would
# only lengthen the runs.  Rows that are not built say so and count as not
# measured.
ALLOCATORS = "--allocator=" + ",".join(
    PEERS + FIXED + MODES + INLINE + ("floor",))

# (name, bench arguments[, allocators]).  Each group is one bench run.
GROUPS = (
    ("held", ["--workload=held", "--n=50,100,500,1024,10000"]),
    ("lighttpd", ["--workload=lighttpd"]),
    ("parallel-64", ["--workload=parallel", "--len=8", "--threads=2,4"]),
    ("parallel-4k", ["--workload=parallel", "--len=512",
                     "--threads=1,2,4"]),
    ("xthread", ["--workload=xthread", "--threads=1,2"]),
    ("footprint", ["--workload=footprint", "--sizes=16"]),
    ("pair", ["--workload=pair", "--sizes=64", "--threads=1,2,4"]),
    ("bulk", ["--workload=bulk", "--sizes=64", "--threads=1"]),
    ("mixed", ["--workload=mixed", "--threads=1,2"],
     "--allocator=" + ",".join(PEERS + ("pool-set-single",
                                        "pool-set-per-thread", "floor"))),
    ("latency", ["--workload=lighttpd", "--latency"],
     "--allocator=" + ",".join(("tcmalloc", "mimalloc") + MODES + INLINE +
                               ("floor",))),
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


def run_group(bench, name, args, allocators, quick, csv_dir, commands):
    path = os.path.join(csv_dir, name + ".csv")
    command = [bench] + args + [allocators, "--csv=" + path]
    if quick:
        command.append("--quick")
    commands.append(" ".join([os.path.basename(bench)] + args +
                             [allocators] + (["--quick"] if quick else [])))
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


def overhead(rows, case, allocator):
    ns = median(rows, case, allocator)
    floor = median(rows, case, "floor")
    return ns - floor if ns is not None and floor is not None else None


def best(values):
    values = [v for v in values if v is not None]
    return min(values) if values else None


def pair_targets(report, rows):
    """Allocator overhead on pair 64 B: the pool's own path against the
    general allocators'."""
    case = "64 B T=1"
    peers = {p: overhead(rows, case, p) for p in ("tcmalloc", "mimalloc")}
    for mode, limit in (("pool-single", 0.5), ("pool-single-inline", 0.5),
                        ("pool-per-thread", 0.6),
                        ("pool-per-thread-inline", 0.6)):
        mine = overhead(rows, case, mode)
        for peer, theirs in peers.items():
            report.ratio("pair %s: %s overhead / %s's <= %.1f"
                         % (case, mode, peer, limit), div(mine, theirs),
                         limit)
    for t in (2, 4):
        case = "64 B T=%d" % t
        peer = best(overhead(rows, case, p) for p in PEERS)
        for mode in ("pool-per-thread", "pool-per-thread-inline"):
            report.ratio("pair %s: %s overhead / best peer's <= 0.6"
                         % (case, mode), div(overhead(rows, case, mode),
                                             peer), 0.6)
    single = median(rows, "64 B T=1", "pool-single")
    locked1 = median(rows, "64 B T=1", "pool-locked")
    locked2 = median(rows, "64 B T=2", "pool-locked")
    report.ratio("pair 64 B T=1: pool-locked / pool-single <= 2.0",
                 div(locked1, single), 2.0)
    report.ratio("pair 64 B T=2: pool-locked / its own T=1 <= 3.0",
                 div(locked2, locked1), 3.0)


def bulk_targets(report, bulk, pair):
    """Per block: the bulk calls against single calls (overheads, each
    over its own workload's floor), and against DPDK's bulk get/put."""
    case = "64 B T=1"
    for mode in MODES:
        report.ratio("bulk %s: %s per block / single calls' <= 0.5"
                     % (case, mode), div(overhead(bulk, case, mode),
                                         overhead(pair, case, mode)), 0.5)
        report.ratio("bulk %s: %s per block / dpdk's bulk <= 1.0"
                     % (case, mode), div(median(bulk, case, mode),
                                         median(bulk, case, "dpdk")), 1.0,
                     div(median(bulk, case, "floor"),
                         median(bulk, case, "dpdk")))


def fixed_size_targets(report, results):
    """Every pool mode at least as fast as every fixed-size pool, in every
    case both ran where the pool serves every request itself (a case past
    its size measures its fallback, the system allocator, where a growing
    pool such as boost's grows): the worst case of each workload."""
    for name in ("held", "lighttpd", "parallel-64", "parallel-4k",
                 "xthread", "pair", "bulk"):
        rows = results[name]
        cases = sorted({c for (c, a) in rows})
        for mode in MODES + INLINE:
            worst = worst_floor = None
            for case in cases:
                row = rows.get((case, mode))
                if row is None or int(row["fallback_allocs"] or 0) > 0:
                    continue
                fixed = best(median(rows, case, f) for f in FIXED)
                ratio = div(median(rows, case, mode), fixed)
                if ratio is not None and (worst is None or ratio > worst):
                    worst = ratio
                    worst_floor = div(median(rows, case, "floor"), fixed)
            if worst is None:
                continue
            report.ratio("fixed-size %s: %s / fastest fixed-size pool, "
                         "worst case <= 1.00" % (name, mode), worst, 1.00,
                         worst_floor)


def mixed_targets(report, rows):
    for t in (1, 2):
        case = "T=%d" % t
        floor = median(rows, case, "floor")
        for mode in ("pool-set-single", "pool-set-per-thread"):
            ns = median(rows, case, mode)
            for peer in ("tcmalloc", "mimalloc"):
                theirs = median(rows, case, peer)
                report.ratio("mixed %s: %s / %s <= 1.00" % (case, mode, peer),
                             div(ns, theirs), 1.00, div(floor, theirs))


def latency_targets(report, rows):
    case = "fixed order"
    for column, what in (("alloc_p999_ns", "p99.9"),
                         ("alloc_p9999_ns", "p99.99")):
        def get(allocator):
            row = rows.get((case, allocator))
            return float(row[column]) if row and row[column] else None
        for mode in ("pool-single", "pool-per-thread"):
            for peer in ("tcmalloc", "mimalloc"):
                report.ratio("latency lighttpd %s: %s / %s <= 0.05"
                             % (what, mode, peer),
                             div(get(mode), get(peer)), 0.05,
                             div(get("floor"), get(peer)))


def callgrind_count(pair_cost, mode, count):
    """Instructions of the whole run of pair-cost: the pairs with their
    loop, and the set-up that the difference of two counts cancels."""
    env = dict(os.environ, SHIFTPOOL_DEBUG="no-valgrind")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
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


def instruction_targets(report, pair_cost, pair_cost_inline, quick, skip):
    why_not = skip
    if why_not is None and shutil.which("valgrind") is None:
        why_not = "valgrind not found"
    small, large = (1000, 2000) if quick else (100000, 200000)

    def pair(program, mode):
        if why_not is not None:
            return None
        a = callgrind_count(program, mode, small)
        b = callgrind_count(program, mode, large)
        return (b - a) / (large - small)

    counts = {}
    for mode, limit in (("single", 40), ("locked", 110), ("per-thread", 54)):
        counts[mode] = pair(pair_cost, mode)
        report.count("instructions, one pool_malloc + pool_free pair with "
                     "its loop, %s <= %d" % (mode, limit), counts[mode],
                     limit, why_not)
    for mode, limit in (("single", 40), ("per-thread", 54)):
        inline_why = why_not
        if inline_why is None and not os.access(pair_cost_inline, os.X_OK):
            inline_why = "no inline paths in this build"
        value = None if inline_why else pair(pair_cost_inline, mode)
        report.count("instructions, one pair with its loop, inline "
                     "(SHIFTPOOL_INLINE), %s <= %d" % (mode, limit), value,
                     limit, inline_why)
    for mode in ("single", "locked", "per-thread"):
        value = pair(pair_cost, "set-" + mode)
        limit = counts[mode] + 12 if counts[mode] is not None else 0
        report.count("instructions, one pool_set_malloc + pool_set_free "
                     "pair, set-%s <= %s's + 12" % (mode, mode), value,
                     limit, why_not)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Measures shiftpool against its performance targets.")
    parser.add_argument("--bench", default=os.path.join(here, "bench"))
    parser.add_argument("--pair-cost",
                        default=os.path.join(here, "pair-cost"))
    parser.add_argument("--pair-cost-inline",
                        default=os.path.join(here, "pair-cost-inline"))
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
        results = {group[0]: run_group(options.bench, group[0], group[1],
                                       group[2] if len(group) > 2
                                       else ALLOCATORS, options.quick,
                                       csv_dir, commands)
                   for group in GROUPS}

    report = Report()
    held_targets(report, results["held"])
    lighttpd_targets(report, results["lighttpd"])
    parallel_targets(report, results["parallel-64"],
                     results["parallel-4k"])
    xthread_targets(report, results["xthread"])
    footprint_targets(report, results["footprint"])
    pair_targets(report, results["pair"])
    bulk_targets(report, results["bulk"], results["pair"])
    fixed_size_targets(report, results)
    mixed_targets(report, results["mixed"])
    latency_targets(report, results["latency"])
    instruction_targets(report, options.pair_cost, options.pair_cost_inline,
                        options.quick,
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
          "pair-cost[-inline] MODE N, (count(2N) - count(N)) / N: one "
          "pair with its loop")
    print("floor:    the same ratio for the floor (no allocator); a target "
          "the floor misses too is out of reach")
    if options.quick:
        print("(--quick: a smoke run, not a measurement)")
    print()
    report.print()


if __name__ == "__main__":
    main()
