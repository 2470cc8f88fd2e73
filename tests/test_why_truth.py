"""Words that are never false (issue 26): every claim a ``why_*`` answer makes is checked
against the engine on random jobs — the generator of the chart-truth test (tests/jobs.py:
single source, two partitions or a union; idleness; tumbling, sliding and session windows
with merges; allowed lateness and side outputs; count, continuous and purging triggers), at
parallelism 1 and 2.

* A firing named as caused by an element is re-run *without that element*: the window then
  fires fewer times on elements before the next element of its operator arrives.
* "first firing" / "re-firing" and "late firing" are checked by walking the engine's records
  (this file's own walk, no winviz.why code): the count of earlier ``fired`` records of the
  window (a restore rolls it back to its checkpoint's), and the operator's watermark before
  the cause (before the advance that fired an event-time timer) against the window's max
  timestamp. The generated jobs never restore: the walk's restores are checked on fixed jobs.
* ``why_not_fired`` on ``trace.until(t)``: the channel states it judges are recomputed from
  the records; one holder is an *active* channel below the max timestamp while every other
  active channel is at or above it, and the run's continuation confirms it — the window's
  first firing comes only after that channel went idle or its watermark reached the max
  timestamp (or at the end of input, which raises every channel). Several holders: each is
  active and below. (Judged against the trigger's next event-time timer: the max timestamp,
  or an earlier continuous-trigger timer.) with_idleness is named only when marking the
  holder idle leaves every other active channel at or above
  the max timestamp, and never when the trace shows an idle channel of that operator.
* ``why_dropped``: the fate is the records' (late = ts ≤ watermark), and a window's "fired at
  once on it" is re-run without the element as above.

Deterministic (``derandomize``); the examples and counts are printed with ``-s``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jobs import build, count_pipeline, jobs, restored_after_idle

import winviz as wv
from winviz.time import MAX, MIN
from winviz.trace.channels import CHANNEL_KINDS
from winviz.why import ElementFate, Firing, WatermarkHeld

EXAMPLES = int(__import__("os").environ.get("WHY_EXAMPLES", "500"))
WINDOWS = 3  # windows per job whose firings are all checked (plus one picked at random)
TALLY: Counter[str] = Counter()


def run(job: dict[str, Any], parallelism: int) -> wv.Trace:
    return build(job, True).set_parallelism(parallelism).execute().trace


def walk(trace: wv.Trace) -> dict[str, Any]:
    """What the engine's records say, read one by one: per fired record (by seq) the number
    of earlier fired records of its (operator, key, window), its trigger call, and the
    operator's watermark before its cause; per (operator, key, window) its fired seqs.

    A restore rolls the job back to its checkpoint: the firings after that checkpoint were
    undone (their outputs too), so the counts go back to what they were at the
    ``checkpoint`` record (to none without one); the watermarks go back to MIN through the
    restore's own ``watermark`` records."""
    wm: dict[str, int] = {}
    prev: dict[str, int] = {}
    count: Counter[tuple] = Counter()
    at_checkpoint: dict[int, Counter[tuple]] = {}
    call: dict[str, str] = {}
    fired: dict[int, dict[str, Any]] = {}
    by_window: dict[tuple, list[int]] = {}
    for r in trace.records():
        op = r.operator
        if r.kind == "watermark":
            prev[op], wm[op] = wm.get(op, MIN), r.ts
        elif r.kind == "trigger":
            call[op] = r.detail[0]
        elif r.kind == "checkpoint":
            at_checkpoint[r.detail[0]] = Counter(count)
        elif r.kind == "restore":
            count = Counter(at_checkpoint.get(r.detail[0], Counter()))
        elif r.kind == "fired" and hasattr(r.window, "start"):
            ident = (op, r.key, r.window.start, r.window.end)
            timer = call.get(op) == "on_event_time"
            fired[r.seq] = {
                "earlier": count[ident],
                "call": call.get(op),
                "before": prev.get(op, MIN) if timer else wm.get(op, MIN),
                "max_ts": r.window.end - 1,
            }
            count[ident] += 1
            by_window.setdefault(ident, []).append(r.seq)
    return {"fired": fired, "by_window": by_window}


def element_firings(trace: wv.Trace, op: str, key: Any, window: tuple[int, int]) -> list[int]:
    """Per element record of ``op`` (by its source index), how many fired records of the
    window caused by an element or a merge came before it: {index: count}."""
    out, n, call = {}, 0, None
    for r in trace.records(operator=op):
        if r.kind == "trigger":
            call = r.detail[0]
        elif r.kind == "element":
            out[r.detail[2]] = n
        elif (
            r.kind == "fired"
            and r.key == key
            and hasattr(r.window, "start")
            and (r.window.start, r.window.end) == window
            and call in ("on_element", "on_merge")
        ):
            n += 1
    out[None] = n  # (after the last element)
    return out


def confirm_element_cause(
    job: dict[str, Any],
    parallelism: int,
    trace: wv.Trace,
    op: str,
    key: Any,
    window: tuple[int, int],
    element_seq: int,
) -> None:
    """The element at ``element_seq`` made ``window`` fire: without it, the window fires fewer
    times on elements before the next element of ``op`` arrives."""
    element = trace.records_at([element_seq])[0]
    index = element.detail[2]
    later = [
        r.detail[2]
        for r in trace.records("element", operator=op)
        if r.seq > element_seq and r.detail[2] != index
    ]
    upto = later[0] if later else None
    before = element_firings(trace, op, key, window)[upto]
    without = dict(job)
    keep = [i for i, e in enumerate(job["events"]) if e[2] != index]
    for name in ("events", "arrivals", "parts"):
        without[name] = [job[name][i] for i in keep]
    again = element_firings(run(without, parallelism), op, key, window)
    assert again.get(upto, again[None]) < before, (op, key, window, index)
    TALLY["element cause confirmed by a re-run without it"] += 1


def check_firing(f: Firing, facts: dict[str, Any]) -> None:
    fact = facts["fired"][f.seq]
    assert f.earlier_firings == fact["earlier"]
    assert f.watermark_before == fact["before"]
    assert f.late_firing == (fact["before"] >= fact["max_ts"])
    assert f.max_timestamp == fact["max_ts"]
    TALLY["late firing" if f.late_firing else "not a late firing"] += 1
    TALLY["re-firing" if f.earlier_firings else "first firing"] += 1


def channel_states(trace: wv.Trace, operator: str) -> dict[Any, tuple[int, bool]]:
    """Each channel of ``operator`` that wrote a record since the last restore (which starts
    fresh operators: every channel at MIN and active): (watermark, idle)."""
    state: dict[Any, tuple[int, bool]] = {}
    for r in trace.records(*CHANNEL_KINDS, "restore"):
        if r.kind == "restore":
            state = {}
            continue
        if r.operator != operator:
            continue
        channel = r.detail[0]
        wm, idle = state.get(channel, (MIN, False))
        if r.kind == "channel_watermark":
            wm = r.ts
        else:
            idle = r.kind == "channel_idle"
        state[channel] = (wm, idle)
    return state


def check_held(
    held: WatermarkHeld,
    cut: wv.Trace,
    full: wv.Trace,
    facts: dict[str, Any],
    key: Any,
    window: tuple[int, int],
    idleness: int,
) -> None:
    assert held.max_timestamp == window[1] - 1
    max_ts = held.target  # the trigger's next event-time timer (≤ the max timestamp)
    assert max_ts <= held.max_timestamp
    assert held.watermark < max_ts
    if held.channels_of is None:
        TALLY["held: one input"] += 1
        return
    states = channel_states(cut, held.channels_of)
    for ch in held.holders:
        if ch.channel is not None and ch.channel in states:
            assert states[ch.channel] == (ch.watermark, False)  # active, below
        else:
            assert ch.watermark == MIN  # a channel that wrote nothing: MIN
        assert ch.watermark < max_ts
    for ch in held.idle:
        assert states[ch.channel][1] is True
    for ch in held.unaligned:  # active below the operator's watermark: never in the minimum
        assert states[ch.channel] == (ch.watermark, False)  # (the minimum is never below it)
        assert ch.watermark < held.watermark
        TALLY["held: an active channel not aligned"] += 1
    named = {ch.channel for ch in (*held.holders, *held.idle, *held.unaligned)}
    for channel, (wm, idle) in states.items():  # every other channel: idle or high enough
        if channel not in named:
            assert not idle and wm >= max_ts
    if len(held.holders) > 1:
        TALLY["held: no single input (said so)"] += 1
        return
    if held.idleness_would_help:
        assert held.others is not None and held.others >= max_ts
        TALLY["idleness would help"] += 1
    if "with_idleness(t) marks" in render_one(held):
        assert not any(idle for _wm, idle in states.values())  # no idleness seen
        assert held.idleness_would_help
        TALLY["with_idleness advised"] += 1
        # the trace records the strategy's idleness (issue 26): never advised to a job that
        # has it, even before its timeout passed
        assert not idleness
    if len(held.holders) != 1:
        TALLY["held: every input idle"] += 1
        return
    holder = held.holders[0]
    # the continuation: the window's first firing is raised by the holder (or by the end of
    # input, which raises every input)
    op = held.operator
    fired = full.rows_where(kind="fired", operator=op, key=key, window=window)
    if not len(fired):
        TALLY["held: never fired in the run"] += 1
        return
    first = full.records_at(fired[:1])[0]
    if facts["fired"][first.seq]["call"] != "on_event_time":
        TALLY["held: first fired by its trigger on an element"] += 1
        return
    if first.watermark == MAX:
        TALLY["held: fired at the end of input"] += 1
        return
    # the holder stopped holding before the firing: it went idle, or its watermark reached
    # the max timestamp (a channel that wrote nothing: any record of it)
    cut_end = cut.records()[-1].seq
    own = [
        r
        for r in full.records(*CHANNEL_KINDS, operator=held.channels_of)
        if cut_end < r.seq < first.seq and (holder.channel is None or r.detail[0] == holder.channel)
    ]
    assert any(
        r.kind == "channel_idle" or (r.kind == "channel_watermark" and r.ts >= max_ts) for r in own
    ), (window, held, own)
    TALLY["holder confirmed by the run's continuation"] += 1


def render_one(claim: Any) -> str:
    from winviz.why import render

    return render((claim,))


def last_element(trace: wv.Trace, op: str, index: int) -> wv.TraceRecord:
    """The element record of source record ``index`` at ``op``: of its last arrival when a
    restore replayed it (the one ``why_dropped`` answers for)."""
    return [r for r in trace.records("element", operator=op) if r.detail[2] == index][-1]


def check_fate(fate: ElementFate, trace: wv.Trace, index: int) -> None:
    element = last_element(trace, fate.operator, index)
    late = element.ts is not None and element.watermark is not None
    late = late and element.ts <= element.watermark
    if fate.fate == "on time":
        assert not late
    else:
        assert late
    TALLY[f"fate: {fate.fate}"] += 1


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.generate],
)
@given(job=jobs(), parallelism=st.sampled_from([1, 2]), pick=st.integers(0, 10**6))
def test_every_why_claim_holds_against_the_engine(
    job: dict[str, Any], parallelism: int, pick: int
) -> None:
    trace = run(job, parallelism)
    ops = trace.operators("fired", "assigned")
    if not ops:
        return
    op = ops[pick % len(ops)]
    facts = walk(trace)
    # the windows that fired most often first (re-firings, late firings), then one by pick
    fired = sorted(
        (k for k in facts["by_window"] if k[0] == op),
        key=lambda k: (-len(facts["by_window"][k]), repr(k)),
    )
    chosen = fired[:WINDOWS] + fired[WINDOWS:][pick % max(1, len(fired) - WINDOWS) :][:1]
    reruns = 0
    for _op, key, start, end in chosen:
        window = (start, end)
        answer = wv.why_fired(trace, key, window, operator=op)
        assert answer.sentence  # rendered from the claims
        for f in answer.claims:
            assert isinstance(f, Firing)
            check_firing(f, facts)
            if f.cause in ("element", "session merge") and reruns < 2:
                reruns += 1
                confirm_element_cause(job, parallelism, trace, op, key, window, f.element_seq)
    # why_not_fired at a cut: every window with contents then that fires later
    procs = sorted({r.proc_time for r in trace.records("element", operator=op)})
    if procs:
        t = procs[pick % len(procs)]
        cut = trace.until(t)
        cut_fired = {
            (r.key, (r.window.start, r.window.end))
            for r in cut.records("fired", operator=op)
            if hasattr(r.window, "start")
        }
        seen = {
            (r.key, (r.window.start, r.window.end))
            for r in cut.records("assigned", operator=op)
            if hasattr(r.window, "start")
        }
        for key, window in sorted(seen - cut_fired, key=repr)[:4]:
            answer = wv.why_not_fired(cut, key, window, operator=op)
            (claim,) = answer.claims
            if isinstance(claim, WatermarkHeld):
                check_held(claim, cut, trace, facts, key, window, job["idle"] or 0)
            else:
                TALLY[type(claim).__name__] += 1
    # why_dropped of a few records
    indexes = [r.detail[2] for r in trace.records("element", operator=op)]
    arrivals = {r.detail[0][2]: r for r in trace.records("arrival")}
    for index in indexes[pick % 7 :: 7][:3]:
        arrival = arrivals[index]  # (its index is the source's arrival order)
        answer = wv.why_dropped(trace, arrival.detail[1], source=arrival.operator)
        (fate,) = answer.claims
        if not isinstance(fate, ElementFate) or fate.operator != op:
            continue
        check_fate(fate, trace, index)
        for o in fate.windows:
            if o.next_firing is not None:
                check_firing(o.next_firing, facts)
            if o.fired_now and reruns < 3:
                reruns += 1
                element = next(
                    r for r in trace.records("element", operator=op) if r.detail[2] == index
                )
                start, end = o.window.strip("[)").split(", ")
                confirm_element_cause(
                    job, parallelism, trace, op, element.key, (int(start), int(end)), element.seq
                )


def test_the_oracle_rolls_its_counts_back_with_a_restore() -> None:
    """Generated jobs never restore (tests/jobs.py's ``build`` takes no checkpoint and plans
    no failure), so the oracle's reading of a restore is checked here: a tumbling window that
    fires on every record (CountTrigger.of(1)), the checkpoint after two records (seq 16), the
    failure after four, the restore (seq 33) replaying records 3 and 4. The firings after the
    checkpoint (seq 23, 31) are undone with their outputs (the sink keeps five counts);
    replayed, the window's firings are its 3rd and 4th again (2 and 3 earlier), as the
    engine's pane index, restored with the checkpoint, says."""
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[2])
    events = [("a", t) for t in (10, 20, 30, 40, 50)]
    arrivals = [0, 10, 20, 30, 40]
    run = count_pipeline(env, events, 1000, trigger=wv.CountTrigger.of(1), arrival_times=arrivals)
    result = run.execute(fail_at=4)
    trace = result.trace
    assert [r.seq for r in trace.records("checkpoint", "restore")] == [16, 33]
    fired = trace.records("fired")
    assert [r.seq for r in fired] == [6, 14, 23, 31, 40, 48, 56]
    assert [r.detail[0] for r in fired] == [1, 2, 3, 4, 3, 4, 5]
    facts = walk(trace)["fired"]
    assert [facts[r.seq]["earlier"] for r in fired] == [0, 1, 2, 3, 2, 3, 4]
    assert [r.detail[1] for r in fired] == [0, 1, 2, 3, 2, 3, 4]  # the engine's pane index
    assert [r.value for r in result.outputs["out"]] == [1, 2, 3, 4, 5]


def test_the_oracle_reads_every_channel_afresh_after_a_restore() -> None:
    """tests/jobs.py's ``restored_after_idle``: before the restore (seq 56) partition 0
    advanced to 2999 and became active again, partition 1 went idle at 1499. A restore starts
    fresh operators, every channel at MIN and active: at the failure's cut (1100 ms) neither
    channel wrote a record since (both MIN, active), and at the end partition 1 is idle at MIN
    (its 1499 came before the restore), partition 0 active at 8999."""
    trace = restored_after_idle().trace
    assert [r.seq for r in trace.records("restore")] == [56]
    assert channel_states(trace.until(1100), "watermarks") == {}
    assert channel_states(trace, "watermarks") == {0: (8999, False), 1: (MIN, True)}


def test_the_property_test_exercised_every_kind_of_claim() -> None:
    """Run after the property test (same module, in order): every kind of claim was checked
    at least once, so the property test cannot pass by checking nothing."""
    if not TALLY:  # (run alone with -k)
        test_every_why_claim_holds_against_the_engine()
    print(dict(sorted(TALLY.items())))
    for kind in (
        "element cause confirmed by a re-run without it",
        "late firing",
        "re-firing",
        "holder confirmed by the run's continuation",
        "held: no single input (said so)",
        "fate: late, accepted",
    ):
        assert TALLY[kind] > 0, kind
