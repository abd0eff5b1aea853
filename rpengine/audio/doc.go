// Package audio is the game side of RPEngine's speech: it plays the
// speech of a reply and records the player's.
//
// Playing: a [Speaker] per character takes a reply's segments as the
// reply's events bring them (stream.Segment: 44.1 kHz mono 16-bit), plays
// them gapless, and says what has been heard ([Speaker.Position]) and how
// open the mouth is ([Speaker.Mouth]). Speakers play through the sound
// card ([OpenDevice]), through nothing in real time on a machine without
// one ([DeviceOptions.Null]), or through a [Mixer] that a game engine with
// its own mixer reads like a file (for Ebitengine, audio.Context.NewPlayer).
//
//	dev, err := audio.OpenDevice(nil) // the sound card, at its native rate
//	if errors.Is(err, audio.ErrNoDevice) {
//		dev, err = audio.OpenDevice(&audio.DeviceOptions{Null: true}) // no card, CI, no cgo
//	}
//	speaker, err := dev.NewSpeaker(nil) // one per character
//	for ev := range reply.Events() {
//		switch ev.Kind {
//		case rpengine.EventSegment:  // a complete sentence
//			err = speaker.Enqueue(reply.RequestID(), ev.Segment)
//		case rpengine.EventAudioEnd: // nothing in a segment says it is the last
//			err = speaker.End(reply.RequestID())
//		}
//	}
//	// each frame: subtitles from speaker.Position(), the mouth from speaker.Mouth()
//
// Recording: a [Recorder] captures the microphone for push to talk
// ([Recorder.Start], [Recorder.Stop]) and returns a [Recording] of 16 kHz
// mono 16-bit samples, what RPEngine hears: Recording.Samples goes into
// rpengine.ReplyRequest.Speech as it is. A game whose engine captures the
// microphone itself feeds a [NewRecorder] with [Recorder.Push]. Around
// them: PCM conversions, WAV files, a streaming [Resampler] and [LipSync].
// How it all works, measured: docs/audio.md.
//
// # Protocol
//
// RPEngine hears the player as 16 kHz mono PCM, at most 30 s per event,
// and speaks as 44.1 kHz mono 16-bit PCM, one sentence segment at a time
// (docs/audio.md). Devices open at their native rate and the package
// resamples in Go, since miniaudio's converter aliases.
//
// # Concurrency
//
// [Device], [Mixer], [Speaker] and [Recorder] may be used from any
// goroutine. A Device runs goroutines of its own (to reopen a lost card,
// to pace a Null device) that Close ends; miniaudio's device thread, or
// the caller of Mixer.Read, calls in and never waits on a caller.
// [Resampler] and [LipSync] are passive values for one goroutine.
//
// # Security
//
// What is read is bounded: [ReadWAV] by the duration its caller can use,
// a recording by [RecorderOptions].MaxDuration (30 s), a speaker's queue by
// [SpeakerOptions]. Malformed PCM or WAV is a [*FormatError] with the byte
// offset, an option out of range an [*OptionsError]; a device that cannot
// open wraps [ErrNoDevice], one lost in use is [ErrDeviceLost] (a Device
// goes on in silence and reopens the card by itself), and an all-zero
// recording comes with [ErrSilentInput] (a missing microphone permission
// on macOS).
package audio
