package flinkdiff;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * Per-window state as real Flink 2.3.0 keeps it (winviz.operators.window_operator mirrors it).
 *
 * <pre>
 *   java flinkdiff.WindowState OUT.json
 * </pre>
 *
 * <p><b>leak / clear</b>: three records 0, 1, 2 of one key from a {@code DataGeneratorSource}
 * that emits one record per completed checkpoint ({@code RateLimiterStrategy.perCheckpoint(1)}),
 * so the task is idle between records. A processing-time assigner puts every record into the
 * window [0, 10) and a trigger FIREs on every element; the window's cleanup timer (processing
 * time 9, long past) fires before the next record, so {@code clearAllState} runs after every
 * firing and the next record finds an empty window [0, 10) again. The ProcessWindowFunction
 * counts the firings of the window in per-window state ({@code windowState()}) and of the key in
 * global state, and logs (case, "process", records, window firings, key firings); its
 * {@code clear} logs (case, "clear", window) and, in case "clear" only, clears the per-window
 * counter. Flink's
 * {@code clearAllState} clears the window's contents, calls the trigger's and the function's
 * clear, and nothing else: without the function's clear the counter survives the cleanup.
 *
 * <p><b>merging</b>: a session-window job whose function asks for per-window state; the job
 * fails, and the exception class and message of the cause are recorded.
 *
 * <p>OUT: {"log": [...], "merging": {"exception", "message"}}: the log in call order.
 */
public final class WindowState {

    static final List<ObjectNode> LOG = Collections.synchronizedList(new ArrayList<>());
    static final ValueStateDescriptor<Integer> WINDOW_FIRINGS =
            new ValueStateDescriptor<>("window-firings", Types.INT);
    static final ValueStateDescriptor<Integer> KEY_FIRINGS =
            new ValueStateDescriptor<>("key-firings", Types.INT);

    private WindowState() {}

    static Configuration conf() {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        conf.setString("restart-strategy.type", "none");
        return conf;
    }

    public static void main(String[] args) throws Exception {
        for (String name : new String[] {"leak", "clear"}) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf());
            env.enableCheckpointing(50);
            GeneratorFunction<Long, Long> records = i -> i;
            DataGeneratorSource<Long> source = new DataGeneratorSource<>(
                    records, 3, RateLimiterStrategy.perCheckpoint(1), Types.LONG);
            env.fromSource(source, WatermarkStrategy.noWatermarks(), "source")
                    .keyBy(e -> "k")
                    .window(new AlwaysZeroToTen())
                    .trigger(new FireOnElement())
                    .process(new Firings(name))
                    .sinkTo(new DiscardingSink<>());
            env.execute(name);
        }

        ObjectNode merging = Json.object();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf());
        env.fromData(1L, 2L)
                .assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Long>forMonotonousTimestamps()
                                .withTimestampAssigner((e, previous) -> e))
                .keyBy(e -> "k")
                .window(EventTimeSessionWindows.withGap(Duration.ofMillis(10)))
                .process(new Firings("merging"))
                .sinkTo(new DiscardingSink<>());
        try {
            env.execute("merging");
            merging.put("exception", "none");
        } catch (Exception e) {
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof UnsupportedOperationException)) {
                cause = cause.getCause();
            }
            merging.put("exception", cause.getClass().getName());
            merging.put("message", cause.getMessage());
        }

        ObjectNode out = Json.object();
        out.put("flink", "2.3.0");
        ArrayNode log = out.putArray("log");
        LOG.forEach(log::add);
        out.set("merging", merging);
        Json.MAPPER.writeValue(new File(args[0]), out);
        System.exit(0);
    }

    /** A processing-time assigner that puts every element into [0, 10). */
    static final class AlwaysZeroToTen extends WindowAssigner<Long, TimeWindow> {
        @Override
        public Collection<TimeWindow> assignWindows(
                Long element, long timestamp, WindowAssignerContext context) {
            return Collections.singletonList(new TimeWindow(0, 10));
        }

        @Override
        public Trigger<Long, TimeWindow> getDefaultTrigger() {
            return new FireOnElement();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
            return new TimeWindow.Serializer();
        }

        @Override
        public boolean isEventTime() {
            return false;
        }
    }

    /** FIRE on every element; no timers, no state. */
    static final class FireOnElement extends Trigger<Long, TimeWindow> {
        @Override
        public TriggerResult onElement(Long e, long ts, TimeWindow w, TriggerContext ctx) {
            return TriggerResult.FIRE;
        }

        @Override
        public TriggerResult onProcessingTime(long time, TimeWindow w, TriggerContext ctx) {
            return TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onEventTime(long time, TimeWindow w, TriggerContext ctx) {
            return TriggerResult.CONTINUE;
        }

        @Override
        public void clear(TimeWindow w, TriggerContext ctx) {}
    }

    /** Counts the window's firings (per-window state) and the key's (global state). */
    static final class Firings extends ProcessWindowFunction<Long, String, String, TimeWindow> {
        private final String name;

        Firings(String name) {
            this.name = name;
        }

        @Override
        public void process(String key, Context ctx, Iterable<Long> elements, Collector<String> out)
                throws Exception {
            ValueState<Integer> window = ctx.windowState().getState(WINDOW_FIRINGS);
            ValueState<Integer> all = ctx.globalState().getState(KEY_FIRINGS);
            window.update(window.value() == null ? 1 : window.value() + 1);
            all.update(all.value() == null ? 1 : all.value() + 1);
            ObjectNode n = Json.object();
            n.put("case", name);
            n.put("call", "process");
            ArrayNode values = n.putArray("records");
            elements.forEach(values::add);
            n.put("window_firings", window.value());
            n.put("key_firings", all.value());
            LOG.add(n);
            out.collect(key);
        }

        @Override
        public void clear(Context ctx) throws Exception {
            ObjectNode n = Json.object();
            n.put("case", name);
            n.put("call", "clear");
            n.putArray("window").add(ctx.window().getStart()).add(ctx.window().getEnd());
            LOG.add(n);
            if (name.equals("clear")) {
                ctx.windowState().getState(WINDOW_FIRINGS).clear();
            }
        }
    }
}
