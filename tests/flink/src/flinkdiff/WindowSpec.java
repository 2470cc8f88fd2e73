package flinkdiff;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.streaming.api.functions.windowing.delta.DeltaFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.SessionWindowTimeGapExtractor;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.evictors.CountEvictor;
import org.apache.flink.streaming.api.windowing.evictors.DeltaEvictor;
import org.apache.flink.streaming.api.windowing.evictors.Evictor;
import org.apache.flink.streaming.api.windowing.evictors.TimeEvictor;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.triggers.DeltaTrigger;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * The {@code operator:} block of a {@code kind: window} transcript, turned into Flink's OWN
 * assigner / trigger / evictor objects (nothing here re-implements Flink semantics).
 */
@SuppressWarnings({"rawtypes", "unchecked"})
final class WindowSpec {
    private static final Set<String> FIELDS = Set.of("kind", "assigner", "trigger", "evictor",
            "allowed_lateness", "late_side_output", "function");

    final WindowAssigner<Object, Window> assigner;
    /** null: keep the assigner's default trigger (event time, or never for global windows). */
    final Trigger<Object, Window> trigger;
    final Evictor<Object, Window> evictor; // null: none
    final long allowedLateness;
    final boolean lateSideOutput;
    final String function;

    WindowSpec(JsonNode op) throws Transcript.Unsupported, Transcript.Bad {
        for (Iterator<String> it = op.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new Transcript.Bad("operator: unknown field '" + f + "'");
            }
        }
        assigner = (WindowAssigner) assigner(op.path("assigner"));
        trigger = op.has("trigger") ? (Trigger) trigger(op.get("trigger")) : null;
        evictor = op.has("evictor") ? (Evictor) evictor(op.get("evictor")) : null;
        allowedLateness = op.has("allowed_lateness")
                ? Json.toLong(op.get("allowed_lateness"), "allowed_lateness") : 0;
        lateSideOutput = op.path("late_side_output").asBoolean(false);
        function = op.path("function").asText("sum");
        if (!Set.of("sum", "count", "values").contains(function)) {
            throw new Transcript.Bad("operator: unknown function '" + function + "'");
        }
    }

    private static Duration ms(JsonNode n, String field) throws Transcript.Bad {
        return Duration.ofMillis(Json.toLong(n.get(field), field));
    }

    private static WindowAssigner<?, ?> assigner(JsonNode a)
            throws Transcript.Unsupported, Transcript.Bad {
        if (a.path("time").asText("event").equals("processing")) {
            throw new Transcript.Unsupported("processing-time assigner");
        }
        Duration offset = a.has("offset") ? ms(a, "offset") : Duration.ZERO;
        switch (a.path("type").asText()) {
            case "tumbling":
                return TumblingEventTimeWindows.of(ms(a, "size"), offset);
            case "sliding":
                return SlidingEventTimeWindows.of(ms(a, "size"), ms(a, "slide"), offset);
            case "session":
                return EventTimeSessionWindows.withGap(ms(a, "gap"));
            case "dynamic_session":
                return EventTimeSessionWindows.withDynamicGap(gapExtractor(a));
            case "global":
                return GlobalWindows.create(); // default trigger: NeverTrigger
            default:
                throw new Transcript.Bad("assigner: unknown type '" + a.path("type").asText() + "'");
        }
    }

    private static SessionWindowTimeGapExtractor<Ev> gapExtractor(JsonNode a)
            throws Transcript.Bad {
        if (a.path("gap_from_value").asBoolean(false)) {
            return new Functions.GapFromValue();
        }
        if (!a.has("gap_by_key")) {
            throw new Transcript.Bad("dynamic_session needs gap_by_key or gap_from_value");
        }
        Map<String, Long> gaps = new HashMap<>();
        for (Map.Entry<String, JsonNode> e : a.get("gap_by_key").properties()) {
            gaps.put(e.getKey(), Json.toLong(e.getValue(), "gap_by_key." + e.getKey()));
        }
        return new Functions.GapByKey(gaps);
    }

    private static Trigger<?, ?> trigger(JsonNode t) throws Transcript.Unsupported, Transcript.Bad {
        switch (t.path("type").asText()) {
            case "event_time":
                // Declared Trigger<Object, TimeWindow>: on a global window Flink throws a
                // ClassCastException at the first element.
                return EventTimeTrigger.create();
            case "end_of_stream":
                // Not (yet) in FORMAT.md: GlobalWindows.createWithEndOfStreamTrigger()'s trigger,
                // which fires a global window at the end of input.
                return GlobalWindows.createWithEndOfStreamTrigger().getDefaultTrigger();
            case "count":
                return CountTrigger.of(Json.toLong(t.get("n"), "trigger.n"));
            case "continuous_event_time":
                return ContinuousEventTimeTrigger.of(ms(t, "interval"));
            case "purging":
                return PurgingTrigger.of((Trigger) trigger(t.path("of")));
            case "never":
                // Flink's own never-firing trigger (the global window's default). It is declared for
                // GlobalWindow but never looks at the window, so it works for any window type.
                return neverTrigger();
            case "delta":
                return DeltaTrigger.of(t.path("threshold").asDouble(), new Functions.ValueDelta(),
                        TypeInformation.of(Ev.class).createSerializer(new SerializerConfigImpl()));
            case "processing_time":
            case "continuous_processing_time":
                throw new Transcript.Unsupported("processing-time trigger");
            default:
                throw new Transcript.Bad("trigger: unknown type '" + t.path("type").asText() + "'");
        }
    }

    private static Trigger<?, ?> neverTrigger() {
        // GlobalWindows.create() is constructed with a NeverTrigger as its default trigger.
        return GlobalWindows.create().getDefaultTrigger();
    }

    private static Evictor<?, ?> evictor(JsonNode e) throws Transcript.Bad {
        boolean after = e.path("after").asBoolean(false);
        switch (e.path("type").asText()) {
            case "count":
                return CountEvictor.of(Json.toLong(e.get("max"), "evictor.max"), after);
            case "time":
                return TimeEvictor.of(ms(e, "size"), after);
            case "delta":
                DeltaFunction<Ev> delta = new Functions.ValueDelta();
                return DeltaEvictor.of(e.path("threshold").asDouble(), delta, after);
            default:
                throw new Transcript.Bad("evictor: unknown type '" + e.path("type").asText() + "'");
        }
    }
}
