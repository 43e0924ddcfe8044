#!/usr/bin/env python3
"""Turn run-compare.sh's results.csv into log-log PNG plots.

One PNG per benchmark and placement (e.g. osu_latency_D-D.png), one line per
library. Run it wherever matplotlib is installed (not needed on the GPU
machine): osu/plot.py DIR/results.csv [--out DIR]
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
}


def read_results(path):
    """Returns {(benchmark, placement): {library: [(size, value)]}} and units."""
    series = defaultdict(lambda: defaultdict(list))
    units = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            size, value = int(row["size"]), float(row["value"])
            # A log axis has no place for 0-byte messages or failed runs.
            if size <= 0 or value <= 0:
                continue
            key = (row["benchmark"], row["placement"])
            series[key][row["library"]].append((size, value))
            units[key] = row["unit"]
    return series, units


def plot_one(pyplot, key, by_library, unit, out_dir):
    benchmark, placement = key
    figure, axes = pyplot.subplots(figsize=(7, 4.5))
    for library in sorted(by_library):
        points = sorted(by_library[library])
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                  markersize=3, label=LIBRARY_LABELS.get(library, library))
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("message size (bytes)")
    better = "higher" if unit == "MB/s" else "lower"
    axes.set_ylabel(f"{'bandwidth' if unit == 'MB/s' else 'latency'} ({unit}), {better} is better")
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
    parser.add_argument("results", help="results.csv written by run-compare.sh")
    parser.add_argument("--out", help="folder for the PNGs (default: beside results.csv)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        sys.exit("plot.py needs matplotlib (pip install matplotlib, or apt-get install python3-matplotlib)")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(out_dir, exist_ok=True)
    series, units = read_results(args.results)
    if not series:
        sys.exit(f"no plottable rows in {args.results}")
    for key in sorted(series):
        print(plot_one(pyplot, key, series[key], units[key], out_dir))


if __name__ == "__main__":
    main()
