package rpengine_test

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
)

// The one test over a real loopback socket; the others serve in memory.
func TestServer_ReplyTextAndAudio(t *testing.T) {
	t.Parallel()
	f := newTCPServer(t, nil)
	eng := f.dial(t, nil)
	ctx := ctxT(t)
	c := testCard(t)
	r, err := f.srv.Reply(ctx, audioReq(c, "hello"))
	testutil.Success(t, err)
	evs := collect(t, r)
	var text string
	var segs []int
	for _, ev := range evs {
		switch ev.Kind {
		case rpengine.EventText:
			text = ev.Text
		case rpengine.EventSegment:
			segs = append(segs, ev.Segment.Index)
			testutil.Equal(t, "rate", ev.Segment.SampleRate, 44100)
			testutil.Equal(t, "samples", len(ev.Segment.Samples), 22050)
		}
	}
	testutil.Equal(t, "last event", evs[len(evs)-1].Kind, rpengine.EventEnd)
	testutil.Equal(t, "end error", evs[len(evs)-1].Err, error(nil))
	testutil.Equal(t, "text", text, "I hear you. You said: hello")
	testutil.Equal(t, "segments", segs, []int{0, 1})
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "result text", res.Text, "I hear you. You said: hello")
	h, _ := eng.CardHash("game", "ari")
	testutil.Equal(t, "card hash", res.CardHash.String(), h)
	for _, m := range eng.Received() {
		if m.Err != nil {
			t.Errorf("engine refused %s: %v", m.Type, m.Err)
		}
		if m.SessionID != eng.SessionID() && m.Type != "ack" {
			t.Errorf("%s carries session %q", m.Type, m.SessionID)
		}
	}
	testutil.Equal(t, "request acked", f.srv.MessageStatus(r.MessageID()), rpengine.MessageAcked)
}
