package flinkdiff;

import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.Window;

/**
 * Wraps a Flink trigger and delegates every call unchanged, but fails the task once the trigger
 * has been asked about an event-time timer a million times.
 *
 * <p>Why: some configurations make real Flink fire forever — a ContinuousEventTimeTrigger
 * re-registers "time + interval", which wraps around past Long.MAX_VALUE (on a global window at
 * watermark MAX, or on a window whose end overflowed near MAX) and so is due again at once. When the
 * window is purged, nothing is emitted and only this counter notices. A task stuck in that loop
 * cannot even be cancelled; failing it turns the transcript into a clear error instead.
 */
final class GuardedTrigger<T, W extends Window> extends Trigger<T, W> {
    static final long MAX_TIMER_CALLS = 1_000_000;

    private final Trigger<T, W> inner;
    private long timerCalls;

    GuardedTrigger(Trigger<T, W> inner) {
        this.inner = inner;
    }

    @Override
    public TriggerResult onElement(T element, long timestamp, W window, TriggerContext ctx)
            throws Exception {
        return inner.onElement(element, timestamp, window, ctx);
    }

    @Override
    public TriggerResult onEventTime(long time, W window, TriggerContext ctx) throws Exception {
        if (++timerCalls > MAX_TIMER_CALLS) {
            throw new IllegalStateException("runaway pipeline: Flink fired more than "
                    + MAX_TIMER_CALLS + " event-time timers (it would never stop)");
        }
        return inner.onEventTime(time, window, ctx);
    }

    @Override
    public TriggerResult onProcessingTime(long time, W window, TriggerContext ctx)
            throws Exception {
        return inner.onProcessingTime(time, window, ctx);
    }

    @Override
    public boolean canMerge() {
        return inner.canMerge();
    }

    @Override
    public void onMerge(W window, OnMergeContext ctx) throws Exception {
        inner.onMerge(window, ctx);
    }

    @Override
    public void clear(W window, TriggerContext ctx) throws Exception {
        inner.clear(window, ctx);
    }

    @Override
    public String toString() {
        return inner.toString();
    }
}
