package flinkdiff;

import org.apache.flink.api.common.JobID;
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
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Replays conformance transcripts through real Flink and writes what each step caused.
 *
 * <pre>
 *   java flinkdiff.Main IN.json OUT.json [--batch N] [--timeout SECONDS]
 * </pre>
 *
 * IN is {"transcripts": [TRANSCRIPT-as-JSON, ...]}; OUT is the FORMAT.md `--json` document
 * {"transcripts": [{"name", "steps": [STEP_RESULT...]}, ...]}, where a transcript this tier cannot
 * drive has {"name", "unsupported": why} instead of steps, and one that made Flink fail (or run
 * forever) has {"name", "error": message}.
 *
 * <p>Speed: one MiniCluster runs all jobs; transcripts run in batches, each batch one job holding
 * one independent chained pipeline per transcript (a task, i.e. a thread, each).
 */
public final class Main {
    private static int nextPipeline = 0;
    private static MiniCluster cluster;
    private static int batchSize = 50;
    private static long timeoutSeconds = 30;

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: flinkdiff.Main IN.json OUT.json [--batch N] [--timeout S]");
            System.exit(2);
        }
        for (int i = 2; i + 1 < args.length; i += 2) {
            if (args[i].equals("--batch")) {
                batchSize = Integer.parseInt(args[i + 1]);
            } else if (args[i].equals("--timeout")) {
                timeoutSeconds = Long.parseLong(args[i + 1]);
            }
        }
        List<JsonNode> docs = new ArrayList<>();
        Json.MAPPER.readTree(new File(args[0])).path("transcripts").forEach(docs::add);

        ObjectNode[] results = new ObjectNode[docs.size()];
        Map<Transcript, Integer> runnable = new LinkedHashMap<>();
        for (int i = 0; i < docs.size(); i++) {
            try {
                runnable.put(new Transcript(docs.get(i)), i);
            } catch (Transcript.Unsupported e) {
                results[i] = status(docs.get(i), "unsupported", e.getMessage());
            } catch (Transcript.Bad e) {
                results[i] = status(docs.get(i), "error", e.getMessage());
            }
        }

        Map<Transcript, ObjectNode> ran = runAll(new ArrayList<>(runnable.keySet()));
        ran.forEach((t, res) -> results[runnable.get(t)] = res);

        ObjectNode out = Json.object();
        out.put("flink", "2.3.0");
        ArrayNode list = out.putArray("transcripts");
        for (int i = 0; i < docs.size(); i++) {
            if (docs.get(i).has("file")) {
                results[i].put("file", docs.get(i).get("file").asText());
            }
            list.add(results[i]);
        }
        Json.MAPPER.writeValue(new File(args[1]), out);
        // Exit at once: a pipeline that never terminated may still hold a thread (see runBatch).
        System.exit(0);
    }

    private static Map<Transcript, ObjectNode> runAll(List<Transcript> todo) throws Exception {
        long started = System.nanoTime();
        Map<Transcript, ObjectNode> ran = new LinkedHashMap<>();
        cluster = startCluster();
        for (int from = 0; from < todo.size(); from += batchSize) {
            int to = Math.min(from + batchSize, todo.size());
            runBatch(new ArrayList<>(todo.subList(from, to)), ran);
            System.err.printf("flink: %d/%d transcripts, %.1f s%n",
                    to, todo.size(), (System.nanoTime() - started) / 1e9);
        }
        return ran;
    }

    private static ObjectNode status(JsonNode doc, String what, String message) {
        ObjectNode o = Json.object();
        o.put("name", doc.path("name").asText("?"));
        o.put(what, message);
        return o;
    }

    private static MiniCluster startCluster() throws Exception {
        Configuration conf = new Configuration();
        // Everything on the loopback interface, on free ports: nothing is reachable from outside.
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        // A task stuck in Flink's timer loop cannot be cancelled; don't let the cancellation
        // watchdog kill the whole JVM because of it (0 disables the watchdog).
        conf.set(TaskManagerOptions.TASK_CANCELLATION_TIMEOUT, Duration.ZERO);
        MiniCluster started = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(1) // slot sharing puts every pipeline in this one slot
                .build());
        started.start();
        return started;
    }

    /**
     * Runs a batch as one job. If the job fails (one transcript made Flink throw), the batch is
     * re-run in halves so that only the guilty transcript is reported as an error. If the job
     * overruns the timeout, the pipelines that finished keep their results and the others are
     * reported as never terminating.
     */
    private static void runBatch(List<Transcript> batch, Map<Transcript, ObjectNode> ran)
            throws Exception {
        Map<Integer, Transcript> pipelines = new LinkedHashMap<>();
        StreamExecutionEnvironment env = buildJob(batch, pipelines, ran);
        if (pipelines.isEmpty()) {
            return;
        }
        JobGraph job = env.getStreamGraph().getJobGraph();
        // The step attribution needs each pipeline chained into ONE task (one thread).
        if (job.getNumberOfVertices() != pipelines.size()) {
            throw new IllegalStateException("expected one chained task per pipeline, got "
                    + job.getNumberOfVertices() + " tasks for " + pipelines.size() + " pipelines");
        }
        try {
            JobID id = cluster.submitJob(job).get().getJobID();
            JobResult result;
            try {
                result = cluster.requestJobResult(id).get(timeoutSeconds, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                abandonUnfinished(id, pipelines, ran);
                return;
            }
            if (result.isSuccess()) {
                pipelines.forEach((pid, t) -> ran.put(t, StepLog.of(pid).result()));
            } else if (pipelines.size() > 1) {
                // Bisect until the transcript that made the job fail runs alone.
                List<Transcript> all = new ArrayList<>(pipelines.values());
                int half = all.size() / 2;
                runBatch(new ArrayList<>(all.subList(0, half)), ran);
                runBatch(new ArrayList<>(all.subList(half, all.size())), ran);
            } else {
                Throwable cause = result.getSerializedThrowable()
                        .map(s -> s.deserializeError(Main.class.getClassLoader()))
                        .orElse(new RuntimeException("job failed"));
                Map.Entry<Integer, Transcript> only = pipelines.entrySet().iterator().next();
                ObjectNode error = failure(only.getValue(), cause);
                error.put("step", StepLog.of(only.getKey()).currentStep()); // the step that failed
                ran.put(only.getValue(), error);
            }
        } finally {
            pipelines.keySet().forEach(StepLog::close);
        }
    }

    /**
     * After a timeout: keeps the results of the pipelines that finished and reports the others. A
     * task stuck in a loop cannot be cancelled and keeps its slot, so the remaining batches run on
     * a fresh MiniCluster (the old one is left behind; main() ends with System.exit).
     */
    private static void abandonUnfinished(JobID id, Map<Integer, Transcript> pipelines,
            Map<Transcript, ObjectNode> ran) throws Exception {
        pipelines.forEach((pid, t) -> {
            StepLog log = StepLog.of(pid);
            if (log.isFinished()) {
                ran.put(t, log.result());
            } else {
                log.abandon();
                ObjectNode o = Json.object();
                o.put("name", t.name);
                o.put("error", "Flink did not finish within " + timeoutSeconds + " s");
                ran.put(t, o);
                System.err.println("flink: abandoned " + t.name + " (did not terminate)");
            }
        });
        cluster.cancelJob(id);
        cluster = startCluster();
    }

    /**
     * Adds one pipeline per transcript to a fresh environment. A transcript Flink refuses while the
     * job is being built (e.g. a merging assigner with a non-merging trigger) is reported as an
     * error and the job is built again without it.
     */
    private static StreamExecutionEnvironment buildJob(List<Transcript> batch,
            Map<Integer, Transcript> pipelines, Map<Transcript, ObjectNode> ran) {
        while (true) {
            StreamExecutionEnvironment env = new StreamExecutionEnvironment(new Configuration());
            env.setParallelism(1);
            env.getConfig().setAutoWatermarkInterval(0); // only the steps' watermarks, never periodic
            pipelines.keySet().forEach(StepLog::close);
            pipelines.clear();
            Transcript refused = null;
            for (Transcript t : batch) {
                int id = nextPipeline++;
                StepLog.open(id, t);
                pipelines.put(id, t);
                try {
                    Pipelines.add(env, id, t);
                } catch (RuntimeException e) {
                    refused = t;
                    ran.put(t, failure(t, e));
                    break;
                }
            }
            if (refused == null) {
                return env;
            }
            batch.remove(refused);
        }
    }

    private static ObjectNode failure(Transcript t, Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        ObjectNode o = Json.object();
        o.put("name", t.name);
        o.put("error", "Flink: " + root);
        return o;
    }
}
