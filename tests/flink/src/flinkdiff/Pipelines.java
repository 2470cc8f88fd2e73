package flinkdiff;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.util.OutputTag;

import java.time.Duration;

/**
 * Builds one independent pipeline per transcript into a job:
 *
 * <pre>
 *   fromSequence(0..n)            the step indices, in order (a bounded source)
 *   -> EnterStep                  sets the step, turns index i into step i's record
 *   -> assignTimestampsAndWatermarks(StepWatermarks)   emits the watermark a step carries
 *                                 (only when the transcript has watermark steps)
 *   -> filter ReachesOperator     drops the marker records
 *   -> reinterpretAsKeyedStream   keyed WITHOUT a shuffle, so the chain is not broken
 *   -> window(...) / process(Timers)                   Flink's own WindowOperator / timers
 *   -> RecordEmitted / RecordLate                      log the outputs under the current step
 * </pre>
 *
 * All with parallelism 1 and forward edges, so Flink chains each pipeline into one task.
 */
@SuppressWarnings({"rawtypes", "unchecked"})
final class Pipelines {
    private Pipelines() {}

    static void add(StreamExecutionEnvironment env, int pipeline, Transcript t) {
        KeyedStream<Ev, String> keyed = front(env, pipeline, t);
        if (t.kind.equals("window")) {
            window(keyed, pipeline, t.window);
        } else {
            keyed.process(new Functions.Timers(pipeline)).name("timers#" + pipeline)
                    .sinkTo(new DiscardingSink<>());
        }
    }

    private static KeyedStream<Ev, String> front(
            StreamExecutionEnvironment env, int pipeline, Transcript t) {
        DataStream<Ev> steps = env.fromSequence(0, t.sourceRecords() - 1)
                .name("steps#" + pipeline)
                .transform("enter-step#" + pipeline, Types.POJO(Ev.class),
                        new Functions.EnterStep(pipeline));
        if (t.hasWatermarks()) {
            steps = steps.assignTimestampsAndWatermarks(
                    WatermarkStrategy.<Ev>forGenerator(ctx -> new Functions.StepWatermarks())
                            .withTimestampAssigner((ev, previous) -> ev.ts));
        }
        DataStream<Ev> records = steps.filter(new Functions.ReachesOperator());
        return DataStreamUtils.reinterpretAsKeyedStream(records, new Functions.KeyOf(), Types.STRING);
    }

    private static void window(KeyedStream<Ev, String> keyed, int pipeline, WindowSpec spec) {
        WindowedStream<Ev, String, Window> w = keyed.window(spec.assigner);
        if (spec.trigger != null) {
            w = w.trigger(new GuardedTrigger<>(spec.trigger));
        }
        if (spec.evictor != null) {
            w = w.evictor(spec.evictor);
        }
        w = w.allowedLateness(Duration.ofMillis(spec.allowedLateness));
        OutputTag<Ev> lateTag = new OutputTag<>("late", Types.POJO(Ev.class));
        if (spec.lateSideOutput) {
            w = w.sideOutputLateData(lateTag);
        }
        SingleOutputStreamOperator<Functions.Out> fired;
        switch (spec.function) {
            case "sum":
                fired = w.reduce(new Functions.Sum(), new Functions.EmitSum());
                break;
            case "count":
                fired = w.aggregate(new Functions.Count(), new Functions.EmitCount());
                break;
            default:
                fired = w.process(new Functions.EmitValues());
                break;
        }
        fired.name("window#" + pipeline);
        fired.process(new Functions.RecordEmitted(pipeline)).sinkTo(new DiscardingSink<>());
        if (spec.lateSideOutput) {
            fired.getSideOutput(lateTag).process(new Functions.RecordLate(pipeline))
                    .sinkTo(new DiscardingSink<>());
        }
    }
}
