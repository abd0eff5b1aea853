package wire

// Event is one decoded engine message that belongs to a reply or to a voice
// capture. It is sealed: only the payload types of this package implement
// it, always through pointer receivers (&TextDelta{...}, not TextDelta{...}).
//
// The payload types carry the JSON names of the wire
// (docs/rpengine-protocol.md, "Engine to game"), so the flat envelope of a
// message unmarshals directly into them; the envelope fields (protocol,
// type, messageId, ...) are ignored.
type Event interface{ isEvent() }

// NewEvent returns a new, empty payload for a reply or capture message of
// type typ, or nil for another type.
func NewEvent(typ string) Event {
	switch typ {
	case TypeReplyAccepted:
		return &Accepted{}
	case TypeTextDelta:
		return &TextDelta{}
	case TypeTextCompleted:
		return &TextCompleted{}
	case TypeAudioStart:
		return &AudioStart{}
	case TypeAudioChunk:
		return &AudioChunk{}
	case TypeAudioCompleted:
		return &AudioCompleted{}
	case TypeReplyCompleted:
		return &Completed{}
	case TypeReplyCancelled:
		return &Cancelled{}
	case TypeRequestError:
		return &Failed{}
	case TypeCaptureLevel:
		return &CaptureLevel{}
	case TypeCaptureState:
		return &CaptureState{}
	case TypeCaptureTranscript:
		return &CaptureTranscript{}
	}
	return nil
}

// Accepted is reply.accepted: the engine queued the request.
type Accepted struct {
	RequestID        string `json:"requestId"`
	EventID          string `json:"eventId"`
	ResolvedCardHash string `json:"resolvedCardHash"`
	QueueDepth       int    `json:"queueDepth"`
}

// TextDelta is reply.text.delta: a piece of clean display text. Sequence is
// 0-based and orders the deltas of one reply.
type TextDelta struct {
	RequestID string `json:"requestId"`
	Sequence  int    `json:"sequence"`
	Delta     string `json:"delta"`
}

// TextCompleted is reply.text.completed: the complete clean text of the
// reply, which is the final word over the deltas. ElapsedMs is in
// milliseconds. ExtractedContent maps a rule id to its captures.
type TextCompleted struct {
	RequestID        string              `json:"requestId"`
	Text             string              `json:"text"`
	TokenCount       int                 `json:"tokenCount"`
	ElapsedMs        float64             `json:"elapsedMs"`
	ExtractedContent map[string][]string `json:"extractedContent"`
}

// AudioStart is reply.audio.start: the format of the reply's audio, sent
// once before the first chunk. The engine sends Format "pcm_s16le",
// SampleRate 44100 (Hz) and Channels 1.
type AudioStart struct {
	RequestID  string `json:"requestId"`
	Format     string `json:"format"`
	SampleRate int    `json:"sampleRate"`
	Channels   int    `json:"channels"`
}

// AudioChunk is reply.audio.chunk: part of one sentence's audio. Sequence is
// global over the reply, SegmentSequence numbers the sentence (0-based),
// SegmentChunkSequence numbers the chunk within the sentence (0-based) and
// SegmentChunkCount is how many chunks the sentence has. Data is base64
// PCM16 little-endian, at most 32 KiB once decoded.
type AudioChunk struct {
	RequestID            string `json:"requestId"`
	Sequence             int    `json:"sequence"`
	SegmentSequence      int    `json:"segmentSequence"`
	SegmentChunkSequence int    `json:"segmentChunkSequence"`
	SegmentChunkCount    int    `json:"segmentChunkCount"`
	Data                 string `json:"data"`
}

// AudioCompleted is reply.audio.completed: the totals of the reply's audio.
// TotalBytes counts decoded PCM bytes; DurationSeconds is in seconds and
// ElapsedMs in milliseconds.
type AudioCompleted struct {
	RequestID       string  `json:"requestId"`
	ChunkCount      int     `json:"chunkCount"`
	TotalBytes      int     `json:"totalBytes"`
	SegmentCount    int     `json:"segmentCount"`
	DurationSeconds float64 `json:"durationSeconds"`
	ElapsedMs       float64 `json:"elapsedMs"`
}

// Completed is reply.completed: terminal success once every requested
// modality ("text", "audio") finished.
type Completed struct {
	RequestID  string   `json:"requestId"`
	Modalities []string `json:"modalities"`
}

// Cancelled is reply.cancelled: terminal. Reason is one of
// requested_by_game, connection_lost, service_stopped, not_active (others
// are tolerated).
type Cancelled struct {
	RequestID string `json:"requestId"`
	Reason    string `json:"reason"`
}

// Failed is request.error. RequestID is nil when the wire carried null or no
// requestId (invalid_payload). Retryable is true only for
// card_resync_required and capacity_exceeded.
type Failed struct {
	RequestID       *string `json:"requestId"`
	SourceMessageID string  `json:"sourceMessageId"`
	Code            string  `json:"code"`
	Message         string  `json:"message"`
	Retryable       bool    `json:"retryable"`
}

// CaptureLevel is voice.capture.level. Seconds is the capture time so far;
// Peak and RMS are linear levels.
type CaptureLevel struct {
	RequestID string  `json:"requestId"`
	Seconds   float64 `json:"seconds"`
	Peak      float64 `json:"peak"`
	RMS       float64 `json:"rms"`
}

// CaptureState is voice.capture.state. State is listening, speech_started
// or speech_ended (others are tolerated).
type CaptureState struct {
	RequestID      string  `json:"requestId"`
	State          string  `json:"state"`
	Seconds        float64 `json:"seconds"`
	AutoEndEnabled bool    `json:"autoEndEnabled"`
	Message        string  `json:"message"`
}

// CaptureTranscript is voice.capture.transcript, sent only when the capture
// asked for returnTranscript. ElapsedMs is in milliseconds.
type CaptureTranscript struct {
	RequestID string  `json:"requestId"`
	Text      string  `json:"text"`
	Language  string  `json:"language"`
	ElapsedMs float64 `json:"elapsedMs"`
}

func (*Accepted) isEvent()          {}
func (*TextDelta) isEvent()         {}
func (*TextCompleted) isEvent()     {}
func (*AudioStart) isEvent()        {}
func (*AudioChunk) isEvent()        {}
func (*AudioCompleted) isEvent()    {}
func (*Completed) isEvent()         {}
func (*Cancelled) isEvent()         {}
func (*Failed) isEvent()            {}
func (*CaptureLevel) isEvent()      {}
func (*CaptureState) isEvent()      {}
func (*CaptureTranscript) isEvent() {}
