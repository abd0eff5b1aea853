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

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// A Queue writes the lines a Recorder wrote: one JSON object a line, in
// the order recorded, with the time, direction, note and the message as
// JSON or, when it is not valid JSON, as a string.
func TestQueue_lines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	q := NewQueue(&buf, MaxQueued)
	q.now = func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 456e6, time.UTC) }
	q.Start()
	if err := q.Record(Out, []byte(`{"type":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	if err := q.RecordNote(In, "dropped", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if err := q.RecordNote(Out, "not sent", nil); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
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
	want2 := `{"t":"2026-11-30T01:02:03.456Z","dir":"out","note":"not sent"}`
	if lines[2] != want2 {
		t.Errorf("line 2 = %s, want %s", lines[2], want2)
	}
}

// Issue #36: the goroutine encodes the lines, each message compacted onto
// its line (a pretty-printed message stays one line), after the note.
func TestQueue_compacts(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	q := NewQueue(&buf, MaxQueued)
	q.now = func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 456e6, time.UTC) }
	q.Start()
	msg := []byte("{\n  \"type\": \"a <b>\",\n  \"n\": [1, 2]\n}\n")
	if err := q.RecordNote(In, "late", msg); err != nil {
		t.Fatal(err)
	}
	msg[3] = 'X' // Record copied it
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"t":"2026-11-30T01:02:03.456Z","dir":"in","note":"late","msg":{"type":"a <b>","n":[1,2]}}` + "\n"
	if buf.String() != want {
		t.Errorf("line = %s, want %s", buf.String(), want)
	}
}

type failWriter struct {
	mu sync.Mutex
	n  int
}

func (f *failWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return 0, errors.New("disk full")
}

// The first write error is sticky: nothing more is written, Record and
// Close return it.
func TestQueue_stickyError(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fw := &failWriter{}
		q := NewQueue(fw, MaxQueued)
		q.Start()
		if err := q.Record(In, []byte(`{}`)); err != nil {
			t.Fatalf("the first Record fails before anything was written: %v", err)
		}
		synctest.Wait()
		if err := q.Record(In, []byte(`{}`)); err == nil {
			t.Fatal("want sticky error")
		}
		if err := q.Close(); err == nil {
			t.Fatal("Close hides the write error")
		}
		if fw.n != 1 {
			t.Errorf("writer called %d times, want 1", fw.n)
		}
	})
}

// Lines recorded before Start (a client records its handshake before its
// goroutines start) and a Queue never started are written by Close.
func TestQueue_closeWithoutStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		q := NewQueue(&buf, MaxQueued)
		_ = q.Record(Out, []byte(`{"n":1}`))
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"msg":{"n":1}`) {
			t.Errorf("line recorded before Start lost: %q", buf.String())
		}
		q.Start() // after Close: nothing
		_ = q.Record(Out, []byte(`{"n":2}`))
		if strings.Contains(buf.String(), `"n":2`) {
			t.Error("a line recorded after Close was written")
		}
	})
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

// Issue #17: Close waits for a slow writer while it makes progress, and
// gives up on a writer whose Write never returns after CloseStall, saying
// how many lines were not written; the goroutine ends once that Write
// returns.
func TestQueue_closeStalledWriter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bw := &blockingWriter{release: make(chan struct{})}
		q := NewQueue(bw, MaxQueued)
		q.Start()
		for range 3 {
			_ = q.Record(In, []byte(`{}`))
		}
		start := time.Now()
		err := q.Close()
		if err == nil || !strings.Contains(err.Error(), "3 lines not written") {
			t.Fatalf("Close = %v, want the 3 lines not written", err)
		}
		if d := time.Since(start); d != CloseStall {
			t.Errorf("Close gave up after %v, want %v", d, CloseStall)
		}
		if err := q.Close(); err != nil {
			t.Errorf("second Close = %v, want nil at once", err)
		}
		close(bw.release)
		<-q.done // the goroutine ends when the Write returns
		if n := strings.Count(bw.buf.String(), "\n"); n != 1 {
			t.Errorf("%d lines written after Close gave up, want only the one in Write", n)
		}
	})
	synctest.Test(t, func(t *testing.T) { // slow but making progress: all written
		sw := &slowWriter{d: time.Second}
		q := NewQueue(sw, MaxQueued)
		q.Start()
		for range 20 {
			_ = q.Record(In, []byte(`{}`))
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if sw.n != 20 {
			t.Errorf("%d lines written, want 20", sw.n)
		}
	})
}

// slowWriter takes d for each Write.
type slowWriter struct {
	d time.Duration
	n int
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.d)
	s.n++
	return len(p), nil
}

func TestQueue_nil(t *testing.T) {
	t.Parallel()
	q := NewQueue(nil, 10)
	q.Start()
	if q.Record(In, []byte(`{}`)) != nil || q.Close() != nil {
		t.Fatal("a nil Queue records nothing and fails nothing")
	}
}

// Issue #36: a message the caller vouches for (RecordChecked), or that
// the Queue's valid accepts, goes onto its line as it is, not compacted;
// one with a line break is compacted still, and one valid refuses is
// checked as usual. A game note ("dir":"game") is a line like any.
func TestQueue_checked(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	q := NewQueue(&buf, MaxQueued)
	q.now = func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 456e6, time.UTC) }
	q.SetValid(func(msg []byte) bool { return bytes.HasPrefix(msg, []byte(`{"ok"`)) })
	q.Start()
	_ = q.RecordChecked(Out, "", []byte(`{"a": 1}`))
	_ = q.RecordChecked(Game, "reply.ended", []byte("{\"requestId\":\n\"r1\"}"))
	_ = q.Record(In, []byte(`{"ok": true}`))
	_ = q.Record(In, []byte(`{"no": true}`))
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	const ts = `{"t":"2026-11-30T01:02:03.456Z",`
	want := ts + `"dir":"out","msg":{"a": 1}}` + "\n" +
		ts + `"dir":"game","note":"reply.ended","msg":{"requestId":"r1"}}` + "\n" +
		ts + `"dir":"in","msg":{"ok": true}}` + "\n" +
		ts + `"dir":"in","msg":{"no":true}}` + "\n"
	if buf.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// Issue #36: RecordSamples adds the samples to the object as base64
// little-endian PCM16 (a reply.audio.chunk's data), copied when recorded,
// and counts them against the bound.
func TestQueue_samples(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	q := NewQueue(&buf, 1000)
	q.Start()
	samples := []int16{1, -2, 0x1234, -32768}
	_ = q.RecordSamples(Game, "reply.segment", []byte(`{"requestId":"r1","sampleRate":44100}`), samples)
	_ = q.RecordSamples(Game, "empty", []byte(`{}`), nil)
	samples[0] = 99
	_ = q.RecordSamples(Game, "too long", []byte(`{"requestId":"r2"}`), make([]int16, 400)) // over 1000 bytes of line
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "1 lines dropped") {
		t.Fatalf("lines:\n%s\nwant two and the note of the line dropped", buf.String())
	}
	var l struct {
		Note string
		Msg  struct {
			RequestID  string
			SampleRate int
			Data       []byte
		}
	}
	testutil.Success(t, json.Unmarshal([]byte(lines[0]), &l))
	if l.Note != "reply.segment" || l.Msg.RequestID != "r1" || l.Msg.SampleRate != 44100 ||
		!bytes.Equal(l.Msg.Data, []byte{1, 0, 0xfe, 0xff, 0x34, 0x12, 0, 0x80}) {
		t.Errorf("line 0 = %s: %+v", lines[0], l)
	}
	if !strings.HasSuffix(lines[1], `"note":"empty","msg":{"data":""}}`) {
		t.Errorf("line 1 = %s", lines[1])
	}
}

// The goroutine reuses one buffer for its lines, and drops it after a
// line over maxKept.
func TestQueue_bufferBound(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	q := NewQueue(&buf, MaxQueued)
	q.Start()
	_ = q.RecordChecked(In, "", []byte(`{"a":1}`))
	_ = q.RecordChecked(In, "", []byte(`{"pad":"`+strings.Repeat("x", maxKept)+`"}`))
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if q.buf != nil || strings.Count(buf.String(), "\n") != 2 {
		t.Errorf("after a line over %d bytes the Queue keeps a buffer of %d (%d lines written)", maxKept, cap(q.buf), strings.Count(buf.String(), "\n"))
	}
}
