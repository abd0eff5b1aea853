package enginetest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Request is a reply.request or voice.capture.start as the engine sees it.
type Request struct {
	Type             string // wire type
	RequestID        string
	EventID          string
	IntegrationID    string
	CharacterID      string
	Text             string // event text; for a capture, the transcript
	HasAudio         bool   // the event carried recorded speech
	Modalities       []string
	Language         string
	Voice            string
	ReturnTranscript bool
	// Buffered is true when the request carries output.responseProcessing:
	// the engine then sends no reply.text.delta, runs the rules over the
	// whole reply, and answers with reply.text.completed carrying the
	// processed text and extractedContent.
	Buffered bool
	Raw      []byte // the whole envelope
	// Speech is the event's recorded speech as the engine hears it: at
	// 16 kHz, from pcm_s16le (sample/32768) or pcm_f32le (as sent); nil
	// when it cannot be decoded, which fails the request with
	// request_failed once accepted (docs/rpengine-protocol.md).
	Speech []float32
}

// Script is how the engine answers one request.
type Script struct {
	// Sentences of the reply. Each is streamed as word deltas and, with
	// the audio modality, one speech segment.
	Sentences []string
	// Error, when set, answers with a request.error of this code instead.
	Error        string
	ErrorMessage string
	// ExtractedContent is sent in reply.text.completed. If nil and the
	// request is buffered (Request.Buffered), the request's
	// responseProcessing rules are applied to the sentences to compute it,
	// as the engine does.
	ExtractedContent map[string][]string
	// Transcript is what the player "said" in a voice capture. If empty,
	// "Hello there."
	Transcript string
	// Levels is how many voice.capture.level messages precede speech. If
	// zero, 3.
	Levels int
}

// DefaultScript is the reply generated when Options.Responder is nil.
func DefaultScript(r Request) Script {
	return Script{Sentences: []string{"I hear you.", "You said: " + heard(r)}}
}

type job struct {
	req       Request
	speechErr error       // why the event's audio cannot be decoded
	rules     *processing // output.responseProcessing; nil: streamed text
	capture   bool
	cancelled atomic.Bool
	stopped   atomic.Bool
	late      atomic.Bool // cancel arrived but IgnoreCancel: answer not_active after completion
	started   atomic.Bool
}

type requestWire struct {
	RequestID     string `json:"requestId"`
	EventID       string `json:"eventId"`
	IntegrationID string `json:"integrationId"`
	CharacterID   string `json:"characterId"`
	Event         *struct {
		Text  string          `json:"text"`
		Audio json.RawMessage `json:"audio"`
	} `json:"event"`
	Output struct {
		Modalities []string `json:"modalities"`
		Language   string   `json:"language"`
		Audio      *struct {
			Voice string `json:"voice"`
		} `json:"audio"`
		ResponseProcessing json.RawMessage `json:"responseProcessing"`
	} `json:"output"`
	Card             json.RawMessage `json:"card"`
	ReturnTranscript bool            `json:"returnTranscript"`
}

func (cn *conn) dispatch(h wire.Header, data []byte) {
	switch h.Type {
	case wire.TypeCharacterSync:
		var m requestWire
		_ = json.Unmarshal(data, &m)
		hash, cerr := cn.resolveCard(cardKey{m.IntegrationID, m.CharacterID}, m.Card)
		if cerr != nil {
			cn.fail(nil, h.MessageID, cerr.code, cerr.message)
			return
		}
		_ = cn.emit(wire.TypeCharacterSynced, map[string]any{"sourceMessageId": h.MessageID,
			"integrationId": m.IntegrationID, "characterId": m.CharacterID, "targetHash": hash})
	case wire.TypeReplyRequest, wire.TypeCaptureStart:
		cn.request(h, data)
	case wire.TypeRequestCancel, wire.TypeCaptureCancel:
		var m requestWire
		_ = json.Unmarshal(data, &m)
		cn.cancel1(m.RequestID)
	case wire.TypeCaptureStop:
		var m requestWire
		_ = json.Unmarshal(data, &m)
		cn.mu.Lock()
		if j := cn.active[m.RequestID]; j != nil {
			j.stopped.Store(true)
		}
		cn.mu.Unlock()
	}
}

// fail sends request.error; requestID nil sends null.
func (cn *conn) fail(requestID *string, source, code, msg string) {
	_ = cn.emit(wire.TypeRequestError, map[string]any{"requestId": requestID, "sourceMessageId": source,
		"code": code, "message": msg, "retryable": code == "card_resync_required" || code == "capacity_exceeded"})
}

func (cn *conn) request(h wire.Header, data []byte) {
	var m requestWire
	_ = json.Unmarshal(data, &m)
	req := Request{Type: h.Type, RequestID: m.RequestID, EventID: m.EventID, IntegrationID: m.IntegrationID,
		CharacterID: m.CharacterID, Modalities: m.Output.Modalities, Language: m.Output.Language,
		ReturnTranscript: m.ReturnTranscript, Raw: data}
	var speechErr error
	if m.Event != nil {
		req.Text, req.HasAudio = m.Event.Text, m.Event.Audio != nil
		if req.HasAudio {
			req.Speech, speechErr = decodeSpeech(m.Event.Audio)
		}
	}
	if m.Output.Audio != nil {
		req.Voice = m.Output.Audio.Voice
	}
	rules, _ := parseProcessing(m.Output.ResponseProcessing) // validated already
	req.Buffered = rules != nil
	id := &req.RequestID
	f := cn.faults()
	cn.mu.Lock()
	_, dup := cn.active[req.RequestID]
	full := cn.depth >= cn.e.opts.QueueLimit
	cn.mu.Unlock()
	switch {
	case dup:
		cn.fail(id, h.MessageID, "duplicate_request", "request "+req.RequestID+" is already active")
		return
	case f.CapacityFull || full:
		cn.fail(id, h.MessageID, "capacity_exceeded", "the engine queue is full")
		return
	}
	hash, cerr := cn.resolveCard(cardKey{m.IntegrationID, m.CharacterID}, m.Card)
	if cerr != nil {
		cn.fail(id, h.MessageID, cerr.code, cerr.message)
		return
	}
	if f.ErrorCode != "" && !f.ErrorAfterAccept {
		cn.fail(id, h.MessageID, f.ErrorCode, "enginetest: injected "+f.ErrorCode)
		return
	}
	j := &job{req: req, speechErr: speechErr, rules: rules, capture: h.Type == wire.TypeCaptureStart}
	cn.lockQueue()
	cn.mu.Lock()
	cn.active[req.RequestID] = j
	cn.depth++
	depth := cn.depth
	cn.mu.Unlock()
	cn.delay()
	_ = cn.emit(wire.TypeReplyAccepted, map[string]any{"requestId": req.RequestID, "eventId": req.EventID,
		"resolvedCardHash": hash, "queueDepth": depth})
	if f.ErrorCode != "" {
		cn.finish(j)
		cn.unlockQueue()
		cn.fail(id, h.MessageID, f.ErrorCode, "enginetest: injected "+f.ErrorCode)
		return
	}
	cn.sendCapacityLocked()
	cn.unlockQueue()
	select {
	case cn.jobs <- j:
	default:
		cn.finish(j)
		cn.fail(id, h.MessageID, "capacity_exceeded", "enginetest: job queue full")
	}
}

func (cn *conn) cancel1(requestID string) {
	cn.mu.Lock()
	j := cn.active[requestID]
	cn.mu.Unlock()
	switch {
	case j == nil:
		_ = cn.emit(wire.TypeReplyCancelled, map[string]any{"requestId": requestID, "reason": "not_active"})
	case cn.faults().IgnoreCancel && j.started.Load():
		j.late.Store(true)
	default:
		j.cancelled.Store(true)
	}
}

func (cn *conn) finish(j *job) {
	cn.mu.Lock()
	if cn.active[j.req.RequestID] == j {
		delete(cn.active, j.req.RequestID)
		cn.depth--
	}
	cn.mu.Unlock()
}

// delay sleeps the Delay fault, or until the connection ends.
func (cn *conn) delay() bool {
	d := cn.faults().Delay
	if d <= 0 {
		return cn.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-cn.ctx.Done():
		return false
	}
}

// work runs queued jobs in FIFO order, as upstream does.
func (cn *conn) work() {
	defer cn.wg.Done()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case j := <-cn.jobs:
			if cn.faults().Silent {
				continue
			}
			cn.run(j)
			cn.lockQueue()
			cn.finish(j)
			if j.late.Load() {
				_ = cn.emit(wire.TypeReplyCancelled, map[string]any{"requestId": j.req.RequestID, "reason": "not_active"})
			}
			cn.sendCapacityLocked()
			cn.unlockQueue()
		}
	}
}

// step sends one reply message after the Delay fault; false means stop
// (cancelled or disconnected; the cancellation has been answered).
func (cn *conn) step(j *job, typ string, fields map[string]any) bool {
	if !cn.delay() {
		return false
	}
	if j.cancelled.Load() {
		_ = cn.emit(wire.TypeReplyCancelled, map[string]any{"requestId": j.req.RequestID, "reason": "requested_by_game"})
		return false
	}
	fields["requestId"] = j.req.RequestID
	return cn.emit(typ, fields) == nil
}

// run produces one reply. Streamed (no responseProcessing): each
// sentence as word deltas, then its speech. Buffered: no deltas; the
// rules run over the whole text, reply.text.completed carries the result,
// then the speech follows (the engine starts speech synthesis only after
// filtering). Either way reply.audio.completed carries the totals the
// engine computes, on both transports.
func (cn *conn) run(j *job) {
	j.started.Store(true)
	start := time.Now()
	req := j.req
	if j.speechErr != nil {
		// The engine decodes the speech when the request runs, and fails
		// it (docs/rpengine-protocol.md, "Game to engine").
		cn.fail(&req.RequestID, "", "request_failed", j.speechErr.Error())
		return
	}
	script := cn.script(req)
	if j.capture {
		var ok bool
		if req, ok = cn.capture(j, script); !ok {
			return
		}
		script = cn.script(req)
	}
	if script.Error != "" {
		id := req.RequestID
		cn.fail(&id, "", script.Error, script.ErrorMessage)
		return
	}
	sp := &speech{on: slices.Contains(req.Modalities, "audio")}
	words := 0
	var text strings.Builder
	for i, sentence := range script.Sentences {
		if i > 0 {
			sentence = " " + sentence
		}
		for _, w := range splitWords(sentence) {
			if j.rules == nil && !cn.step(j, wire.TypeTextDelta, map[string]any{"sequence": words, "delta": w}) {
				return
			}
			words++
			text.WriteString(w)
		}
		if j.rules == nil && !cn.speak(j, sp, i, sentence) {
			return
		}
	}
	elapsed := float64(time.Since(start).Microseconds()) / 1000
	tc := map[string]any{"text": text.String(), "tokenCount": words, "elapsedMs": elapsed}
	if j.rules != nil {
		processed, _, extracted := j.rules.apply(text.String())
		tc["text"], tc["extractedContent"] = strings.TrimSpace(processed), extracted
	}
	if script.ExtractedContent != nil {
		tc["extractedContent"] = script.ExtractedContent
	}
	if !cn.step(j, wire.TypeTextCompleted, tc) {
		return
	}
	for i, sentence := range script.Sentences {
		if j.rules != nil && !cn.speak(j, sp, i, sentence) {
			return
		}
	}
	if sp.on && !cn.finishSpeech(j, sp, start) {
		return
	}
	cn.step(j, wire.TypeReplyCompleted, map[string]any{"modalities": req.Modalities})
}

// speech is the audio state of one reply: the totals the engine reports
// in reply.audio.completed, counted the same way on both transports.
type speech struct {
	on      bool // the audio modality was requested
	started bool // reply.audio.start was sent
	segs    int  // segments spoken
	chunks  int  // sum over segments of ceil(PCM bytes / 32 KiB)
	bytes   int  // PCM bytes of all segments, WAV headers excluded
	samples int  // samples of all segments
}

// speak speaks sentence number i as one segment: over WebSocket as
// reply.audio.start (once, before the first chunk) and chunks of at most
// 32 KiB; in file mode as one WAV slot and reply.audio.segment, with no
// reply.audio.start (the engine sends that in file mode only when nothing
// was spoken). False means stop.
func (cn *conn) speak(j *job, sp *speech, i int, sentence string) bool {
	if !sp.on {
		return true
	}
	pcm := Synthesize(i, cn.e.opts.SecondsPerSentence)
	chunks := (len(pcm) + MaxChunkBytes - 1) / MaxChunkBytes
	if cn.fm != nil {
		if !cn.fm.segment(j, sp.segs, strings.TrimSpace(sentence), pcm) {
			return false
		}
	} else {
		if !sp.started {
			sp.started = true
			if !cn.step(j, wire.TypeAudioStart, map[string]any{"format": "pcm_s16le", "sampleRate": SampleRate, "channels": 1}) {
				return false
			}
		}
		for c := 0; c < chunks; c++ {
			part := pcm[c*MaxChunkBytes : min(len(pcm), (c+1)*MaxChunkBytes)]
			if !cn.step(j, wire.TypeAudioChunk, map[string]any{"sequence": sp.chunks + c, "segmentSequence": sp.segs,
				"segmentChunkSequence": c, "segmentChunkCount": chunks, "data": base64.StdEncoding.EncodeToString(part)}) {
				return false
			}
		}
	}
	sp.segs++
	sp.chunks += chunks
	sp.bytes += len(pcm)
	sp.samples += len(pcm) / 2
	return true
}

// finishSpeech sends reply.audio.start if nothing was spoken over
// WebSocket or in file mode, then reply.audio.completed with the totals
// and the milliseconds since the reply started (its own elapsedMs, later
// than the text's, as the engine's synthesis follows the text).
func (cn *conn) finishSpeech(j *job, sp *speech, start time.Time) bool {
	if !sp.started && sp.segs == 0 {
		sp.started = true
		if !cn.step(j, wire.TypeAudioStart, map[string]any{"format": "pcm_s16le", "sampleRate": SampleRate, "channels": 1}) {
			return false
		}
	}
	elapsed := float64(time.Since(start).Microseconds()) / 1000
	return cn.step(j, wire.TypeAudioCompleted, map[string]any{"chunkCount": sp.chunks, "totalBytes": sp.bytes,
		"durationSeconds": float64(sp.samples) / SampleRate, "elapsedMs": elapsed, "segmentCount": sp.segs})
}

func (cn *conn) script(r Request) Script {
	if cn.e.opts.Responder != nil {
		return cn.e.opts.Responder(r)
	}
	return DefaultScript(r)
}

// capture plays the voice capture phase and returns the request with the
// transcript as its event text.
func (cn *conn) capture(j *job, s Script) (Request, bool) {
	req := j.req
	levels := s.Levels
	if levels <= 0 {
		levels = 3
	}
	transcript := s.Transcript
	if transcript == "" {
		transcript = "Hello there."
	}
	if !cn.step(j, wire.TypeCaptureState, map[string]any{"state": "listening", "seconds": 0, "autoEndEnabled": true}) {
		return req, false
	}
	for i := 0; i < levels && !j.stopped.Load(); i++ {
		sec := float64(i+1) * 0.1
		if !cn.step(j, wire.TypeCaptureLevel, map[string]any{"seconds": sec, "peak": 0.5, "rms": 0.2}) {
			return req, false
		}
		if i == 0 && !cn.step(j, wire.TypeCaptureState, map[string]any{"state": "speech_started", "seconds": sec, "autoEndEnabled": true}) {
			return req, false
		}
	}
	if !cn.step(j, wire.TypeCaptureState, map[string]any{"state": "speech_ended", "seconds": 1.0, "autoEndEnabled": true}) {
		return req, false
	}
	if req.ReturnTranscript && !cn.step(j, wire.TypeCaptureTranscript, map[string]any{"text": transcript, "language": "en", "elapsedMs": 12.5}) {
		return req, false
	}
	req.Text = transcript
	return req, true
}

// splitWords splits s into deltas that concatenate back to s.
func splitWords(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[1:], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// Audio facts of the engine's speech (docs/rpengine-protocol.md).
const (
	SampleRate    = 44100     // Hz, mono PCM16 little-endian
	MaxChunkBytes = 32 * 1024 // decoded bytes per reply.audio.chunk
)

// Synthesize returns seconds of speech-like PCM16 LE mono at 44.1 kHz for
// sentence number i: a glottal pulse train whose pitch depends on i,
// shaped by two formants and a syllable envelope, so each sentence is
// distinguishable and nothing is silent. Results are cached (there are 12
// distinct voices); the returned slice must not be modified.
func Synthesize(i int, seconds float64) []byte {
	k := synthKey{i % 12, int(seconds * SampleRate)}
	if b, ok := synthCache.Load(k); ok {
		return b.([]byte)
	}
	b, _ := synthCache.LoadOrStore(k, synthesize(k.voice, k.samples))
	return b.([]byte)
}

type synthKey struct{ voice, samples int }

var synthCache sync.Map

func synthesize(i, n int) []byte {
	seconds := float64(n) / SampleRate
	f0 := 110.0 + 15*float64(i%6)
	formants := [2]float64{650 + 50*float64(i%3), 1100 + 150*float64(i%4)}
	const harmonics = 20
	var weight [harmonics]float64
	for h := range weight {
		fh := f0 * float64(h+1)
		for _, fm := range formants {
			d := (fh - fm) / 150
			weight[h] += math.Exp(-d * d)
		}
		weight[h] = (weight[h] + 0.05) / float64(h+1)
	}
	out := make([]byte, 2*n)
	for k := 0; k < n; k++ {
		t := float64(k) / SampleRate
		// sin(h*x) by the Chebyshev recurrence: one sin and cos a sample.
		x := 2 * math.Pi * f0 * t
		s1, c1 := math.Sincos(x)
		prev, cur := 0.0, s1
		var v float64
		for h := 0; h < harmonics; h++ {
			v += weight[h] * cur
			prev, cur = cur, 2*c1*cur-prev
		}
		env := 0.55 + 0.45*math.Sin(2*math.Pi*4*t) // four syllables a second
		fade := math.Min(1, math.Min(t, seconds-t)/0.01)
		s := math.Max(-1, math.Min(1, 0.25*v*env*fade))
		binary.LittleEndian.PutUint16(out[2*k:], uint16(int16(s*32767)))
	}
	return out
}
