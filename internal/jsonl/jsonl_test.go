package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
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
