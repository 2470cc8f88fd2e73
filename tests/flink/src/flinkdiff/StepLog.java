package flinkdiff;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one pipeline produced, step by step — the heart of the output attribution.
 *
 * <p>Why this works: every pipeline runs with parallelism 1 and is CHAINED into a single task, so
 * one thread runs source -> map -> watermark assigner -> filter -> window/process -> recorders,
 * and each call returns only when everything it caused downstream has happened. The map at the
 * head of the chain sets {@link #currentStep} before it forwards step i's record; every output
 * recorded until the next record arrives was therefore caused by step i. The final watermark MAX
 * of the finishing source arrives after the last record, so it is blamed on the last step (the
 * {@code end: true} step, or the trailer marker that is not reported).
 *
 * <p>The logs live in a static map (keyed by pipeline id) because Flink serializes the functions:
 * a MiniCluster runs in this JVM, so the static map is shared between the functions and main().
 */
final class StepLog {
    private static final Map<Integer, StepLog> LOGS = new ConcurrentHashMap<>();
    private static final int MAX_OUTPUTS = 100_000;

    final Transcript transcript;
    private volatile int currentStep = -1;
    private volatile boolean finished;
    /** Set by main() when the job overran its time: every further output then fails the task. */
    private volatile boolean abandoned;
    private int outputs;
    private final List<ArrayNode> emitted = new ArrayList<>();
    private final List<ArrayNode> late = new ArrayList<>();
    private final List<ArrayNode> timers = new ArrayList<>();

    private StepLog(Transcript transcript) {
        this.transcript = transcript;
        for (int i = 0; i < transcript.steps.size(); i++) {
            emitted.add(Json.array());
            late.add(Json.array());
            timers.add(Json.array());
        }
    }

    static StepLog open(int pipeline, Transcript t) {
        StepLog log = new StepLog(t);
        LOGS.put(pipeline, log);
        return log;
    }

    static StepLog of(int pipeline) {
        return LOGS.get(pipeline);
    }

    static void close(int pipeline) {
        LOGS.remove(pipeline);
    }

    void enterStep(int step) {
        currentStep = step;
    }

    void finished() {
        finished = true;
    }

    int currentStep() {
        return currentStep;
    }

    boolean isFinished() {
        return finished;
    }

    void abandon() {
        abandoned = true;
    }

    synchronized void emitted(ObjectNode rec) {
        add(emitted, rec);
    }

    synchronized void late(ObjectNode rec) {
        add(late, rec);
    }

    synchronized void timer(ObjectNode rec) {
        add(timers, rec);
    }

    private void add(List<ArrayNode> perStep, ObjectNode rec) {
        if (abandoned || ++outputs > MAX_OUTPUTS) {
            // Flink is firing without end (see README.md): stop this task by failing it.
            throw new IllegalStateException("runaway pipeline: stopped after " + outputs + " outputs");
        }
        int step = currentStep;
        if (step < 0) {
            throw new IllegalStateException("output before the first step: " + rec);
        }
        if (step < perStep.size()) { // else: caused by the trailer, after the last step
            perStep.get(step).add(rec);
        }
    }

    /** The FORMAT.md `--json` document entry: {"name", "steps": [STEP_RESULT, ...]}. */
    synchronized ObjectNode result() {
        ObjectNode doc = Json.object();
        doc.put("name", transcript.name);
        ArrayNode steps = doc.putArray("steps");
        for (int i = 0; i < transcript.steps.size(); i++) {
            ObjectNode step = steps.addObject();
            if (transcript.kind.equals("window")) {
                step.set("emitted", emitted.get(i));
                step.set("late", late.get(i));
            } else {
                step.set("timers", timers.get(i));
            }
        }
        return doc;
    }
}
