package inspect

import "time"

// The JSON shapes below are what the page receives (page/app.js reads
// them); times are Unix milliseconds.

// sessionView is the connection panel.
type sessionView struct {
	Transport     string `json:"transport"` // "websocket", "mailbox" or "" before the first hello
	State         string `json:"state"`     // "waiting for the engine", "handshake", "connected", "ended"
	ID            string `json:"id,omitempty"`
	ClientVersion string `json:"clientVersion,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	Started       int64  `json:"started,omitempty"`
	MailboxDir    string `json:"mailboxDir,omitempty"`
	QueueDepth    int    `json:"queueDepth"`
	QueueLimit    int    `json:"queueLimit"`
	Accepting     bool   `json:"accepting"`
	Speakers      int    `json:"speakers"`
}

// capSample is one point of the capacity chart.
type capSample struct {
	T         int64 `json:"t"`
	Depth     int   `json:"depth"`
	Limit     int   `json:"limit"`
	Accepting bool  `json:"accepting"`
}

// character is one character synced in the session.
type character struct {
	Key      string `json:"key"` // integrationId/characterId
	Name     string `json:"name"`
	Hash     string `json:"hash"`     // the targetHash last sent (or confirmed by character.synced)
	Mode     string `json:"mode"`     // snapshot, patch or reference
	Bytes    int    `json:"bytes"`    // size of the last card descriptor
	Synced   bool   `json:"synced"`   // character.synced confirmed Hash
	Requests int    `json:"requests"` // transfers seen
	T        int64  `json:"t"`
}

// note is a log record or a recorder note the page shows.
type note struct {
	T     int64  `json:"t"`
	Level string `json:"level"` // DEBUG, INFO, WARN, ERROR
	Text  string `json:"text"`
}

// point is one moment on a reply's timeline.
type point struct {
	Name   string `json:"name"` // submitted, waiting, sent, resent, accepted, first text, first audio, text completed, audio completed, completed, cancelled, error, ...
	T      int64  `json:"t"`
	Detail string `json:"detail,omitempty"`
}

// cardView is the card transfer a request used.
type cardView struct {
	Mode       string `json:"mode"`
	Bytes      int    `json:"bytes"`
	HashPrefix string `json:"hashPrefix,omitempty"` // first 12 hex digits of targetHash
	BasePrefix string `json:"basePrefix,omitempty"` // of baseHash, for a patch
	Ops        int    `json:"ops,omitempty"`        // patch operations
}

// segmentView describes one audio segment.
type segmentView struct {
	Index      int     `json:"index"`
	SampleRate int     `json:"sampleRate"`
	Samples    int     `json:"samples"`
	Seconds    float64 `json:"seconds"`
	Complete   bool    `json:"complete"`
	Chunks     int     `json:"chunks"`
	Of         int     `json:"of"`                   // chunks expected (0 in file mode)
	SpokenText string  `json:"spokenText,omitempty"` // file mode
	Dropped    string  `json:"dropped,omitempty"`    // why its audio was not kept
}

// replyView is a reply row. Text is sent whole only in snapshots; text
// events carry what streams.
type replyView struct {
	ID         string            `json:"id"`
	Kind       string            `json:"kind"` // reply or capture
	Character  string            `json:"character"`
	Points     []point           `json:"points"`
	Card       *cardView         `json:"card,omitempty"`
	Prompt     map[string]string `json:"prompt,omitempty"`
	Segments   []segmentView     `json:"segments"`
	Notes      []note            `json:"notes"`
	Ended      bool              `json:"ended"`
	Error      string            `json:"error,omitempty"`
	TextMs     *float64          `json:"textElapsedMs,omitempty"`  // the engine's elapsedMs of the text
	AudioMs    *float64          `json:"audioElapsedMs,omitempty"` // and of the audio
	Text       string            `json:"text,omitempty"`
	TextFull   bool              `json:"textFull"` // Text is reply.text.completed's
	AudioShort string            `json:"audioShort,omitempty"`
}

// segment is one segment's audio as it arrives.
type segment struct {
	view   segmentView
	chunks [][]byte // WebSocket: by segmentChunkSequence, until complete
	pcm    []byte   // little-endian PCM16 once complete; immutable then
}

// reply is what the inspector keeps of one request.
type reply struct {
	view     replyView
	text     []byte
	segs     map[int]*segment
	rate     int  // from reply.audio.start
	bytes    int  // counted against MaxReplyBytes
	sent     bool // reply.request seen
	gotText  bool // a text delta seen
	gotAudio bool // audio seen
}

func ms(t time.Time) int64 { return t.UnixMilli() }
