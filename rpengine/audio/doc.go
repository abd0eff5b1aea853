// Package audio is the game side of RPEngine's speech: it plays the
// speech of a reply and records the player's.
//
// Playing: a [Speaker] per character takes a reply's segments as the
// reply's events bring them (stream.Segment, from rpengine/stream: 44.1 kHz
// mono 16-bit), plays them gapless, and says what has been heard
// ([Speaker.Position], [Speaker.Heard]) and how open the mouth is
// ([Speaker.Mouth]). Speakers play through the sound card ([OpenDevice])
// or, in a game engine with its own mixer, through a [Mixer] that the
// engine reads like a file (for Ebitengine, audio.Context.NewPlayer).
//
// Recording: a [Recorder] captures the microphone for push to talk and
// returns a [Recording] of 16 kHz mono 16-bit samples, what RPEngine
// hears: Recording.Samples goes into rpengine.ReplyRequest.Speech as it
// is. Around them: PCM conversions, WAV files, a streaming resampler
// and lip sync.
//
// # Protocol
//
// RPEngine hears the player as 16 kHz mono PCM, at most 30 s per event,
// and speaks as 44.1 kHz mono 16-bit PCM, one sentence segment at a time
// (docs/audio.md). The end of a reply's speech is known only from the
// event that follows its last segment, so a Speaker takes segments with
// [Speaker.Enqueue] and the end with [Speaker.End]:
//
//	for ev := range reply.Events() {
//		switch ev.Kind {
//		case rpengine.EventSegment:       // a complete sentence
//			err = speaker.Enqueue(reply.RequestID(), ev.Segment)
//		case /* the reply's audio is complete */:
//			err = speaker.End(reply.RequestID())
//		}
//	}
//
// End lets the speaker play the resampler's tail and report Done, and
// keeps the wait for it from counting as an underrun.
//
// # Formats
//
// The canonical in-memory format is float32 in [-1, 1], interleaved.
// Conversions happen once at the edges: [AppendDecode], [AppendEncode],
// [AppendInt16], [AppendFloat32], [AppendDownmix], [DecodeWAV] and
// [AppendWAV]. They append to a caller's slice and do not allocate when it
// has room.
//
// # Resampling
//
// miniaudio's converter rejects aliases by only 4.5-12 dB at 48 to 16 kHz
// (docs/audio.md), so devices are opened at their native rate and
// [Resampler] converts in Go: a Kaiser-windowed sinc (112 dB design) in
// polyphase form, with one exact row per phase for rates whose reduced
// ratio needs at most 640 phases (all the usual ones) and linear
// interpolation between 512 rows otherwise. It streams without backlog and
// its output does not depend on how the input is chunked. Measured at
// 48 and 44.1 kHz to 16 kHz: alias rejection >= 112 dB from 9 kHz up,
// passband flat to 6 kHz within 0.0001 dB, -1.5 dB at 7.4 kHz (-0.2 dB
// at 48 kHz, an integer ratio, whose filter is a third-band one), THD+N of
// a -6 dBFS 1 kHz tone 128-152 dB, 1.5-1.9 ms delay. The dot products are
// the hot loop: a run of outputs is laid out as one batch (coefficient
// rows in the order the outputs use them) and computed with AVX2 and FMA
// on amd64 (two outputs at a time; at integer ratios four, on the folded
// row), with the pure-Go kernel elsewhere and as the reference (each
// kernel's gain over it is in bench/README.md). At integer ratios the row is symmetric, so both the AVX2 and
// the pure-Go kernels fold it (half the multiplications), and the pure-Go
// one also skips its zero taps. An output has the same bits however the
// input is chunked.
//
// # Playback
//
// A [Mixer] mixes any number of speakers. [Mixer.Read] produces PCM at a
// chosen rate, channel count and encoding; a [Device] is a Mixer played
// by the sound card's callback, so both take the same mixing path. A
// Speaker copies each segment as float32 on the caller's goroutine and
// publishes it into a pre-allocated ring of slots; the mixer consumes the
// ring with atomics only, so it never allocates, locks a producer's lock,
// logs or blocks. A segment at another rate than the mixer's is converted
// as it plays, a few hundred frames a step, with one resampler across the
// reply (the frames are those of converting the reply whole): Enqueue
// costs a copy, and a segment's first frame can play before its last is
// converted. Segments play back to back without
// a gap; a reply whose next segment is late plays silence, counts an
// underrun when the segment comes, and fades it in. [Speaker.Interrupt]
// and [Speaker.Pause] fade out over 5 ms so the cut does not click.
// Positions and the mouth follow what the mixer rendered, held back by
// [MixerOptions.Latency] for an engine's own buffer.
//
// # Capture
//
// [OpenRecorder] opens the microphone at its native rate and channels;
// [Recorder.Start] and [Recorder.Stop] bracket push to talk. The callback
// downmixes, resamples to 16 kHz into a buffer allocated for the 30 s cap,
// and meters peak and RMS per 50 ms ([Recorder.Level], the quantities of
// voice.capture.level). At the cap it stops taking input and signals
// [Recorder.Limit]. A recording whose samples were all zero comes with
// [ErrSilentInput]: on macOS that is what a missing microphone permission
// looks like. A game whose engine captures the microphone itself makes a
// Recorder with [NewRecorder] and feeds it with [Recorder.Push] from its
// capture callback: the same conversion, limit and meter, no device.
//
// # Options and errors
//
// Every option struct follows one rule, stated in each field's doc: zero
// means the default, negative disables where that makes sense
// ([SpeakerOptions.Fade]), and any other value outside the documented
// range is an [*OptionsError]. Malformed PCM or WAV is a [*FormatError]
// with the byte offset. Any failure to open a device wraps [ErrNoDevice]
// so a game can fall back (to a Null device, a Mixer, or writing WAV
// files with [WriteWAV]). Errors on the audio thread surface through the
// Err methods. A sound device lost while in use (its sound server died,
// it was unplugged) is [ErrDeviceLost]: a Device goes on in silence and
// opens the card again by itself; a Recorder opens it again at the next
// Start (docs/audio.md, "Tested against a real sound server").
//
// # Devices
//
// The device sits behind a small unexported interface: malgo in a
// `//go:build cgo` file, a stub returning [ErrNoDevice] without cgo, and a
// fake driven by a synthetic clock in tests. Tests use miniaudio's null
// backend, malgo.Backend(14) (malgo.BackendNull is off by one and selects
// the custom backend). A game without sound (no sound card, CI, muted, no
// cgo) opens a Device with [DeviceOptions.Null]: it is paced in real time
// by a goroutine of its own and plays into nothing, so nothing else needs
// to pull a Mixer.
//
// # Concurrency
//
// [Device], [Mixer], [Speaker] and [Recorder] may be used from any
// goroutine. They start no goroutines of their own; miniaudio's device
// thread, or the caller of Mixer.Read, calls in. [Resampler] and
// [LipSync] are passive values for one goroutine.
package audio
