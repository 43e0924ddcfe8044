#!/usr/bin/env python3
"""Plot run-experiments.sh's jacobi.csv: time per iteration against ODF.

Charts, chosen with --charts (a comma-separated list; default "odf"):
  odf     one PNG per block size (jacobi_<block>.png): a column per mode (H, D,
          or cpu), time per iteration on top and time in MPI below, against
          the overdecomposition factor; one line per library and unit count
          (AMPI-UCX solid, Open MPI dashed). From successful "perf" rows.
  weak    weak scaling (jacobi_weak_<block>.png): time per iteration against
          the unit count (BLOCK^3 per unit), a column per mode, one line per
          library and ODF (those of --odf); flat is perfect. "perf" rows of
          blocks measured on more than one unit count.
  strong  strong scaling (jacobi_strong_<block>.png): speedup t(1)/t(G) of a
          fixed BLOCK^3 grid against the unit count G, with the ideal line;
          "strong" rows, whose 1-unit point is the "perf" row of that block.
Several CSVs (e.g. the small and the large run, made one after the other) are merged.

    apps/jacobi3d/plot.py DIR/jacobi.csv [MORE.csv ...] [--out DIR]
                          [--charts odf,weak,strong] [--odf 1,8]

Without matplotlib it says so and exits 0 (an offline GPU machine may have
none: plot the CSV elsewhere, e.g. python3 -m venv /tmp/plotenv && /tmp/plotenv/bin/pip install
matplotlib).
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

LIBRARY_LABELS = {"ampi": "AMPI-UCX", "ompi": "Open MPI"}
LIBRARY_STYLES = {"ampi": "-", "ompi": "--"}
LIBRARY_MARKERS = {"ampi": "o", "ompi": "s"}
CHARTS = ("odf", "weak", "strong")
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


def powers_of_two_axis(pyplot, axis, ticks, label):
    """A log2 x axis (ODF or GPUs) labelled with plain numbers, and a grid."""
    axis.set_xscale("log", base=2)
    axis.set_xticks(ticks)
    axis.get_xaxis().set_major_formatter(pyplot.matplotlib.ticker.ScalarFormatter())
    axis.set_xlabel(label)
    axis.grid(True, which="both", linewidth=0.3)


def save_figure(pyplot, figure, path, dpi):
    """Writes the figure to path and frees it; returns path."""
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    pyplot.close(figure)
    return path


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
            powers_of_two_axis(pyplot, axis, [1, 2, 4, 8], "ODF (ranks per GPU)")
        top.set_title(f"{block}^3 per unit, {MODE_TITLES.get(mode, mode)}", fontsize=10)
        top.set_ylabel("time per iteration (ms), lower is better")
        bottom.set_ylabel("time in MPI per iteration (ms)")
        top.legend(fontsize=8)
    return save_figure(pyplot, figure, os.path.join(out_dir, f"jacobi_{block}.png"), 110)


def read_scaling(paths):
    """Returns {(kind, block, mode, library, odf): {units: iter_ms}} of the ok
    perf and strong rows; a point measured twice keeps the last file's."""
    points = defaultdict(dict)
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["kind"] not in ("perf", "strong") or row["status"] != "ok":
                    continue
                try:
                    units, odf, iter_ms = int(row["units"]), int(row["odf"]), float(row["iter_ms"])
                except ValueError:
                    continue
                if iter_ms <= 0:  # neither a log axis nor a speedup can use it
                    continue
                key = (row["kind"], int(row["block"]), row["mode"], row["library"], odf)
                points[key][units] = iter_ms
    return points


def ordered_modes(modes):
    return [m for m in ("H", "D", "cpu") if m in modes] + sorted(set(modes) - {"H", "D", "cpu"})


def scaling_series(points, kind, block, odfs):
    """{mode: {(library, odf): [(units, value)]}} for kind "perf" (weak scaling:
    iter_ms) or "strong" (the speedup over the 1-unit perf run of the block)."""
    by_mode = defaultdict(dict)
    for (row_kind, row_block, mode, library, odf), by_units in points.items():
        if row_kind != kind or row_block != block or odf not in odfs:
            continue
        if kind == "perf":
            series = sorted(by_units.items())
        else:
            # A strong run on one unit is the weak run of the same block.
            base = points.get(("perf", block, mode, library, odf), {}).get(1)
            if base is None:
                continue
            series = [(1, 1.0)] + sorted((u, base / t) for u, t in by_units.items() if u > 1)
        if len(series) > 1:
            by_mode[mode][(library, odf)] = series
    return by_mode


def plot_scaling(pyplot, chart, block, by_mode, out_dir):
    """chart "weak": iter_ms against units; "strong": speedup against units."""
    modes = ordered_modes(by_mode)
    figure, axes = pyplot.subplots(1, len(modes), figsize=(5.5 * len(modes), 4.2), squeeze=False)
    colours = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    all_odfs = sorted({odf for mode in modes for (_, odf) in by_mode[mode]})
    for column, mode in enumerate(modes):
        axis = axes[0][column]
        units_seen = set()
        for (library, odf), series in sorted(by_mode[mode].items()):
            units_seen.update(u for u, _ in series)
            axis.plot([u for u, _ in series], [v for _, v in series],
                      LIBRARY_STYLES.get(library, ":"), marker=LIBRARY_MARKERS.get(library, "^"),
                      color=colours[all_odfs.index(odf) % len(colours)],
                      label=f"{LIBRARY_LABELS.get(library, library)}, ODF {odf}")
        ticks = sorted(units_seen)
        if chart == "strong":
            axis.plot(ticks, ticks, ":", color="grey", label="ideal (speedup = GPUs)")
            axis.set_ylabel("speedup t(1)/t(G), higher is better")
            axis.set_title(f"strong scaling, {block}^3 grid, {MODE_TITLES.get(mode, mode)}", fontsize=10)
        else:
            values = [v for series in by_mode[mode].values() for _, v in series]
            # Launch-bound small blocks spread over decades; large ones do not.
            if max(values) > 5 * min(values):
                axis.set_yscale("log")
            axis.set_ylabel("time per iteration (ms), lower is better")
            axis.set_title(f"weak scaling, {block}^3 per GPU, {MODE_TITLES.get(mode, mode)}", fontsize=10)
        powers_of_two_axis(pyplot, axis, ticks, "GPUs (units)")
        axis.legend(fontsize=8)
    return save_figure(pyplot, figure, os.path.join(out_dir, f"jacobi_{chart}_{block}.png"), 100)


def plot_scaling_charts(pyplot, paths, charts, odfs, out_dir):
    """Draws the weak and strong charts asked for; returns the paths written."""
    points = read_scaling(paths)
    written = []
    for chart in ("weak", "strong"):
        if chart not in charts:
            continue
        kind = "perf" if chart == "weak" else "strong"
        for block in sorted({key[1] for key in points if key[0] == kind}):
            by_mode = scaling_series(points, kind, block, odfs)
            if by_mode:
                written.append(plot_scaling(pyplot, chart, block, by_mode, out_dir))
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="jacobi.csv files written by run-experiments.sh")
    parser.add_argument("--out", help="folder for the PNGs (default: beside the first CSV)")
    parser.add_argument("--charts", default="odf",
                        help="comma-separated: odf (default), weak, strong")
    parser.add_argument("--odf", default="1,8",
                        help="ODFs drawn in the weak and strong charts (default 1,8)")
    args = parser.parse_args()
    charts = {c.strip() for c in args.charts.split(",") if c.strip()}
    if not charts or charts - set(CHARTS):
        parser.error(f"--charts takes a list of {', '.join(CHARTS)}")
    try:
        odfs = {int(o) for o in args.odf.split(",") if o.strip()}
    except ValueError:
        parser.error("--odf takes a comma-separated list of integers")
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
    written = []
    if "odf" in charts:
        runs = read_runs(args.results)
        for block in sorted(runs):
            written.append(plot_block(pyplot, block, runs[block], out_dir))
    written += plot_scaling_charts(pyplot, args.results, charts, odfs, out_dir)
    if not written:
        print(f"plot.py: nothing to draw ({args.charts}) from {', '.join(args.results)}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
