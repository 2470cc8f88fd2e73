"""The ``watermark`` records as steps per operator, the job's restarts, which split a run's
steps into attempts, and the watermark staircase every chart draws from them (``staircase``,
``step_lines``): a watermark holds from its record until the next one (Flink's
``StatusWatermarkValve`` / ``InternalTimeServiceManager`` see it only as it advances)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from winviz.viz import coinciding, palette, spec
from winviz.viz.boxes import Taken, first_clear, overlaps
from winviz.viz.labels import CHAR_PX, LABEL_FONT, Plot
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import Columns, TraceView


def watermark_steps(view: TraceView) -> pd.DataFrame:
    """The ``watermark`` records: seq, operator, proc_time, watermark (ints; MIN/MAX kept)."""
    columns = watermark_step_columns(view)
    return pd.DataFrame({name: columns[name] for name in WATERMARK_STEP_COLUMNS})


WATERMARK_STEP_COLUMNS = ("seq", "operator", "proc_time", "watermark")


def is_user_operator(name: Any) -> bool:
    """Whether ``name`` is an operator of the user's job, not the node
    ``DataStream.get_side_output`` adds (``side:<tag>``, forwarding its operator's
    watermark), which charts leave out."""
    return not str(name).startswith("side:")


def watermark_step_columns(view: TraceView) -> Columns:
    """``watermark_steps`` as ``Columns`` (operator, proc_time and watermark object arrays);
    the side-output node's records left out."""
    rows = view.select("watermark")
    part = view.c.part("operator", ("watermark",))
    pseudo = [i for i, name in enumerate(part.values) if not is_user_operator(name)]
    if pseudo:
        rows = rows[~np.isin(part.codes[rows], pseudo)]
    return Columns(
        {
            "seq": rows,
            "operator": view.column("operator", rows),
            "proc_time": view.column("proc_time", rows),
            "watermark": view.column("watermark", rows),
        }
    )


@dataclass(frozen=True)
class Restart:
    """A ``restore`` record: the job restarted from checkpoint ``checkpoint_id`` (None: from
    the beginning) at processing time ``proc_time`` (the checkpoint's), every watermark at
    MIN; ``failed_at``: the processing time of the record before it (the failure), None when
    the run started from a snapshot."""

    seq: int
    proc_time: int
    failed_at: int | None
    checkpoint_id: int | None

    def words(self) -> str:
        """ "restarted from checkpoint 1" (or the beginning); a run from a snapshot "started"."""
        cid = self.checkpoint_id
        source = "the beginning" if cid is None else f"checkpoint {cid}"
        return f"{'started' if self.failed_at is None else 'restarted'} from {source}"

    def text(self, time: TimeAxis) -> str:
        """Its text in every chart: "restarted from checkpoint 1 at 500 ms: watermarks back to
        MIN" (``time``: the processing-time axis)."""
        return f"{self.words()} at {time.fmt(self.proc_time)}: watermarks back to MIN"


def restarts(view: TraceView) -> list[Restart]:
    """The trace's ``restore`` records, in seq order."""
    rows = view.select("restore")
    if not len(rows):
        return []
    procs = view.column("proc_time", rows).tolist()
    ids = view.detail("restore", "checkpoint_id", rows).tolist()
    failures = view.detail("restore", "failed_at", rows).tolist()
    failed_times = _failure_times(view, rows)
    return [
        Restart(int(seq), proc, None if failed is None or seq == 0 else when, cid)
        for seq, proc, cid, failed, when in zip(
            rows.tolist(), procs, ids, failures, failed_times, strict=True
        )
    ]


def _failure_times(view: TraceView, rows: np.ndarray) -> list[int | None]:
    """When the job failed before each ``restore`` record (``rows``): the latest processing time
    of the records since the previous restore. The clock only moves forward within a run
    attempt and a restart sets it back, so this is the failed attempt's last moment, whatever
    records the restart itself writes before its ``restore`` record (a source's idleness)."""
    found: list[int | None] = []
    start = 0
    for row in rows.tolist():
        times, present = view.ints("proc_time", np.arange(start, row))
        found.append(int(times[present].max()) if present.any() else None)
        start = row + 1
    return found


def steps_by_attempt(
    seqs: list[int], times: list[Any], restarts: list[Restart]
) -> tuple[list[int], list[Any]]:
    """The run attempt and the end of each step of a step line (a watermark's records in seq
    order, ``times`` their processing times): ``attempt`` counts the restarts at or before
    the record; a step ends at the next record's time in the same attempt, where the job
    failed when a restart comes first (at its own time when unknown), the last at None."""
    cuts = [r.seq for r in restarts]
    attempts = [bisect_right(cuts, seq) for seq in seqs]
    ends: list[Any] = []
    for i, attempt in enumerate(attempts):
        if attempt < len(cuts) and (i + 1 == len(seqs) or attempts[i + 1] != attempt):
            failed = restarts[attempt].failed_at
            ends.append(times[i] if failed is None else failed)
        else:
            ends.append(times[i + 1] if i + 1 < len(seqs) else None)
    return attempts, ends


Line = tuple[dict[str, Any], list[int], list[Any], list[Any]]
"""One step line: the fields naming it, and its records' seqs, processing times and
watermarks in seq order."""


def staircase(
    lines: Iterable[Line],
    time: TimeAxis,
    marks: TimeAxis,
    restarts: Sequence[Restart],
    *,
    time_on_x: bool = False,
    end: Any = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every chart's watermark staircase, processing time on ``time`` (y; ``time_on_x``: x),
    watermarks on ``marks``: per line two vertices per record, at its time and where its step
    ends (``steps_by_attempt``; the last at ``end``, None: the axis' end), and a dot per
    record (its seq, times as words and ``note``: where the axis put it)."""
    vertices: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    last = time.hi if end is None else time.clip(end)[0]
    for fields, seqs, times, values in lines:
        attempts, ends = steps_by_attempt(seqs, times, restarts)
        at_time = [c[0] for c in time.clip_all(times)]
        at_mark = marks.clip_all(values)
        time_texts, mark_texts = time.fmt_all(times), marks.fmt_all(values)
        for i, seq in enumerate(seqs):
            (m, note), t0, a = at_mark[i], at_time[i], attempts[i]
            t1 = last if ends[i] is None else time.clip(ends[i])[0]
            x0, y0, x1, y1 = (t0, m, t1, m) if time_on_x else (m, t0, m, t1)
            vertices.append({**fields, "attempt": a, "i": 2 * i, "x": x0, "y": y0})
            vertices.append({**fields, "attempt": a, "i": 2 * i + 1, "x": x1, "y": y1})
            points.append(
                {
                    **fields,
                    "x": x0,
                    "y": y0,
                    "kind": "watermark",
                    "seq": int(seq),
                    "proc_time": time_texts[i],
                    "watermark": mark_texts[i],
                    "note": note,
                }
            )
    return vertices, points


def step_lines(
    vertices: list[dict[str, Any]],
    field: str,
    mark: dict[str, Any],
    encoding: dict[str, Any],
    *,
    time_on_x: bool = False,
    cut: bool = True,
    order: Sequence[Any] = (),
    legend: bool = True,
) -> tuple[spec.ChartDict, list[spec.ChartDict], coinciding.Runs | None]:
    """The step lines through ``vertices`` (a line per ``field`` and attempt) as one layer,
    the layers that draw them — where lines lie on each other (``cut``; in ``order`` of
    ``field``) a run shared by n drawn by each in one dash of n (``coinciding``; without
    ``legend``, its colour drawn with none, a layer of lines alone, even if empty, keeps the
    legend: the timeline's legends are independent) — and the runs (None: none coincide)."""
    detail = {"detail": {"field": "attempt", "type": "nominal"}}
    whole = spec.layer(vertices, mark, encoding | detail)
    runs = _runs(vertices, field, time_on_x, order) if cut else None
    if runs is None:
        return whole, [whole], None
    unnamed = {} if legend else {"legend": None}
    alone = {
        c: e | unnamed if c in ("color", "stroke") else e
        for c, e in encoding.items()
        if c != "strokeDash"
    }
    drawn = []
    for n, k in sorted(runs.rows.keys() | ({(1, 0)} if unnamed else set())):
        rows = [
            {field: line, "attempt": attempt, "run": f"{attempt}.{r['run']}", "i": r["i"]}
            | ({"x": r["x"], "y": r["y"]} if time_on_x else {"x": r["y"], "y": r["x"]})
            for r in runs.rows.get((n, k), [])
            for line, attempt in [r["path"]]
        ] or [vertices[0] | {"run": ""}]  # (no line alone: one vertex, which draws nothing)
        run = {"detail": {"field": "run", "type": "nominal"}}
        if n == 1:
            drawn.append(spec.layer(rows, mark, encoding | run))
        else:  # one dash in n, in turn (coinciding.dash)
            drawn.append(spec.layer(rows, mark | coinciding.dash(n, k), alone | run))
    return whole, drawn, runs


def _runs(
    vertices: list[dict[str, Any]], field: str, time_on_x: bool, order: Sequence[Any]
) -> coinciding.Runs | None:
    """``vertices`` cut into runs on (processing time, watermark) points, or None (none lie
    on each other, or a vertex is off the chart)."""
    paths: dict[tuple[Any, Any], list[tuple[float, float]]] = {}
    for v in vertices:
        if v["x"] is None or v["y"] is None or v["x"] != v["x"] or v["y"] != v["y"]:
            return None
        at = (v["x"], v["y"]) if time_on_x else (v["y"], v["x"])
        paths.setdefault((v[field], v["attempt"]), []).append(at)
    if len(paths) < 2:
        return None
    rank = {line: i for i, line in enumerate(order)}
    return coinciding.runs(
        {p: paths[p] for p in sorted(paths, key=lambda p: rank.get(p[0], len(rank)))}
    )


RESTART_PLACES = (("left", "bottom"), ("left", "top"), ("right", "bottom"), ("right", "top"))
"""Where a restart's text may go beside its rule across the plot (time on y), in order:
(align at the plot's edge, its baseline at the rule) — above it at the left edge, below it,
then at the right edge above and below."""


def restart_layers(
    restarts: Sequence[Restart],
    time: TimeAxis,
    places: Sequence[Any] = (),
    *,
    time_on_x: bool = False,
    notes: list[str] | None = None,
) -> list[spec.ChartDict]:
    """Every chart's restarts: a dashed rule at each restore's processing time on ``time``
    (y; ``time_on_x``: x) and its ``Restart.text`` at its place: beside its rule (time on
    x: ``places`` (align, px from the top)), or across the plot (time on y: ``places`` one of
    ``RESTART_PLACES`` or None, its text left out; none given: the first of them); ``notes``
    told what each did (the clock back to the checkpoint's, every watermark to MIN) and which
    text is left out."""
    if not restarts:
        return []
    t = "x" if time_on_x else "y"
    rows = [{t: time.clip(r.proc_time)[0], "text": r.text(time)} for r in restarts]
    places = places or [RESTART_PLACES[0]] * len(rows)
    for r, place in zip(restarts, places, strict=True) if notes is not None else ():
        if r.failed_at is not None:
            notes.append(
                f"a failure at {time.fmt(r.failed_at)}: the job {r.words()} — the clock "
                f"went back to {time.fmt(r.proc_time)} and every watermark to MIN; the replay "
                "is drawn over what came before"
            )
        else:
            notes.append(f"the run {r.words()}: every watermark started at MIN")
        if place is None:
            notes.append(restart_left_out(r, time))
    at = {t: time.channel(t)}
    rule = spec.layer(
        rows,
        {"type": "rule", "color": palette.GUIDE_COLOR, "strokeDash": [2, 2], "strokeWidth": 1},
        at | {"tooltip": [{"field": "text", "type": "nominal", "title": "restart"}]},
    )
    style = {"size": LABEL_FONT, "color": palette.GUIDE_COLOR}
    texts = []
    for place in dict.fromkeys(p for p in places if p is not None):
        part = [r for r, p in zip(rows, places, strict=True) if p == place]
        if time_on_x:
            align, top = place
            beside = at | {"y": {"value": top}}
            dx = 3 if align == "left" else -3
            texts.append(spec.text_layer(part, beside, align=align, baseline="top", dx=dx, **style))
        else:  # (at the plot's edge: 4 px in, 2 px off the rule)
            align, baseline = place
            edge = at | {"x": {"value": 0} if align == "left" else {"value": "width"}}
            dx, dy = (4 if align == "left" else -4), (-2 if baseline == "bottom" else 2)
            texts.append(
                spec.text_layer(part, edge, align=align, baseline=baseline, dx=dx, dy=dy, **style)
            )
    return [rule, *texts]


def restart_left_out(restart: Restart, time: TimeAxis) -> str:
    """What a chart's subtitle says of a restart whose text is left out: "the restart's text at
    500 ms is left out (it would cross marks): hover its rule"."""
    at = time.fmt(restart.proc_time)
    return f"the restart's text at {at} is left out (it would cross marks): hover its rule"


def restart_places(
    restarts: Sequence[Restart], plot: Plot, taken: Taken
) -> list[tuple[str, str] | None]:
    """Where each restart's text goes across the plot (time on y): the first of
    ``RESTART_PLACES`` inside the plot crossing no mark, line or guide ``taken`` nor another
    restart's rule (``boxes.first_clear``), its box added to ``taken`` (labels keep off it);
    else None: its text left out (``restart_layers`` says so; its rule's tooltip names it)."""
    rules = [plot.py(plot.y.clip(r.proc_time)[0]) for r in restarts]
    places: list[tuple[str, str] | None] = []
    for r, py in zip(restarts, rules, strict=True):
        text = r.text(plot.y)
        others = [(0, y - 1, plot.width, y + 1) for y in rules if y != py]
        w, h = CHAR_PX * len(text), LABEL_FONT + 3
        lefts = {"left": 4.0, "right": plot.width - 4 - w}
        tops = {"bottom": py - 2 - h, "top": py + 2}
        tries = [
            (p, [(lefts[p[0]], tops[p[1]], lefts[p[0]] + w, tops[p[1]] + h)])
            for p in RESTART_PLACES
        ]
        tries = [(p, [box]) for p, [box] in tries if not any(overlaps(box, o) for o in others)]
        spot = first_clear(tries, taken, inside=plot.area)
        places.append(None if spot is None else spot[0])
    return places
