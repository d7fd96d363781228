/* Logs one process's Chandy-Lamport events as the JSON lines `model verify` reads. Copy this
 * header into your project; it needs only libc and pthreads (-pthread). One snapshot_log per
 * process, shared by all of that process's threads:
 *
 *     snapshot_log log;
 *     snapshot_log_open(&log, "P0", "logs/P0.jsonl");
 *     char msg[64];
 *     snapshot_log_new_id(&log, msg, sizeof msg);            // a run-wide unique message id
 *     snapshot_log_send(&log, "P0->P1", msg, "5", "95");      // payload 5, state 95 after it
 *     snapshot_log_receive(&log, "P1->P0", "P1-3", "98");
 *     snapshot_log_record(&log, 0, NULL, "98");               // P0 initiates snapshot 0
 *     snapshot_log_record(&log, 1, "P2->P0", "97");           // a marker on P2->P0 made P0 record
 *     snapshot_log_marker_send(&log, 0, "P0->P1");
 *     const char *ids[] = {"P1-4"};
 *     snapshot_log_marker_receive(&log, 0, "P1->P0", ids, 1); // closes P1->P0's record
 *
 * Every call writes one event under one lock, numbered by `seq` in the order of the calls, and
 * flushes it: call it right after the event, in the thread that made it happen, while that
 * thread still holds whatever lock orders the process's events. snapshot_log_record with a
 * marker channel writes the marker's receipt and the record it caused as two adjacent lines,
 * so another thread's line never comes between them. Payloads, steps and states are JSON text,
 * written as given; a state (NULL: none) is the process's state right after the event, on a
 * record the state recorded. Every call returns 0, or -1 when the file could not be written. */
#ifndef SNAPSHOT_LOG_H
#define SNAPSHOT_LOG_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *process;
    FILE *file;
    pthread_mutex_t lock;
    unsigned long seq, ids;
} snapshot_log;

/* Starts the log of `process` (its name as in the topology) in the file at `path`: 0, or -1. */
static inline int snapshot_log_open(snapshot_log *log, const char *process, const char *path) {
    log->file = fopen(path, "w");
    log->process = malloc(strlen(process) + 1);
    if (log->process) strcpy(log->process, process);
    log->seq = log->ids = 0;
    return log->file && log->process && pthread_mutex_init(&log->lock, NULL) == 0 ? 0 : -1;
}

/* A message id no other process's log gives, "<process>-<n>", into buf. */
static inline void snapshot_log_new_id(snapshot_log *log, char *buf, size_t size) {
    pthread_mutex_lock(&log->lock);
    snprintf(buf, size, "%s-%lu", log->process, log->ids++);
    pthread_mutex_unlock(&log->lock);
}

static inline void snapshot_log__quote(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* `{"process":...,"seq":N,"kind":KIND`, then `,"channel":CHANNEL` and `,"msg":MSG` when given. */
static inline void snapshot_log__begin(snapshot_log *log, const char *kind, const char *channel,
                                       const char *msg) {
    fputs("{\"process\":", log->file);
    snapshot_log__quote(log->file, log->process);
    fprintf(log->file, ",\"seq\":%lu,\"kind\":\"%s\"", log->seq++, kind);
    if (channel) fputs(",\"channel\":", log->file), snapshot_log__quote(log->file, channel);
    if (msg) fputs(",\"msg\":", log->file), snapshot_log__quote(log->file, msg);
}

/* Ends the line with its state, when given. */
static inline void snapshot_log__end(snapshot_log *log, const char *state) {
    if (state) fprintf(log->file, ",\"state\":%s", state);
    fputs("}\n", log->file);
}

/* Flushes what the call wrote and lets the next call in. */
static inline int snapshot_log__flush(snapshot_log *log) {
    int ok = fflush(log->file) == 0 && !ferror(log->file);
    pthread_mutex_unlock(&log->lock);
    return ok ? 0 : -1;
}

/* Message `msg` sent on `channel` ("FROM->TO") carrying `payload` (JSON). */
static inline int snapshot_log_send(snapshot_log *log, const char *channel, const char *msg,
                                    const char *payload, const char *state) {
    pthread_mutex_lock(&log->lock);
    snapshot_log__begin(log, "send", channel, msg);
    fprintf(log->file, ",\"payload\":%s", payload);
    snapshot_log__end(log, state);
    return snapshot_log__flush(log);
}

/* Message `msg` taken from `channel` and applied. */
static inline int snapshot_log_receive(snapshot_log *log, const char *channel, const char *msg,
                                       const char *state) {
    pthread_mutex_lock(&log->lock);
    snapshot_log__begin(log, "receive", channel, msg);
    snapshot_log__end(log, state);
    return snapshot_log__flush(log);
}

/* Message `msg` lost in transit on `channel` (logged by the channel's receiver). */
static inline int snapshot_log_loss(snapshot_log *log, const char *channel, const char *msg,
                                    const char *state) {
    pthread_mutex_lock(&log->lock);
    snapshot_log__begin(log, "loss", channel, msg);
    snapshot_log__end(log, state);
    return snapshot_log__flush(log);
}

/* An internal step (JSON). */
static inline int snapshot_log_internal(snapshot_log *log, const char *step, const char *state) {
    pthread_mutex_lock(&log->lock);
    snapshot_log__begin(log, "internal", NULL, NULL);
    fprintf(log->file, ",\"step\":%s", step);
    snapshot_log__end(log, state);
    return snapshot_log__flush(log);
}

/* The process records `state` for `snapshot`: as the initiator when `marker` is NULL; else
 * because the first marker of `snapshot` arrived on channel `marker`, whose receipt (closing
 * that channel empty) is written with the record, adjacent. */
static inline int snapshot_log_record(snapshot_log *log, unsigned snapshot, const char *marker,
                                      const char *state) {
    pthread_mutex_lock(&log->lock);
    if (marker) {
        snapshot_log__begin(log, "marker-receive", NULL, NULL);
        fprintf(log->file, ",\"snapshot\":%u,\"channel\":", snapshot);
        snapshot_log__quote(log->file, marker);
        fputs(",\"recorded\":[]", log->file);
        snapshot_log__end(log, NULL);
    }
    snapshot_log__begin(log, "record", NULL, NULL);
    fprintf(log->file, ",\"snapshot\":%u,\"initiated\":%s", snapshot, marker ? "false" : "true");
    snapshot_log__end(log, state);
    return snapshot_log__flush(log);
}

/* A marker of `snapshot` sent on `channel` (NULL: on every outgoing channel at once). */
static inline int snapshot_log_marker_send(snapshot_log *log, unsigned snapshot, const char *channel) {
    pthread_mutex_lock(&log->lock);
    snapshot_log__begin(log, "marker-send", channel, NULL);
    fprintf(log->file, ",\"snapshot\":%u", snapshot);
    snapshot_log__end(log, NULL);
    return snapshot_log__flush(log);
}

/* A later marker of `snapshot` on `channel`: it closes the channel's record, `recorded` the `n`
 * ids of the messages received on it since the process recorded, in order. */
static inline int snapshot_log_marker_receive(snapshot_log *log, unsigned snapshot, const char *channel,
                                              const char *const *recorded, size_t n) {
    pthread_mutex_lock(&log->lock);
    snapshot_log__begin(log, "marker-receive", channel, NULL);
    fprintf(log->file, ",\"snapshot\":%u,\"recorded\":[", snapshot);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', log->file);
        snapshot_log__quote(log->file, recorded[i]);
    }
    fputc(']', log->file);
    snapshot_log__end(log, NULL);
    return snapshot_log__flush(log);
}

/* Closes the file: 0, or -1 when what was written could not be saved. */
static inline int snapshot_log_close(snapshot_log *log) {
    int r = fclose(log->file) == 0 ? 0 : -1;
    pthread_mutex_destroy(&log->lock);
    free(log->process);
    return r;
}

#endif
