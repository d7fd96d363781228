// The Go logger's test: 3 processes (goroutines) P0..P2 trade integer balances over in-memory
// FIFO queues (buffered channels), one per channel, and P0 initiates snapshots 0 and 1; each
// process logs with snapshotlog.go to OUTDIR/P<i>.jsonl (their topology: loggers/demo.top).
//
//	go run ./demo OUTDIR [--bug | --stress]     (in loggers/go)
//
// --bug breaks the marker rule: P0 sends its round's transfers after recording and before its
// markers, so the first process to receive P0's marker has received a transfer sent after P0's
// cut before recording: `model verify` must report an inward crossing.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"snapshotlog"
)

const n, rounds = 3, 10

var snapshotAt = map[int]int{2: 0, 6: 1} // P0 initiates snapshot s at round r

type item struct {
	marker bool
	snap   int    // a marker's snapshot
	msg    string // a message's id
	amount int
}

func process(me int, out string, bug bool, queues map[[2]int]chan item) {
	log, err := snapshotlog.Create(fmt.Sprintf("P%d", me), filepath.Join(out, fmt.Sprintf("P%d.jsonl", me)))
	if err != nil {
		panic(err)
	}
	defer log.Close()
	var peers []int
	for p := 0; p < n; p++ {
		if p != me {
			peers = append(peers, p)
		}
	}
	balance := 100
	recording := map[int]map[int][]string{} // snapshot -> src -> ids received since recording, while open
	counts := map[int]*[2]int{}             // messages and markers received from src
	for _, p := range peers {
		counts[p] = &[2]int{}
	}
	open := func(except int) map[int][]string {
		m := map[int][]string{}
		for _, p := range peers {
			if p != except {
				m[p] = []string{}
			}
		}
		return m
	}
	sendMarkers := func(snap int) {
		for _, dst := range peers {
			queues[[2]int{me, dst}] <- item{marker: true, snap: snap}
			log.MarkerSend(snap, fmt.Sprintf("P%d->P%d", me, dst))
		}
	}
	handle := func(src int, it item) {
		channel := fmt.Sprintf("P%d->P%d", src, me)
		if it.marker {
			counts[src][1]++
			if rec, ok := recording[it.snap]; !ok { // the first marker: record, the channel closed empty
				recording[it.snap] = open(src)
				log.Record(it.snap, channel, balance)
				sendMarkers(it.snap)
			} else { // a later one closes its channel's record
				log.MarkerReceive(it.snap, channel, rec[src])
				delete(rec, src)
			}
			return
		}
		counts[src][0]++
		balance += it.amount
		for _, rec := range recording {
			if ids, ok := rec[src]; ok {
				rec[src] = append(ids, it.msg)
			}
		}
		log.Receive(channel, it.msg, balance)
	}
	poll := func() bool {
		handled := false
		for _, src := range peers {
			for more := true; more; {
				select {
				case it := <-queues[[2]int{src, me}]:
					handle(src, it)
					handled = true
				default:
					more = false
				}
			}
		}
		return handled
	}
	for r := 0; r < rounds; r++ {
		snap, initiates := snapshotAt[r]
		initiates = initiates && me == 0
		if initiates {
			recording[snap] = open(-1)
			log.Record(snap, "", balance)
			if !bug {
				sendMarkers(snap)
			}
		}
		for _, dst := range peers {
			amount := (r + me + dst) % 4 // 0 is a ping
			balance -= amount
			msg := log.NewID()
			queues[[2]int{me, dst}] <- item{msg: msg, amount: amount}
			log.Send(fmt.Sprintf("P%d->P%d", me, dst), msg, amount, balance)
		}
		if initiates && bug {
			sendMarkers(snap)
		}
		poll()
	}
	for {
		done := true
		for _, c := range counts {
			done = done && *c == [2]int{rounds, len(snapshotAt)}
		}
		if done {
			return
		}
		if !poll() {
			time.Sleep(time.Millisecond)
		}
	}
}

// stress (--stress): 4 goroutines log through one logger at once, each a send and a record on
// a marker 250 times, to OUTDIR/stress.jsonl (the test checks the lines are whole, numbered,
// paired).
func stress(out string) {
	log, err := snapshotlog.Create("P0", filepath.Join(out, "stress.jsonl"))
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for t := 0; t < 4; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				log.Send("P0->P1", log.NewID(), i, i)
				log.Record(t*1000+i, "P1->P0", i)
			}
		}(t)
	}
	wg.Wait()
	log.Close()
}

func main() {
	out, bug := os.Args[1], len(os.Args) > 2 && os.Args[2] == "--bug"
	if err := os.MkdirAll(out, 0o755); err != nil {
		panic(err)
	}
	if len(os.Args) > 2 && os.Args[2] == "--stress" {
		stress(out)
		return
	}
	queues := map[[2]int]chan item{}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a != b {
				queues[[2]int{a, b}] = make(chan item, rounds+len(snapshotAt))
			}
		}
	}
	var wg sync.WaitGroup
	for p := 0; p < n; p++ {
		wg.Add(1)
		go func(p int) { defer wg.Done(); process(p, out, bug, queues) }(p)
	}
	wg.Wait()
}
