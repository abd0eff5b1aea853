package wsread

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"
)

// TestBuffer: messages are read whole into one buffer reused between
// them; a buffer grown past MaxKept is dropped before the next read.
func TestBuffer(t *testing.T) {
	sizes := []int{10, 5000, 10, 3 << 20, 10}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for i, n := range sizes {
			if err := c.Write(r.Context(), websocket.MessageText, bytes.Repeat([]byte{'a' + byte(i)}, n)); err != nil {
				return
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	c, _, err := websocket.Dial(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(8 << 20)
	r := Buffer{Min: 4 << 10, MaxKept: 1 << 20}
	var caps []int
	for i, n := range sizes {
		typ, data, err := r.Next(c)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if typ != websocket.MessageText || !bytes.Equal(data, bytes.Repeat([]byte{'a' + byte(i)}, n)) {
			t.Fatalf("message %d: got %d bytes of type %v, want %d", i, len(data), typ, n)
		}
		caps = append(caps, cap(data))
	}
	// 10 B in the first 4 KiB; 5000 B grows it; 10 B reuses it; 3 MiB
	// grows it past MaxKept; the next 10 B start again from Min.
	if caps[0] != 4<<10 || caps[2] != caps[1] || caps[3] < 3<<20 || caps[4] != 4<<10 {
		t.Errorf("buffer capacities %v: want reuse below MaxKept and a fresh buffer after a message past it", caps)
	}
	if _, _, err := r.Next(c); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after the last message: %v, want a normal closure", err)
	}
}
