#!/usr/bin/env python3
"""Plot run-experiments.sh's jacobi.csv: time per iteration against ODF.

One PNG per block size (jacobi_<block>.png): a column per mode (H, D, or cpu),
time per iteration on top and time in MPI below, against the overdecomposition
factor; one line per library and unit count (AMPI-UCX solid, Open MPI dashed).
Only successful "perf" rows are drawn. Several CSVs (e.g. the small and the
large run of two device calls) are merged.

    apps/jacobi3d/plot.py DIR/jacobi.csv [MORE.csv ...] [--out DIR]

Without matplotlib it says so and exits 0 (the GPU machine has none: plot the
CSV here, e.g. python3 -m venv /tmp/plotenv && /tmp/plotenv/bin/pip install
matplotlib).
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

LIBRARY_LABELS = {"ampi": "AMPI-UCX", "ompi": "Open MPI"}
LIBRARY_STYLES = {"ampi": "-", "ompi": "--"}
MODE_TITLES = {"H": "H: faces staged through host memory", "D": "D: device buffers to MPI",
               "cpu": "cpu: host loops"}


def read_runs(paths):
    """Returns {block: {mode: {(library, units): [(odf, iter_ms, comm_ms)]}}}."""
    runs = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["kind"] != "perf" or row["status"] != "ok":
                    continue
                try:
                    point = (int(row["odf"]), float(row["iter_ms"]), float(row["comm_ms"]))
                except ValueError:
                    continue
                key = (row["library"], int(row["units"]))
                runs[int(row["block"])][row["mode"]][key].append(point)
    return runs


def plot_block(pyplot, block, by_mode, out_dir):
    modes = [m for m in ("H", "D", "cpu") if m in by_mode] + sorted(set(by_mode) - {"H", "D", "cpu"})
    figure, axes = pyplot.subplots(2, len(modes), figsize=(5.5 * len(modes), 7), squeeze=False)
    for column, mode in enumerate(modes):
        top, bottom = axes[0][column], axes[1][column]
        for (library, units), points in sorted(by_mode[mode].items()):
            points.sort()
            odfs = [p[0] for p in points]
            label = f"{LIBRARY_LABELS.get(library, library)}, {units} unit{'s' if units > 1 else ''}"
            style = LIBRARY_STYLES.get(library, ":")
            top.plot(odfs, [p[1] for p in points], style, marker="o", label=label)
            bottom.plot(odfs, [p[2] for p in points], style, marker="o", label=label)
        for axis in (top, bottom):
            axis.set_xscale("log", base=2)
            axis.set_xticks([1, 2, 4, 8])
            axis.get_xaxis().set_major_formatter(pyplot.matplotlib.ticker.ScalarFormatter())
            axis.set_xlabel("ODF (ranks per GPU)")
            axis.grid(True, which="both", linewidth=0.3)
        top.set_title(f"{block}^3 per unit, {MODE_TITLES.get(mode, mode)}", fontsize=10)
        top.set_ylabel("time per iteration (ms), lower is better")
        bottom.set_ylabel("time in MPI per iteration (ms)")
        top.legend(fontsize=8)
    figure.tight_layout()
    path = os.path.join(out_dir, f"jacobi_{block}.png")
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="jacobi.csv files written by run-experiments.sh")
    parser.add_argument("--out", help="folder for the PNGs (default: beside the first CSV)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
        import matplotlib.ticker  # noqa: F401 (pyplot.matplotlib.ticker)
    except ImportError:
        print("plot.py: no matplotlib here; skipped (pip install matplotlib, then run again)")
        return 0
    out_dir = args.out or os.path.dirname(os.path.abspath(args.results[0]))
    os.makedirs(out_dir, exist_ok=True)
    runs = read_runs(args.results)
    if not runs:
        print(f"plot.py: no successful perf rows in {', '.join(args.results)}", file=sys.stderr)
        return 1
    for block in sorted(runs):
        print(plot_block(pyplot, block, runs[block], out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
