package flinkdiff;

/**
 * The one record type that flows through every pipeline: one transcript step.
 *
 * <p>It is a Flink POJO (public fields, public no-arg constructor) so Flink can copy it between
 * chained operators with its own PojoSerializer, exactly as in a real job.
 */
public class Ev {
    /** An {@code element:} step: a real record that reaches the window / process operator. */
    public static final int ELEMENT = 0;
    /** A {@code watermark:} step: a marker that makes the watermark generator emit {@link #ts}. */
    public static final int WATERMARK = 1;
    /** A timers step with {@code key:} but no element: reaches the process function for that key. */
    public static final int KEY_ONLY = 2;
    /** Any other marker (the {@code end:} step, the trailer): filtered out, only moves the step. */
    public static final int MARKER = 3;

    public int step;
    public int kind;
    public String key = "";
    public long value;
    public long ts;

    public Ev() {}

    public Ev(int step, int kind, String key, long value, long ts) {
        this.step = step;
        this.kind = kind;
        this.key = key;
        this.value = value;
        this.ts = ts;
    }

    public boolean reachesOperator() {
        return kind == ELEMENT || kind == KEY_ONLY;
    }

    @Override
    public String toString() {
        return "Ev{step=" + step + ", kind=" + kind + ", key=" + key + ", value=" + value
                + ", ts=" + ts + "}";
    }
}
