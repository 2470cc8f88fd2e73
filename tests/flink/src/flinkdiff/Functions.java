package flinkdiff;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.delta.DeltaFunction;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.SessionWindowTimeGapExtractor;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.Collector;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The small user functions a pipeline is made of. Each knows its pipeline id to find its log. */
final class Functions {
    private Functions() {}

    // ---------------------------------------------------------------- the head of the chain

    /**
     * The head of every pipeline (a small operator rather than a map, because it must also see
     * watermarks). Turns source index i into step i's record after telling the log that step i
     * starts now.
     *
     * <p>It also swallows the watermark MAX that Flink emits when the bounded source finishes —
     * but only for a transcript WITHOUT {@code end: true}: such a transcript just stops, like
     * Flink's operator test harness, and must not see the end of input. (This matters: a
     * ContinuousEventTimeTrigger on a global window never terminates at watermark MAX.)
     */
    static final class EnterStep extends AbstractStreamOperator<Ev>
            implements OneInputStreamOperator<Long, Ev> {
        private final int pipeline;

        EnterStep(int pipeline) {
            this.pipeline = pipeline;
        }

        @Override
        public void processElement(StreamRecord<Long> index) {
            StepLog log = StepLog.of(pipeline);
            int step = index.getValue().intValue();
            log.enterStep(step);
            Ev ev = log.transcript.record(step);
            output.collect(log.transcript.hasTimestamp(step)
                    ? new StreamRecord<>(ev, ev.ts) : new StreamRecord<>(ev));
        }

        @Override // the stream's watermark class (not the generator's eventtime.Watermark above)
        public void processWatermark(org.apache.flink.streaming.api.watermark.Watermark mark)
                throws Exception {
            boolean endOfInput = mark.getTimestamp() == Long.MAX_VALUE;
            if (endOfInput && !StepLog.of(pipeline).transcript.endsWithEnd()) {
                return;
            }
            super.processWatermark(mark);
        }

        @Override
        public void finish() throws Exception {
            // Flink finishes operators only after the end-of-input watermark went down the chain:
            // from here on this pipeline's log is complete.
            super.finish();
            StepLog.of(pipeline).finished();
        }
    }

    /**
     * A punctuated watermark generator: the watermark is exactly the one a {@code watermark:} step
     * carries, emitted while that step's marker record is processed. Nothing is periodic (the job's
     * auto-watermark interval is 0). Flink's TimestampsAndWatermarksOperator forwards it only if it
     * is larger than the last one it emitted — the FORMAT.md rule "a non-increasing watermark is
     * ignored" is Flink's own behaviour here, not ours.
     */
    static final class StepWatermarks implements WatermarkGenerator<Ev> {
        @Override
        public void onEvent(Ev ev, long timestamp, WatermarkOutput out) {
            if (ev.kind == Ev.WATERMARK) {
                out.emitWatermark(new Watermark(ev.ts));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }

    /** Drops the marker records: only elements (and timer key steps) reach the operator. */
    static final class ReachesOperator implements FilterFunction<Ev> {
        @Override
        public boolean filter(Ev ev) {
            return ev.reachesOperator();
        }
    }

    static final class KeyOf implements KeySelector<Ev, String> {
        @Override
        public String getKey(Ev ev) {
            return ev.key;
        }
    }

    // ---------------------------------------------------------------- window functions

    /** What a window fired: key, value (or sorted values), the window. Timestamp is the record's. */
    public static class Out {
        public String key = "";
        public long value;
        public long[] values; // function: values
        public boolean global;
        public long start;
        public long end;

        public Out() {}
    }

    /** function: sum — incremental (reducing) state. */
    static final class Sum implements ReduceFunction<Ev> {
        @Override
        public Ev reduce(Ev a, Ev b) {
            return new Ev(a.step, Ev.ELEMENT, a.key, a.value + b.value, Math.max(a.ts, b.ts));
        }
    }

    /** function: count — incremental (aggregating) state. */
    static final class Count implements AggregateFunction<Ev, Long, Long> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Ev ev, Long acc) {
            return acc + 1;
        }

        @Override
        public Long getResult(Long acc) {
            return acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }

    private static Out out(String key, Window window) {
        Out o = new Out();
        o.key = key;
        if (window instanceof TimeWindow) {
            o.start = ((TimeWindow) window).getStart();
            o.end = ((TimeWindow) window).getEnd();
        } else {
            o.global = true;
        }
        return o;
    }

    /** Attaches key and window to the single pre-aggregated sum. */
    static final class EmitSum extends ProcessWindowFunction<Ev, Out, String, Window> {
        @Override
        public void process(String key, Context ctx, Iterable<Ev> sums, Collector<Out> collector) {
            for (Ev sum : sums) {
                Out o = out(key, ctx.window());
                o.value = sum.value;
                collector.collect(o);
            }
        }
    }

    /** Attaches key and window to the single pre-aggregated count. */
    static final class EmitCount extends ProcessWindowFunction<Long, Out, String, Window> {
        @Override
        public void process(String key, Context ctx, Iterable<Long> counts, Collector<Out> c) {
            for (Long count : counts) {
                Out o = out(key, ctx.window());
                o.value = count;
                c.collect(o);
            }
        }
    }

    /** function: values — the full window contents, sorted. */
    static final class EmitValues extends ProcessWindowFunction<Ev, Out, String, Window> {
        @Override
        public void process(String key, Context ctx, Iterable<Ev> elements, Collector<Out> c) {
            List<Long> values = new ArrayList<>();
            for (Ev ev : elements) {
                values.add(ev.value);
            }
            Collections.sort(values);
            Out o = out(key, ctx.window());
            o.values = values.stream().mapToLong(Long::longValue).toArray();
            c.collect(o);
        }
    }

    /** `delta` trigger / evictor: abs(new.value - old.value). */
    static final class ValueDelta implements DeltaFunction<Ev> {
        @Override
        public double getDelta(Ev oldPoint, Ev newPoint) {
            return Math.abs((double) newPoint.value - (double) oldPoint.value);
        }
    }

    static final class GapByKey implements SessionWindowTimeGapExtractor<Ev> {
        private final Map<String, Long> gaps;

        GapByKey(Map<String, Long> gaps) {
            this.gaps = gaps;
        }

        @Override
        public long extract(Ev ev) {
            Long gap = gaps.get(ev.key);
            if (gap == null) {
                throw new IllegalArgumentException("gap_by_key has no gap for key " + ev.key);
            }
            return gap;
        }
    }

    static final class GapFromValue implements SessionWindowTimeGapExtractor<Ev> {
        @Override
        public long extract(Ev ev) {
            return ev.value;
        }
    }

    // ---------------------------------------------------------------- recorders (the sinks)

    /** Records each fired window result as a FORMAT.md REC under the current step. */
    static final class RecordEmitted extends ProcessFunction<Out, Out> {
        private final int pipeline;

        RecordEmitted(int pipeline) {
            this.pipeline = pipeline;
        }

        @Override
        public void processElement(Out o, Context ctx, Collector<Out> c) {
            ObjectNode rec = Json.object();
            rec.put("key", o.key);
            if (o.values != null) {
                for (long v : o.values) {
                    rec.withArray("value").add(v);
                }
                if (o.values.length == 0) {
                    rec.putArray("value");
                }
            } else {
                rec.put("value", o.value);
            }
            rec.put("ts", ctx.timestamp()); // Flink stamps window results with window.maxTimestamp()
            if (o.global) {
                rec.putArray("window").addNull().addNull();
            } else {
                rec.putArray("window").add(o.start).add(o.end);
            }
            StepLog.of(pipeline).emitted(rec);
        }
    }

    /** Records each element the window operator sent to the late-data side output. */
    static final class RecordLate extends ProcessFunction<Ev, Ev> {
        private final int pipeline;

        RecordLate(int pipeline) {
            this.pipeline = pipeline;
        }

        @Override
        public void processElement(Ev ev, Context ctx, Collector<Ev> c) {
            ObjectNode rec = Json.object();
            rec.put("key", ev.key);
            rec.put("value", ev.value);
            rec.put("ts", ctx.timestamp());
            StepLog.of(pipeline).late(rec);
        }
    }

    // ---------------------------------------------------------------- kind: timers

    /**
     * The operator of a {@code kind: timers} transcript: a KeyedProcessFunction that registers and
     * deletes event-time timers for the current key as the step says (registrations first, then
     * deletions, in the order FORMAT.md lists the fields), and reports every timer that fires.
     */
    static final class Timers extends KeyedProcessFunction<String, Ev, Ev> {
        private final int pipeline;

        Timers(int pipeline) {
            this.pipeline = pipeline;
        }

        @Override
        public void processElement(Ev ev, Context ctx, Collector<Ev> c) {
            Transcript.Step step = StepLog.of(pipeline).transcript.steps.get(ev.step);
            for (long ts : step.registerEventTime) {
                ctx.timerService().registerEventTimeTimer(ts);
            }
            for (long ts : step.deleteEventTime) {
                ctx.timerService().deleteEventTimeTimer(ts);
            }
        }

        @Override
        public void onTimer(long ts, OnTimerContext ctx, Collector<Ev> c) {
            ObjectNode rec = Json.object();
            rec.put("key", ctx.getCurrentKey());
            rec.put("ts", ts);
            rec.put("domain", ctx.timeDomain() == TimeDomain.EVENT_TIME ? "event" : "processing");
            StepLog.of(pipeline).timer(rec);
        }
    }
}
