package enginetest

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// Received keeps the last maxRecorded messages, oldest first, however many
// came, and WaitFor sees every message recorded after it started waiting,
// across the drops record makes to bound them. Issue #24.
func TestEngine_recordBounded(t *testing.T) {
	e := &Engine{}
	const total = 2*maxRecorded + maxRecorded/2 + 7 // past two drops
	for i := range total {
		e.record(Message{Type: "ack", MessageID: strconv.Itoa(i)})
		if got := len(e.received); got > 2*maxRecorded {
			t.Fatalf("after %d messages, %d kept", i+1, got)
		}
	}
	got := e.Received()
	if len(got) != maxRecorded {
		t.Fatalf("Received: %d messages, want %d", len(got), maxRecorded)
	}
	for i, m := range got {
		if want := strconv.Itoa(total - maxRecorded + i); m.MessageID != want {
			t.Fatalf("Received()[%d] is message %s, want %s", i, m.MessageID, want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := strconv.Itoa(total + maxRecorded + 3) // recorded after a drop that happens while WaitFor waits
	found := make(chan error, 1)
	go func() {
		m, err := e.WaitFor(ctx, func(m Message) bool { return m.MessageID == want })
		if err == nil && m.MessageID != want {
			t.Errorf("WaitFor returned %s", m.MessageID)
		}
		found <- err
	}()
	for i := total; i < total+2*maxRecorded; i++ {
		e.record(Message{Type: "ack", MessageID: strconv.Itoa(i)})
	}
	if err := <-found; err != nil {
		t.Fatal(err)
	}
}
