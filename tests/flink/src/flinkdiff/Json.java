package flinkdiff;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/** JSON helpers (Flink's shaded Jackson, so no extra jar is needed). */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    /** A FORMAT.md integer: a JSON number or the strings "MIN" / "MAX" (Long.MIN/MAX_VALUE). */
    static long toLong(JsonNode n, String where) throws Transcript.Bad {
        if (n != null && n.isTextual()) {
            switch (n.asText()) {
                case "MIN":
                    return Long.MIN_VALUE;
                case "MAX":
                    return Long.MAX_VALUE;
                default:
                    break;
            }
        }
        if (n == null || !n.canConvertToLong()) {
            throw new Transcript.Bad(where + ": expected an integer, MIN or MAX, got " + n);
        }
        return n.asLong();
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    static ArrayNode array() {
        return MAPPER.createArrayNode();
    }
}
