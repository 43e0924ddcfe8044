#!/usr/bin/env python3
"""Turn run-compare.sh's results.csv into log-log PNG plots.

One PNG per benchmark and placement (e.g. osu_latency_D-D.png), one line per
library: AMPI-UCX vs Open MPI, plus ucx_perftest where measured and NCCL on
the device all-reduce (osu_allreduce_D-D.png, and its bus bandwidth in
osu_allreduce_busbw_D-D.png). Run it wherever matplotlib is installed (the
GPU machine need not have it): osu/plot.py DIR/results.csv [MORE.csv ...] [--out DIR]
Several CSVs (e.g. one per scripts/device.sh action) are merged; a series
measured twice keeps the rows of the last file that has it.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

LIBRARY_LABELS = {
    "ampi-ucx": "AMPI-UCX",
    "openmpi": "Open MPI",
    "ucx-perftest": "ucx_perftest (raw UCX)",
    "nccl": "NCCL (ncclAllReduce)",
}

# Libraries in legend order: ours first, the references last.
LIBRARY_ORDER = ["ampi-ucx", "openmpi", "nccl", "ucx-perftest"]

# Collectives put every buffer on one side: their placement names that side.
COLLECTIVES = {"osu_allreduce", "osu_allreduce_busbw", "osu_bcast", "osu_reduce",
               "osu_allgather", "osu_alltoall", "osu_barrier",
               "osu_halo_persistent"}
BANDWIDTH_UNITS = {"MB/s", "GB/s"}


def read_results(paths):
    """Returns {(benchmark, placement): {library: [(size, value)]}} and units."""
    series = defaultdict(lambda: defaultdict(list))
    units = {}
    for path in paths:
        from_this_file = defaultdict(lambda: defaultdict(list))
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                size, value = int(row["size"]), float(row["value"])
                # A log axis has no place for 0-byte messages or failed runs.
                if size <= 0 or value <= 0:
                    continue
                key = (row["benchmark"], row["placement"])
                from_this_file[key][row["library"]].append((size, value))
                units[key] = row["unit"]
        # A later file replaces a series rather than mixing two runs' points.
        for key, by_library in from_this_file.items():
            series[key].update(by_library)
    return series, units


def plot_one(pyplot, key, by_library, unit, out_dir):
    benchmark, placement = key
    figure, axes = pyplot.subplots(figsize=(7, 4.5))
    order = {name: k for k, name in enumerate(LIBRARY_ORDER)}
    for library in sorted(by_library, key=lambda name: (order.get(name, len(order)), name)):
        points = sorted(by_library[library])
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                  markersize=3, label=LIBRARY_LABELS.get(library, library))
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("message size (bytes)")
    is_bandwidth = unit in BANDWIDTH_UNITS
    better = "higher" if is_bandwidth else "lower"
    quantity = "bus bandwidth" if benchmark.endswith("_busbw") else "bandwidth" if is_bandwidth else "latency"
    axes.set_ylabel(f"{quantity} ({unit}), {better} is better")
    if benchmark in COLLECTIVES:
        where = {"H": "host", "D": "device"}.get(placement.split("-")[0], placement)
        axes.set_title(f"{benchmark}, buffers on the {where}")
    else:
        axes.set_title(f"{benchmark}, buffers {placement.replace('-', ' -> ')}")
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend()
    figure.tight_layout()
    path = os.path.join(out_dir, f"{benchmark}_{placement}.png")
    figure.savefig(path, dpi=120)
    pyplot.close(figure)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.csv files written by run-compare.sh")
    parser.add_argument("--out", help="folder for the PNGs (default: beside the first results.csv)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        sys.exit("plot.py needs matplotlib (pip install matplotlib, or apt-get install python3-matplotlib)")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.results[0]))
    os.makedirs(out_dir, exist_ok=True)
    series, units = read_results(args.results)
    if not series:
        sys.exit(f"no plottable rows in {', '.join(args.results)}")
    for key in sorted(series):
        print(plot_one(pyplot, key, series[key], units[key], out_dir))


if __name__ == "__main__":
    main()
