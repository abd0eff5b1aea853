package wire

import (
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestDecodeHeader(t *testing.T) {
	t.Parallel()
	ok := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"m","timestamp":"t"}`
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"valid", ok, nil},
		{"array", `[1]`, ErrNotJSON},
		{"garbage", `{"protocol":`, ErrNotJSON},
		{"empty", ``, ErrNotJSON},
		{"protocol", strings.Replace(ok, "gemtavern.rp_engine", "other", 1), ErrProtocol},
		{"version 2", strings.Replace(ok, `:3,`, `:2,`, 1), ErrProtocolVersion},
		{"version 3.0", strings.Replace(ok, `:3,`, `:3.0,`, 1), ErrProtocolVersion},
		{"version string", strings.Replace(ok, `:3,`, `:"3",`, 1), ErrProtocolVersion},
		{"no type", strings.Replace(ok, `"type":"hello",`, ``, 1), ErrMissingField},
		{"no id", strings.Replace(ok, `"messageId":"m",`, ``, 1), ErrMissingField},
		{"no timestamp", strings.Replace(ok, `,"timestamp":"t"`, ``, 1), ErrMissingField},
		{"type number", strings.Replace(ok, `"hello"`, `1`, 1), ErrNotJSON},
		{"too big", `{"x":"` + strings.Repeat("a", MaxMessageBytes) + `"}`, ErrTooBig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeHeader([]byte(tt.in))
			if tt.want == nil {
				testutil.Success(t, err)
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	b, err := Encode("ack", "id1", "s1", now, Ack{AcknowledgedMessageID: "x"})
	testutil.Success(t, err)
	testutil.Equal(t, "ack", string(b), `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"ack","messageId":"id1","sessionId":"s1","timestamp":"2026-07-14T00:00:00.000Z","acknowledgedMessageId":"x"}`)
	b, err = Encode("hello", "id2", "", now, struct{}{})
	testutil.Success(t, err)
	h, err := DecodeHeader(b)
	testutil.Success(t, err)
	testutil.Equal(t, "no session", h.SessionID == nil, true)
	var m map[string]any
	testutil.Success(t, json.Unmarshal(b, &m))
	testutil.Equal(t, "fields", len(m), 5)
	_, err = Encode("x", "i", "", now, []int{1})
	testutil.Error(t, err)
}

func TestWindow(t *testing.T) {
	t.Parallel()
	w := NewWindow(3)
	for _, id := range []string{"a", "b", "c"} {
		testutil.Equal(t, "first "+id, w.Seen(id), false)
	}
	testutil.Equal(t, "dup a", w.Seen("a"), true)
	testutil.Equal(t, "d", w.Seen("d"), false) // evicts a
	testutil.Equal(t, "a forgotten", w.Seen("a"), false)
	testutil.Equal(t, "len", w.Len(), 3)
}

func TestNewID(t *testing.T) {
	t.Parallel()
	a, b := NewID(), NewID()
	testutil.Equal(t, "len", len(a), 36)
	testutil.Equal(t, "version", a[14], byte('4'))
	if a == b {
		t.Fatal("ids repeat")
	}
}

// Issue #16: the window kept each messageId whole, so 60 messages with a
// 4 MiB messageId kept 240 MiB alive. It now keeps a digest: an id it
// has seen is garbage once the caller drops it, and is still recognised.
func TestWindow_keepsNoID(t *testing.T) {
	t.Parallel()
	w := NewWindow(4)
	collected := make(chan struct{})
	id := strings.Repeat("x", 4<<20) + "1"
	runtime.AddCleanup(unsafe.StringData(id), func(ch chan struct{}) { close(ch) }, collected)
	testutil.Equal(t, "first", w.Seen(id), false)
	id = ""
	for i := 0; ; i++ {
		runtime.GC()
		select {
		case <-collected:
			testutil.Equal(t, "a copy is a duplicate", w.Seen(strings.Repeat("x", 4<<20)+"1"), true)
			testutil.Equal(t, "a longer id is not", w.Seen(strings.Repeat("x", 4<<20)+"12"), false)
			return
		default:
		}
		if i == 100 {
			t.Fatal("the window still holds the id after 100 collections")
		}
		time.Sleep(time.Millisecond) // let the cleanup goroutine run
	}
}

// BenchmarkWindow_retained reports the heap a full window of 2000 ids
// keeps per id, for ids of 64 KiB (retained-B/id), against the reference
// measured in the same run: the same ids kept whole in a map
// (reference-B/id).
func BenchmarkWindow_retained(b *testing.B) {
	const n, size = 2000, 64 << 10
	prefix := strings.Repeat("x", size)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var got, ref float64
	for b.Loop() {
		before := heap()
		w := NewWindow(n)
		for i := 0; i < n; i++ {
			w.Seen(prefix + strconv.Itoa(i))
		}
		got = float64(heap()-before) / n
		runtime.KeepAlive(w)

		before = heap()
		whole := make(map[string]struct{}, n)
		for i := 0; i < n; i++ {
			whole[prefix+strconv.Itoa(i)] = struct{}{}
		}
		ref = float64(heap()-before) / n
		runtime.KeepAlive(whole)
	}
	b.ReportMetric(got, "retained-B/id")
	b.ReportMetric(ref, "reference-B/id")
}
