/* The C logger's test: 3 processes (threads) P0..P2 trade integer balances over in-memory FIFO
 * queues, one per channel, and P0 initiates snapshots 0 and 1; each process logs with
 * snapshot_log.h to OUTDIR/P<i>.jsonl (their topology: loggers/demo.top).
 *
 *     cc -pthread loggers/c/demo.c -o demo && ./demo OUTDIR [--bug | --stress]
 *
 * --bug breaks the marker rule: P0 sends its round's transfers after recording and before its
 * markers, so the first process to receive P0's marker has received a transfer sent after P0's
 * cut before recording: `model verify` must report an inward crossing. */
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot_log.h"

enum { N = 3, ROUNDS = 10, SNAPSHOTS = 2, CAP = ROUNDS + SNAPSHOTS };
static const int snapshot_at[SNAPSHOTS] = {2, 6}; /* P0 initiates snapshot s at round snapshot_at[s] */

typedef struct { int marker; int value; char msg[32]; } item; /* a message (msg, amount) or a marker (snapshot) */
typedef struct { pthread_mutex_t lock; item items[CAP]; int head, tail; } queue; /* FIFO */
static queue queues[N][N];
static const char *out;
static bool bug;

static void put(int from, int to, item it) {
    queue *q = &queues[from][to];
    pthread_mutex_lock(&q->lock);
    q->items[q->tail++] = it;
    pthread_mutex_unlock(&q->lock);
}

static bool take(int from, int to, item *it) {
    queue *q = &queues[from][to];
    pthread_mutex_lock(&q->lock);
    bool got = q->head < q->tail;
    if (got) *it = q->items[q->head++];
    pthread_mutex_unlock(&q->lock);
    return got;
}

typedef struct {
    int me, balance;
    snapshot_log log;
    bool recorded[SNAPSHOTS], open[SNAPSHOTS][N]; /* open: recording the channel from src */
    char ids[SNAPSHOTS][N][CAP][32];              /* ids received on an open channel */
    int nids[SNAPSHOTS][N], counts[N][2];         /* messages and markers received from src */
} process;

static void json_int(char *buf, int v) { snprintf(buf, 32, "%d", v); }

static void check(int r) {
    if (r != 0) { perror("snapshot log"); exit(1); }
}

static void start_recording(process *p, int snap, int except) {
    p->recorded[snap] = true;
    for (int src = 0; src < N; src++) p->open[snap][src] = src != p->me && src != except;
}

static void send_markers(process *p, int snap) {
    char channel[32];
    for (int dst = 0; dst < N; dst++) {
        if (dst == p->me) continue;
        put(p->me, dst, (item){.marker = 1, .value = snap});
        snprintf(channel, sizeof channel, "P%d->P%d", p->me, dst);
        check(snapshot_log_marker_send(&p->log, snap, channel));
    }
}

static void handle(process *p, int src, item *it) {
    char channel[32], state[32];
    snprintf(channel, sizeof channel, "P%d->P%d", src, p->me);
    if (it->marker) {
        int snap = it->value;
        p->counts[src][1]++;
        if (!p->recorded[snap]) { /* the first marker: record, the channel closed empty */
            start_recording(p, snap, src);
            json_int(state, p->balance);
            check(snapshot_log_record(&p->log, snap, channel, state));
            send_markers(p, snap);
        } else { /* a later one closes its channel's record */
            const char *ids[CAP];
            for (int i = 0; i < p->nids[snap][src]; i++) ids[i] = p->ids[snap][src][i];
            check(snapshot_log_marker_receive(&p->log, snap, channel, ids, p->nids[snap][src]));
            p->open[snap][src] = false;
        }
        return;
    }
    p->counts[src][0]++;
    p->balance += it->value;
    for (int s = 0; s < SNAPSHOTS; s++)
        if (p->recorded[s] && p->open[s][src]) strcpy(p->ids[s][src][p->nids[s][src]++], it->msg);
    json_int(state, p->balance);
    check(snapshot_log_receive(&p->log, channel, it->msg, state));
}

static bool poll_all(process *p) {
    bool handled = false;
    item it;
    for (int src = 0; src < N; src++)
        while (src != p->me && take(src, p->me, &it)) handle(p, src, &it), handled = true;
    return handled;
}

static bool done(process *p) {
    for (int src = 0; src < N; src++)
        if (src != p->me && (p->counts[src][0] != ROUNDS || p->counts[src][1] != SNAPSHOTS)) return false;
    return true;
}

static void *run(void *arg) {
    process *p = arg;
    char path[4096], name[8], channel[32], amount[32], state[32];
    snprintf(name, sizeof name, "P%d", p->me);
    snprintf(path, sizeof path, "%s/P%d.jsonl", out, p->me);
    check(snapshot_log_open(&p->log, name, path));
    for (int r = 0; r < ROUNDS; r++) {
        int snap = -1;
        for (int s = 0; s < SNAPSHOTS; s++)
            if (p->me == 0 && snapshot_at[s] == r) snap = s;
        if (snap >= 0) {
            start_recording(p, snap, -1);
            json_int(state, p->balance);
            check(snapshot_log_record(&p->log, snap, NULL, state));
            if (!bug) send_markers(p, snap);
        }
        for (int dst = 0; dst < N; dst++) {
            if (dst == p->me) continue;
            item it = {.marker = 0, .value = (r + p->me + dst) % 4}; /* 0 is a ping */
            p->balance -= it.value;
            snapshot_log_new_id(&p->log, it.msg, sizeof it.msg);
            put(p->me, dst, it);
            snprintf(channel, sizeof channel, "P%d->P%d", p->me, dst);
            json_int(amount, it.value);
            json_int(state, p->balance);
            check(snapshot_log_send(&p->log, channel, it.msg, amount, state));
        }
        if (snap >= 0 && bug) send_markers(p, snap);
        poll_all(p);
    }
    while (!done(p))
        if (!poll_all(p)) usleep(1000);
    check(snapshot_log_close(&p->log));
    return NULL;
}

/* --stress: 4 threads log through one logger at once, each a send and a record on a marker 250
 * times, to OUTDIR/stress.jsonl (the test checks the lines are whole, numbered, paired). */
static snapshot_log stress_log;

static void *stress_work(void *arg) {
    int t = *(int *)arg;
    char msg[32], state[32];
    for (int i = 0; i < 250; i++) {
        snapshot_log_new_id(&stress_log, msg, sizeof msg);
        json_int(state, i);
        check(snapshot_log_send(&stress_log, "P0->P1", msg, state, state));
        check(snapshot_log_record(&stress_log, t * 1000 + i, "P1->P0", state));
    }
    return NULL;
}

static int stress(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/stress.jsonl", out);
    check(snapshot_log_open(&stress_log, "P0", path));
    pthread_t threads[4];
    int ts[4] = {0, 1, 2, 3};
    for (int t = 0; t < 4; t++) pthread_create(&threads[t], NULL, stress_work, &ts[t]);
    for (int t = 0; t < 4; t++) pthread_join(threads[t], NULL);
    check(snapshot_log_close(&stress_log));
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: demo OUTDIR [--bug | --stress]\n"); return 2; }
    out = argv[1];
    bug = argc > 2 && strcmp(argv[2], "--bug") == 0;
    mkdir(out, 0755);
    if (argc > 2 && strcmp(argv[2], "--stress") == 0) return stress();
    static process procs[N];
    pthread_t threads[N];
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) pthread_mutex_init(&queues[a][b].lock, NULL);
    for (int i = 0; i < N; i++) {
        procs[i].me = i;
        procs[i].balance = 100;
        pthread_create(&threads[i], NULL, run, &procs[i]);
    }
    for (int i = 0; i < N; i++) pthread_join(threads[i], NULL);
    return 0;
}
