"""Pictures of a `weft compare` report: loss against wall time per mode, and
throughput against the number of workers (with --project, the cost model's
projection dashed, continuing each mode's measured line). Embedded in the weft binary (a
genrule turns this file into a C++ string) and run with `python3 -`.

usage: python3 compare_plots.py DIR/report.json DIR
"""
import json
import sys

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(run):
    if run["mode"] in ("single",):
        return run["mode"]
    return f'{run["mode"]} {run["workers"]}w/{run["ps"]}ps'


def main(report_path, out_dir):
    with open(report_path) as f:
        report = json.load(f)
    runs = [r for r in report["runs"] if r.get("ok")]
    title = (f'{report["model"]}, global batch {report["batch"]}, '
             f'{report["network"]}')

    fig, ax = plt.subplots(figsize=(8, 5))
    for r in runs:
        curve = r.get("curve", [])
        if curve:
            ax.plot([p[0] for p in curve], [p[1] for p in curve], label=label(r))
    if report.get("target_loss"):
        ax.axhline(report["target_loss"], color="grey", linestyle=":",
                   label=f'target loss {report["target_loss"]:.3g}')
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("training loss (chief, mean of 10 steps)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(f"{out_dir}/loss_vs_time.png", dpi=110)

    fig, ax = plt.subplots(figsize=(8, 5))
    modes = sorted({r["mode"] for r in runs})
    for mode in modes:
        points = sorted((r["workers"], r["examples_per_s"])
                        for r in runs if r["mode"] == mode)
        if mode in ("single", "model-parallel"):
            ax.axhline(points[0][1], color="black",
                       linestyle="--" if mode == "single" else ":",
                       label=f"{mode} (one process)")
            continue
        line, = ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                        label=mode)
        projected = sorted((r["workers"], r["examples_per_s"])
                           for r in (report.get("projection") or {}).get("runs", [])
                           if r["mode"] == mode)
        if projected:
            ax.plot([p[0] for p in points[-1:] + projected],
                    [p[1] for p in points[-1:] + projected], linestyle="--",
                    marker="x", color=line.get_color(),
                    label=f'{mode} projected ({report["projection"]["link"]}; not measured)')
    projected = (report.get("projection") or {}).get("runs", [])
    ax.set_xlabel("workers")
    if projected:
        ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r["workers"] for r in runs + projected}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_ylabel("examples/s (all workers together)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(f"{out_dir}/throughput_vs_workers.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
