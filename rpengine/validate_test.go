package rpengine_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

func fullRequest(t testing.TB) rpengine.ReplyRequest {
	r := audioReq(testCard(t), "Where is the inn?")
	r.Audio = &rpengine.AudioInput{Data: make([]byte, 3200), Language: "en"}
	r.Output.Language = "fr"
	r.Output.Audio.Processing = &rpengine.AudioProcessing{Profile: "narrowband_voice"}
	r.Output.ResponseProcessing = &rpengine.ResponseProcessing{Rules: []rpengine.Rule{
		{ID: "mood", Matcher: rpengine.Matcher{Pattern: `<mood>(.*?)</mood>`, Flags: "is"}, CaptureGroup: 1, Occurrence: "last", Remove: "match", RemoveFrom: []string{"text", "audio"}},
		{ID: "keep.all", Matcher: rpengine.Matcher{Pattern: `x`}, Occurrence: "all", Remove: "none"},
	}}
	r.Player = &rpengine.Player{DisplayName: "Sam"}
	r.InteractionMode = "direct_user"
	r.PromptScene = &rpengine.PromptScene{Kind: "k", Family: "f", Label: "l", SceneLine: "s", Priority: 2}
	r.PromptDirective = &rpengine.PromptDirective{ProtocolVersion: 1, SceneContext: "c", AutoEventGuide: "a", DirectUserGuide: "d", PromptVersion: "v1"}
	return r
}

func TestServer_Reply_validation(t *testing.T) {
	t.Parallel()
	f := newServer(t, &rpengine.ServerOptions{FailFast: true})
	tests := []struct {
		name  string
		edit  func(r *rpengine.ReplyRequest)
		field string
	}{
		{"no integration", func(r *rpengine.ReplyRequest) { r.IntegrationID = "" }, "integrationId"},
		{"no character", func(r *rpengine.ReplyRequest) { r.CharacterID = "" }, "characterId"},
		{"no card", func(r *rpengine.ReplyRequest) { r.Card = nil }, "card"},
		{"invalid card", func(r *rpengine.ReplyRequest) { r.Card = testCard(t, `"tags":["fox"]`, `"tags":"fox"`) }, "card"},
		{"no event", func(r *rpengine.ReplyRequest) { r.Text, r.Audio = " ", nil }, "event"},
		{"audio format", func(r *rpengine.ReplyRequest) { r.Audio.Format = "mp3" }, "event.audio.format"},
		{"audio rate", func(r *rpengine.ReplyRequest) { r.Audio.SampleRate = 44100 }, "event.audio.sampleRate"},
		{"audio stereo", func(r *rpengine.ReplyRequest) { r.Audio.Channels = 2 }, "event.audio.channels"},
		{"audio odd bytes", func(r *rpengine.ReplyRequest) { r.Audio.Data = make([]byte, 3) }, "event.audio.data"},
		{"audio empty", func(r *rpengine.ReplyRequest) { r.Audio.Data = nil }, "event.audio.data"},
		{"audio 30 s", func(r *rpengine.ReplyRequest) { r.Audio.Data = make([]byte, 2*16000*30+2) }, "event.audio.data"},
		{"audio language", func(r *rpengine.ReplyRequest) { r.Audio.Language = "fr" }, "event.audio.language"},
		{"modality", func(r *rpengine.ReplyRequest) { r.Output.Modalities = []string{"text", "video"} }, "output.modalities[1]"},
		{"duplicate modality", func(r *rpengine.ReplyRequest) { r.Output.Modalities = []string{"text", "text"} }, "output.modalities[1]"},
		{"no text modality", func(r *rpengine.ReplyRequest) { r.Output.Modalities = []string{"audio"} }, "output.modalities"},
		{"language", func(r *rpengine.ReplyRequest) { r.Output.Language = "xx" }, "output.language"},
		{"audio without modality", func(r *rpengine.ReplyRequest) { r.Output.Modalities = []string{"text"} }, "output.audio"},
		{"model", func(r *rpengine.ReplyRequest) { r.Output.Audio.Model = "other" }, "output.audio.model"},
		{"voice", func(r *rpengine.ReplyRequest) { r.Output.Audio.Voice = "F6" }, "output.audio.voice"},
		{"output format", func(r *rpengine.ReplyRequest) { r.Output.Audio.Format = "pcm_f32le" }, "output.audio.format"},
		{"profile", func(r *rpengine.ReplyRequest) { r.Output.Audio.Processing.Profile = "radio" }, "output.audio.processing.profile"},
		{"rp mode", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Mode = "stream" }, "output.responseProcessing.mode"},
		{"no rules", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules = nil }, "output.responseProcessing.rules"},
		{"rule id", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].ID = "Mood" }, "output.responseProcessing.rules[0].id"},
		{"duplicate rule id", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[1].ID = "mood" }, "output.responseProcessing.rules[1].id"},
		{"matcher type", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].Matcher.Type = "glob" }, "output.responseProcessing.rules[0].matcher.type"},
		{"long pattern", func(r *rpengine.ReplyRequest) {
			r.Output.ResponseProcessing.Rules[0].Matcher.Pattern = strings.Repeat("a", 1025)
		}, "output.responseProcessing.rules[0].matcher.pattern"},
		{"flag", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].Matcher.Flags = "g" }, "output.responseProcessing.rules[0].matcher.flags"},
		{"flag twice", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].Matcher.Flags = "isi" }, "output.responseProcessing.rules[0].matcher.flags"},
		{"capture group", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].CaptureGroup = -1 }, "output.responseProcessing.rules[0].captureGroup"},
		{"occurrence", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].Occurrence = "second" }, "output.responseProcessing.rules[0].occurrence"},
		{"remove", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].Remove = "all" }, "output.responseProcessing.rules[0].remove"},
		{"removeFrom with none", func(r *rpengine.ReplyRequest) {
			r.Output.ResponseProcessing.Rules[1].RemoveFrom = []string{"text"}
		}, "output.responseProcessing.rules[1].removeFrom"},
		{"removeFrom value", func(r *rpengine.ReplyRequest) {
			r.Output.ResponseProcessing.Rules[0].RemoveFrom = []string{"text", "text"}
		}, "output.responseProcessing.rules[0].removeFrom[1]"},
		{"prompt partial", func(r *rpengine.ReplyRequest) { r.PromptDirective = nil }, "interactionMode"},
		{"interaction mode", func(r *rpengine.ReplyRequest) { r.InteractionMode = "chat" }, "interactionMode"},
		{"scene label", func(r *rpengine.ReplyRequest) { r.PromptScene.Label = "" }, "promptScene.label"},
		{"scene priority", func(r *rpengine.ReplyRequest) { r.PromptScene.Priority = math.Inf(1) }, "promptScene.priority"},
		{"directive version", func(r *rpengine.ReplyRequest) { r.PromptDirective.ProtocolVersion = 0 }, "promptDirective.protocolVersion"},
		{"directive guide", func(r *rpengine.ReplyRequest) { r.PromptDirective.AutoEventGuide = "" }, "promptDirective.autoEventGuide"},
		// Issue #15: rules the engine applies that were missing.
		{"prompt version blank", func(r *rpengine.ReplyRequest) { r.PromptDirective.PromptVersion = " " }, "promptDirective.promptVersion"},
		{"no such capture group", func(r *rpengine.ReplyRequest) { r.Output.ResponseProcessing.Rules[0].CaptureGroup = 2 }, "output.responseProcessing.rules[0].captureGroup"},
		{"17 capture groups", func(r *rpengine.ReplyRequest) {
			r.Output.ResponseProcessing.Rules[0].Matcher.Pattern = strings.Repeat("(a)", 17)
		}, "output.responseProcessing.rules[0].matcher.pattern"},
		{"f32 NaN", func(r *rpengine.ReplyRequest) {
			r.Audio.Format, r.Audio.Data = "pcm_f32le", []byte{0, 0, 0, 0, 0, 0, 0xc0, 0x7f}
		}, "event.audio.data"},
		{"too big", func(r *rpengine.ReplyRequest) { r.Text = strings.Repeat("a", 8<<20) }, "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := fullRequest(t)
			tt.edit(&r)
			_, err := f.srv.Reply(ctxT(t), r)
			var fe *rpengine.FieldError
			if tt.field == "message" {
				// Too big is found only when encoding, after a session is live.
				f2 := newServer(t, nil)
				f2.dial(t, nil)
				_, err = f2.srv.Reply(ctxT(t), r)
			}
			testutil.ErrorAs(t, err, &fe)
			testutil.Equal(t, "field", fe.Field, tt.field)
		})
	}
}

func TestServer_fullRequestOnTheWire(t *testing.T) {
	t.Parallel()
	rec := &syncWriter{w: &bytes.Buffer{}}
	f := newServer(t, &rpengine.ServerOptions{Recorder: rec})
	eng := f.dial(t, nil)
	ctx := ctxT(t)
	r, err := f.srv.Reply(ctx, fullRequest(t))
	testutil.Success(t, err)
	_, err = r.Wait(ctx)
	testutil.Success(t, err)
	m, err := eng.WaitType(ctx, "reply.request")
	testutil.Success(t, err)
	testutil.Equal(t, "engine accepted it", m.Err, error(nil))
	var v map[string]any
	testutil.Success(t, json.Unmarshal(m.Raw, &v))
	for _, k := range []string{"protocol", "protocolVersion", "messageId", "sessionId", "timestamp", "requestId", "eventId",
		"integrationId", "characterId", "event", "output", "player", "card", "interactionMode", "promptScene", "promptDirective"} {
		if _, ok := v[k]; !ok {
			t.Errorf("reply.request lacks %s", k)
		}
	}
	ev := v["event"].(map[string]any)["audio"].(map[string]any)
	testutil.Equal(t, "audio defaults", []any{ev["format"], ev["sampleRate"], ev["channels"]}, []any{"pcm_s16le", 16000.0, 1.0})
	out := v["output"].(map[string]any)
	testutil.Equal(t, "modalities default", out["modalities"], any([]any{"text", "audio"}))
	testutil.Equal(t, "model default", out["audio"].(map[string]any)["model"], any("gemtavern-supertonic-3"))
	// The recorder saw the traffic in both directions.
	for _, want := range []string{`"dir":"in"`, `"dir":"out"`, `"type":"reply.request"`, `"type":"reply.completed"`} {
		if !strings.Contains(rec.String(), want) {
			t.Errorf("recording lacks %s", want)
		}
	}
	_ = enginetest.SampleRate
}

func TestServer_Capture_validation(t *testing.T) {
	t.Parallel()
	f := newServer(t, &rpengine.ServerOptions{FailFast: true})
	_, err := f.srv.Capture(ctxT(t), rpengine.CaptureRequest{IntegrationID: "g", CharacterID: "c", Card: testCard(t), SilenceBehavior: "wait"})
	var fe *rpengine.FieldError
	testutil.ErrorAs(t, err, &fe)
	testutil.Equal(t, "field", fe.Field, "silenceBehavior")
	_, err = f.srv.Capture(ctxT(t), rpengine.CaptureRequest{IntegrationID: "g", CharacterID: "c", Card: testCard(t)})
	testutil.ErrorIs(t, err, rpengine.ErrNotConnected)
}
