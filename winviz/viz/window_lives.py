"""A window's life, one row per (key, window), session merges applied (Flink's
``MergingWindowSet``), and a window operator's allowed lateness, horizons and time domain, read
off its records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from winviz.operators.window_rules import cleanup_time
from winviz.trace import restores, vocabulary
from winviz.trace.coded import distinct_values, object_array
from winviz.viz.firings import window_records
from winviz.viz.trace_view import LONG_MAX, Columns, TraceView, memoized
from winviz.viz.value_texts import key_text, key_texts

LIFE_COLUMNS = [
    "key", "window_start", "window_end", "opened", "closed", "elements", "firings", "merged_into"
]  # fmt: skip


def groups(frame: Any, by: list[str]) -> dict[tuple, list[int]]:
    """Row positions per distinct value of ``by`` (the columns of a frame or ``Columns``, or
    the fields of a list of rows), in order of first appearance."""
    rows = isinstance(frame, list)
    columns = ([r[c] for r in frame] if rows else frame[c].tolist() for c in by)
    out: dict[tuple, list[int]] = {}
    for i, k in enumerate(zip(*columns, strict=True)):
        out.setdefault(k, []).append(i)
    return out


def busiest(keys: Any, n: int, weights: Any = None) -> list[Any]:
    """The ``n`` keys with the most weight (``weights`` of their rows summed; each row 1
    without), a tie to the key met first, in order of first appearance: the lanes a chart
    keeps, the keys a dropdown offers."""
    weights = np.ones(len(keys), dtype=np.int64) if weights is None else np.asarray(weights)
    totals = pd.Series(weights).groupby(np.asarray(keys, dtype=object), sort=False).sum()
    kept = set(totals.nlargest(n, keep="first").index)
    return [k for k in totals.index if k in kept]


def pairs_text(pairs: int, windows: int | None = None) -> str:
    """How every chart counts windows: a window of one key is one "(key, window) pair" (a row
    of ``window_lives``); a chart that draws one band per window adds how many windows."""
    text = vocabulary.counted(pairs, "(key, window) pair")
    return text if windows is None else f"{text} in {vocabulary.counted(windows, 'window')}"


def window_life_columns(view: TraceView, operator: str) -> Columns | None:
    """The one table of window lives: a row per (key text, window), session merges applied:
    opened (first assigned proc_time), closed (cleanup proc_time; NaN / None while open),
    elements assigned, firings, merged_into ("[s, e)" when a session merge absorbed it, else
    None). The merges are those the run keeps (``kept_merges``); its records, those a restore
    rolled back too (``rolled_back_lives`` counts them). None when the operator has no window."""

    def build() -> Columns | None:
        columns = _life_columns(view, operator)
        if columns is not None and len(view.select("merged", operator=operator)):
            columns = _apply_merges(columns, kept_merges(view, operator))
        return None if columns is None else Columns(columns)

    return memoized(view, "window_life_columns", operator, build)


def window_lives(view: TraceView, operator: str) -> pd.DataFrame:
    """``window_life_columns`` as a DataFrame (``LIFE_COLUMNS``)."""
    lives = window_life_columns(view, operator)
    if lives is None:
        return pd.DataFrame(columns=LIFE_COLUMNS)
    closed = lives["closed"]
    return pd.DataFrame(
        {
            **{c: lives[c] for c in LIFE_COLUMNS},
            "key": lives["key"].tolist(),
            "closed": closed if closed.dtype != object else pd.Series(closed, dtype=object),
            "merged_into": pd.Series(lives["merged_into"], dtype=object),
        }
    )


def _life_columns(view: TraceView, operator: str) -> dict[str, np.ndarray] | None:
    rows = view.select("assigned", "fired", "cleanup", operator=operator)
    window_codes, (starts_of, ends_of, has_of) = view.window_codes(rows)
    present = has_of[window_codes]
    if not present.all():
        rows, window_codes = rows[present], window_codes[present]
    if not len(rows):
        return None
    proc, _ = view.ints("proc_time", rows)
    # group by the key's text (as the lanes show it), then the window: a text per distinct
    # key of the key part's dictionary present here
    key = view.part("key", rows)
    key_codes = key.codes[rows]
    present = np.flatnonzero(np.bincount(key_codes, minlength=len(key.values)))
    text_codes, texts = pd.factorize(
        object_array([key_text(key.values[i]) for i in present.tolist()]),
        use_na_sentinel=False,
    )
    text_of = np.zeros(len(key.values), dtype=np.int64)
    text_of[present] = text_codes
    t = text_of[key_codes]
    # one id per (start, end), then per (key text, window) in order of first appearance
    window_id = _group_ids(starts_of, ends_of) if len(starts_of) else starts_of
    codes = window_id[window_codes].astype(np.int64)
    group, _ = pd.factorize(t * (int(codes.max()) + 1) + codes)  # by first appearance
    # each group's first row: where the group number exceeds every one before it
    first_row = np.flatnonzero(group > np.maximum.accumulate(np.r_[-1, group[:-1]]))
    n_groups = len(first_row)
    kinds = view.kind_codes(rows)  # (gathered once: three masks)
    assigned, fired, cleanup = (
        kinds == view.kind_code(k) for k in ("assigned", "fired", "cleanup")
    )
    first = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, group, proc)
    opened = first.copy()
    np.minimum.at(opened, group[assigned], proc[assigned])  # the first assigned, if any
    elements = np.bincount(group[assigned], minlength=n_groups)
    last_cleanup = np.full(n_groups, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last_cleanup, group[cleanup], proc[cleanup])
    cleanups = np.bincount(group[cleanup], minlength=n_groups)
    # closed: int64, or float64 with NaN while some pane is kept
    kept = cleanups == 0
    closed = np.where(kept, np.nan, last_cleanup.astype(np.float64)) if kept.any() else last_cleanup
    return {
        "key": np.asarray(texts, dtype=object)[t[first_row]],
        "window_start": starts_of[window_codes[first_row]],
        "window_end": ends_of[window_codes[first_row]],
        "opened": np.where(elements > 0, opened, first),
        "closed": closed,
        "elements": elements.astype(np.int64),
        "firings": np.bincount(group[fired], minlength=n_groups).astype(np.int64),
        "merged_into": object_array([None] * n_groups),
    }


def _apply_merges(columns: dict[str, np.ndarray], merges: pd.DataFrame) -> dict[str, np.ndarray]:
    """Session merges, in seq order: a window a merge absorbed is closed at the merge, merged
    into "[s, e)"; the window it went into inherits its elements (Flink's ``MergingWindowSet``
    merges the state into its pane). A window only a merge names gets a row at the merge."""
    table = {c: columns[c].tolist() for c in LIFE_COLUMNS if c != "merged_into"}
    table["closed"] = [None if c is None or c != c else int(c) for c in table["closed"]]
    table["merged_into"] = [None] * len(table["key"])
    row_of = {
        (k, s, e): i
        for i, (k, s, e) in enumerate(
            zip(table["key"], table["window_start"], table["window_end"], strict=True)
        )
    }
    # elements assigned directly; inherited ones are added merge by merge (chains carry over)
    total = list(table["elements"])

    def row(key: str, s: int, e: int, proc: int) -> int:
        i = row_of.get((key, s, e))
        if i is None:
            i = row_of[(key, s, e)] = len(total)
            new = dict.fromkeys(table, None)
            new.update(key=key, window_start=s, window_end=e, opened=proc, elements=0, firings=0)
            for c, v in new.items():
                table[c].append(v)
            total.append(0)
        return i

    for m in merges.itertuples():
        into = (int(m.window_start), int(m.window_end))
        target = row(m.key_text, *into, int(m.proc_time))
        for s, e in m.merged_windows:
            if (s, e) == into:
                continue
            i = row(m.key_text, int(s), int(e), int(m.proc_time))
            total[target] += total[i]
            table["closed"][i] = int(m.proc_time)
            table["merged_into"][i] = f"[{into[0]}, {into[1]})"
    table["elements"] = total
    objects = ("key", "closed", "merged_into")
    return {
        c: object_array(table[c]) if c in objects else np.array(table[c], dtype=np.int64)
        for c in LIFE_COLUMNS
    }


class RolledBack(NamedTuple):
    """Per row of ``window_life_columns``, what a restore rolled back (``restores.undone``)."""

    elements: np.ndarray  # assigned records: its own, and those it inherited by a kept merge
    firings: np.ndarray  # ``fired`` records
    closed: np.ndarray  # float: its last cleanup the run keeps (merged away: the merge), NaN: none


def rolled_back_lives(view: TraceView, operator: str) -> RolledBack | None:
    """What a restore rolled back of each (key, window) life (``RolledBack``); None without a
    restore or a window. Flink restores the window state of the checkpoint and replays: an
    element a rolled-back attempt assigned to a window that a kept merge then absorbed is rolled
    back from the merge result too, so the rolled-back assignments pass through the same kept
    merges (``_apply_merges``) as ``window_life_columns``' elements."""

    def build() -> RolledBack | None:
        lives = window_life_columns(view, operator)
        if lives is None or not len(view.select("restore")):
            return None
        row_of, n = _row_finder(lives), len(lives["key"])
        counts = {}
        for kind in ("assigned", "fired", "cleanup"):
            rows = view.select(kind, operator=operator)
            at = row_of(view, rows[restores.undone(view.trace, rows)])
            counts[kind] = np.bincount(at[at >= 0], minlength=n).astype(np.int64)
        # the close: where a restore rolled a cleanup back, the last one the run keeps
        closed = pd.Series(lives["closed"]).astype(float).to_numpy(copy=True)
        redo = np.flatnonzero(counts["cleanup"])
        if len(redo):
            closed[redo] = np.nan
            rows = view.select("cleanup", operator=operator)
            rows = restores.kept(rows, restores.rolled_back(view.trace))
            codes, (starts, ends, has) = view.window_codes(rows)
            bounds = (lives[c][redo].tolist() for c in ("window_start", "window_end"))
            redone = set(zip(*bounds, strict=True))
            hit = [w in redone for w in zip(starts.tolist(), ends.tolist(), strict=True)]
            rows = rows[np.array(hit, dtype=bool)[codes] & has[codes]]
            at = row_of(view, rows)
            mine = np.isin(at, redo)
            np.fmax.at(closed, at[mine], view.numbers("proc_time", rows)[mine])
        elements = counts["assigned"]
        if len(view.select("merged", operator=operator)):
            columns = {c: lives[c] for c in LIFE_COLUMNS} | {"elements": elements}
            elements = _apply_merges(columns, kept_merges(view, operator))["elements"]
        return RolledBack(elements, counts["fired"], closed)

    return memoized(view, "rolled_back_lives", operator, build)


def as_kept(view: TraceView, op: str, bars: pd.DataFrame) -> pd.DataFrame:
    """``window_lives``' rows (``bars``) as the run keeps them after a restore
    (``rolled_back_lives``): the elements and firings a restore rolled back taken
    out (counted apart in ``undone_elements``, ``undone_firings``), ``closed`` the last cleanup
    the run keeps (a merged-away bar: the kept merge), a later one it rolled back in
    ``rolled_back_close`` (NaN: none). Without a restore, the bars as they are."""
    undone = rolled_back_lives(view, op)
    if undone is None:
        return bars
    closed = bars["closed"].astype(float).to_numpy()
    later = ~np.isnan(closed) & ~(undone.closed >= closed)  # (kept: none, or an earlier one)
    return bars.assign(
        elements=bars["elements"].to_numpy() - undone.elements,
        firings=bars["firings"].to_numpy() - undone.firings,
        closed=undone.closed,
        undone_elements=undone.elements,
        undone_firings=undone.firings,
        rolled_back_close=np.where(later, closed, np.nan),
    )


def _row_finder(lives: Columns) -> Callable[[TraceView, np.ndarray], np.ndarray]:
    """A function giving records (of a view) their ``window_life_columns`` row (``lives``: those
    columns), found by (key text, start, end); -1 for a record without a time window."""
    starts, ends = (np.asarray(lives[c], dtype=np.int64) for c in ("window_start", "window_end"))
    key_ids, texts = pd.factorize(np.asarray(lives["key"], dtype=object))
    window_ids = _group_ids(starts, ends)
    _, first = np.unique(window_ids, return_index=True)
    bounds = zip(starts[first].tolist(), ends[first].tolist(), strict=True)
    window_of = dict(zip(bounds, window_ids[first].tolist(), strict=True))
    key_of = {t: i for i, t in enumerate(texts.tolist())}
    width = len(first)
    row_of = pd.Index(key_ids.astype(np.int64) * width + window_ids)

    def find(view: TraceView, rows: np.ndarray) -> np.ndarray:
        codes, (starts_of, ends_of, has_of) = view.window_codes(rows)
        found, of_row = np.unique(codes, return_inverse=True)
        windows = zip(starts_of[found].tolist(), ends_of[found].tolist(), strict=True)
        ids = [
            window_of.get(w, -1) if h else -1 for w, h in zip(windows, has_of[found], strict=True)
        ]
        window = np.array(ids, dtype=np.int64)[of_row]
        key = view.part("key", rows)
        found, of_row = np.unique(key.codes[rows], return_inverse=True)
        ids = [key_of.get(key_text(key.values[c]), -1) for c in found.tolist()]
        keyed = np.array(ids, dtype=np.int64)[of_row]
        at = row_of.get_indexer(keyed * width + window)
        at[(keyed < 0) | (window < 0)] = -1
        return at

    return find


def merged_text(values: pd.Series | list[Any]) -> str:
    """The windows a (start, end) was merged into, over all keys — "" unless every key's pane
    of it was merged away by a session merge."""
    texts = values.tolist() if isinstance(values, pd.Series) else values
    if not texts or not all(isinstance(t, str) for t in texts):
        return ""
    return ", ".join(dict.fromkeys(texts))


def _group_ids(*columns: np.ndarray) -> np.ndarray:
    """One id per distinct tuple of these integer columns, numbered in order of first
    appearance (as ``groupby(sort=False).ngroup()``)."""
    ids, span = _dense_codes(columns[0])
    for column in columns[1:]:
        codes, width = _dense_codes(column)
        if span * width > 2**62:  # renumber densely first: the product stays in int64
            ids, found = pd.factorize(ids)
            span = max(1, len(found))
        ids = ids.astype(np.int64) * width + codes
        span *= width
    ids, _ = pd.factorize(ids)
    return ids


def _dense_codes(column: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes of an integer column (itself when small and non-negative) and a bound above them."""
    column = np.asarray(column)
    if column.dtype.kind in "iu" and len(column):
        lo, hi = int(column.min()), int(column.max())
        if lo >= 0 and hi <= 4 * len(column) + 64:
            return column.astype(np.int64, copy=False), hi + 1
    codes, uniques = pd.factorize(column)
    return codes, max(1, len(uniques))


def kept_merges(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``merged`` records the run keeps: those no restore rolled back (``restores.undone``;
    the replay merges the windows again, as the run kept them)."""
    merges = merged(view, operator)
    undone = restores.undone(view.trace, merges["seq"].to_numpy())
    return merges[~undone] if undone.any() else merges


def merged(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``merged`` records with key_text and merged_windows (a list of (start, end))."""

    def build() -> pd.DataFrame:
        frame = window_records(view, operator, "merged")
        found = view.detail("merged", "merged_windows", frame["seq"].to_numpy())
        frame["merged_windows"] = [
            [(w.start, w.end) if hasattr(w, "start") else (int(w[0]), int(w[1])) for w in ws]
            for ws in found
        ]
        frame["key_text"] = key_texts(frame["key"])
        return frame

    return memoized(view, "merged", operator, build)


class MergeChain(NamedTuple):
    """Where a merged-away window's contents went: the merges from the one that absorbed it on,
    each (result start, result end, processing time): the first ``CHAIN_SHOWN``, the last, and
    how many."""

    steps: tuple[tuple[int, int, int], ...]
    last: tuple[int, int, int]
    count: int


CHAIN_SHOWN = 3
Chains = dict[tuple[str, int, int], MergeChain]  # per merged-away (key text, start, end)


def merge_chains(view: TraceView, operator: str) -> Chains:
    """Per merged-away (key text, start, end): its ``MergeChain``. Flink's
    ``MergingWindowSet.addWindow`` merges windows into a merge result (a ``merged`` record)
    and ``WindowOperator`` merges their state into it (``mergeNamespaces``); a later merge
    that absorbs that result passes the contents on. Read from the last merge back, each
    merge's chain is its result's, one step longer; the merges, those the run keeps
    (``kept_merges``)."""
    merges = kept_merges(view, operator)
    later: Chains = {}  # the chain of the next merge absorbing a window
    last_of: Chains = {}
    columns = ("key_text", "window_start", "window_end", "proc_time", "merged_windows")
    for key, rs, re_, proc, windows in reversed(
        list(zip(*(merges[c].tolist() for c in columns), strict=True))
    ):
        step = (int(rs), int(re_), int(proc))
        rest = later.get((key, step[0], step[1]))
        chain = (
            MergeChain((step,), step, 1)
            if rest is None
            else MergeChain(((step, *rest.steps))[:CHAIN_SHOWN], rest.last, rest.count + 1)
        )
        for s, e in windows:
            if (s, e) != (step[0], step[1]):
                later[key, int(s), int(e)] = chain
                last_of.setdefault((key, int(s), int(e)), chain)  # (its last merge: first met)
    return last_of


def chain_text(chain: MergeChain) -> str:
    """A merge chain as the tooltips write it: "[s, e) at t ms → … → [s, e) at t ms"."""
    steps = [f"[{s}, {e}) at {t:,} ms" for s, e, t in chain.steps]
    if chain.count > len(steps):
        hidden = chain.count - len(steps) - 1
        more = [f"… {hidden:,} more …"] if hidden else []
        steps += [*more, "[{}, {}) at {:,} ms".format(*chain.last)]
    return " → ".join(steps)


def allowed_lateness(view: TraceView, operator: str) -> int | None:
    """The allowed lateness of a window operator, read off its ``cleanup`` records: cleanup
    time − max timestamp (Flink's ``WindowOperator.cleanupTime``), one value for every window
    (cleanup times that overflowed to MAX say nothing); None without a single value."""
    _, ends, times = _cleanup_times(view, operator)
    found = np.unique((times - (ends - 1))[times != LONG_MAX])
    return int(found[0]) if len(found) == 1 else None


def every_horizon(
    view: TraceView, operator: str
) -> tuple[dict[tuple[int, int], int], frozenset[tuple[int, int]]]:
    """The allowed-lateness horizon of every (start, end) window (the one rule the timeline's
    bands and the lanes draw) and which are derived. Read off its ``cleanup`` records: its
    cleanup time (Flink's ``WindowOperator.cleanupTime``: max timestamp + allowed lateness)
    where that lies past its max timestamp. Derived for a window still open at the end or
    merged away: ``window_rules.cleanup_time`` of its max timestamp and ``allowed_lateness`` —
    ``WindowOperator`` registers that cleanup timer for every window and a merge deletes the
    merged-away windows'. None derived without a single lateness, for lateness 0, or for a
    window whose end overflowed (start >= end)."""

    def build() -> tuple[dict[tuple[int, int], int], frozenset[tuple[int, int]]]:
        starts, ends, times = _cleanup_times(view, operator)
        late = times > ends - 1  # (max timestamp: end - 1, wrapping as Java's long does)
        starts, ends, times = starts[late], ends[late], times[late]
        order = np.lexsort((times, ends, starts))  # per window, its latest cleanup last
        windows = zip(starts[order].tolist(), ends[order].tolist(), strict=True)
        found = dict(zip(windows, times[order].tolist(), strict=True))
        allowed = allowed_lateness(view, operator)
        columns = window_life_columns(view, operator)
        if not found or not allowed or columns is None:
            return found, frozenset()
        out = dict(found)
        derived = set()
        for window in zip(
            columns["window_start"].tolist(), columns["window_end"].tolist(), strict=True
        ):
            if window not in out and window[0] < window[1]:
                out[window] = cleanup_time(window[1] - 1, allowed)
                derived.add(window)
        return out, frozenset(derived)

    return memoized(view, "every_horizon", operator, build)


def horizon_source(
    derived: bool, merged_into: str | None, at: str, chain: MergeChain | None = None
) -> str:
    """Where a drawn horizon comes from (the tooltips' "from"): the window's ``cleanup``
    record, or ``every_horizon``'s rule for a window merged away (into ``merged_into`` at
    ``at``, on through ``chain``) or still open."""
    if not derived:
        return "its cleanup record"
    rule = "max timestamp + the operator's allowed lateness"
    if not merged_into:
        return f"{rule} (still open at the end)"
    on = ""
    if chain is not None and chain.count > 1:
        s, e, t = chain.last
        on = f", then on through {chain.count - 1:,} more merge(s) to [{s}, {e}) at {t:,} ms"
    wait = "its contents then wait for that window's horizon"
    return f"{rule} (merged into {merged_into} at {at}{on}: {wait})"


def horizon_texts(fmt: Callable[[Any], str], start: int, end: int, horizon: int) -> dict[str, str]:
    """The texts of a horizon line's tooltip (timeline and lanes alike), times by ``fmt``."""
    return {
        "kind": "allowed-lateness horizon",
        "window": f"[{fmt(start)}, {fmt(end)})",
        "max timestamp": fmt(end - 1),
        "allowed lateness": f"{horizon - (end - 1):,} ms",
        "horizon": fmt(horizon),
    }


def _cleanup_times(view: TraceView, operator: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (start, end, cleanup time) of the ``cleanup`` records of a time window with a
    cleanup time, as int64 arrays."""

    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = view.select("cleanup", operator=operator)
        starts, ends, present = view.bounds(rows)
        times = view.detail("cleanup", "cleanup_time", rows).tolist()
        if not all(t.__class__ is int for t in times):  # a missing time says nothing
            present = present & np.array([t is not None and t == t for t in times], dtype=bool)
            times = [int(t) if p else 0 for t, p in zip(times, present.tolist(), strict=True)]
        stamps = np.array(times, dtype=np.int64)
        return starts[present], ends[present], stamps[present]

    return memoized(view, "cleanup_times", operator, build)


def processing_time_windows(view: TraceView, operator: str) -> bool:
    """Whether ``operator``'s windows are processing-time windows (Flink's
    ``TumblingProcessingTimeWindows``…): it registered only processing-time timers
    (``WindowOperator.registerCleanupTimer`` uses the assigner's domain)."""

    def build() -> bool:
        # the operator's first registration, read a block of records at a time: an event-time
        # timer in the usual case, an event-time window's (one record read)
        code, kind = view.kind_code("timer_registered"), ("timer_registered",)
        codes, first = view.c.kind.codes, None
        for start in range(0, len(codes) if code >= 0 else 0, 1024):
            rows = start + np.flatnonzero(codes[start : start + 1024] == code)
            hit = np.flatnonzero(view.c.values_at("operator", rows, kind) == operator)
            if len(hit):
                first = rows[hit[:1]]
                break
        if first is None or view.c.values_at("detail", first, kind)[0][0] == "event":
            return False
        rows = view.select("timer_registered", operator=operator)
        _, details = distinct_values(view.c.values_at("detail", rows, ("timer_registered",)))
        return {d[0] for d in details} == {"processing"}

    return bool(memoized(view, "processing_time_windows", operator, build))
