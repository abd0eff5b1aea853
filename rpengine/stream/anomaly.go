package stream

import "strconv"

// AnomalyKind names a stream inconsistency. The assembler reports it as an
// [OutputAnomaly] and keeps going with what is consistent; an anomaly never
// ends a reply. The doc of each kind says what [Anomaly.Sequences] holds.
type AnomalyKind int

// Anomaly kinds.
const (
	// AnomalyWrongRequest: the event's requestId is not the reply's. The
	// event is dropped. Sequences is empty.
	AnomalyWrongRequest AnomalyKind = iota + 1
	// AnomalyUnexpectedEvent: a nil event, or an event that is not part of
	// a reply (voice capture). It is dropped. Sequences is empty.
	AnomalyUnexpectedEvent
	// AnomalyInvalidDelta: a reply.text.delta with a negative sequence. It
	// is dropped. Sequences holds that sequence.
	AnomalyInvalidDelta
	// AnomalyConflictingDelta: a reply.text.delta repeats a sequence with a
	// different delta. The first one is kept. Sequences holds the sequence.
	AnomalyConflictingDelta
	// AnomalyLateDelta: a reply.text.delta after reply.text.completed. It
	// is dropped (the completed text is final). Sequences holds its sequence.
	AnomalyLateDelta
	// AnomalyTextMismatch: reply.text.completed differs from the deltas
	// assembled so far (in sequence order, gaps skipped). The completed text
	// wins. Sequences holds the delta sequences missing below the highest
	// received one, if any. Two cases are the protocol, not a mismatch: no
	// delta at all before it (buffered responseProcessing sends none), and
	// a difference only in surrounding whitespace (the engine trims the
	// completed text, not the deltas).
	AnomalyTextMismatch
	// AnomalyTextGap: the reply ended without reply.text.completed while
	// deltas were held behind a gap. The gap is skipped and the held deltas
	// are appended in order. Sequences holds the missing delta sequences.
	AnomalyTextGap
	// AnomalyConflictingMessage: a second reply.accepted,
	// reply.text.completed, reply.audio.start or reply.audio.completed that
	// differs from the first. The first is kept. Sequences is empty.
	AnomalyConflictingMessage
	// AnomalyUnexpectedRate: reply.audio.start declares a sample rate other
	// than 44100 Hz. Audio continues at the declared rate. Sequences is
	// empty.
	AnomalyUnexpectedRate
	// AnomalyUnsupportedAudio: reply.audio.start declares a format other
	// than pcm_s16le, channels other than 1, or a sample rate outside
	// 1..384000 Hz. The reply's audio is dropped; text continues. Sequences
	// is empty.
	AnomalyUnsupportedAudio
	// AnomalyInvalidChunk: a reply.audio.chunk with a negative number, a
	// segmentChunkCount below 1, a segmentChunkSequence not below
	// segmentChunkCount, or data that is not base64. It is dropped.
	// Sequences holds its sequence; Segment its segmentSequence.
	AnomalyInvalidChunk
	// AnomalyChunkTooLarge: chunk data decodes to more than 32 KiB. It is
	// dropped. Sequences holds its sequence; Segment its segmentSequence.
	AnomalyChunkTooLarge
	// AnomalyOddChunk: chunk data decodes to an odd number of bytes, which
	// is not whole PCM16 samples. It is dropped. Sequences holds its
	// sequence; Segment its segmentSequence.
	AnomalyOddChunk
	// AnomalyChunkCountMismatch: a chunk's segmentChunkCount disagrees with
	// earlier chunks of its segment. It is dropped. Sequences holds its
	// sequence; Segment its segmentSequence.
	AnomalyChunkCountMismatch
	// AnomalyConflictingChunk: a chunk repeats a segment position with
	// different data or a different global sequence. The first is kept.
	// Sequences holds the first chunk's sequence and, when different, the
	// new one's; Segment the segmentSequence.
	AnomalyConflictingChunk
	// AnomalyStaleChunk: a chunk for a segment already emitted or skipped,
	// or after reply.audio.completed. Its data is gone, so a duplicate and
	// a conflict cannot be told apart; it is dropped. Sequences holds its
	// sequence; Segment its segmentSequence.
	AnomalyStaleChunk
	// AnomalyMissingChunks: at the end of the audio a segment still lacks
	// chunks. It is skipped and later segments are emitted. Sequences holds
	// the missing segmentChunkSequence values (at most 32); Segment the
	// segmentSequence.
	AnomalyMissingChunks
	// AnomalyMissingSegments: at the end of the audio, segments below
	// reply.audio.completed's segmentCount or below the highest received
	// segment never arrived. They are skipped. Sequences holds their
	// segmentSequence values (at most 32).
	AnomalyMissingSegments
	// AnomalyTotalsMismatch: a total of reply.audio.completed (chunkCount,
	// totalBytes, segmentCount, durationSeconds within 1 ms) differs from
	// the accepted chunks. Detail names the total. Sequences is empty.
	AnomalyTotalsMismatch
	// AnomalyMissingAudioStart: the audio ended with chunks but no
	// reply.audio.start, so their rate is unknown. They are dropped.
	// Sequences holds the segments dropped (at most 32).
	AnomalyMissingAudioStart
	// AnomalyMissingAudioCompleted: reply.completed arrived after audio but
	// without reply.audio.completed. The audio is ended as at
	// reply.audio.completed. Sequences is empty.
	AnomalyMissingAudioCompleted
)

var anomalyNames = [...]string{
	AnomalyWrongRequest:          "wrong_request",
	AnomalyUnexpectedEvent:       "unexpected_event",
	AnomalyInvalidDelta:          "invalid_delta",
	AnomalyConflictingDelta:      "conflicting_delta",
	AnomalyLateDelta:             "late_delta",
	AnomalyTextMismatch:          "text_mismatch",
	AnomalyTextGap:               "text_gap",
	AnomalyConflictingMessage:    "conflicting_message",
	AnomalyUnexpectedRate:        "unexpected_rate",
	AnomalyUnsupportedAudio:      "unsupported_audio",
	AnomalyInvalidChunk:          "invalid_chunk",
	AnomalyChunkTooLarge:         "chunk_too_large",
	AnomalyOddChunk:              "odd_chunk",
	AnomalyChunkCountMismatch:    "chunk_count_mismatch",
	AnomalyConflictingChunk:      "conflicting_chunk",
	AnomalyStaleChunk:            "stale_chunk",
	AnomalyMissingChunks:         "missing_chunks",
	AnomalyMissingSegments:       "missing_segments",
	AnomalyTotalsMismatch:        "totals_mismatch",
	AnomalyMissingAudioStart:     "missing_audio_start",
	AnomalyMissingAudioCompleted: "missing_audio_completed",
}

// String returns the kind's snake_case name, or "AnomalyKind(N)".
func (k AnomalyKind) String() string {
	if k > 0 && int(k) < len(anomalyNames) {
		return anomalyNames[k]
	}
	return "AnomalyKind(" + strconv.Itoa(int(k)) + ")"
}

// Anomaly is a stream inconsistency: its kind, the sequence numbers involved
// (see each [AnomalyKind]), the segmentSequence for kinds about one audio
// segment, and a human-readable detail.
type Anomaly struct {
	Kind      AnomalyKind
	Sequences []int
	Segment   int    // segmentSequence, for kinds documented to set it; else 0
	Detail    string // human-readable; not stable API
}

// String formats the anomaly for logs.
func (an Anomaly) String() string {
	s := an.Kind.String()
	if an.Detail != "" {
		s += ": " + an.Detail
	}
	return s
}
