package flinkdiff;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.CoGroupFunction;
import org.apache.flink.api.common.functions.JoinFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.co.ProcessJoinFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Random interval joins, window joins and window coGroups through Flink 2.3.0's own DataStream
 * API ({@code KeyedStream.intervalJoin}, {@code DataStream.join}, {@code DataStream.coGroup}).
 *
 * <pre>java flinkdiff.Joins IN.json OUT.json</pre>
 *
 * IN is {"interval": [...], "window": [...]}; each case has "steps": elements or watermarks of
 * input 1 or 2, in order. Two sources (parallelism 1) feed the join; a gate after each source
 * lets step i through only when step i-1 has reached the join's task: an element when the
 * join's task extracts its key (the partitioner's call, in the source's task, does not count),
 * a watermark when a marker record that follows it on the same channel does (records and
 * watermarks of one channel stay in order). So Flink sees the steps in exactly their order,
 * deterministically. The markers have the key "~m" (never a case's key): their outputs are not
 * recorded. The end of input is the sources' end (watermark MAX on both inputs).
 *
 * OUT has, per case, "pairs" and "late" (interval) or "out" (window), or "error".
 */
public final class Joins {
    static final String MARKER_KEY = "~m";
    private static final long STEP_TIMEOUT_MS = 20_000;
    private static int nextCase = 0;

    private Joins() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: flinkdiff.Joins IN.json OUT.json");
            System.exit(2);
        }
        JsonNode in = Json.MAPPER.readTree(new File(args[0]));
        ObjectNode out = Json.object();
        out.put("flink", "2.3.0");
        MiniCluster cluster = startCluster();
        try {
            for (String family : new String[] {"interval", "window"}) {
                ArrayNode results = out.putArray(family);
                List<JsonNode> todo = new ArrayList<>();
                in.path(family).forEach(todo::add);
                long started = System.nanoTime();
                for (int from = 0; from < todo.size(); from += 20) {
                    List<JsonNode> batch = todo.subList(from, Math.min(from + 20, todo.size()));
                    results.addAll(runBatch(cluster, family, batch));
                    System.err.printf("flink %s joins: %d/%d, %.1f s%n", family,
                            from + batch.size(), todo.size(), (System.nanoTime() - started) / 1e9);
                }
            }
        } finally {
            Json.MAPPER.writeValue(new File(args[1]), out);
        }
        System.exit(0);
    }

    private static MiniCluster startCluster() throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(1)
                .build());
        cluster.start();
        return cluster;
    }

    // ------------------------------------------------------------------ the step log

    /** The steps of one case, which step is due, and what the join emitted. */
    static final class Steps {
        static final Map<Integer, Steps> ALL = new ConcurrentHashMap<>();

        final JsonNode steps;
        final List<Ev> records = new ArrayList<>();
        final ArrayNode pairs = Json.array();
        final ArrayNode late = Json.array();
        final ArrayNode out = Json.array();
        private int current = 0;

        Steps(JsonNode steps) throws Transcript.Bad {
            this.steps = steps;
            for (int i = 0; i < steps.size(); i++) {
                JsonNode s = steps.get(i);
                if (s.has("element")) {
                    JsonNode e = s.get("element");
                    records.add(new Ev(i, Ev.ELEMENT, e.path("key").asText(),
                            Json.toLong(e.get("value"), "value"), Json.toLong(e.get("ts"), "ts")));
                } else {
                    records.add(new Ev(i, Ev.WATERMARK, MARKER_KEY, 0,
                            Json.toLong(s.get("watermark"), "watermark")));
                }
            }
        }

        int input(int step) {
            return steps.get(step).path("input").asInt();
        }

        synchronized int current() {
            return current;
        }

        synchronized void awaitStep(int step) throws InterruptedException {
            long deadline = System.currentTimeMillis() + STEP_TIMEOUT_MS;
            while (current < step) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    throw new IllegalStateException("step " + current + " never reached the join");
                }
                wait(left);
            }
        }

        /** Step {@code step} reached the join's task: the next one may go. */
        synchronized void reached(int step) {
            if (current == step) {
                current++;
                notifyAll();
            }
        }

        synchronized void add(ArrayNode where, ObjectNode rec) {
            where.add(rec);
        }
    }

    /** After each source: its input's steps, each when it is due (a watermark, then a marker). */
    static final class Gate extends AbstractStreamOperator<Ev>
            implements OneInputStreamOperator<Long, Ev> {
        private final int id;
        private final int input;

        Gate(int id, int input) {
            this.id = id;
            this.input = input;
        }

        @Override
        public void processElement(StreamRecord<Long> index) throws Exception {
            Steps log = Steps.ALL.get(id);
            int step = index.getValue().intValue();
            if (step == log.records.size()) { // the end: wait until the last step is in
                log.awaitStep(step);
                return;
            }
            if (log.input(step) != input) {
                return;
            }
            log.awaitStep(step);
            Ev ev = log.records.get(step);
            output.collect(new StreamRecord<>(ev, ev.ts));
            if (ev.kind == Ev.WATERMARK) { // the generator emits it after forwarding ev
                output.collect(new StreamRecord<>(
                        new Ev(step, Ev.MARKER, MARKER_KEY, 0, ev.ts), ev.ts));
            }
        }
    }

    /** Emits the watermark of a watermark step (punctuated; no periodic watermarks). */
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

    static final class NoWatermarkSteps implements org.apache.flink.api.common.functions.FilterFunction<Ev> {
        @Override
        public boolean filter(Ev ev) {
            return ev.kind != Ev.WATERMARK;
        }
    }

    /** The key; called in the join's task (not a source's), it says the step has arrived. */
    static final class StepKey implements KeySelector<Ev, String> {
        private final int id;

        StepKey(int id) {
            this.id = id;
        }

        @Override
        public String getKey(Ev ev) {
            if (!Thread.currentThread().getName().contains("steps")) {
                Steps log = Steps.ALL.get(id);
                if (log != null) {
                    log.reached(ev.step);
                }
            }
            return ev.key;
        }
    }

    private static DataStream<Ev> input(StreamExecutionEnvironment env, int id, int input,
            int steps) {
        return env.fromSequence(0, steps).setParallelism(1).name("steps" + input + "#" + id)
                .transform("gate" + input + "#" + id, Types.POJO(Ev.class), new Gate(id, input))
                .setParallelism(1)
                .assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Ev>forGenerator(ctx -> new StepWatermarks())
                                .withTimestampAssigner((ev, previous) -> ev.ts))
                .setParallelism(1)
                .filter(new NoWatermarkSteps()).setParallelism(1);
    }

    // ------------------------------------------------------------------ interval join

    /** Records each pair with the context's timestamps. */
    static final class RecordPairs extends ProcessJoinFunction<Ev, Ev, String> {
        private final int id;

        RecordPairs(int id) {
            this.id = id;
        }

        @Override
        public void processElement(Ev left, Ev right, Context ctx, Collector<String> out) {
            if (left.key.equals(MARKER_KEY)) {
                return;
            }
            ObjectNode p = Json.object();
            p.put("key", left.key);
            p.put("left", left.value);
            p.put("right", right.value);
            p.put("left_ts", ctx.getLeftTimestamp());
            p.put("right_ts", ctx.getRightTimestamp());
            p.put("ts", ctx.getTimestamp());
            Steps.ALL.get(id).add(Steps.ALL.get(id).pairs, p);
            out.collect(left.key);
        }
    }

    /** Records the records of a late-data side output with their timestamps. */
    static final class RecordLate extends ProcessFunction<Ev, Ev> {
        private final int id;
        private final String side;

        RecordLate(int id, String side) {
            this.id = id;
            this.side = side;
        }

        @Override
        public void processElement(Ev ev, Context ctx, Collector<Ev> out) {
            if (ev.key.equals(MARKER_KEY)) {
                return;
            }
            ObjectNode l = Json.object();
            l.put("side", side);
            l.put("key", ev.key);
            l.put("value", ev.value);
            l.put("ts", ctx.timestamp());
            Steps.ALL.get(id).add(Steps.ALL.get(id).late, l);
        }
    }

    private static void intervalCase(StreamExecutionEnvironment env, int id, JsonNode c, int n) {
        KeyedStream<Ev, String> left = input(env, id, 1, n).keyBy(new StepKey(id));
        KeyedStream<Ev, String> right = input(env, id, 2, n).keyBy(new StepKey(id));
        KeyedStream.IntervalJoined<Ev, Ev, String> joined = left.intervalJoin(right)
                .between(Duration.ofMillis(c.path("lower").asLong()),
                        Duration.ofMillis(c.path("upper").asLong()));
        if (c.path("lower_exclusive").asBoolean()) {
            joined = joined.lowerBoundExclusive();
        }
        if (c.path("upper_exclusive").asBoolean()) {
            joined = joined.upperBoundExclusive();
        }
        OutputTag<Ev> lateLeft = new OutputTag<>("late-left", Types.POJO(Ev.class));
        OutputTag<Ev> lateRight = new OutputTag<>("late-right", Types.POJO(Ev.class));
        if (c.path("late_left").asBoolean()) {
            joined = joined.sideOutputLeftLateData(lateLeft);
        }
        if (c.path("late_right").asBoolean()) {
            joined = joined.sideOutputRightLateData(lateRight);
        }
        SingleOutputStreamOperator<String> result = joined.process(new RecordPairs(id));
        result.name("join#" + id);
        result.sinkTo(new DiscardingSink<>());
        if (c.path("late_left").asBoolean()) {
            result.getSideOutput(lateLeft).process(new RecordLate(id, "left"))
                    .sinkTo(new DiscardingSink<>());
        }
        if (c.path("late_right").asBoolean()) {
            result.getSideOutput(lateRight).process(new RecordLate(id, "right"))
                    .sinkTo(new DiscardingSink<>());
        }
    }

    // ------------------------------------------------------------------ window join / coGroup

    static final class PairJoin implements JoinFunction<Ev, Ev, String> {
        @Override
        public String join(Ev a, Ev b) {
            return a.key + "|" + a.value + "|" + b.value;
        }
    }

    static final class SortedCoGroup implements CoGroupFunction<Ev, Ev, String> {
        @Override
        public void coGroup(Iterable<Ev> first, Iterable<Ev> second, Collector<String> out) {
            List<Long> a = new ArrayList<>();
            List<Long> b = new ArrayList<>();
            String key = null;
            for (Ev e : first) {
                a.add(e.value);
                key = e.key;
            }
            for (Ev e : second) {
                b.add(e.value);
                key = e.key;
            }
            Collections.sort(a);
            Collections.sort(b);
            out.collect(key + "|" + a + "|" + b);
        }
    }

    /** Records what the window join / coGroup emitted, with the record's timestamp. */
    static final class RecordOut extends ProcessFunction<String, String> {
        private final int id;

        RecordOut(int id) {
            this.id = id;
        }

        @Override
        public void processElement(String s, Context ctx, Collector<String> out) {
            if (s.startsWith(MARKER_KEY + "|")) {
                return;
            }
            ObjectNode o = Json.object();
            o.put("value", s);
            o.put("ts", ctx.timestamp());
            Steps.ALL.get(id).add(Steps.ALL.get(id).out, o);
        }
    }

    static WindowAssigner<Object, ?> assigner(JsonNode a) {
        switch (a.path("type").asText()) {
            case "tumbling":
                return TumblingEventTimeWindows.of(Duration.ofMillis(a.path("size").asLong()));
            case "sliding":
                return SlidingEventTimeWindows.of(Duration.ofMillis(a.path("size").asLong()),
                        Duration.ofMillis(a.path("slide").asLong()));
            case "session":
                return EventTimeSessionWindows.withGap(Duration.ofMillis(a.path("gap").asLong()));
            default:
                throw new IllegalArgumentException("assigner " + a);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void windowCase(StreamExecutionEnvironment env, int id, JsonNode c, int n) {
        DataStream<Ev> a = input(env, id, 1, n);
        DataStream<Ev> b = input(env, id, 2, n);
        WindowAssigner assigner = assigner(c.path("assigner"));
        Duration lateness = Duration.ofMillis(c.path("allowed_lateness").asLong());
        int count = c.path("count_trigger").asInt(0);
        SingleOutputStreamOperator<String> result;
        if (c.path("function").asText().equals("join")) {
            org.apache.flink.streaming.api.datastream.JoinedStreams.WithWindow w = a.join(b)
                    .where(new StepKey(id)).equalTo(new StepKey(id)).window(assigner)
                    .allowedLateness(lateness);
            if (count > 0) {
                w = w.trigger(CountTrigger.of(count));
            }
            result = w.apply(new PairJoin(), Types.STRING);
        } else {
            org.apache.flink.streaming.api.datastream.CoGroupedStreams.WithWindow w = a.coGroup(b)
                    .where(new StepKey(id)).equalTo(new StepKey(id)).window(assigner)
                    .allowedLateness(lateness);
            if (count > 0) {
                w = w.trigger(CountTrigger.of(count));
            }
            result = w.apply(new SortedCoGroup(), Types.STRING);
        }
        result.name("wjoin#" + id).process(new RecordOut(id)).sinkTo(new DiscardingSink<>());
    }

    // ------------------------------------------------------------------ running a batch

    private static List<ObjectNode> runBatch(MiniCluster cluster, String family,
            List<JsonNode> batch) throws Exception {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(new Configuration());
        env.getConfig().setAutoWatermarkInterval(0);
        env.setBufferTimeout(0);
        env.setParallelism(1);
        List<Integer> ids = new ArrayList<>();
        List<ObjectNode> results = new ArrayList<>();
        for (JsonNode c : batch) {
            int id = nextCase++;
            ids.add(id);
            Steps log = new Steps(c.path("steps"));
            Steps.ALL.put(id, log);
            if (family.equals("interval")) {
                intervalCase(env, id, c, log.records.size());
            } else {
                windowCase(env, id, c, log.records.size());
            }
            ObjectNode res = Json.object();
            res.put("name", c.path("name").asText());
            results.add(res);
        }
        String error = null;
        try {
            JobGraph job = env.getStreamGraph().getJobGraph();
            JobID jid = cluster.submitJob(job).get().getJobID();
            JobResult result = cluster.requestJobResult(jid).get(120, TimeUnit.SECONDS);
            if (!result.isSuccess()) {
                Throwable cause = result.getSerializedThrowable()
                        .map(s -> s.deserializeError(Joins.class.getClassLoader()))
                        .orElse(new RuntimeException("job failed"));
                Throwable root = cause;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                error = "Flink: " + root;
            }
        } catch (Exception e) {
            error = "Flink: " + e;
        }
        for (int i = 0; i < ids.size(); i++) {
            Steps log = Steps.ALL.remove(ids.get(i));
            ObjectNode res = results.get(i);
            if (error != null || log.current() != log.records.size()) {
                res.put("error", (error == null ? "" : error + "; ") + "at step " + log.current());
                continue;
            }
            if (family.equals("interval")) {
                res.set("pairs", log.pairs);
                res.set("late", log.late);
            } else {
                res.set("out", log.out);
            }
        }
        return results;
    }
}
