package flinkdiff;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The BATCH family of the differential tier: bounded jobs run by real Flink 2.3.0 with
 * {@code env.setRuntimeMode(RuntimeExecutionMode.BATCH)}.
 *
 * <pre>
 *   java flinkdiff.Batch IN.json OUT.json
 * </pre>
 *
 * IN is {"cases": [...]}, each case {"name", "records": [[key, ts, value], ...], "op": {...}}
 * and "parallelism" of the keyed operator (batch.py writes them); OUT is {"cases": [{"name", "out": [line, ...]}]}: every record that
 * reaches the end of the case's pipeline as {@code text@timestamp}, in the order Flink emitted
 * them. Many cases run as independent pipelines of one batch job (parallelism 1).
 *
 * <p>Operators ({@code op.type}): {@code window} — keyBy (or windowAll) into a tumbling, sliding
 * or session event-time window with allowed lateness and a late side output, then a sum
 * (ReduceFunction) or a ProcessWindowFunction that prints the window, its sorted values and
 * {@code ctx.currentWatermark()}; {@code process} — a KeyedProcessFunction that counts records
 * in keyed state and registers event- and processing-time timers at {@code ts + delay}
 * (deleting some), and whose {@code onTimer} registers more timers; {@code reduce} —
 * {@code keyBy().reduce()} (Flink's BatchGroupedReduceOperator).
 */
public final class Batch {
    static final Map<Integer, List<Ev>> RECORDS = new ConcurrentHashMap<>();
    static final Map<Integer, List<String>> OUT = new ConcurrentHashMap<>();

    private Batch() {}

    public static void main(String[] args) throws Exception {
        JsonNode in = Json.MAPPER.readTree(new File(args[0]));
        List<JsonNode> cases = new ArrayList<>();
        in.path("cases").forEach(cases::add);
        ObjectNode out = Json.object();
        ArrayNode results = out.putArray("cases");
        MiniCluster cluster = Parallel.startCluster();
        try {
            for (int from = 0; from < cases.size(); from += 50) {
                List<JsonNode> batch = cases.subList(from, Math.min(from + 50, cases.size()));
                results.addAll(runBatch(cluster, batch, from));
                System.err.printf("flink batch: %d/%d%n", from + batch.size(), cases.size());
            }
        } finally {
            Json.MAPPER.writeValue(new File(args[1]), out);
        }
        System.exit(0);
    }

    private static List<ObjectNode> runBatch(MiniCluster cluster, List<JsonNode> cases, int first)
            throws Exception {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(new Configuration());
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        env.setParallelism(1);
        for (int i = 0; i < cases.size(); i++) {
            pipeline(env, first + i, cases.get(i));
        }
        Parallel.run(cluster, env);
        List<ObjectNode> results = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            ObjectNode res = Json.object();
            res.put("name", cases.get(i).path("name").asText());
            ArrayNode lines = res.putArray("out");
            OUT.remove(first + i).forEach(lines::add);
            RECORDS.remove(first + i);
            results.add(res);
        }
        return results;
    }

    private static void pipeline(StreamExecutionEnvironment env, int id, JsonNode c) {
        List<Ev> records = new ArrayList<>();
        for (JsonNode r : c.path("records")) {
            records.add(new Ev(0, Ev.ELEMENT, r.get(0).asText(), r.get(2).asLong(), r.get(1).asLong()));
        }
        RECORDS.put(id, records);
        OUT.put(id, Collections.synchronizedList(new ArrayList<>()));
        JsonNode op = c.path("op");
        DataStream<Ev> in = env.fromSequence(0, records.size() - 1)
                .map(i -> RECORDS.get(id).get((int) (long) i)).returns(Types.POJO(Ev.class))
                .assignTimestampsAndWatermarks(WatermarkStrategy
                        .<Ev>forBoundedOutOfOrderness(Duration.ofMillis(op.path("bound").asLong()))
                        .withTimestampAssigner((ev, previous) -> ev.ts));
        KeyedStream<Ev, String> keyed = in.keyBy((KeySelector<Ev, String>) ev -> ev.key);
        int parallelism = c.path("parallelism").asInt(1); // of the keyed operator
        DataStream<String> result;
        switch (op.path("type").asText()) {
            case "process":
                result = keyed.process(new Timers(op.path("event_delay").asLong(),
                        op.path("processing_delay").asLong(), op.path("delete_every").asLong()))
                        .setParallelism(parallelism);
                break;
            case "reduce":
                result = keyed.reduce(new Sum()).setParallelism(parallelism)
                        .map(Batch::line).returns(Types.STRING);
                break;
            default:
                result = window(in, keyed, op, id, parallelism);
        }
        record(result, id);
    }

    private static DataStream<String> window(
            DataStream<Ev> in, KeyedStream<Ev, String> keyed, JsonNode op, int id,
            int parallelism) {
        WindowAssigner<Object, TimeWindow> assigner;
        JsonNode a = op.path("assigner");
        switch (a.path("type").asText()) {
            case "tumbling":
                assigner = TumblingEventTimeWindows.of(Duration.ofMillis(a.path("size").asLong()),
                        Duration.ofMillis(a.path("offset").asLong()));
                break;
            case "sliding":
                assigner = SlidingEventTimeWindows.of(Duration.ofMillis(a.path("size").asLong()),
                        Duration.ofMillis(a.path("slide").asLong()));
                break;
            default:
                assigner = EventTimeSessionWindows.withGap(Duration.ofMillis(a.path("gap").asLong()));
        }
        OutputTag<Ev> late = new OutputTag<>("late", Types.POJO(Ev.class));
        boolean all = op.path("window_all").asBoolean();
        long lateness = op.path("lateness").asLong();
        DataStream<String> fired;
        if (all) {
            fired = in.windowAll(assigner).allowedLateness(Duration.ofMillis(lateness))
                    .sideOutputLateData(late)
                    .process(new org.apache.flink.streaming.api.functions.windowing
                            .ProcessAllWindowFunction<Ev, String, TimeWindow>() {
                        @Override
                        public void process(Context ctx, Iterable<Ev> elements, Collector<String> out) {
                            out.collect(describe("all", ctx.window(), elements, Long.MIN_VALUE));
                        }
                    });
        } else {
            WindowedStream<Ev, String, TimeWindow> w = keyed.window(assigner)
                    .allowedLateness(Duration.ofMillis(lateness)).sideOutputLateData(late);
            fired = op.path("function").asText().equals("reduce")
                    ? w.reduce(new Sum()).setParallelism(parallelism)
                            .map(Batch::line).returns(Types.STRING)
                    : w.process(new Describe()).setParallelism(parallelism);
        }
        DataStream<String> lateOut = ((org.apache.flink.streaming.api.datastream
                .SingleOutputStreamOperator<String>) fired).getSideOutput(late)
                .map(ev -> "late|" + line(ev)).returns(Types.STRING);
        record(lateOut, id);
        return fired;
    }

    /** key|ts|value */
    static String line(Ev ev) {
        return ev.key + "|" + ev.ts + "|" + ev.value;
    }

    /** key|start|end|sorted values|watermark (the watermark only when asked for). */
    static String describe(String key, TimeWindow w, Iterable<Ev> elements, long watermark) {
        List<Long> values = new ArrayList<>();
        elements.forEach(ev -> values.add(ev.value));
        Collections.sort(values);
        return key + "|" + w.getStart() + "|" + w.getEnd() + "|" + values
                + (watermark == Long.MIN_VALUE ? "" : "|" + watermark);
    }

    static final class Describe extends ProcessWindowFunction<Ev, String, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<Ev> elements, Collector<String> out) {
            out.collect(describe(key, ctx.window(), elements, ctx.currentWatermark()));
        }
    }

    /** Sums the values; keeps the key and the largest timestamp. */
    static final class Sum implements ReduceFunction<Ev> {
        @Override
        public Ev reduce(Ev a, Ev b) {
            return new Ev(0, Ev.ELEMENT, a.key, a.value + b.value, Math.max(a.ts, b.ts));
        }
    }

    /** Counts records per key; timers at ts + delay; onTimer tries to register more. */
    static final class Timers extends KeyedProcessFunction<String, Ev, String> {
        final long eventDelay;
        final long processingDelay;
        final long deleteEvery;
        transient ValueState<Long> count;

        Timers(long eventDelay, long processingDelay, long deleteEvery) {
            this.eventDelay = eventDelay;
            this.processingDelay = processingDelay;
            this.deleteEvery = deleteEvery;
        }

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        }

        @Override
        public void processElement(Ev ev, Context ctx, Collector<String> out) throws Exception {
            long n = (count.value() == null ? 0 : count.value()) + 1;
            count.update(n);
            ctx.timerService().registerEventTimeTimer(ev.ts + eventDelay);
            ctx.timerService().registerProcessingTimeTimer(ev.ts + processingDelay);
            if (deleteEvery > 0 && ev.value % deleteEvery == 0) {
                ctx.timerService().deleteEventTimeTimer(ev.ts + eventDelay);
            }
            out.collect("el|" + ctx.getCurrentKey() + "|" + ev.ts + "|" + n + "|"
                    + ctx.timerService().currentWatermark());
        }

        @Override
        public void onTimer(long t, OnTimerContext ctx, Collector<String> out) throws Exception {
            out.collect("timer|" + ctx.getCurrentKey() + "|" + t + "|" + ctx.timeDomain() + "|"
                    + ctx.timerService().currentWatermark() + "|" + count.value());
            ctx.timerService().registerEventTimeTimer(t + 1); // quiesced: ignored in BATCH
            ctx.timerService().registerProcessingTimeTimer(t + 1);
        }
    }

    private static void record(DataStream<String> stream, int id) {
        stream.process(new ProcessFunction<String, String>() {
            @Override
            public void processElement(String s, Context ctx, Collector<String> out) {
                OUT.get(id).add(s + "@" + ctx.timestamp());
            }
        }).sinkTo(new DiscardingSink<>());
    }
}
