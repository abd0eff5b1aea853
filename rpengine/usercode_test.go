package rpengine_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// keepingHandler keeps every record it is given, as a handler that
// buffers or batches does: what it was handed must not change later.
type keepingHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *keepingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *keepingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *keepingHandler) WithGroup(string) slog.Handler            { return h }
func (h *keepingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r)
	h.mu.Unlock()
	return nil
}

// attrs returns the attributes named key of the kept records whose
// message contains msg, in order.
func (h *keepingHandler) attrs(msg, key string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if !strings.Contains(r.Message, msg) {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				out = append(out, a.Value.String())
			}
			return true
		})
	}
	return out
}

// Issue #30: the sessionId of an audio chunk for another session was
// logged as a string over the connection's read buffer, which the next
// message overwrites: a handler that keeps records saw its bytes change.
// Every value given to the game's Logger is its own.
func TestServer_loggedValuesStay(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		keep := &keepingHandler{}
		f := newServer(t, &rpengine.ServerOptions{Logger: slog.New(keep)})
		c, _ := handshake(t, f)
		data := base64.StdEncoding.EncodeToString(make([]byte, 64))
		sids := []string{strings.Repeat("a", 36), strings.Repeat("b", 36)}
		for i, sid := range sids {
			msg := fmt.Sprintf(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m%d",`+
				`"sessionId":%q,"timestamp":"2026-01-01T00:00:00.000Z","requestId":"r","sequence":0,"segmentSequence":0,`+
				`"segmentChunkSequence":0,"segmentChunkCount":1,"data":%q}`, i, sid, data)
			testutil.Success(t, c.Write(ctxT(t), websocket.MessageText, []byte(msg)))
		}
		synctest.Wait()
		testutil.Equal(t, "sessionIds logged", keep.attrs("another session", "sessionId"), sids)
	})
}
