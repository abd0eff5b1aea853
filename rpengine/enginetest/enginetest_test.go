package enginetest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

func TestUpstreamHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, canonical string
	}{
		{"spec vector", `{"spec":"chara_card_v2","data":{"tags":["a"],"name":"Ari","age":4}}`, `{"data":{"age":4,"name":"Ari","tags":["a"]},"spec":"chara_card_v2"}`},
		{"1.0 kept", `{"a":1.0}`, `{"a":1.0}`},
		{"1e21 kept", `{"a":1e21}`, `{"a":1e21}`},
		{"big integer kept", `{"a":12345678901234567890}`, `{"a":12345678901234567890}`},
		{"escapes", `{"a":"\u0001\n\"\\/é"}`, `{"a":"\u0001\n\"\\/é"}`},
		{"utf16 order", `{"\ud83d\ude00":1,"\ufb01":2}`, `{"😀":1,"ﬁ":2}`},
		{"whitespace", " [ true , null , false ] ", `[true,null,false]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := UpstreamCanonical([]byte(tt.in))
			testutil.Success(t, err)
			testutil.Equal(t, "canonical", string(got), tt.canonical)
		})
	}
	h, err := UpstreamHash([]byte(`{"data":{"age":4,"name":"Ari","tags":["a"]},"spec":"chara_card_v2"}`))
	testutil.Success(t, err)
	testutil.Equal(t, "spec hash", h, "71981de431e9b5327456a39a3eed23fb6eabb68efdd050f271c222f6f50a8b31")
	_, err = UpstreamHash([]byte(`{"a":`))
	testutil.Error(t, err)
}

// Hash-safe documents hash the same upstream and under RFC 8785.
func TestUpstreamHash_matchesJCS(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":["x"],"extensions":{"n":-42,"z":"\u00e9\t"}}}`)
	c, err := card.Parse(doc)
	testutil.Success(t, err)
	d := c.Hash()
	h, err := UpstreamHash(doc)
	testutil.Success(t, err)
	testutil.Equal(t, "same", h, d.String())
}

func TestSynthesize(t *testing.T) {
	t.Parallel()
	a := Synthesize(0, 0.5)
	b := Synthesize(1, 0.5)
	testutil.Equal(t, "bytes", len(a), 2*22050)
	var energy float64
	var diff int
	for i := 0; i+1 < len(a); i += 2 {
		s := float64(int16(binary.LittleEndian.Uint16(a[i:])))
		energy += s * s
		if a[i] != b[i] {
			diff++
		}
	}
	rms := math.Sqrt(energy / float64(len(a)/2))
	if rms < 1000 {
		t.Fatalf("speech too quiet: rms %.0f", rms)
	}
	if diff < len(a)/4 {
		t.Fatal("sentences are not distinguishable")
	}
	// Fades in and out: no click at the edges.
	if s := int16(binary.LittleEndian.Uint16(a)); s != 0 {
		t.Fatalf("first sample %d", s)
	}
}

func Test_splitWords(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"I hear you.", " You said: x", "one", ""} {
		testutil.Equal(t, s, strings.Join(splitWords(s), ""), s)
	}
	testutil.Equal(t, "words", splitWords("a bc d"), []string{"a", " bc", " d"})
}

func env(typ string, fields string) []byte {
	b := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"` + typ + `","messageId":"m","sessionId":"s","timestamp":"t"`
	if fields != "" {
		b += "," + fields
	}
	return []byte(b + "}")
}

const goodCard = `"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":{}}`
const goodOutput = `"output":{"modalities":["text"],"language":"en"}`
const goodIDs = `"requestId":"r","eventId":"e","integrationId":"g","characterId":"c"`

// rpRule is a valid responseProcessing rule with extra matcher fields.
func rpRule(matcher string) string {
	if matcher != "" {
		matcher = "," + matcher
	}
	return `{"id":"mood","matcher":{"type":"regex","pattern":"<(\\w+)>"` + matcher + `},"captureGroup":1,"occurrence":"last","remove":"match","removeFrom":["text","audio"]}`
}

func rpOutput(rule string) string {
	return `"output":{"modalities":["text"],"language":"en","responseProcessing":{"mode":"buffered","rules":[` + rule + `]}}`
}

func Test_validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, typ, fields, err string
	}{
		{"request ok", "reply.request", goodIDs + `,"event":{"text":"hi"},` + goodOutput + "," + goodCard, ""},
		{"missing eventId", "reply.request", `"requestId":"r","integrationId":"g","characterId":"c","event":{"text":"hi"},` + goodOutput + "," + goodCard, "eventId"},
		{"blank text", "reply.request", goodIDs + `,"event":{"text":" "},` + goodOutput + "," + goodCard, "event.text"},
		{"audio rate", "reply.request", goodIDs + `,"event":{"audio":{"format":"pcm_s16le","sampleRate":44100,"channels":1,"data":"AA=="}},` + goodOutput + "," + goodCard, "16 kHz"},
		{"no text modality", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["audio"],"language":"en"},` + goodCard, "modalities"},
		{"dup modality", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["text","text"],"language":"en"},` + goodCard, "duplicates"},
		{"audio model", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["text","audio"],"language":"en","audio":{"model":"x","voice":"F1"}},` + goodCard, "Supertonic"},
		{"audio without modality", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["text"],"language":"en","audio":{}},` + goodCard, "requires the audio modality"},
		{"no language", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["text"]},` + goodCard, "language"},
		{"bad mode", "reply.request", goodIDs + `,"event":{"text":"hi"},` + goodOutput + `,"card":{"format":"chara_card_v2","mode":"diff"}`, "mode"},
		{"reference no hash", "reply.request", goodIDs + `,"event":{"text":"hi"},` + goodOutput + `,"card":{"format":"chara_card_v2","mode":"reference"}`, "targetHash"},
		{"patch no ops", "character.sync", `"integrationId":"g","characterId":"c","card":{"format":"chara_card_v2","mode":"patch","baseHash":"a","targetHash":"b"}`, "RFC 6902"},
		{"partial prompt", "reply.request", goodIDs + `,"event":{"text":"hi"},` + goodOutput + "," + goodCard + `,"interactionMode":"auto_event"`, "together"},
		// Issue #15: output.responseProcessing is checked as the engine
		// checks it; matcher.flags is a string of distinct letters of "ims".
		{"buffered ok", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(rpRule(`"flags":"is"`)) + "," + goodCard, ""},
		{"flags array", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(rpRule(`"flags":["i"]`)) + "," + goodCard, "flags may only contain i, m, and s"},
		{"flags letter", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(rpRule(`"flags":"g"`)) + "," + goodCard, "flags may only contain i, m, and s"},
		{"flags twice", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(rpRule(`"flags":"ii"`)) + "," + goodCard, "cannot contain duplicates"},
		{"rp mode", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["text"],"language":"en","responseProcessing":{"mode":"streaming","rules":[` + rpRule("") + `]}},` + goodCard, "mode"},
		{"no rules", "reply.request", goodIDs + `,"event":{"text":"hi"},"output":{"modalities":["text"],"language":"en","responseProcessing":{"mode":"buffered","rules":[]}},` + goodCard, "between 1 and 8"},
		{"bad regex", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(strings.Replace(rpRule(""), `<(\\w+)>`, `(`, 1)) + "," + goodCard, "invalid responseProcessing regex"},
		{"no such group", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(strings.Replace(rpRule(""), `"captureGroup":1`, `"captureGroup":2`, 1)) + "," + goodCard, "captureGroup 2 does not exist"},
		{"removeFrom empty with match", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(strings.Replace(rpRule(""), `["text","audio"]`, `[]`, 1)) + "," + goodCard, ""},
		{"removeFrom with none", "reply.request", goodIDs + `,"event":{"text":"hi"},` + rpOutput(strings.Replace(rpRule(""), `"remove":"match"`, `"remove":"none"`, 1)) + "," + goodCard, "must be empty when remove is none"},
		{"capture ok", "voice.capture.start", goodIDs + `,"returnTranscript":true,"silenceBehavior":"restart",` + goodOutput + "," + goodCard, ""},
		{"capture silence", "voice.capture.start", goodIDs + `,"silenceBehavior":"wait",` + goodOutput + "," + goodCard, "silenceBehavior"},
		{"cancel", "request.cancel", ``, "requestId"},
		{"unknown type", "future.thing", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := env(tt.typ, tt.fields)
			h, err := wire.DecodeHeader(b)
			testutil.Success(t, err)
			err = validate(h, b)
			if tt.err == "" {
				testutil.Success(t, err)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %v, want an error about %q", err, tt.err)
			}
		})
	}
}

// fakeGame is a minimal hand-written game server for testing the engine.
type fakeGame struct {
	srv  *httptest.Server
	in   chan map[string]any
	conn chan *websocket.Conn
}

func newFakeGame(t *testing.T) *fakeGame {
	g := &fakeGame{in: make(chan map[string]any, 100), conn: make(chan *websocket.Conn, 1)}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(wire.MaxMessageBytes)
		ctx := r.Context()
		if _, _, err := c.Read(ctx); err != nil { // hello
			return
		}
		welcome, _ := wire.Encode("welcome", "w1", "", time.Now(), map[string]string{"sessionId": "s1", "serverVersion": "fake"})
		if c.Write(ctx, websocket.MessageText, welcome) != nil {
			return
		}
		g.conn <- c
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m map[string]any
			_ = json.Unmarshal(data, &m)
			g.in <- m
		}
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// next returns the next engine message but capacity.update (and skip).
// Its bound guards against a hang, and is no timing assertion: under
// -race on two loaded cores the fake took 8 s to refuse 2.6 MB of speech.
func (g *fakeGame) next(t *testing.T, skip ...string) map[string]any {
	t.Helper()
	for {
		select {
		case m := <-g.in:
			if m["type"] == "capacity.update" || (len(skip) > 0 && m["type"] == skip[0]) {
				continue
			}
			return m
		case <-time.After(time.Minute):
			t.Fatal("no message from the engine")
		}
	}
}

func TestEngine_invalidPayloadNotAcked(t *testing.T) {
	t.Parallel()
	g := newFakeGame(t)
	ctx := context.Background()
	e, err := Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), nil)
	testutil.Success(t, err)
	defer e.Close()
	testutil.Equal(t, "session", e.SessionID(), "s1")
	c := <-g.conn
	// welcome is acked, without a sessionId, as the engine does (issue #15).
	m := g.next(t)
	testutil.Equal(t, "welcome acked", []any{m["type"], m["acknowledgedMessageId"], m["sessionId"]}, []any{"ack", "w1", nil})
	bad := env("reply.request", goodIDs+`,"event":{"text":"hi"},`+goodCard) // no output
	testutil.Success(t, c.Write(ctx, websocket.MessageText, bad))
	m = g.next(t)
	testutil.Equal(t, "type", m["type"], any("request.error"))
	testutil.Equal(t, "code", m["code"], any("invalid_payload"))
	_, hasReq := m["requestId"]
	testutil.Equal(t, "no requestId", hasReq, false)
	got := e.Received()
	if got[len(got)-1].Err == nil {
		t.Fatal("engine did not record the refusal")
	}
	// A valid message is acked, a repeated one as a duplicate.
	cancel := env("request.cancel", `"requestId":"nope"`)
	testutil.Success(t, c.Write(ctx, websocket.MessageText, cancel))
	testutil.Success(t, c.Write(ctx, websocket.MessageText, cancel))
	m = g.next(t)
	testutil.Equal(t, "ack", m["type"], any("ack"))
	testutil.Equal(t, "not dup", m["duplicate"], nil)
	m = g.next(t)
	testutil.Equal(t, "not active", []any{m["type"], m["reason"]}, []any{"reply.cancelled", "not_active"})
	m = g.next(t)
	testutil.Equal(t, "dup ack", []any{m["type"], m["duplicate"]}, []any{"ack", true})
}

func TestEngine_cardErrors(t *testing.T) {
	t.Parallel()
	g := newFakeGame(t)
	ctx := context.Background()
	e, err := Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), nil)
	testutil.Success(t, err)
	defer e.Close()
	c := <-g.conn
	send := func(id, fields string) {
		b := env("character.sync", `"integrationId":"g","characterId":"c",`+fields)
		b = []byte(strings.Replace(string(b), `"messageId":"m"`, `"messageId":"`+id+`"`, 1))
		testutil.Success(t, c.Write(ctx, websocket.MessageText, b))
	}
	hash := strings.Repeat("a", 64)
	send("1", `"card":{"format":"chara_card_v2","mode":"reference","targetHash":"`+hash+`"}`)
	m := g.next(t, "ack")
	testutil.Equal(t, "unknown reference", []any{m["code"], m["requestId"], m["sourceMessageId"], m["retryable"]}, []any{"card_resync_required", nil, "1", true})
	send("2", `"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":{"spec":"chara_card_v2"}}`)
	m = g.next(t, "ack")
	testutil.Equal(t, "invalid card", []any{m["code"], m["retryable"]}, []any{"invalid_character_card", false})
	valid := `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`
	send("3", `"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":`+valid+`,"targetHash":"`+hash+`"}`)
	m = g.next(t, "ack")
	testutil.Equal(t, "hash mismatch", m["code"], any("card_resync_required"))
	send("4", `"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":`+valid+`}`)
	m = g.next(t, "ack")
	testutil.Equal(t, "synced", m["type"], any("character.synced"))
	accepted := m["targetHash"].(string)
	send("5", `"card":{"format":"chara_card_v2","mode":"patch","baseHash":"`+hash+`","patch":[],"targetHash":"`+accepted+`"}`)
	m = g.next(t, "ack")
	testutil.Equal(t, "base mismatch", m["code"], any("card_resync_required"))
	send("6", `"card":{"format":"chara_card_v2","mode":"patch","baseHash":"`+accepted+`","patch":[{"op":"remove","path":"/nope"}],"targetHash":"`+accepted+`"}`)
	m = g.next(t, "ack")
	testutil.Equal(t, "patch failed", m["code"], any("card_resync_required"))
	send("7", `"card":{"format":"chara_card_v2","mode":"patch","baseHash":"`+accepted+`","patch":[{"op":"replace","path":"/data/name","value":"Bo"}],"targetHash":"`+accepted+`"}`)
	m = g.next(t, "ack")
	testutil.Equal(t, "rebuilt hash differs", m["code"], any("card_resync_required"))
	h, ok := e.CardHash("g", "c")
	testutil.Equal(t, "cache kept", []any{h, ok}, []any{accepted, true})
}

func TestEngine_replyChunks(t *testing.T) {
	t.Parallel()
	g := newFakeGame(t)
	ctx := context.Background()
	e, err := Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), &Options{SecondsPerSentence: 0.8,
		Responder: func(Request) Script { return Script{Sentences: []string{"One.", "Two three."}} }})
	testutil.Success(t, err)
	defer e.Close()
	c := <-g.conn
	valid := `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`
	req := env("reply.request", goodIDs+`,"event":{"text":"hi"},"output":{"modalities":["text","audio"],"language":"en","audio":{"model":"gemtavern-supertonic-3","voice":"M2"}},"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":`+valid+`}`)
	testutil.Success(t, c.Write(ctx, websocket.MessageText, req))
	var types []string
	var text string
	var chunks, total int
	for {
		m := g.next(t, "ack")
		types = append(types, m["type"].(string))
		switch m["type"] {
		case "reply.text.delta":
			text += m["delta"].(string)
		case "reply.audio.chunk":
			data, err := base64.StdEncoding.DecodeString(m["data"].(string))
			testutil.Success(t, err)
			if len(data) > MaxChunkBytes {
				t.Fatalf("chunk of %d bytes", len(data))
			}
			testutil.Equal(t, "global sequence", int(m["sequence"].(float64)), chunks)
			chunks++
			total += len(data)
		case "reply.audio.completed":
			testutil.Equal(t, "chunkCount", int(m["chunkCount"].(float64)), chunks)
			testutil.Equal(t, "totalBytes", int(m["totalBytes"].(float64)), total)
			testutil.Equal(t, "segmentCount", m["segmentCount"], any(2.0))
		}
		if m["type"] == "reply.completed" {
			break
		}
	}
	testutil.Equal(t, "text", text, "One. Two three.")
	testutil.Equal(t, "chunks", chunks, 6) // 0.8 s = 70560 bytes = 3 chunks a sentence
	testutil.Equal(t, "first", types[0], "reply.accepted")
	testutil.Equal(t, "audio start once", strings.Count(strings.Join(types, ","), "reply.audio.start"), 1)
}

const validCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`

// Issue #15: with buffered responseProcessing the engine sends no
// reply.text.delta; reply.text.completed carries the processed text and
// extractedContent, and speech follows it.
func TestEngine_bufferedReply(t *testing.T) {
	t.Parallel()
	g := newFakeGame(t)
	ctx := context.Background()
	e, err := Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), &Options{
		Responder: func(r Request) Script {
			if !r.Buffered {
				t.Error("request not seen as buffered")
			}
			return Script{Sentences: []string{"Fine.", "<calm> <happy>"}}
		}})
	testutil.Success(t, err)
	defer e.Close()
	c := <-g.conn
	out := `"output":{"modalities":["text","audio"],"language":"en","audio":{"model":"gemtavern-supertonic-3","voice":"F1"},` +
		`"responseProcessing":{"mode":"buffered","rules":[` + strings.Replace(rpRule(""), `"last"`, `"all"`, 1) + `]}}`
	req := env("reply.request", goodIDs+`,"event":{"text":"hi"},`+out+`,"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":`+validCard+`}`)
	testutil.Success(t, c.Write(ctx, websocket.MessageText, req))
	var types []string
	for {
		m := g.next(t, "ack")
		types = append(types, m["type"].(string))
		if m["type"] == "reply.text.completed" {
			testutil.Equal(t, "processed text", m["text"], any("Fine."))
			testutil.Equal(t, "extracted", m["extractedContent"], any(map[string]any{"mood": []any{"calm", "happy"}}))
		}
		if m["type"] == "reply.completed" {
			break
		}
	}
	joined := strings.Join(types, ",")
	if strings.Contains(joined, "reply.text.delta") {
		t.Fatalf("deltas in buffered mode: %s", joined)
	}
	if !strings.HasPrefix(joined, "reply.accepted,reply.text.completed,reply.audio.start,") {
		t.Fatalf("order: %s", joined)
	}
}

// Issue #15: the engine refuses requests past its queue limit (queue,
// active reply and capture counted) with a retryable capacity_exceeded,
// before looking at the card.
func TestEngine_queueLimit(t *testing.T) {
	t.Parallel()
	g := newFakeGame(t)
	ctx := context.Background()
	release := make(chan struct{})
	e, err := Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), &Options{QueueLimit: 2,
		Responder: func(Request) Script { <-release; return Script{Sentences: []string{"Done."}} }})
	testutil.Success(t, err)
	defer e.Close()
	defer close(release)
	c := <-g.conn
	var capacity []map[string]any
	next := func() map[string]any {
		for {
			select {
			case m := <-g.in:
				switch m["type"] {
				case "capacity.update":
					capacity = append(capacity, m)
				case "ack":
				default:
					return m
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no message from the engine")
			}
		}
	}
	for i, id := range []string{"r1", "r2", "r3"} {
		ids := strings.Replace(goodIDs, `"requestId":"r"`, `"requestId":"`+id+`"`, 1)
		b := env("reply.request", ids+`,"event":{"text":"hi"},`+goodOutput+`,"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":`+validCard+`}`)
		b = []byte(strings.Replace(string(b), `"messageId":"m"`, `"messageId":"m`+id+`"`, 1))
		testutil.Success(t, c.Write(ctx, websocket.MessageText, b))
		m := next()
		if i < 2 {
			testutil.Equal(t, "accepted", []any{m["type"], m["queueDepth"]}, []any{"reply.accepted", float64(i + 1)})
			continue
		}
		testutil.Equal(t, "refused", []any{m["type"], m["code"], m["requestId"], m["sourceMessageId"], m["retryable"]},
			[]any{"request.error", "capacity_exceeded", "r3", "mr3", true})
	}
	last := capacity[len(capacity)-1]
	testutil.Equal(t, "full", []any{last["queueDepth"], last["queueLimit"], last["acceptingRequests"]}, []any{2.0, 2.0, false})
}

// Issue #33: the engine takes event.audio as pcm_s16le or pcm_f32le, and
// decodes it when the request runs: a partial sample, a non-finite float
// or more than 30 s fail the accepted request with request_failed
// (docs/rpengine-protocol.md, "Game to engine").
func TestEngine_speechFormats(t *testing.T) {
	t.Parallel()
	f32 := func(v ...float32) string {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	quarter := make([]float32, 4000)
	for i := range quarter {
		quarter[i] = float32(math.Sin(float64(i)/10)) * 1.25 // past full scale: the engine does not clamp
	}
	tests := []struct {
		name, format, data string
		want               string // the reply's text, or the error code
		speech             []float32
	}{
		{"s16", "pcm_s16le", base64.StdEncoding.EncodeToString(make([]byte, 2*16000)), "(1.0 seconds of speech)", make([]float32, 16000)},
		{"s16 full scale", "pcm_s16le", base64.StdEncoding.EncodeToString([]byte{0x00, 0x80, 0xff, 0x7f}), "(0.0 seconds of speech)", []float32{-1, 32767.0 / 32768}},
		{"f32 as sent", "pcm_f32le", f32(quarter...), "(0.2 seconds of speech)", quarter},
		{"f32 NaN", "pcm_f32le", f32(0, float32(math.NaN())), "request_failed", nil},
		{"f32 infinite", "pcm_f32le", f32(float32(math.Inf(-1))), "request_failed", nil},
		{"f32 partial sample", "pcm_f32le", base64.StdEncoding.EncodeToString([]byte{1, 2, 3, 4, 5, 6}), "request_failed", nil},
		{"f32 over 30 s", "pcm_f32le", f32(make([]float32, 30*16000+1)...), "request_failed", nil},
		{"not base64", "pcm_s16le", "!!!!", "request_failed", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newFakeGame(t)
			ctx := context.Background()
			heard := make(chan []float32, 1)
			e, err := Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http"), &Options{Responder: func(r Request) Script {
				heard <- r.Speech
				return DefaultScript(r)
			}})
			testutil.Success(t, err)
			defer e.Close()
			c := <-g.conn
			audio := `{"format":"` + tt.format + `","sampleRate":16000,"channels":1,"data":"` + tt.data + `"}`
			req := env("reply.request", goodIDs+`,"event":{"audio":`+audio+`},`+goodOutput+`,"card":{"format":"chara_card_v2","mode":"snapshot","snapshot":`+validCard+`}`)
			testutil.Success(t, c.Write(ctx, websocket.MessageText, req))
			testutil.Equal(t, "accepted first", g.next(t, "ack")["type"], any("reply.accepted"))
			for {
				m := g.next(t, "ack")
				switch m["type"] {
				case "request.error":
					testutil.Equal(t, "code", m["code"], any(tt.want))
					return
				case "reply.text.completed":
					testutil.Equal(t, "text", m["text"], any("I hear you. You said: "+tt.want))
					got := <-heard
					testutil.Equal(t, "samples", len(got), len(tt.speech))
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(tt.speech[i]) {
							t.Fatalf("sample %d is %v, sent %v", i, got[i], tt.speech[i])
						}
					}
					return
				}
			}
		})
	}
}
