package flinkdiff;

import org.apache.flink.api.common.eventtime.WatermarkAlignmentParams;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.groups.InternalSourceReaderMetricGroup;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.operators.coordination.CoordinatorStore;
import org.apache.flink.runtime.operators.coordination.CoordinatorStoreImpl;
import org.apache.flink.runtime.operators.coordination.OperatorEventGateway;
import org.apache.flink.runtime.source.coordinator.FlinkdiffCoordinatorProbe;
import org.apache.flink.runtime.source.coordinator.SourceCoordinator;
import org.apache.flink.runtime.source.event.ReportedWatermarkEvent;
import org.apache.flink.runtime.source.event.WatermarkAlignmentEvent;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.api.operators.source.TimestampsAndWatermarks;
import org.apache.flink.streaming.api.operators.source.WatermarkSampler;
import org.apache.flink.streaming.api.operators.util.PausableRelativeClock;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.util.clock.SystemClock;

import sun.misc.Unsafe;

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * Watermark alignment in Flink 2.3's own classes, driven step by step (tests/flink/alignment.py).
 *
 * <p>Each case is the sequence of calls winviz's alignment made while it ran a random job:
 * what a reader's watermarks did ({@code updateCurrentEffectiveWatermark}, {@code updateIdle},
 * {@code updateCurrentSplitWatermark}, {@code updateCurrentSplitIdle}), the update-interval
 * sampling and report ({@code sampleAndEmitLatestWatermark}), the end of a reader's input
 * ({@code END_OF_INPUT}, then {@code emitNext} in {@code DATA_FINISHED}), and on the
 * coordinator side the reports ({@code handleReportedWatermark}) and announcements
 * ({@code announceCombinedWatermark}), whose {@code WatermarkAlignmentEvent}s go to the
 * readers' {@code handleOperatorEvent}. Each call goes to a real {@link SourceOperator} /
 * {@link SourceCoordinator}, made without its constructor (it needs a running task) and given
 * only the fields these methods read; their reader, event-time logic and event gateway are
 * proxies that record what the operator asked of them. After each call this writes what Flink
 * decided: whether the reader waits for alignment ({@code OperatingMode.WAITING_FOR_ALIGNMENT}),
 * which splits are paused (from the {@code pauseOrResumeSplits} calls), the watermark reported
 * and the max watermark announced to which subtasks.
 */
public final class Align {
    private Align() {}

    private static final Unsafe UNSAFE;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static void set(Object target, Class<?> owner, String name, Object value)
            throws Exception {
        Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        f.set(target, value);
    }

    private static Object get(Object target, Class<?> owner, String name) throws Exception {
        Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
    }

    private static Method method(String name, Class<?>... types) throws Exception {
        Method m = SourceOperator.class.getDeclaredMethod(name, types);
        m.setAccessible(true);
        return m;
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, java.lang.reflect.InvocationHandler h) {
        return (T) Proxy.newProxyInstance(Align.class.getClassLoader(), new Class<?>[] {type}, h);
    }

    /** One reader subtask: Flink's operator and what its proxies recorded. */
    static final class Reader {
        final SourceOperator<?, ?> op;
        final TreeSet<String> paused = new TreeSet<>();
        final List<Long> reports = new ArrayList<>();

        @SuppressWarnings("unchecked")
        Reader(WatermarkAlignmentParams params, int buffer, JsonNode splits) throws Exception {
            op = (SourceOperator<?, ?>) UNSAFE.allocateInstance(SourceOperator.class);
            Class<?> so = SourceOperator.class;
            set(op, so, "watermarkAlignmentParams", params);
            set(op, so, "watermarkBufferSize", buffer);
            set(op, so, "sampledLatestWatermark", new WatermarkSampler(buffer));
            set(op, so, "sampledSplitWatermarks", new HashMap<>());
            set(op, so, "splitMetricGroups", new HashMap<>());
            set(op, so, "currentlyPausedSplits", new HashSet<>());
            set(op, so, "currentlyIdleSplits", new HashSet<>());
            set(op, so, "currentMaxDesiredWatermark", Long.MAX_VALUE);
            set(op, so, "waitingForAlignmentFuture", CompletableFuture.completedFuture(null));
            set(op, so, "mainInputActivityClock",
                    new PausableRelativeClock(SystemClock.getInstance()));
            set(op, so, "allowUnalignedSourceSplits", false);
            set(op, so, "sourceMetricGroup",
                    InternalSourceReaderMetricGroup.mock(new UnregisteredMetricsGroup()));
            Class<?> mode = Class.forName(SourceOperator.class.getName() + "$OperatingMode");
            set(op, so, "operatingMode", Enum.valueOf((Class<Enum>) mode, "READING"));
            set(op, AbstractStreamOperator.class, "metrics",
                    UnregisteredMetricGroups.createUnregisteredOperatorMetricGroup());
            set(op, AbstractStreamOperator.class, "processingTimeService",
                    proxy(ProcessingTimeService.class, (p, m, a) -> {
                        if (m.getName().equals("getClock")) {
                            return SystemClock.getInstance();
                        }
                        throw new UnsupportedOperationException(m.getName());
                    }));
            set(op, so, "sourceReader", proxy(SourceReader.class, (p, m, a) -> {
                if (m.getName().equals("pauseOrResumeSplits")) {
                    paused.addAll((Collection<String>) a[0]);
                    paused.removeAll((Collection<String>) a[1]);
                    return null;
                }
                throw new UnsupportedOperationException(m.getName());
            }));
            set(op, so, "eventTimeLogic", proxy(TimestampsAndWatermarks.class, (p, m, a) -> {
                if (m.getName().equals("pauseOrResumeSplits")) {
                    return null; // (it pauses the split's idleness clock)
                }
                throw new UnsupportedOperationException(m.getName());
            }));
            set(op, so, "operatorEventGateway", proxy(OperatorEventGateway.class, (p, m, a) -> {
                if (m.getName().equals("sendEventToCoordinator")) {
                    reports.add(((ReportedWatermarkEvent) a[0]).getWatermark());
                    return null;
                }
                throw new UnsupportedOperationException(m.getName());
            }));
            set(op, so, "currentMainOutput", proxy(ReaderOutput.class, (p, m, a) -> {
                throw new UnsupportedOperationException(m.getName());
            }));
            if (splits.isArray()) { // the splits assigned to the reader (createMetricGroupForSplits)
                Method create = method("getOrCreateSplitMetricGroup", String.class);
                for (JsonNode s : splits) {
                    create.invoke(op, s.asText());
                }
            }
        }

        boolean waiting() throws Exception {
            return get(op, SourceOperator.class, "operatingMode").toString()
                    .equals("WAITING_FOR_ALIGNMENT");
        }
    }

    private static ObjectNode runCase(JsonNode c) throws Exception {
        Map<Integer, Reader> readers = new HashMap<>();
        Map<String, SourceCoordinator<?, ?>> coordinators = new HashMap<>();
        CoordinatorStore store = new CoordinatorStoreImpl();
        ArrayNode results = Json.array();
        Method sample = method("sampleAndEmitLatestWatermark");
        Method convert = method("convertToInternalStatus", InputStatus.class);
        for (JsonNode step : c.path("ops")) {
            String op = step.path("op").asText();
            ObjectNode result = Json.object();
            if (op.equals("coord")) {
                WatermarkAlignmentParams params = new WatermarkAlignmentParams(
                        step.path("drift").asLong(), step.path("group").asText(),
                        step.path("interval").asLong());
                FlinkdiffCoordinatorProbe.startGroup(store, params.getWatermarkGroup());
                coordinators.put(step.path("coord").asText(),
                        FlinkdiffCoordinatorProbe.coordinator(
                                step.path("coord").asText(), params, store));
            } else if (op.equals("report")) {
                FlinkdiffCoordinatorProbe.report(coordinators.get(step.path("coord").asText()),
                        step.path("subtask").asInt(), step.path("w").asLong());
            } else if (op.equals("announce")) {
                List<long[]> sent = FlinkdiffCoordinatorProbe.announce(
                        coordinators.get(step.path("coord").asText()));
                ArrayNode to = result.putArray("to");
                TreeSet<Long> maxes = new TreeSet<>();
                List<Long> subtasks = new ArrayList<>();
                for (long[] e : sent) {
                    subtasks.add(e[0]);
                    maxes.add(e[1]);
                }
                subtasks.sort(null);
                subtasks.forEach(to::add);
                if (maxes.size() == 1) {
                    result.put("max", maxes.first());
                }
            } else {
                int id = step.path("id").asInt();
                Reader r = readers.get(id);
                switch (op) {
                    case "reader":
                        r = new Reader(new WatermarkAlignmentParams(
                                step.path("drift").asLong(), step.path("group").asText(),
                                step.path("interval").asLong()),
                                step.path("buffer").asInt(), step.path("splits"));
                        readers.put(id, r);
                        break;
                    case "eff":
                        r.op.updateCurrentEffectiveWatermark(step.path("w").asLong());
                        break;
                    case "idle":
                        r.op.updateIdle(step.path("idle").asBoolean());
                        break;
                    case "swm":
                        r.op.updateCurrentSplitWatermark(
                                step.path("split").asText(), step.path("w").asLong());
                        break;
                    case "sidle":
                        r.op.updateCurrentSplitIdle(
                                step.path("split").asText(), step.path("idle").asBoolean());
                        break;
                    case "event":
                        r.op.handleOperatorEvent(
                                new WatermarkAlignmentEvent(step.path("max").asLong()));
                        break;
                    case "sample":
                        sample.invoke(r.op);
                        break;
                    case "finish": // the reader's pollNext says END_OF_INPUT; emitNext again
                        convert.invoke(r.op, InputStatus.END_OF_INPUT);
                        r.op.emitNext((PushingAsyncDataInput.DataOutput) null);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown op " + op);
                }
                result.put("waiting", r.waiting());
                ArrayNode paused = result.putArray("paused");
                r.paused.forEach(paused::add);
                if (!r.reports.isEmpty()) {
                    result.put("report", r.reports.get(r.reports.size() - 1));
                    r.reports.clear();
                }
            }
            results.add(result);
        }
        ObjectNode out = Json.object();
        out.put("name", c.path("name").asText());
        out.set("results", results);
        return out;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: flinkdiff.Align IN.json OUT.json");
            System.exit(2);
        }
        JsonNode in = Json.MAPPER.readTree(new File(args[0]));
        ArrayNode cases = Json.array();
        for (JsonNode c : in.path("cases")) {
            ObjectNode result;
            try {
                result = runCase(c);
            } catch (Exception e) {
                result = Json.object();
                result.put("name", c.path("name").asText());
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                result.put("error", cause.toString());
            }
            cases.add(result);
        }
        ObjectNode out = Json.object();
        out.put("flink", "2.3.0");
        out.set("cases", cases);
        Json.MAPPER.writeValue(new File(args[1]), out);
    }
}
