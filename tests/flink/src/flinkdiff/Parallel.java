package flinkdiff;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.Partitioner;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.plugable.SerializationDelegate;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.streaming.runtime.partitioner.KeyGroupStreamPartitioner;
import org.apache.flink.streaming.runtime.partitioner.RebalancePartitioner;
import org.apache.flink.streaming.runtime.streamrecord.StreamElementSerializer;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
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
 * The parallel part of the differential tier: real Flink 2.3.0 with parallelism &gt; 1.
 *
 * <pre>
 *   java flinkdiff.Parallel IN.json OUT.json
 * </pre>
 *
 * IN is {"partitions": [...], "windows": [...], "co": [...]}; OUT has the same three lists, one
 * result per case, in order (see parallel.py for the case formats):
 *
 * <ul>
 *   <li><b>partitions</b> — Flink's own {@code KeyGroupStreamPartitioner} (set up for the
 *       parallelism) and {@code RebalancePartitioner}: the channel each record goes to.
 *   <li><b>windows</b> — a job: a parallelism-1 source of elements and punctuated watermarks,
 *       {@code keyBy} into a window operator with parallelism p and max parallelism m; a
 *       ProcessWindowFunction records {@code getIndexOfThisSubtask()} with every firing, the
 *       late side output likewise. The result is the multiset of (subtask, key, window, values)
 *       and of (subtask, key, value, ts) late records. With one upstream subtask every window
 *       subtask sees a fixed sequence, so the multisets are deterministic. A case with
 *       {@code readers: q} sends each step to reader {@code step.reader} first
 *       ({@code partitionCustom}; q generator subtasks), so each window subtask combines q
 *       channels in its valve; the generator keeps every element on time for its own reader,
 *       which makes the firings deterministic whatever the interleaving.
 *   <li><b>co</b> — a job: two sources connected into Flink's {@code KeyedCoProcessOperator}.
 *       Two network inputs interleave at random, so the steps are serialised: a gate after each
 *       source lets step i through only once step i-1 has been fully processed by the two-input
 *       operator (which says so after Flink's own processElement1/2, processWatermark1/2 and
 *       processWatermarkStatus return). Buffers are flushed after every record. What a step
 *       caused is then exact: the watermark processElement saw, the timers that fired (with the
 *       watermark onTimer saw) and the watermarks / statuses that left the operator.
 * </ul>
 */
public final class Parallel {
    private static final long STEP_TIMEOUT_MS = 20_000;

    private Parallel() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: flinkdiff.Parallel IN.json OUT.json");
            System.exit(2);
        }
        JsonNode in = Json.MAPPER.readTree(new File(args[0]));
        ObjectNode out = Json.object();
        out.put("flink", "2.3.0");
        ArrayNode partitions = out.putArray("partitions");
        for (JsonNode c : in.path("partitions")) {
            partitions.add(partition(c));
        }
        MiniCluster cluster = startCluster();
        try {
            ArrayNode windows = out.putArray("windows");
            List<JsonNode> todo = new ArrayList<>();
            in.path("windows").forEach(todo::add);
            long started = System.nanoTime();
            for (int from = 0; from < todo.size(); from += 20) {
                List<JsonNode> batch = todo.subList(from, Math.min(from + 20, todo.size()));
                windows.addAll(windowBatch(cluster, batch));
                System.err.printf("flink parallel windows: %d/%d, %.1f s%n",
                        from + batch.size(), todo.size(), (System.nanoTime() - started) / 1e9);
            }
            ArrayNode co = out.putArray("co");
            todo.clear();
            in.path("co").forEach(todo::add);
            started = System.nanoTime();
            for (int from = 0; from < todo.size(); from += 20) {
                List<JsonNode> batch = todo.subList(from, Math.min(from + 20, todo.size()));
                co.addAll(coBatch(cluster, batch));
                System.err.printf("flink connect: %d/%d, %.1f s%n",
                        from + batch.size(), todo.size(), (System.nanoTime() - started) / 1e9);
            }
        } finally {
            Json.MAPPER.writeValue(new File(args[1]), out);
        }
        System.exit(0);
    }

    static MiniCluster startCluster() throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(4) // the largest parallelism; slot sharing does the rest
                .build());
        cluster.start();
        return cluster;
    }

    static void run(MiniCluster cluster, StreamExecutionEnvironment env) throws Exception {
        JobGraph job = env.getStreamGraph().getJobGraph();
        JobID id = cluster.submitJob(job).get().getJobID();
        JobResult result = cluster.requestJobResult(id).get(120, TimeUnit.SECONDS);
        if (!result.isSuccess()) {
            Throwable cause = result.getSerializedThrowable()
                    .map(s -> s.deserializeError(Parallel.class.getClassLoader()))
                    .orElse(new RuntimeException("job failed"));
            throw new RuntimeException("Flink job failed", cause);
        }
    }

    // ------------------------------------------------------------------ partitioners

    /** A JSON key as the Java object a KeySelector would return: String, Integer or Long. */
    private static Object javaKey(JsonNode k) {
        if (k.isTextual()) {
            return k.asText();
        }
        if (k.canConvertToInt()) {
            return k.asInt();
        }
        return k.asLong();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ObjectNode partition(JsonNode c) {
        ObjectNode res = Json.object();
        res.put("name", c.path("name").asText());
        int parallelism = c.path("parallelism").asInt();
        ArrayNode channels = res.putArray("channels");
        if (c.path("partitioner").asText().equals("hash")) {
            int maxParallelism = c.path("max_parallelism").asInt();
            KeyGroupStreamPartitioner<Object, Object> p =
                    new KeyGroupStreamPartitioner<>(v -> v, maxParallelism);
            p.setup(parallelism);
            ArrayNode groups = res.putArray("key_groups");
            for (JsonNode k : c.path("keys")) {
                Object key = javaKey(k);
                groups.add(KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism));
                TypeSerializer s = key instanceof String ? StringSerializer.INSTANCE
                        : key instanceof Integer ? IntSerializer.INSTANCE : LongSerializer.INSTANCE;
                SerializationDelegate<StreamRecord<Object>> record =
                        new SerializationDelegate<>(new StreamElementSerializer<>(s));
                record.setInstance(new StreamRecord<>(key));
                channels.add(p.selectChannel(record));
            }
        } else {
            RebalancePartitioner<Object> p = new RebalancePartitioner<>();
            p.setup(parallelism); // Flink draws the first channel at random here
            SerializationDelegate<StreamRecord<Object>> record =
                    new SerializationDelegate<>(new StreamElementSerializer<>(
                            (TypeSerializer) LongSerializer.INSTANCE));
            for (int i = 0; i < c.path("records").asInt(); i++) {
                record.setInstance(new StreamRecord<>((Object) (long) i));
                channels.add(p.selectChannel(record));
            }
        }
        return res;
    }

    // ------------------------------------------------------------------ parallel windows

    /** Everything a window case's functions write, by case id (one JVM: a static registry). */
    static final Map<Integer, List<ObjectNode>> FIRED = new ConcurrentHashMap<>();
    static final Map<Integer, List<ObjectNode>> LATE = new ConcurrentHashMap<>();
    static final Map<Integer, List<Ev>> RECORDS = new ConcurrentHashMap<>();
    /** The reader (upstream subtask) of each step of a case with several readers. */
    static final Map<Integer, int[]> READERS = new ConcurrentHashMap<>();
    private static int nextCase = 0;

    /** Step i of a case as its record: an element or a watermark marker. */
    static Ev record(JsonNode step, int i) throws Transcript.Bad {
        if (step.has("element")) {
            JsonNode el = step.get("element");
            return new Ev(i, Ev.ELEMENT, el.path("key").asText(), el.path("value").asLong(1),
                    Json.toLong(el.get("ts"), "element.ts"));
        }
        if (step.has("watermark")) {
            return new Ev(i, Ev.WATERMARK, "", 0, Json.toLong(step.get("watermark"), "watermark"));
        }
        if (step.path("idle").asBoolean(false)) {
            return new Ev(i, CoSteps.IDLE, "", 0, Long.MIN_VALUE);
        }
        if (step.path("active").asBoolean(false)) {
            return new Ev(i, CoSteps.ACTIVE, "", 0, Long.MIN_VALUE);
        }
        throw new Transcript.Bad("step " + i + ": element, watermark, idle or active expected");
    }

    static final class CaseRecord
            implements org.apache.flink.api.common.functions.MapFunction<Long, Ev> {
        private final int id;

        CaseRecord(int id) {
            this.id = id;
        }

        @Override
        public Ev map(Long index) {
            return RECORDS.get(id).get(index.intValue());
        }
    }

    /** Sends step i to the reader the case names for it (records and watermark markers). */
    static final class ToReader implements Partitioner<Integer> {
        private final int id;

        ToReader(int id) {
            this.id = id;
        }

        @Override
        public int partition(Integer step, int numPartitions) {
            return READERS.get(id)[step];
        }
    }

    /** Records each firing with the index of the subtask whose window operator fired it. */
    static final class SubtaskValues extends ProcessWindowFunction<Ev, Ev, String, Window> {
        private final int id;

        SubtaskValues(int id) {
            this.id = id;
        }

        @Override
        public void process(String key, Context ctx, Iterable<Ev> elements, Collector<Ev> c) {
            List<Long> values = new ArrayList<>();
            for (Ev ev : elements) {
                values.add(ev.value);
            }
            Collections.sort(values);
            ObjectNode rec = Json.object();
            rec.put("subtask", getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
            rec.put("key", key);
            TimeWindow w = (TimeWindow) ctx.window();
            rec.putArray("window").add(w.getStart()).add(w.getEnd());
            ArrayNode vs = rec.putArray("values");
            values.forEach(vs::add);
            rec.put("watermark", ctx.currentWatermark());
            FIRED.get(id).add(rec);
        }
    }

    static final class RecordLateSubtask
            extends org.apache.flink.streaming.api.functions.ProcessFunction<Ev, Ev> {
        private final int id;

        RecordLateSubtask(int id) {
            this.id = id;
        }

        @Override
        public void processElement(Ev ev, Context ctx, Collector<Ev> c) {
            ObjectNode rec = Json.object();
            rec.put("subtask", getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
            rec.put("key", ev.key);
            rec.put("value", ev.value);
            rec.put("ts", ctx.timestamp());
            LATE.get(id).add(rec);
        }
    }

    private static List<ObjectNode> windowBatch(MiniCluster cluster, List<JsonNode> batch)
            throws Exception {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(new Configuration());
        env.getConfig().setAutoWatermarkInterval(0);
        List<Integer> ids = new ArrayList<>();
        List<ObjectNode> results = new ArrayList<>();
        for (JsonNode c : batch) {
            int id = nextCase++;
            ids.add(id);
            ObjectNode res = Json.object();
            res.put("name", c.path("name").asText());
            results.add(res);
            List<Ev> records = new ArrayList<>();
            JsonNode steps = c.path("steps");
            for (int i = 0; i < steps.size(); i++) {
                records.add(record(steps.get(i), i));
            }
            RECORDS.put(id, records);
            FIRED.put(id, Collections.synchronizedList(new ArrayList<>()));
            LATE.put(id, Collections.synchronizedList(new ArrayList<>()));
            WindowSpec spec = new WindowSpec(c.get("operator"));
            int parallelism = c.path("parallelism").asInt();
            int readers = c.path("readers").asInt(1);
            DataStream<Ev> in = env.fromSequence(0, records.size() - 1).setParallelism(1)
                    .map(new CaseRecord(id)).returns(Types.POJO(Ev.class)).setParallelism(1);
            if (readers > 1) { // each reader: its own steps, in order, and its own generator
                int[] reader = new int[steps.size()];
                for (int i = 0; i < steps.size(); i++) {
                    reader[i] = steps.get(i).path("reader").asInt();
                }
                READERS.put(id, reader);
                in = in.partitionCustom(new ToReader(id), ev -> ev.step);
            }
            in = in.assignTimestampsAndWatermarks(
                            WatermarkStrategy.<Ev>forGenerator(ctx -> new Functions.StepWatermarks())
                                    .withTimestampAssigner((ev, previous) -> ev.ts))
                    .setParallelism(readers)
                    .filter(new Functions.ReachesOperator()).setParallelism(readers);
            WindowedStream<Ev, String, Window> w =
                    in.keyBy(new Functions.KeyOf()).window(spec.assigner);
            if (spec.trigger != null) {
                w = w.trigger(spec.trigger);
            }
            w = w.allowedLateness(Duration.ofMillis(spec.allowedLateness));
            OutputTag<Ev> lateTag = new OutputTag<>("late", Types.POJO(Ev.class));
            if (spec.lateSideOutput) {
                w = w.sideOutputLateData(lateTag);
            }
            SingleOutputStreamOperator<Ev> fired = w.process(new SubtaskValues(id))
                    .setParallelism(parallelism).name("window#" + id);
            if (c.has("max_parallelism")) {
                fired.setMaxParallelism(c.path("max_parallelism").asInt());
            }
            fired.sinkTo(new DiscardingSink<>()).setParallelism(parallelism);
            if (spec.lateSideOutput) {
                fired.getSideOutput(lateTag).process(new RecordLateSubtask(id))
                        .setParallelism(parallelism).sinkTo(new DiscardingSink<>())
                        .setParallelism(parallelism);
            }
        }
        run(cluster, env);
        for (int i = 0; i < ids.size(); i++) {
            int id = ids.get(i);
            ArrayNode fired = results.get(i).putArray("fired");
            FIRED.remove(id).forEach(fired::add);
            ArrayNode late = results.get(i).putArray("late");
            LATE.remove(id).forEach(late::add);
            RECORDS.remove(id);
            READERS.remove(id);
        }
        return results;
    }

    // ------------------------------------------------------------------ connect / co-process

    /** The serialised steps of one co case: the current step and what each step caused. */
    static final class CoSteps {
        static final int IDLE = 10;
        static final int ACTIVE = 11;
        static final Map<Integer, CoSteps> ALL = new ConcurrentHashMap<>();

        final JsonNode steps;
        final List<Ev> records = new ArrayList<>();
        final ArrayNode results = Json.array();
        private int current = 0;

        CoSteps(JsonNode steps) throws Transcript.Bad {
            this.steps = steps;
            for (int i = 0; i < steps.size(); i++) {
                records.add(record(steps.get(i), i));
                ObjectNode r = results.addObject();
                r.putArray("timers");
                r.putArray("watermarks");
                r.putArray("status");
            }
        }

        int input(int step) {
            return steps.get(step).path("input").asInt();
        }

        synchronized int current() {
            return current;
        }

        /** Blocks the calling source until step {@code step} is due. */
        synchronized void awaitStep(int step) throws InterruptedException {
            long deadline = System.currentTimeMillis() + STEP_TIMEOUT_MS;
            while (current < step) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    throw new IllegalStateException("step " + current + " never completed");
                }
                wait(left);
            }
        }

        synchronized void advance() {
            current++;
            notifyAll();
        }

        /** The result object of the step being processed (a dummy after the last one). */
        synchronized ObjectNode now() {
            return current < results.size() ? (ObjectNode) results.get(current) : Json.object();
        }
    }

    /**
     * After each source: passes only its input's steps, each when it is due, and drops the
     * watermark MAX of the source's end (the case just stops, like Flink's test harness).
     */
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
            CoSteps log = CoSteps.ALL.get(id);
            int step = index.getValue().intValue();
            if (step == log.records.size()) { // the end: wait until the last step is done
                log.awaitStep(step);
                return;
            }
            if (log.input(step) != input) {
                return;
            }
            log.awaitStep(step);
            Ev ev = log.records.get(step);
            output.collect(ev.kind == Ev.ELEMENT ? new StreamRecord<>(ev, ev.ts)
                    : new StreamRecord<>(ev));
        }

        @Override
        public void processWatermark(org.apache.flink.streaming.api.watermark.Watermark mark) {
            // only the end of input's MAX reaches here (the generator comes after the gate)
        }
    }

    /** Emits a step's watermark, or marks the output idle / active, as the step says. */
    static final class CoWatermarks implements WatermarkGenerator<Ev> {
        @Override
        public void onEvent(Ev ev, long timestamp, WatermarkOutput out) {
            if (ev.kind == Ev.WATERMARK) {
                out.emitWatermark(new Watermark(ev.ts));
            } else if (ev.kind == CoSteps.IDLE) {
                out.markIdle();
            } else if (ev.kind == CoSteps.ACTIVE) {
                out.markActive();
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }

    /** The KeyedCoProcessFunction: records the watermark it sees, registers what the step says. */
    static final class CoFn extends KeyedCoProcessFunction<String, Ev, Ev, Ev> {
        private final int id;

        CoFn(int id) {
            this.id = id;
        }

        private void element(Ev ev, Context ctx) {
            CoSteps log = CoSteps.ALL.get(id);
            log.now().put("watermark", ctx.timerService().currentWatermark());
            JsonNode step = log.steps.get(ev.step);
            for (JsonNode ts : step.path("register_event_time")) {
                ctx.timerService().registerEventTimeTimer(ts.asLong());
            }
            for (JsonNode ts : step.path("delete_event_time")) {
                ctx.timerService().deleteEventTimeTimer(ts.asLong());
            }
        }

        @Override
        public void processElement1(Ev ev, Context ctx, Collector<Ev> out) {
            element(ev, ctx);
        }

        @Override
        public void processElement2(Ev ev, Context ctx, Collector<Ev> out) {
            element(ev, ctx);
        }

        @Override
        public void onTimer(long ts, OnTimerContext ctx, Collector<Ev> out) {
            ObjectNode t = ((ArrayNode) CoSteps.ALL.get(id).now().get("timers")).addObject();
            t.put("key", ctx.getCurrentKey());
            t.put("ts", ts);
            t.put("watermark", ctx.timerService().currentWatermark());
        }
    }

    /**
     * Flink's own KeyedCoProcessOperator; after each of its input methods returns, the step is
     * complete and the next may enter. Nothing is changed in what the methods do.
     */
    static final class SteppedCoOperator extends KeyedCoProcessOperator<String, Ev, Ev, Ev> {
        private final int id;

        SteppedCoOperator(int id) {
            super(new CoFn(id));
            this.id = id;
        }

        private void done() {
            CoSteps.ALL.get(id).advance();
        }

        @Override
        public void processElement1(StreamRecord<Ev> element) throws Exception {
            super.processElement1(element);
            done();
        }

        @Override
        public void processElement2(StreamRecord<Ev> element) throws Exception {
            super.processElement2(element);
            done();
        }

        @Override
        public void processWatermark1(org.apache.flink.streaming.api.watermark.Watermark mark)
                throws Exception {
            super.processWatermark1(mark);
            done();
        }

        @Override
        public void processWatermark2(org.apache.flink.streaming.api.watermark.Watermark mark)
                throws Exception {
            super.processWatermark2(mark);
            done();
        }

        @Override
        protected void processWatermarkStatus(WatermarkStatus status, int index) throws Exception {
            super.processWatermarkStatus(status, index);
            done();
        }
    }

    /** Chained after the two-input operator: records the watermarks and statuses it emits. */
    static final class AfterCo extends AbstractStreamOperator<Ev>
            implements OneInputStreamOperator<Ev, Ev> {
        private final int id;

        AfterCo(int id) {
            this.id = id;
        }

        @Override
        public void processElement(StreamRecord<Ev> element) {}

        @Override
        public void processWatermark(org.apache.flink.streaming.api.watermark.Watermark mark) {
            ((ArrayNode) CoSteps.ALL.get(id).now().get("watermarks")).add(mark.getTimestamp());
        }

        @Override
        public void processWatermarkStatus(WatermarkStatus status) {
            ((ArrayNode) CoSteps.ALL.get(id).now().get("status"))
                    .add(status.isIdle() ? "idle" : "active");
        }
    }

    private static DataStream<Ev> coInput(StreamExecutionEnvironment env, int id, int input,
            int steps) {
        return env.fromSequence(0, steps).setParallelism(1).name("steps" + input + "#" + id)
                .transform("gate" + input + "#" + id, Types.POJO(Ev.class), new Gate(id, input))
                .setParallelism(1)
                .assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Ev>forGenerator(ctx -> new CoWatermarks())
                                .withTimestampAssigner((ev, previous) -> ev.ts))
                .setParallelism(1)
                .filter(new Functions.ReachesOperator()).setParallelism(1);
    }

    private static List<ObjectNode> coBatch(MiniCluster cluster, List<JsonNode> batch)
            throws Exception {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(new Configuration());
        env.getConfig().setAutoWatermarkInterval(0);
        env.setBufferTimeout(0); // flush after every record: a step's input arrives at once
        env.setParallelism(1);
        List<Integer> ids = new ArrayList<>();
        List<ObjectNode> results = new ArrayList<>();
        for (JsonNode c : batch) {
            int id = nextCase++;
            ids.add(id);
            CoSteps log = new CoSteps(c.path("steps"));
            CoSteps.ALL.put(id, log);
            int n = log.records.size();
            KeySelector<Ev, String> key = new Functions.KeyOf();
            coInput(env, id, 1, n).connect(coInput(env, id, 2, n)).keyBy(key, key)
                    .transform("co#" + id, Types.POJO(Ev.class), new SteppedCoOperator(id))
                    .transform("after-co#" + id, Types.POJO(Ev.class), new AfterCo(id))
                    .sinkTo(new DiscardingSink<>());
            ObjectNode res = Json.object();
            res.put("name", c.path("name").asText());
            results.add(res);
        }
        String error = null;
        try {
            run(cluster, env);
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            error = "Flink: " + root;
        }
        for (int i = 0; i < ids.size(); i++) {
            CoSteps log = CoSteps.ALL.remove(ids.get(i));
            if (log.current() == log.records.size()) {
                results.get(i).set("steps", log.results);
            } else {
                results.get(i).put("error", (error == null ? "" : error + "; ")
                        + "stopped at step " + log.current());
            }
        }
        return results;
    }
}
