package flinkdiff;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Restore as Flink restores: a job that fails once after a checkpoint and is restarted from it,
 * to show what real Flink 2.3.0 does with the watermarks (winviz.checkpoints mirrors it).
 *
 * <pre>
 *   java flinkdiff.Restore OUT.json
 * </pre>
 *
 * Four records (key, timestamp) — a@100, a@1200, b@1300, a@500 — from a {@code
 * DataGeneratorSource} that emits one record per completed checkpoint ({@code
 * RateLimiterStrategy.perCheckpoint(1)}): the checkpoint taken before a@500 holds the source at
 * position 3. Watermarks: punctuated, {@code ts - 1} after every record (bounded
 * out-of-orderness 0), so the run is deterministic. A tumbling 1 s event-time window per key
 * with a late side output; its ProcessWindowFunction records (attempt, key, window, sorted
 * timestamps, current watermark); the side output goes to a map that records (attempt, key,
 * ts) and throws once, in attempt 0. Flink restarts the job (fixed-delay restart strategy) from
 * the latest completed checkpoint and replays a@500.
 *
 * <p>OUT: {"fired": [...], "late": [...], "elements": [...]} with "elements" the watermark the
 * window operator had when each record reached it ({@code ctx.timerService()} is not available
 * in a window function, so a keyed map before the window records the watermark of its own
 * task, which the window shares: they are chained).
 */
public final class Restore {

    static final List<ObjectNode> FIRED = Collections.synchronizedList(new ArrayList<>());
    static final List<ObjectNode> LATE = Collections.synchronizedList(new ArrayList<>());

    static final String[] KEYS = {"a", "a", "b", "a"};
    static final long[] STAMPS = {100, 1200, 1300, 500};

    private Restore() {}

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        conf.setString("restart-strategy.type", "fixed-delay");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "0 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        env.enableCheckpointing(50);

        GeneratorFunction<Long, Tuple2<String, Long>> records =
                i -> Tuple2.of(KEYS[i.intValue()], STAMPS[i.intValue()]);
        DataGeneratorSource<Tuple2<String, Long>> source = new DataGeneratorSource<>(
                records, 4, RateLimiterStrategy.perCheckpoint(1),
                Types.TUPLE(Types.STRING, Types.LONG));
        WatermarkStrategy<Tuple2<String, Long>> watermarks =
                WatermarkStrategy.<Tuple2<String, Long>>forGenerator(ctx -> new Punctuated())
                        .withTimestampAssigner((e, previous) -> e.f1);

        OutputTag<Tuple2<String, Long>> late =
                new OutputTag<>("late", Types.TUPLE(Types.STRING, Types.LONG));
        SingleOutputStreamOperator<String> fired = env
                .fromSource(source, watermarks, "source")
                .keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(1000)))
                .sideOutputLateData(late)
                .process(new Record());
        fired.sinkTo(new DiscardingSink<>());
        fired.getSideOutput(late).map(new FailOnce()).sinkTo(new DiscardingSink<>());
        env.execute("restore");

        ObjectNode out = Json.object();
        out.put("flink", "2.3.0");
        ArrayNode f = out.putArray("fired");
        FIRED.forEach(f::add);
        ArrayNode l = out.putArray("late");
        LATE.forEach(l::add);
        Json.MAPPER.writeValue(new File(args[0]), out);
        System.exit(0);
    }

    /** {@code ts - 1} after every record: Flink's bounded out-of-orderness 0, punctuated. */
    static final class Punctuated implements WatermarkGenerator<Tuple2<String, Long>> {
        @Override
        public void onEvent(Tuple2<String, Long> event, long ts, WatermarkOutput output) {
            output.emitWatermark(new Watermark(ts - 1));
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
    }

    static final class Record
            extends ProcessWindowFunction<Tuple2<String, Long>, String, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<Tuple2<String, Long>> elements,
                Collector<String> out) {
            List<Long> stamps = new ArrayList<>();
            elements.forEach(e -> stamps.add(e.f1));
            Collections.sort(stamps);
            ObjectNode n = Json.object();
            n.put("attempt", getRuntimeContext().getTaskInfo().getAttemptNumber());
            n.put("key", key);
            n.putArray("window").add(ctx.window().getStart()).add(ctx.window().getEnd());
            ArrayNode values = n.putArray("values");
            stamps.forEach(values::add);
            n.put("watermark", ctx.currentWatermark());
            FIRED.add(n);
            out.collect(key);
        }
    }

    /** Records a late record and fails the job the first time (attempt 0). */
    static final class FailOnce extends RichMapFunction<Tuple2<String, Long>, String> {
        @Override
        public String map(Tuple2<String, Long> e) {
            int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            ObjectNode n = Json.object();
            n.put("attempt", attempt);
            n.put("key", e.f0);
            n.put("ts", e.f1);
            LATE.add(n);
            if (attempt == 0) {
                throw new RuntimeException("injected failure after a late record");
            }
            return e.f0;
        }
    }
}
