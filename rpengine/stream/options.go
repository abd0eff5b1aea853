package stream

import (
	"strconv"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Options bound what an [Assembler] holds. A nil *Options means defaults.
// The bounds protect the game from a misbehaving or hostile engine: past a
// bound the reply ends as [EndFailed] with a Code* code instead of growing.
// Zero means the default; a bound cannot be disabled, so a negative one is
// a *BoundsError.
type Options struct {
	// RequestID is the reply's requestId. Events carrying another non-empty
	// requestId are reported as [AnomalyWrongRequest] and dropped. If empty,
	// the first non-empty requestId pushed is adopted.
	RequestID string

	// MaxHeldAudio bounds the audio that arrived but cannot be emitted yet:
	// chunks of segments that are not complete, and complete segments
	// waiting for an earlier one. It is measured at the rate declared by
	// reply.audio.start (44.1 kHz before it arrives), and every held chunk
	// also counts 64 samples of bookkeeping, so that empty chunks are bounded
	// too. Emitted segments belong to the caller and do not count. If zero,
	// 30 s is used. Exceeding it ends the reply with [CodeHeldAudioLimit].
	MaxHeldAudio time.Duration

	// MaxHeldText bounds the text deltas held behind a gap in their
	// sequence, in bytes; every held delta also counts 64 bytes. If zero,
	// 1 MiB is used. Exceeding it ends the reply with [CodeHeldTextLimit].
	MaxHeldText int

	// MaxText bounds the display text assembled from deltas, in bytes;
	// every delta also counts 8 bytes of bookkeeping. If zero, 4 MiB is
	// used. Exceeding it ends the reply with [CodeTextLimit]. The
	// text of reply.text.completed is the final word and replaces the
	// assembled text as it is, unchecked: it is one message, which the
	// connection's read limit bounds, not an accumulation.
	MaxText int
}

const (
	defaultMaxHeldAudio = 30 * time.Second
	defaultMaxHeldText  = 1 << 20
	defaultMaxText      = 4 << 20

	chunkOverheadSamples = 64 // bookkeeping charge per held chunk
	deltaOverheadBytes   = 64 // bookkeeping charge per held delta
	deltaBookkeeping     = 8  // bookkeeping charge per assembled delta
	chunkMetaSamples     = 8  // a chunkMeta (16 bytes) in samples, for segment reservations

	expectedSampleRate = 44100
	maxSampleRate      = 384000
	maxChunkBytes      = wire.MaxChunkBytes // 32,768 bytes decoded (docs/rpengine-protocol.md)

	maxPendingAnomalies = 1024 // anomalies queued and not yet popped
	maxListed           = 32   // sequence numbers listed in one Anomaly
)

func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	switch {
	case r.MaxHeldAudio < 0:
		return r, &BoundsError{"MaxHeldAudio", r.MaxHeldAudio.String() + " is negative"}
	case r.MaxHeldText < 0:
		return r, &BoundsError{"MaxHeldText", strconv.Itoa(r.MaxHeldText) + " is negative"}
	case r.MaxText < 0:
		return r, &BoundsError{"MaxText", strconv.Itoa(r.MaxText) + " is negative"}
	}
	if r.MaxHeldAudio == 0 {
		r.MaxHeldAudio = defaultMaxHeldAudio
	}
	if r.MaxHeldText == 0 {
		r.MaxHeldText = defaultMaxHeldText
	}
	if r.MaxText == 0 {
		r.MaxText = defaultMaxText
	}
	return r, nil
}
