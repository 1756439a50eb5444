# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PNG chart of a report (matplotlib, optional): throughput per iteration per rank and, with a
baseline, ideal against measured total."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io

# A chart is 1,100 pixels wide: more points per rank than this only cost memory and time.
MAX_POINTS_PER_RANK = 500


def chart_available():
    try:
        import matplotlib  # noqa: F401 pylint: disable=unused-import
    except ImportError:
        return False
    return True


def downsample(numbers, values, limit=MAX_POINTS_PER_RANK):
    """At most limit (iteration, img/sec) points: each the first iteration of a run of consecutive
    points and their mean, so that a long run keeps its shape without a point per iteration."""
    count = len(values)
    if count <= limit:
        return list(zip(numbers, values))
    points = []
    for index in range(limit):
        start, end = index * count // limit, (index + 1) * count // limit
        points.append((numbers[start], sum(values[start:end]) / (end - start)))
    return points


def _iteration_panel(axes, report):
    by_rank = dict((item["rank"], downsample(item["iteration"], item["img_per_sec"])) for item in report["iterations"])
    highest = 1
    if by_rank:
        for rank in sorted(by_rank):
            points = sorted(by_rank[rank])
            highest = max([highest] + [y for _x, y in points])
            axes.plot([x for x, _y in points], [y for _x, y in points], marker="o", markersize=3,
                      linewidth=1, label="rank %d" % rank)
        axes.set_xlabel("step" if "tf_cnn_benchmarks" in report["sources"] else "iteration")
        if len(by_rank) <= 16:
            axes.legend(fontsize="x-small", ncol=4 if len(by_rank) > 8 else 2, loc="lower right")
    else:
        ranks = [item["rank"] for item in report["per_rank"]]
        axes.bar([str(rank) for rank in ranks], [item["img_per_sec"] for item in report["per_rank"]],
                 yerr=[item["spread"] or 0 for item in report["per_rank"]])
        axes.set_xlabel("rank")
    # From zero, so that iteration jitter does not look like a collapse and a slow rank stands out.
    highest = max([highest] + [item["img_per_sec"] + (item["spread"] or 0) for item in report["per_rank"]])
    axes.set_ylim(0, highest * 1.15)
    axes.set_ylabel("img/sec per rank")
    device = report["device"] or "device"
    batch = report["batch_size"] if report["batch_size"] else "?"
    axes.set_title("%s, %d %s(s), batch %s" % (report["model"] or "model", report["ranks"], device, batch),
                   fontsize="medium")
    axes.grid(True, alpha=0.3)


def _scaling_panel(axes, report):
    device = report["device"] or "device"
    devices = report["ranks"] * report["devices_per_rank"]
    labels = ["1 %s (baseline)" % device, "ideal, %d" % devices, "measured, %d" % devices]
    values = [report["baseline_img_per_sec"], report["baseline_img_per_sec"] * devices, report["img_per_sec_total"]["mean"]]
    bars = axes.bar(labels, values, color=["#999999", "#bbbbbb", "#1f77b4"])
    axes.bar_label(bars, fmt="%.0f", fontsize="small")
    axes.set_ylabel("img/sec in total")
    axes.set_title("scaling efficiency %.1f%%" % (100 * report["scaling_efficiency"]), fontsize="medium")
    axes.grid(True, axis="y", alpha=0.3)


def _figure(width):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure = Figure(figsize=(width, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def _png(figure):
    """PNG bytes without a timestamp or version: the same figures give the same file."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def render_chart(report):
    """PNG bytes, deterministic for a given report, so that an unchanged run leaves the file alone."""
    scaling = report["scaling_efficiency"] is not None
    figure = _figure(11 if scaling else 7)
    _iteration_panel(figure.add_subplot(1, 2 if scaling else 1, 1), report)
    if scaling:
        _scaling_panel(figure.add_subplot(1, 2, 2), report)
    # Fixed margins rather than tight_layout(), which draws the whole figure once more.
    figure.subplots_adjust(left=0.08 if scaling else 0.12, right=0.98, bottom=0.12, top=0.92, wspace=0.25)
    return _png(figure)


def render_sweep_chart(sweep):
    """PNG bytes of a scaling sweep: total img/sec against ranks, measured and ideal (the baseline's figure per
    rank times the ranks), each measured point labelled with its efficiency; a failed size is drawn as a red x."""
    figure = _figure(7)
    axes = figure.add_subplot(1, 1, 1)
    measured = [row for row in sweep["sizes"] if row["img_per_sec_total"] is not None]
    ideal = [row for row in sweep["sizes"] if row["ideal_img_per_sec"] is not None]
    if ideal:
        axes.plot([row["ranks"] for row in ideal], [row["ideal_img_per_sec"] for row in ideal], linestyle="--",
                  color="#999999", label="ideal (%d rank(s) x ranks)" % sweep["baseline_ranks"])
    axes.plot([row["ranks"] for row in measured], [row["img_per_sec_total"] for row in measured], marker="o",
              color="#1f77b4", label="measured")
    for row in measured:
        if not row["passed"]:
            axes.plot([row["ranks"]], [row["img_per_sec_total"]], marker="x", markersize=12, color="#d62728")
        if row["scaling_efficiency"] is not None:
            axes.annotate("%.0f%%" % (100 * row["scaling_efficiency"]), (row["ranks"], row["img_per_sec_total"]),
                          textcoords="offset points", xytext=(0, 8), ha="center", fontsize="small")
    for row in sweep["sizes"]:
        if row["img_per_sec_total"] is None:
            axes.annotate("failed", (row["ranks"], 0), textcoords="offset points", xytext=(0, 6), ha="center",
                          fontsize="small", color="#d62728")
    highest = max([1] + [row["img_per_sec_total"] for row in measured] + [row["ideal_img_per_sec"] for row in ideal])
    axes.set_ylim(0, highest * 1.15)
    axes.set_xticks([row["ranks"] for row in sweep["sizes"]])
    axes.set_xlabel("ranks")
    axes.set_ylabel("img/sec in total")
    axes.set_title("scaling sweep, efficiency against %d rank(s)" % sweep["baseline_ranks"], fontsize="medium")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small", loc="upper left")
    figure.subplots_adjust(left=0.12, right=0.98, bottom=0.12, top=0.92)
    return _png(figure)
