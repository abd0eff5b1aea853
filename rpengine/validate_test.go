package rpengine_test

import (
	"encoding/base64"
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
	r.Speech, r.SpeechLanguage = make([]int16, 1600), "en"
	r.Language = "fr"
	r.AudioProfile = "narrowband_voice"
	r.Rules = []rpengine.Rule{
		{ID: "mood", Pattern: `<mood>(.*?)</mood>`, Flags: "is", Group: 1, Occurrence: "last", Remove: "match", RemoveFrom: []string{"text", "audio"}},
		{ID: "keep.all", Pattern: `x`, Occurrence: "all", Remove: "none"},
	}
	r.PlayerName = "Sam"
	r.Prompt = &rpengine.Prompt{Mode: "direct_user", Kind: "k", Family: "f", Label: "l", SceneLine: "s", Priority: 2,
		SceneContext: "c", AutoEventGuide: "a", DirectUserGuide: "d", Version: "v1"}
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
		{"no integration", func(r *rpengine.ReplyRequest) { r.IntegrationID = "" }, "IntegrationID"},
		{"no character", func(r *rpengine.ReplyRequest) { r.CharacterID = "" }, "CharacterID"},
		{"no card", func(r *rpengine.ReplyRequest) { r.Card = nil }, "Card"},
		{"invalid card", func(r *rpengine.ReplyRequest) { r.Card = testCard(t, `"tags":["fox"]`, `"tags":"fox"`) }, "Card"},
		{"no event", func(r *rpengine.ReplyRequest) { r.Text, r.Speech = " ", nil }, "Text"},
		{"speech 30 s", func(r *rpengine.ReplyRequest) { r.Speech = make([]int16, 16000*30+1) }, "Speech"},
		{"speech language", func(r *rpengine.ReplyRequest) { r.SpeechLanguage = "fr" }, "SpeechLanguage"},
		{"speech language alone", func(r *rpengine.ReplyRequest) { r.Speech = nil }, "SpeechLanguage"},
		{"language", func(r *rpengine.ReplyRequest) { r.Language = "xx" }, "Language"},
		{"voice", func(r *rpengine.ReplyRequest) { r.Voice = "F6" }, "Voice"},
		{"profile", func(r *rpengine.ReplyRequest) { r.AudioProfile = "radio" }, "AudioProfile"},
		{"profile without voice", func(r *rpengine.ReplyRequest) { r.Voice = "" }, "AudioProfile"},
		{"nine rules", func(r *rpengine.ReplyRequest) { r.Rules = make([]rpengine.Rule, 9) }, "Rules"},
		{"rule id", func(r *rpengine.ReplyRequest) { r.Rules[0].ID = "Mood" }, "Rules[0].ID"},
		{"duplicate rule id", func(r *rpengine.ReplyRequest) { r.Rules[1].ID = "mood" }, "Rules[1].ID"},
		{"no pattern", func(r *rpengine.ReplyRequest) { r.Rules[1].Pattern = "" }, "Rules[1].Pattern"},
		{"long pattern", func(r *rpengine.ReplyRequest) { r.Rules[0].Pattern = strings.Repeat("a", 1025) }, "Rules[0].Pattern"},
		{"flag", func(r *rpengine.ReplyRequest) { r.Rules[0].Flags = "g" }, "Rules[0].Flags"},
		{"flag twice", func(r *rpengine.ReplyRequest) { r.Rules[0].Flags = "isi" }, "Rules[0].Flags"},
		{"capture group", func(r *rpengine.ReplyRequest) { r.Rules[0].Group = -1 }, "Rules[0].Group"},
		{"occurrence", func(r *rpengine.ReplyRequest) { r.Rules[0].Occurrence = "second" }, "Rules[0].Occurrence"},
		{"remove", func(r *rpengine.ReplyRequest) { r.Rules[0].Remove = "all" }, "Rules[0].Remove"},
		{"removeFrom with none", func(r *rpengine.ReplyRequest) { r.Rules[1].RemoveFrom = []string{"text"} }, "Rules[1].RemoveFrom"},
		{"removeFrom value", func(r *rpengine.ReplyRequest) { r.Rules[0].RemoveFrom = []string{"text", "text"} }, "Rules[0].RemoveFrom[1]"},
		{"interaction mode", func(r *rpengine.ReplyRequest) { r.Prompt.Mode = "chat" }, "Prompt.Mode"},
		{"scene label", func(r *rpengine.ReplyRequest) { r.Prompt.Label = "" }, "Prompt.Label"},
		{"scene priority", func(r *rpengine.ReplyRequest) { r.Prompt.Priority = math.Inf(1) }, "Prompt.Priority"},
		{"directive version", func(r *rpengine.ReplyRequest) { r.Prompt.DirectiveVersion = -1 }, "Prompt.DirectiveVersion"},
		{"directive guide", func(r *rpengine.ReplyRequest) { r.Prompt.AutoEventGuide = "" }, "Prompt.AutoEventGuide"},
		// Issue #15: rules the engine applies that were missing.
		{"prompt version blank", func(r *rpengine.ReplyRequest) { r.Prompt.Version = " " }, "Prompt.Version"},
		{"no such capture group", func(r *rpengine.ReplyRequest) { r.Rules[0].Group = 2 }, "Rules[0].Group"},
		{"17 capture groups", func(r *rpengine.ReplyRequest) { r.Rules[0].Pattern = strings.Repeat("(a)", 17) }, "Rules[0].Pattern"},
		{"too big", func(r *rpengine.ReplyRequest) { r.Text = strings.Repeat("a", 8<<20) }, "ReplyRequest"},
		// Issue #33: float speech, which the engine fails (request_failed)
		// past 30 s or with a non-finite sample.
		{"both speeches", func(r *rpengine.ReplyRequest) { r.SpeechFloat = make([]float32, 10) }, "SpeechFloat"},
		{"float speech 30 s", func(r *rpengine.ReplyRequest) { r.Speech, r.SpeechFloat = nil, make([]float32, 16000*30+1) }, "SpeechFloat"},
		{"float speech NaN", func(r *rpengine.ReplyRequest) {
			r.Speech, r.SpeechFloat = nil, []float32{0, 0, 0, float32(math.NaN())}
		}, "SpeechFloat[3]"},
		{"float speech infinite", func(r *rpengine.ReplyRequest) { r.Speech, r.SpeechFloat = nil, []float32{float32(math.Inf(1))} }, "SpeechFloat[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := fullRequest(t)
			tt.edit(&r)
			_, err := f.srv.Reply(ctxT(t), r)
			var fe *rpengine.FieldError
			if tt.field == "ReplyRequest" {
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
	rec := &testutil.SyncBuffer{}
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
	testutil.Equal(t, "speech", []any{ev["format"], ev["sampleRate"], ev["channels"], ev["language"]}, []any{"pcm_s16le", 16000.0, 1.0, "en"})
	testutil.Equal(t, "speech data", len(ev["data"].(string)), base64.StdEncoding.EncodedLen(2*1600))
	out := v["output"].(map[string]any)
	testutil.Equal(t, "modalities", out["modalities"], any([]any{"text", "audio"}))
	testutil.Equal(t, "language", out["language"], any("fr"))
	testutil.Equal(t, "model", out["audio"].(map[string]any)["model"], any("gemtavern-supertonic-3"))
	testutil.Equal(t, "profile", out["audio"].(map[string]any)["processing"], any(map[string]any{"profile": "narrowband_voice"}))
	rules := out["responseProcessing"].(map[string]any)["rules"].([]any)
	testutil.Equal(t, "rule", rules[0], any(map[string]any{"id": "mood", "matcher": map[string]any{"type": "regex", "pattern": "<mood>(.*?)</mood>", "flags": "is"},
		"captureGroup": 1.0, "occurrence": "last", "remove": "match", "removeFrom": []any{"text", "audio"}}))
	testutil.Equal(t, "player", v["player"], any(map[string]any{"displayName": "Sam"}))
	testutil.Equal(t, "mode", v["interactionMode"], any("direct_user"))
	testutil.Equal(t, "directive version", v["promptDirective"].(map[string]any)["protocolVersion"], any(1.0))
	// The recorder saw the traffic in both directions, written by
	// Shutdown at the latest.
	testutil.Success(t, f.srv.Close())
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
	_, err := f.srv.Capture(ctxT(t), rpengine.CaptureRequest{IntegrationID: "g", CharacterID: "c", Card: testCard(t), Voice: "X1"})
	var fe *rpengine.FieldError
	testutil.ErrorAs(t, err, &fe)
	testutil.Equal(t, "field", fe.Field, "Voice")
	_, err = f.srv.Capture(ctxT(t), rpengine.CaptureRequest{IntegrationID: "g", CharacterID: "c", Card: testCard(t)})
	testutil.ErrorIs(t, err, rpengine.ErrNotConnected)
}

// Issue #33: float speech goes as the engine's pcm_f32le, the samples as
// they are (past full scale too), and the engine hears them bit for bit;
// 16-bit speech is unchanged.
func TestServer_floatSpeech(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	heard := make(chan []float32, 2)
	eng := f.dial(t, &enginetest.Options{Responder: func(r enginetest.Request) enginetest.Script {
		heard <- r.Speech
		return enginetest.DefaultScript(r)
	}})
	ctx := ctxT(t)
	speech := make([]float32, 8000)
	for i := range speech {
		speech[i] = float32(math.Sin(float64(i)/7)) * 1.5
	}
	for _, tt := range []struct {
		format string
		req    func(r *rpengine.ReplyRequest)
		want   []float32
	}{
		{"pcm_f32le", func(r *rpengine.ReplyRequest) { r.SpeechFloat = speech }, speech},
		{"pcm_s16le", func(r *rpengine.ReplyRequest) { r.Speech = []int16{-32768, 16384} }, []float32{-1, 0.5}},
	} {
		req := textReq(testCard(t), "")
		tt.req(&req)
		r, err := f.srv.Reply(ctx, req)
		testutil.Success(t, err)
		res, err := r.Wait(ctx)
		testutil.Success(t, err)
		m, err := eng.WaitFor(ctx, func(m enginetest.Message) bool {
			return m.Type == "reply.request" && strings.Contains(string(m.Raw), r.RequestID())
		})
		testutil.Success(t, err)
		var v struct {
			Event struct{ Audio struct{ Format string } }
		}
		testutil.Success(t, json.Unmarshal(m.Raw, &v))
		testutil.Equal(t, "format", v.Event.Audio.Format, tt.format)
		got := <-heard
		testutil.Equal(t, "samples heard", len(got), len(tt.want))
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(tt.want[i]) {
				t.Fatalf("%s: sample %d heard as %v, sent %v", tt.format, i, got[i], tt.want[i])
			}
		}
		if tt.format == "pcm_f32le" {
			testutil.Equal(t, "reply", res.Text, "I hear you. You said: (0.5 seconds of speech)")
		}
	}
}
