import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The Java logger's test: 3 processes (threads) P0..P2 trade integer balances over in-memory
 * FIFO queues, one per channel, and P0 initiates snapshots 0 and 1; each process logs with
 * SnapshotLog.java to OUTDIR/P&lt;i&gt;.jsonl (their topology: loggers/demo.top).
 *
 * <pre>javac -d CLASSES loggers/java/*.java &amp;&amp; java -cp CLASSES Demo OUTDIR [--bug | --stress]</pre>
 *
 * --bug breaks the marker rule: P0 sends its round's transfers after recording and before its
 * markers, so the first process to receive P0's marker has received a transfer sent after P0's
 * cut before recording: {@code model verify} must report an inward crossing.
 */
public final class Demo {
    static final int N = 3, ROUNDS = 10;
    static final Map<Integer, Integer> SNAPSHOT_AT = Map.of(2, 0, 6, 1); // round -> snapshot P0 initiates

    /** A message ({@code msg} its id) or, when {@code msg} is null, a marker of {@code value}. */
    record Item(String msg, int value) {}

    final int me;
    final boolean bug;
    final Map<String, ConcurrentLinkedQueue<Item>> queues;
    final SnapshotLog log;
    final List<Integer> peers = new ArrayList<>();
    int balance = 100;
    final Map<Integer, Map<Integer, List<String>>> recording = new HashMap<>(); // snapshot -> open src -> ids
    final Map<Integer, int[]> counts = new HashMap<>(); // messages and markers received from src

    Demo(int me, String out, boolean bug, Map<String, ConcurrentLinkedQueue<Item>> queues) throws Exception {
        this.me = me;
        this.bug = bug;
        this.queues = queues;
        this.log = new SnapshotLog("P" + me, Path.of(out, "P" + me + ".jsonl").toString());
        for (int p = 0; p < N; p++) {
            if (p != me) {
                peers.add(p);
                counts.put(p, new int[2]);
            }
        }
    }

    static String channel(int from, int to) {
        return "P" + from + "->P" + to;
    }

    Map<Integer, List<String>> open(int except) {
        Map<Integer, List<String>> m = new HashMap<>();
        for (int p : peers) {
            if (p != except) {
                m.put(p, new ArrayList<>());
            }
        }
        return m;
    }

    void sendMarkers(int snap) {
        for (int dst : peers) {
            queues.get(channel(me, dst)).add(new Item(null, snap));
            log.markerSend(snap, channel(me, dst));
        }
    }

    void handle(int src, Item it) {
        if (it.msg() == null) {
            int snap = it.value();
            counts.get(src)[1]++;
            if (!recording.containsKey(snap)) { // the first marker: record, the channel closed empty
                recording.put(snap, open(src));
                log.record(snap, channel(src, me), balance);
                sendMarkers(snap);
            } else { // a later one closes its channel's record
                log.markerReceive(snap, channel(src, me), recording.get(snap).remove(src));
            }
            return;
        }
        counts.get(src)[0]++;
        balance += it.value();
        for (Map<Integer, List<String>> open : recording.values()) {
            if (open.containsKey(src)) {
                open.get(src).add(it.msg());
            }
        }
        log.receive(channel(src, me), it.msg(), balance);
    }

    boolean poll() {
        boolean handled = false;
        for (int src : peers) {
            for (Item it; (it = queues.get(channel(src, me)).poll()) != null; handled = true) {
                handle(src, it);
            }
        }
        return handled;
    }

    void run() throws Exception {
        for (int r = 0; r < ROUNDS; r++) {
            Integer snap = me == 0 ? SNAPSHOT_AT.get(r) : null;
            if (snap != null) {
                recording.put(snap, open(-1));
                log.record(snap, null, balance);
                if (!bug) {
                    sendMarkers(snap);
                }
            }
            for (int dst : peers) {
                int amount = (r + me + dst) % 4; // 0 is a ping
                balance -= amount;
                String msg = log.newId();
                queues.get(channel(me, dst)).add(new Item(msg, amount));
                log.send(channel(me, dst), msg, amount, balance);
            }
            if (snap != null && bug) {
                sendMarkers(snap);
            }
            poll();
        }
        while (!counts.values().stream().allMatch(c -> c[0] == ROUNDS && c[1] == SNAPSHOT_AT.size())) {
            if (!poll()) {
                Thread.sleep(1);
            }
        }
        log.close();
    }

    /**
     * --stress: 4 threads log through one logger at once, each a send and a record on a marker
     * 250 times, to OUTDIR/stress.jsonl (the test checks the lines are whole, numbered, paired).
     */
    static void stress(String out) throws Exception {
        SnapshotLog log = new SnapshotLog("P0", Path.of(out, "stress.jsonl").toString());
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int first = t * 1000;
            threads.add(new Thread(() -> {
                for (int i = 0; i < 250; i++) {
                    log.send("P0->P1", log.newId(), i, i);
                    log.record(first + i, "P1->P0", i);
                }
            }));
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        log.close();
    }

    public static void main(String[] args) throws Exception {
        String out = args[0];
        boolean bug = args.length > 1 && args[1].equals("--bug");
        Files.createDirectories(Path.of(out));
        if (args.length > 1 && args[1].equals("--stress")) {
            stress(out);
            return;
        }
        Map<String, ConcurrentLinkedQueue<Item>> queues = new HashMap<>();
        for (int a = 0; a < N; a++) {
            for (int b = 0; b < N; b++) {
                if (a != b) {
                    queues.put(channel(a, b), new ConcurrentLinkedQueue<>());
                }
            }
        }
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int p = 0; p < N; p++) {
            Demo process = new Demo(p, out, bug, queues);
            Thread t = new Thread(() -> {
                try {
                    process.run();
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            failures.get(0).printStackTrace();
            System.exit(1);
        }
    }
}
