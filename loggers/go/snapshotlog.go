// Package snapshotlog logs one process's Chandy-Lamport events as the JSON lines
// `model verify` reads. Copy this file into your project (rename the package); it needs only
// the standard library. One Log per process, shared by all of that process's goroutines:
//
//	log, err := snapshotlog.Create("P0", "logs/P0.jsonl")
//	msg := log.NewID()                              // a run-wide unique message id
//	log.Send("P0->P1", msg, 5, 95)                  // payload 5, state 95 after the send
//	log.Receive("P1->P0", "P1-3", 98)
//	log.Record(0, "", 98)                           // P0 initiates snapshot 0
//	log.Record(1, "P2->P0", 97)                     // a marker on P2->P0 made P0 record
//	log.MarkerSend(0, "P0->P1")
//	log.MarkerReceive(0, "P1->P0", []string{"P1-4"}) // closes P1->P0's record
//
// Every call writes one event under one lock, numbered by `seq` in the order of the calls:
// call it right after the event, in the goroutine that made it happen, while that goroutine
// still holds whatever lock orders the process's events. Record with a marker channel writes
// the marker's receipt and the record it caused as two adjacent lines, so another goroutine's
// line never comes between them. A state (nil: none) is the process's state right after the
// event, any value encoding/json encodes; on Record the state recorded. A write error panics:
// a log with a hole in it would be judged wrongly.
package snapshotlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Log is the log of one process.
type Log struct {
	process string
	mu      sync.Mutex
	file    *os.File
	seq     int
	ids     int
}

// Create starts the log of `process` (its name as in the topology) in the file at `path`.
func Create(process, path string) (*Log, error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Log{process: process, file: file}, nil
}

// NewID is a message id no other process's log gives: "<process>-<n>".
func (l *Log) NewID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids++
	return fmt.Sprintf("%s-%d", l.process, l.ids-1)
}

// Send logs message `msg` sent on `channel` ("FROM->TO") carrying `payload`.
func (l *Log) Send(channel, msg string, payload, state any) {
	l.write(event{"kind": "send", "channel": channel, "msg": msg, "payload": payload}, state)
}

// Receive logs message `msg` taken from `channel` and applied.
func (l *Log) Receive(channel, msg string, state any) {
	l.write(event{"kind": "receive", "channel": channel, "msg": msg}, state)
}

// Loss logs message `msg` lost in transit on `channel` (logged by the channel's receiver).
func (l *Log) Loss(channel, msg string, state any) {
	l.write(event{"kind": "loss", "channel": channel, "msg": msg}, state)
}

// Internal logs an internal step.
func (l *Log) Internal(step, state any) {
	l.write(event{"kind": "internal", "step": step}, state)
}

// Record logs the process recording `state` for `snapshot`: as the initiator when `marker` is
// ""; else because the first marker of `snapshot` arrived on channel `marker`, whose receipt
// (closing that channel empty) is written with the record, adjacent.
func (l *Log) Record(snapshot int, marker string, state any) {
	if marker == "" {
		l.write(event{"kind": "record", "snapshot": snapshot, "initiated": true}, state)
		return
	}
	l.write(event{"kind": "marker-receive", "snapshot": snapshot, "channel": marker, "recorded": []string{}}, nil,
		event{"kind": "record", "snapshot": snapshot, "initiated": false}, state)
}

// MarkerSend logs a marker of `snapshot` sent on `channel` ("": on every outgoing channel).
func (l *Log) MarkerSend(snapshot int, channel string) {
	e := event{"kind": "marker-send", "snapshot": snapshot}
	if channel != "" {
		e["channel"] = channel
	}
	l.write(e, nil)
}

// MarkerReceive logs a later marker of `snapshot` on `channel`: it closes the channel's record,
// `recorded` the ids of the messages received on it since the process recorded, in order.
func (l *Log) MarkerReceive(snapshot int, channel string, recorded []string) {
	if recorded == nil {
		recorded = []string{}
	}
	l.write(event{"kind": "marker-receive", "snapshot": snapshot, "channel": channel, "recorded": recorded}, nil)
}

// Close closes the file.
func (l *Log) Close() error { return l.file.Close() }

type event map[string]any

// write writes the events, each followed by its state, under the lock, adjacent.
func (l *Log) write(eventsAndStates ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var text bytes.Buffer
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false) // "P0->P1", not "P0-\u003eP1"
	for i := 0; i < len(eventsAndStates); i += 2 {
		e := eventsAndStates[i].(event)
		e["process"], e["seq"] = l.process, l.seq
		if s := eventsAndStates[i+1]; s != nil {
			e["state"] = s
		}
		if err := enc.Encode(e); err != nil { // one line, with its newline
			panic(fmt.Sprintf("snapshotlog: %v", err))
		}
		l.seq++
	}
	if _, err := l.file.Write(text.Bytes()); err != nil {
		panic(fmt.Sprintf("snapshotlog: %v", err))
	}
}
