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

// ErrDeviceLost reports that a sound device that was playing or recording
// stopped: its sound server died, or it was unplugged. [Device.Err] wraps
// it while a Device's sound card is lost (the Device opens it again by
// itself); [Recorder.Stop] and [Recorder.Err] wrap it for a microphone
// (the next [Recorder.Start] opens it again).
var ErrDeviceLost = errors.New("audio: sound device lost")

// ErrClosed is returned by methods of a closed [Device], [Mixer],
// [Speaker] or [Recorder].
var ErrClosed = errors.New("audio: closed")

// ErrQueueFull is returned by [Speaker.Enqueue] when the segment does not
// fit in the speaker's bounded queue. Nothing is queued; retry once the
// speaker has drained, or raise [SpeakerOptions.MaxSegments] or
// [SpeakerOptions.MaxQueued].
var ErrQueueFull = errors.New("audio: speaker queue full")

// ErrSilentInput is reported by [Recorder.Stop] when every captured sample
// was exactly zero: on macOS this is how a missing microphone permission
// shows up.
var ErrSilentInput = errors.New("audio: microphone delivered only zeros (missing permission?)")

// OptionsError reports an invalid field of an options struct
// ([DeviceOptions], [MixerOptions], [SpeakerOptions], [RecorderOptions]),
// returned by the constructor that took it. Each field's doc states the
// rule: zero means the default, negative disables where that makes sense,
// anything else outside the documented range is invalid.
type OptionsError struct {
	// Field names the option, for example "SpeakerOptions.Fade".
	Field string
	// Reason says what is wrong with its value, in lowercase.
	Reason string
}

// Error names the option and what is wrong with it.
func (e *OptionsError) Error() string { return "audio: invalid " + e.Field + ": " + e.Reason }

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
// the Err methods of [Device], [Speaker] and [Recorder]. Safe for concurrent use.
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
