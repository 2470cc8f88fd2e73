package flinkdiff;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * One conformance transcript (FORMAT.md), already converted from YAML to JSON by the Python side,
 * parsed into the steps a Flink job can replay.
 *
 * <p>Parsing rejects what a real Flink job cannot drive exactly with {@link Unsupported} (processing
 * time, timer namespaces, other operator kinds) and malformed input with {@link Bad}.
 */
final class Transcript {

    /** A valid transcript that this differential tier cannot drive through real Flink. */
    static final class Unsupported extends Exception {
        Unsupported(String why) {
            super(why);
        }
    }

    /** A transcript that breaks FORMAT.md (unknown field, bad value). */
    static final class Bad extends Exception {
        Bad(String why) {
            super(why);
        }
    }

    /** One parsed step. */
    static final class Step {
        int kind = Ev.MARKER;
        String key = "";
        long value = 1;
        long ts;
        boolean hasTimestamp; // an element without ts travels as a StreamRecord without timestamp
        List<Long> registerEventTime = List.of();
        List<Long> deleteEventTime = List.of();
        boolean end;
    }

    private static final Set<String> WINDOW_STEP_FIELDS =
            Set.of("element", "watermark", "end", "processing_time", "expect", "expect_late");
    private static final Set<String> TIMERS_STEP_FIELDS =
            Set.of("element", "key", "watermark", "end", "processing_time",
                    "register_event_time", "delete_event_time",
                    "register_processing_time", "delete_processing_time", "expect_timers");
    /** Free-text fields a transcript may carry anywhere; they change nothing. */
    // expect_error is checked on the Python side against the failure Flink reports
    private static final Set<String> NOTE_FIELDS =
            Set.of("comment", "note", "why", "description", "expect_error");

    final String name;
    final String kind;
    final JsonNode operator;
    final List<Step> steps = new ArrayList<>();
    /** Built during parsing, so an unsupported window config is known before any job is built. */
    final WindowSpec window;

    Transcript(JsonNode doc) throws Unsupported, Bad {
        this.name = doc.path("name").asText("?");
        this.operator = doc.path("operator");
        this.kind = operator.path("kind").asText("");
        if (!kind.equals("window") && !kind.equals("timers")) {
            throw new Unsupported("operator kind '" + kind + "' is not driven through Flink here");
        }
        this.window = kind.equals("window") ? new WindowSpec(operator) : null;
        JsonNode list = doc.path("steps");
        for (int i = 0; i < list.size(); i++) {
            steps.add(parseStep(i, list.get(i)));
        }
        for (int i = 0; i + 1 < steps.size(); i++) {
            if (steps.get(i).end) {
                throw new Unsupported("step " + i + ": steps after 'end' (a finished source)");
            }
        }
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).kind == Ev.ELEMENT && !steps.get(i).hasTimestamp && hasWatermarks()) {
                throw new Unsupported("step " + i + ": element without ts in a transcript with "
                        + "watermarks (Flink's timestamp assigner gives every record one)");
            }
        }
    }

    /**
     * Whether any step is a watermark. Only then does the pipeline need Flink's timestamp and
     * watermark assigner; without it, records keep the timestamp (or none) the first operator
     * gave them, which lets elements without ts reach the window operator as such.
     */
    boolean hasWatermarks() {
        return steps.stream().anyMatch(s -> s.kind == Ev.WATERMARK);
    }

    /** Whether the last step is {@code end: true}, i.e. the bounded source finishes after it. */
    boolean endsWithEnd() {
        return !steps.isEmpty() && steps.get(steps.size() - 1).end;
    }

    /**
     * How many records the source emits: one per step, plus a trailer marker when the transcript
     * does not end with {@code end: true}. The trailer moves the "current step" past the last step,
     * so whatever the finishing source's final watermark MAX fires is not blamed on a real step.
     */
    int sourceRecords() {
        return endsWithEnd() ? steps.size() : steps.size() + 1;
    }

    /** The record the source sends for step {@code i} (or the trailer for {@code i == steps}). */
    Ev record(int i) {
        if (i >= steps.size()) {
            return new Ev(i, Ev.MARKER, "", 0, Long.MIN_VALUE);
        }
        Step s = steps.get(i);
        return new Ev(i, s.kind, s.key, s.value, s.ts);
    }

    boolean hasTimestamp(int i) {
        return i < steps.size() && steps.get(i).hasTimestamp;
    }

    private Step parseStep(int i, JsonNode node) throws Unsupported, Bad {
        Set<String> allowed = kind.equals("window") ? WINDOW_STEP_FIELDS : TIMERS_STEP_FIELDS;
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f) && !NOTE_FIELDS.contains(f)) {
                throw new Bad("step " + i + ": unknown field '" + f + "' for kind " + kind);
            }
        }
        if (node.has("processing_time")) {
            throw new Unsupported("step " + i + ": processing_time cannot be driven exactly in a real job");
        }
        for (String f : List.of("register_processing_time", "delete_processing_time")) {
            if (node.has(f) && node.get(f).size() > 0) {
                throw new Unsupported("step " + i + ": " + f + " (processing-time timers)");
            }
        }
        Step s = new Step();
        int actions = 0;
        if (node.has("element")) {
            actions++;
            JsonNode e = node.get("element");
            s.kind = Ev.ELEMENT;
            s.key = e.path("key").asText("");
            s.value = e.has("value") ? Json.toLong(e.get("value"), "step " + i + " value") : 1;
            if (e.has("ts")) {
                s.ts = Json.toLong(e.get("ts"), "step " + i + " ts");
                s.hasTimestamp = true;
            }
        }
        if (node.has("key")) {
            actions++;
            s.kind = Ev.KEY_ONLY;
            s.key = node.get("key").asText();
        }
        if (node.has("watermark")) {
            actions++;
            s.kind = Ev.WATERMARK;
            s.ts = Json.toLong(node.get("watermark"), "step " + i + " watermark");
        }
        if (node.has("end")) {
            actions++;
            if (!node.get("end").asBoolean()) {
                throw new Bad("step " + i + ": 'end' must be true");
            }
            s.end = true;
        }
        if (actions != 1) {
            throw new Bad("step " + i + ": needs exactly one of element / key / watermark / end");
        }
        s.registerEventTime = timestamps(node, "register_event_time", i);
        s.deleteEventTime = timestamps(node, "delete_event_time", i);
        return s;
    }

    private static List<Long> timestamps(JsonNode step, String field, int i)
            throws Unsupported, Bad {
        List<Long> out = new ArrayList<>();
        for (JsonNode t : step.path(field)) {
            if (t.isObject()) {
                String ns = t.path("namespace").asText("default");
                if (!ns.equals("default")) {
                    throw new Unsupported("step " + i + ": timer namespace '" + ns
                            + "' (a KeyedProcessFunction has only one namespace)");
                }
                t = t.get("ts");
            }
            out.add(Json.toLong(t, "step " + i + " " + field));
        }
        return out;
    }
}
