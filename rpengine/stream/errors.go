package stream

// Local End.Code values of a reply that [Assembler] ended as [EndFailed]
// because a bound of [Options] was exceeded. They never collide with the
// engine's request.error codes, which carry no "stream_" prefix.
const (
	CodeHeldAudioLimit = "stream_held_audio_limit" // Options.MaxHeldAudio exceeded
	CodeHeldTextLimit  = "stream_held_text_limit"  // Options.MaxHeldText exceeded
	CodeTextLimit      = "stream_text_limit"       // Options.MaxText exceeded
)

// BoundsError reports an invalid [Options] bound: a negative one, as a
// bound cannot be disabled.
type BoundsError struct {
	Field  string
	Reason string
}

// Error names the option and what is wrong with it.
func (e *BoundsError) Error() string { return "stream: option " + e.Field + ": " + e.Reason }
