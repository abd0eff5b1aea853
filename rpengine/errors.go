package rpengine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
)

// Sentinel errors a game branches on with [errors.Is].
var (
	// ErrServerClosed is returned by Serve after Shutdown or Close, and by
	// Start and requests made after it.
	ErrServerClosed = errors.New("rpengine: server closed")
	// ErrConnectionLost ends every pending request when the engine's
	// connection closes or is superseded by a newer one, and matches a
	// reply.cancelled with reason connection_lost.
	ErrConnectionLost = errors.New("rpengine: connection to the engine lost")
	// ErrNotConnected is returned with ServerOptions.FailFast when no
	// engine is connected.
	ErrNotConnected = errors.New("rpengine: no engine connected")
	// ErrBusy is returned with ServerOptions.FailFast when the engine says
	// it is not accepting requests (capacity.update).
	ErrBusy = errors.New("rpengine: engine is not accepting requests")
	// ErrNoAnswer ends a request whose message got neither an ack nor any
	// answer within ServerOptions.AckTimeout, or whose reply went silent
	// for ServerOptions.IdleTimeout.
	ErrNoAnswer = errors.New("rpengine: engine did not answer in time")
	// ErrSlowConsumer ends a reply whose events the game did not consume
	// while more than ServerOptions.MaxPendingAudio of audio (or its
	// bytes), or 1024 other events, piled up (see Reply); the request is
	// cancelled on the engine.
	ErrSlowConsumer = errors.New("rpengine: reply events not consumed in time")
	// ErrCancelled ends a reply the engine cancelled (reply.cancelled):
	// after Reply.Cancel, or the engine's own reason (connection_lost
	// also matches ErrConnectionLost, service_stopped and not_active
	// only this), which the error's text names.
	ErrCancelled = errors.New("rpengine: reply cancelled")
	// ErrResyncLoop ends a request whose card the engine kept refusing
	// after the planner's resynchronisation; it never loops.
	ErrResyncLoop = errors.New("rpengine: card resynchronisation did not converge")
)

// Sentinels for the request.error codes the engine sends
// (docs/rpengine-protocol.md, "Engine to game"). A *RequestError matches
// the sentinel of its code with errors.Is; an unknown code matches none.
var (
	ErrInvalidPayload        = errors.New("rpengine: invalid_payload")
	ErrCardResyncRequired    = errors.New("rpengine: card_resync_required")
	ErrInvalidCharacterCard  = errors.New("rpengine: invalid_character_card")
	ErrServiceNotStarted     = errors.New("rpengine: service_not_started")
	ErrCapacityExceeded      = errors.New("rpengine: capacity_exceeded")
	ErrDuplicateRequest      = errors.New("rpengine: duplicate_request")
	ErrMicrophoneNotEnabled  = errors.New("rpengine: microphone_not_enabled")
	ErrVoiceCaptureActive    = errors.New("rpengine: voice_capture_active")
	ErrUnsupportedLanguage   = errors.New("rpengine: unsupported_language")
	ErrUnsupportedVoice      = errors.New("rpengine: unsupported_voice")
	ErrInvalidRequest        = errors.New("rpengine: invalid_request")
	ErrPromptTooLarge        = errors.New("rpengine: prompt_too_large")
	ErrSTTModelNotInstalled  = errors.New("rpengine: stt_model_not_installed")
	ErrUnsupportedSampleRate = errors.New("rpengine: unsupported_sample_rate")
	ErrEmptySpeech           = errors.New("rpengine: empty_speech")
	ErrRequestFailed         = errors.New("rpengine: request_failed")
	ErrAudioTransportFailed  = errors.New("rpengine: audio_transport_failed")
)

// codeSentinels maps each code to its sentinel, whose text names it.
var codeSentinels = func() map[string]error {
	m := map[string]error{}
	for _, err := range []error{ErrInvalidPayload, ErrCardResyncRequired, ErrInvalidCharacterCard, ErrServiceNotStarted,
		ErrCapacityExceeded, ErrDuplicateRequest, ErrMicrophoneNotEnabled, ErrVoiceCaptureActive, ErrUnsupportedLanguage,
		ErrUnsupportedVoice, ErrInvalidRequest, ErrPromptTooLarge, ErrSTTModelNotInstalled, ErrUnsupportedSampleRate,
		ErrEmptySpeech, ErrRequestFailed, ErrAudioTransportFailed} {
		m[strings.TrimPrefix(err.Error(), "rpengine: ")] = err
	}
	return m
}()

// RequestError is a request.error from the engine. Unknown codes are kept
// as they are.
type RequestError struct {
	Code            string // e.g. "unsupported_voice"
	Message         string // the engine's message
	Retryable       bool
	RequestID       string // "" when the engine sent null or none
	SourceMessageID string // the game message the error answers, when known
}

// Error describes the refusal with the engine's code and message, bounded
// and with control characters escaped (the fields keep them as sent).
func (e *RequestError) Error() string {
	return fmt.Sprintf("rpengine: engine refused request %q: %s: %s", e.RequestID,
		peertext.Clip(e.Code, peertext.LogBytes), peertext.Clip(e.Message, peertext.LineBytes))
}

// Is reports whether target is the sentinel of e's code.
func (e *RequestError) Is(target error) bool {
	s, ok := codeSentinels[e.Code]
	return ok && s == target
}

// cancelledError ends a reply the engine cancelled (reply.cancelled),
// with the engine's reason: requested_by_game, connection_lost,
// service_stopped or not_active.
type cancelledError struct{ reason string }

// Error names the reason, bounded and with control characters escaped.
func (e *cancelledError) Error() string {
	return "rpengine: reply cancelled: " + peertext.Clip(e.reason, peertext.LogBytes)
}

// Is matches ErrCancelled, and ErrConnectionLost for reason connection_lost.
func (e *cancelledError) Is(target error) bool {
	return target == ErrCancelled || (target == ErrConnectionLost && e.reason == "connection_lost")
}

// FieldError says which field of a request the engine would refuse,
// before anything is sent. Field is the Go field's name, with its path
// inside the request ("Voice", "Rules[1].Pattern", "Prompt.Kind").
type FieldError struct {
	Field  string
	Reason string
}

// Error names the field and what is wrong with it.
func (e *FieldError) Error() string { return "rpengine: invalid " + e.Field + ": " + e.Reason }

// ConfigError reports an invalid ServerOptions field at construction.
type ConfigError struct {
	Field  string
	Reason string
}

// Error names the option and what is wrong with it.
func (e *ConfigError) Error() string { return "rpengine: option " + e.Field + ": " + e.Reason }

// failure is the error of a request that failed as f says, or nil.
func failure(f *session.Failure) error {
	if f == nil {
		return nil
	}
	switch f.Kind {
	case session.FailEnded:
		return f.Err
	case session.FailNoAnswer:
		return fmt.Errorf("%w: %s", ErrNoAnswer, f.Detail)
	case session.FailCancelled:
		return &cancelledError{reason: f.Reason}
	case session.FailBadAnswer:
		return fmt.Errorf("rpengine: %s: %w", f.Detail, f.Err)
	}
	return &RequestError{Code: f.Code, Message: f.Message, Retryable: f.Retryable, RequestID: f.RequestID, SourceMessageID: f.SourceMessageID}
}
