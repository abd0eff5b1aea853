package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestRecorder_Record(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := New(&buf)
	r.now = func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 456e6, time.UTC) }
	if err := r.Record(Out, []byte(`{"type":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.RecordNote(In, "dropped", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %q", len(lines), buf.String())
	}
	want0 := `{"t":"2026-11-30T01:02:03.456Z","dir":"out","msg":{"type":"hello"}}`
	if lines[0] != want0 {
		t.Errorf("line 0 = %s, want %s", lines[0], want0)
	}
	var l line
	if err := json.Unmarshal([]byte(lines[1]), &l); err != nil {
		t.Fatal(err)
	}
	if l.Raw != "not json" || l.Dir != In || l.Note != "dropped" || l.Msg != nil {
		t.Errorf("line 1 = %+v", l)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) { f.n++; return 0, errors.New("disk full") }

func TestRecorder_stickyError(t *testing.T) {
	t.Parallel()
	fw := &failWriter{}
	r := New(fw)
	if err := r.Record(In, []byte(`{}`)); err == nil {
		t.Fatal("want error")
	}
	if err := r.Record(In, []byte(`{}`)); err == nil {
		t.Fatal("want sticky error")
	}
	if fw.n != 1 {
		t.Errorf("writer called %d times, want 1", fw.n)
	}
}

func TestRecorder_nil(t *testing.T) {
	t.Parallel()
	var r *Recorder
	if New(nil) != nil {
		t.Error("New(nil) should be nil")
	}
	if err := r.Record(In, []byte(`{}`)); err != nil {
		t.Error(err)
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Issue #17: a Queue's Record never waits for the writer (a reader that
// records what it reads went at the pace of the game's log file), lines
// come out in order, and Close writes what is queued.
func TestQueue_neverWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bw := &blockingWriter{release: make(chan struct{})}
		q := NewQueue(bw, 1<<20)
		q.Start()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 100 {
				if err := q.Record(In, []byte(`{"n":`+strconv.Itoa(i)+`}`)); err != nil {
					t.Error(err)
				}
			}
		}()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Record waits for the writer")
		}
		close(bw.release)
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(bw.buf.String(), "\n"), "\n")
		if len(lines) != 100 {
			t.Fatalf("%d lines, want 100", len(lines))
		}
		for i, l := range lines {
			if !strings.Contains(l, `"msg":{"n":`+strconv.Itoa(i)+`}`) {
				t.Fatalf("line %d is %s", i, l)
			}
		}
	})
}

// The queue is bounded: past maxBytes lines are dropped and counted in a
// note line once there is room again.
func TestQueue_bounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bw := &blockingWriter{release: make(chan struct{})}
		q := NewQueue(bw, 1000)
		q.Start()
		msg := []byte(`{"pad":"` + strings.Repeat("x", 200) + `"}`)
		for range 10 { // about 4 fit
			_ = q.Record(Out, msg)
		}
		synctest.Wait()
		close(bw.release)
		synctest.Wait()
		_ = q.Record(Out, []byte(`{"last":true}`))
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		out := bw.buf.String()
		if n := strings.Count(out, `"pad"`); n < 3 || n > 5 {
			t.Errorf("%d lines kept, want about 4", n)
		}
		if !strings.Contains(out, "lines dropped") || !strings.HasSuffix(out, `"msg":{"last":true}}`+"\n") {
			t.Errorf("no note of the dropped lines before the last line:\n%s", out)
		}
	})
}

func TestQueue_nil(t *testing.T) {
	t.Parallel()
	q := NewQueue(nil, 10)
	q.Start()
	if q.Record(In, []byte(`{}`)) != nil || q.Close() != nil {
		t.Fatal("a nil Queue records nothing and fails nothing")
	}
}
