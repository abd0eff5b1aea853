package rpengine_test

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// The tests of this file pin where the library and enginetest were
// measured to disagree with the real engine (issue #15); see
// docs/rpengine-protocol.md, "Measured against the engine".

// bufferedReq asks for buffered responseProcessing: one rule extracting
// and removing a <mood> tag.
func bufferedReq(t *testing.T, text, pattern, flags string) rpengine.ReplyRequest {
	r := textReq(testCard(t), text)
	r.Output.ResponseProcessing = &rpengine.ResponseProcessing{Rules: []rpengine.Rule{{
		ID: "mood", Matcher: rpengine.Matcher{Pattern: pattern, Flags: flags}, CaptureGroup: 1,
		Occurrence: "last", Remove: "match", RemoveFrom: []string{"text", "audio"}}}}
	return r
}

// checkBuffered runs a buffered request and checks the processed reply.
func checkBuffered(t *testing.T, l *link, req rpengine.ReplyRequest) {
	t.Helper()
	ctx := ctxT(t)
	r, err := l.srv.Reply(ctx, req)
	testutil.Success(t, err)
	for _, ev := range collect(t, r) {
		if ev.Kind == rpengine.EventAnomaly {
			t.Errorf("anomaly: %v", ev.Anomaly)
		}
	}
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "text", res.Text, "I hear you. You said: hello")
	testutil.Equal(t, "extracted", res.Final.ExtractedContent, map[string][]string{"mood": {"calm"}})
	for _, m := range l.eng.Received() {
		if m.Err != nil {
			t.Errorf("engine refused %s: %v", m.Type, m.Err)
		}
	}
}

// Issue #15, item 1: matcher.flags is a string ("i"); the engine refuses
// an array with invalid_payload.
func TestTransports_regexFlags(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		checkBuffered(t, l, bufferedReq(t, "hello <MOOD>calm</MOOD>", `<mood>(\w+)</mood>\s*$`, "i"))
	})
}

// Issue #15, item 3: in buffered mode the engine sends no
// reply.text.delta; the completed text is the reply, not an anomaly.
func TestTransports_bufferedReply(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		checkBuffered(t, l, bufferedReq(t, "hello <mood>calm</mood>", `<mood>(\w+)</mood>\s*$`, ""))
	})
}

// Issue #15, item 4: reply.audio.completed carries the same totals in
// file mode as over WebSocket although file mode sends whole segments;
// they are checked as the engine computes them, and a real mismatch is
// still reported.
func TestTransports_audioTotals(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr transport) {
		l := tr.start(t, nil, nil)
		ctx := ctxT(t)
		r, err := l.srv.Reply(ctx, audioReq(testCard(t), "hello"))
		testutil.Success(t, err)
		segs := 0
		for _, ev := range collect(t, r) {
			switch ev.Kind {
			case rpengine.EventSegment:
				segs++
			case rpengine.EventAnomaly:
				t.Errorf("anomaly: %v", ev.Anomaly)
			}
		}
		testutil.Equal(t, "segments", segs, 2)
		m, err := l.eng.WaitType(ctx, "reply.request")
		testutil.Success(t, err)
		testutil.Equal(t, "engine accepted the request", m.Err, error(nil))

		// The engine claims a segment the game never got.
		l.eng.SetFaults(enginetest.Faults{Silent: true})
		r, err = l.srv.Reply(ctx, audioReq(testCard(t), "again"))
		testutil.Success(t, err)
		id := r.RequestID()
		_, err = l.eng.Send(ctx, "reply.audio.completed", map[string]any{"requestId": id, "chunkCount": 2,
			"totalBytes": 44100, "durationSeconds": 0.5, "elapsedMs": 1, "segmentCount": 1})
		testutil.Success(t, err)
		_, err = l.eng.Send(ctx, "reply.completed", map[string]any{"requestId": id, "modalities": []string{"text", "audio"}})
		testutil.Success(t, err)
		var kinds []string
		for _, ev := range collect(t, r) {
			if ev.Kind == rpengine.EventAnomaly {
				kinds = append(kinds, ev.Anomaly.Kind.String())
			}
		}
		want := []string{"totals_mismatch", "totals_mismatch", "totals_mismatch", "totals_mismatch", "missing_segments"}
		testutil.Equal(t, "anomalies", kinds, want)
	})
}
