package audio

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrNoDevice reports that no sound device can be opened: the program was
// built without cgo, the machine has no sound card, or the backend refused.
// Callers branch on it to fall back (for example to writing WAV files).
var ErrNoDevice = errors.New("audio: no sound device available")

// ErrClosed is returned by methods of a closed [Output], [Player] or
// [Recorder].
var ErrClosed = errors.New("audio: closed")

// ErrQueueFull is returned by [Player.Enqueue] when the segment does not fit
// in the player's bounded queue. Nothing is queued; retry once the player
// has drained, or raise [PlayerOptions.MaxSegments] or
// [PlayerOptions.MaxQueued].
var ErrQueueFull = errors.New("audio: player queue full")

// ErrSilentInput is reported by [Recorder.Stop] when every captured sample
// was exactly zero: on macOS this is how a missing microphone permission
// shows up.
var ErrSilentInput = errors.New("audio: microphone delivered only zeros (missing permission?)")

// FormatError describes malformed or unsupported PCM or WAV input: what was
// wrong and the byte offset where it was found.
type FormatError struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int64
	// Reason says what was wrong, in lowercase.
	Reason string
	// Unsupported is true when the input is well formed but uses a feature
	// this package does not decode (for example 8-bit or A-law WAV).
	Unsupported bool
}

// Error implements error.
func (e *FormatError) Error() string {
	kind := "malformed"
	if e.Unsupported {
		kind = "unsupported"
	}
	return fmt.Sprintf("audio: %s input at byte %d: %s", kind, e.Offset, e.Reason)
}

func formatErrorf(off int64, unsupported bool, format string, args ...any) error {
	return &FormatError{Offset: off, Reason: fmt.Sprintf(format, args...), Unsupported: unsupported}
}

// stickyError keeps the first error reported from the audio thread, for
// the Err methods of [Output] and [Recorder]. Safe for concurrent use.
type stickyError struct{ p atomic.Pointer[error] }

// set records err unless an error was recorded before.
func (s *stickyError) set(err error) { s.p.CompareAndSwap(nil, &err) }

// get returns the recorded error, or nil.
func (s *stickyError) get() error {
	if p := s.p.Load(); p != nil {
		return *p
	}
	return nil
}
