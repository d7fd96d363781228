import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Logs one process's Chandy-Lamport events as the JSON lines {@code model verify} reads. Copy
 * this file into your project (add your package line); it needs only the JDK. One SnapshotLog
 * per process, shared by all of that process's threads:
 *
 * <pre>
 * SnapshotLog log = new SnapshotLog("P0", "logs/P0.jsonl");
 * String msg = log.newId();                         // a run-wide unique message id
 * log.send("P0->P1", msg, 5, 95);                   // payload 5, state 95 after the send
 * log.receive("P1->P0", "P1-3", 98);
 * log.record(0, null, 98);                          // P0 initiates snapshot 0
 * log.record(1, "P2->P0", 97);                      // a marker on P2->P0 made P0 record
 * log.markerSend(0, "P0->P1");
 * log.markerReceive(0, "P1->P0", List.of("P1-4"));  // closes P1->P0's record
 * </pre>
 *
 * Every call writes one event under one lock, numbered by {@code seq} in the order of the
 * calls: call it right after the event, in the thread that made it happen, while that thread
 * still holds whatever lock orders the process's events. {@code record} with a marker channel
 * writes the marker's receipt and the record it caused as two adjacent lines, so another
 * thread's line never comes between them. A state (null: none) is the process's state right
 * after the event, on {@code record} the state recorded. Payloads, steps and states are written
 * as JSON: numbers, strings, booleans, Maps, Lists, or {@link #raw} JSON text.
 */
public final class SnapshotLog implements AutoCloseable {
    private final String process;
    private final OutputStream out;
    private long seq = 0;
    private long ids = 0;

    /** The log of {@code process} (its name as in the topology), in the file at {@code path}. */
    public SnapshotLog(String process, String path) throws IOException {
        this.process = process;
        this.out = new FileOutputStream(path);
    }

    /** A message id no other process's log gives: "&lt;process&gt;-&lt;n&gt;". */
    public synchronized String newId() {
        return process + "-" + ids++;
    }

    /** Message {@code msg} sent on {@code channel} ("FROM->TO") carrying {@code payload}. */
    public void send(String channel, String msg, Object payload, Object state) {
        write(event("send", "channel", channel, "msg", msg, "payload", payload, "state", state));
    }

    /** Message {@code msg} taken from {@code channel} and applied. */
    public void receive(String channel, String msg, Object state) {
        write(event("receive", "channel", channel, "msg", msg, "state", state));
    }

    /** Message {@code msg} lost in transit on {@code channel} (logged by its receiver). */
    public void loss(String channel, String msg, Object state) {
        write(event("loss", "channel", channel, "msg", msg, "state", state));
    }

    /** An internal step. */
    public void internal(Object step, Object state) {
        write(event("internal", "step", step, "state", state));
    }

    /**
     * The process records {@code state} for {@code snapshot}: as the initiator when {@code
     * marker} is null; else because the first marker of {@code snapshot} arrived on channel
     * {@code marker}, whose receipt (closing that channel empty) is written with the record,
     * adjacent.
     */
    public void record(int snapshot, String marker, Object state) {
        String record = event("record", "snapshot", snapshot, "initiated", marker == null, "state", state);
        if (marker == null) {
            write(record);
        } else {
            write(event("marker-receive", "snapshot", snapshot, "channel", marker, "recorded", List.of()), record);
        }
    }

    /** A marker of {@code snapshot} sent on {@code channel} (null: on every outgoing channel). */
    public void markerSend(int snapshot, String channel) {
        write(event("marker-send", "snapshot", snapshot, "channel", channel));
    }

    /**
     * A later marker of {@code snapshot} on {@code channel}: it closes the channel's record,
     * {@code recorded} the ids of the messages received on it since the process recorded.
     */
    public void markerReceive(int snapshot, String channel, List<String> recorded) {
        write(event("marker-receive", "snapshot", snapshot, "channel", channel, "recorded", recorded));
    }

    /** JSON text written as it is (a state serialized by your JSON library). */
    public static Object raw(String json) {
        return new Raw(json);
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }

    private record Raw(String json) {}

    /** An event's fields after "process" and "seq" ({@code "kind":...}), nulls left out. */
    private static String event(String kind, Object... fields) {
        StringBuilder b = new StringBuilder("\"kind\":\"").append(kind).append('"');
        for (int i = 0; i < fields.length; i += 2) {
            if (fields[i + 1] != null) {
                json(b.append(",\"").append(fields[i]).append("\":"), fields[i + 1]);
            }
        }
        return b.append("}\n").toString();
    }

    /** Writes the events under the lock, adjacent, each numbered. */
    private synchronized void write(String... events) {
        StringBuilder b = new StringBuilder();
        for (String e : events) {
            json(b.append("{\"process\":"), process).append(",\"seq\":").append(seq++).append(',').append(e);
        }
        try {
            out.write(b.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("snapshot log of " + process, e);
        }
    }

    private static StringBuilder json(StringBuilder b, Object v) {
        if (v == null || v instanceof Number || v instanceof Boolean) {
            return b.append(v);
        } else if (v instanceof Raw r) {
            return b.append(r.json());
        } else if (v instanceof Map<?, ?> m) {
            String sep = "{";
            for (Map.Entry<?, ?> e : m.entrySet()) {
                json(b.append(sep), String.valueOf(e.getKey())).append(':');
                json(b, e.getValue());
                sep = ",";
            }
            return b.append(m.isEmpty() ? "{}" : "}");
        } else if (v instanceof Iterable<?> list) {
            String sep = "[";
            for (Object x : list) {
                json(b.append(sep), x);
                sep = ",";
            }
            return b.append(sep.equals("[") ? "[]" : "]");
        }
        b.append('"');
        for (char c : v.toString().toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"');
    }
}
