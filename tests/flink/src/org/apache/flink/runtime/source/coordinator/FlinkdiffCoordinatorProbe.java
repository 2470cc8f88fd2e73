package org.apache.flink.runtime.source.coordinator;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkAlignmentParams;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.runtime.operators.coordination.CoordinatorStore;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.source.event.WatermarkAlignmentEvent;

import sun.misc.Unsafe;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * Drives Flink's own {@link SourceCoordinator} watermark-alignment code (its private
 * {@code handleReportedWatermark} and package-private {@code announceCombinedWatermark}) with
 * controlled inputs, for the differential tier (tests/flink/alignment.py). It lives in
 * Flink's package only to reach those package-private members; it adds no logic of its own:
 * the coordinator is Flink's class, made without its constructor (which needs a running job)
 * and given only the fields alignment reads. The events it would send to the subtasks are
 * caught by {@link ProbeContext}.
 */
public final class FlinkdiffCoordinatorProbe {
    private FlinkdiffCoordinatorProbe() {}

    /** Catches what {@code announceCombinedWatermark} sends: (subtask, max watermark). */
    static final class ProbeContext extends SourceCoordinatorContext<SourceSplit> {
        List<long[]> sent;

        @SuppressWarnings("unused")
        private ProbeContext() {
            super(null, null, 0, null, null, false); // never run: made by Unsafe
        }

        @Override
        void sendEventToSourceOperatorIfTaskReady(int subtaskId, OperatorEvent event) {
            if (sent == null) {
                sent = new ArrayList<>();
            }
            sent.add(new long[] {subtaskId, ((WatermarkAlignmentEvent) event).getMaxWatermark()});
        }
    }

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

    static void set(Object target, Class<?> owner, String name, Object value) throws Exception {
        Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        f.set(target, value);
    }

    /** What {@code SourceCoordinator.start()} does for alignment: the group's aggregator. */
    public static void startGroup(CoordinatorStore store, String group) {
        store.putIfAbsent(group, new SourceCoordinator.WatermarkAggregator<>());
    }

    /** A coordinator of source {@code name} with these alignment parameters. */
    public static SourceCoordinator<?, ?> coordinator(
            String name, WatermarkAlignmentParams params, CoordinatorStore store)
            throws Exception {
        SourceCoordinator<?, ?> c =
                (SourceCoordinator<?, ?>) UNSAFE.allocateInstance(SourceCoordinator.class);
        set(c, SourceCoordinator.class, "operatorName", name);
        set(c, SourceCoordinator.class, "watermarkAlignmentParams", params);
        set(c, SourceCoordinator.class, "coordinatorStore", store);
        set(c, SourceCoordinator.class, "combinedWatermark",
                new SourceCoordinator.WatermarkAggregator<Integer>());
        set(c, SourceCoordinator.class, "context", UNSAFE.allocateInstance(ProbeContext.class));
        return c;
    }

    /** {@code handleReportedWatermark(subtask, watermark)}: a ReportedWatermarkEvent. */
    public static void report(SourceCoordinator<?, ?> c, int subtask, long watermark)
            throws Exception {
        Method m =
                SourceCoordinator.class.getDeclaredMethod(
                        "handleReportedWatermark", int.class, Watermark.class);
        m.setAccessible(true);
        m.invoke(c, subtask, new Watermark(watermark));
    }

    /** {@code announceCombinedWatermark()}: the (subtask, max watermark) events it sent. */
    public static List<long[]> announce(SourceCoordinator<?, ?> c) throws Exception {
        ProbeContext context = (ProbeContext) c.getContext();
        context.sent = new ArrayList<>();
        c.announceCombinedWatermark();
        return context.sent;
    }
}
