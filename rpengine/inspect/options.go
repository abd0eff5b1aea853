package inspect

import "time"

// Default values of Options.
const (
	DefaultMaxReplies    = 50
	DefaultMaxReplyBytes = 64 << 20
	DefaultMaxLogBytes   = 16 << 20
	DefaultMaxWatchers   = 4
)

// Options configures an Inspector. The zero value (or nil) is the defaults.
type Options struct {
	// MaxReplies is how many replies (and captures) are kept, newest
	// last; the oldest is forgotten when a new one starts. If zero or
	// negative, 50 is used.
	MaxReplies int
	// MaxReplyBytes bounds what the kept replies hold, in bytes: their
	// text, notes and audio (2 bytes a sample; 64 MiB is about 12 minutes
	// of 44.1 kHz speech). Past it the oldest replies are forgotten; a
	// reply that alone exceeds it keeps no more audio, and its page row
	// says so. If zero or negative, 64 MiB is used.
	MaxReplyBytes int
	// MaxLogBytes bounds the protocol log, in bytes of the messages as the
	// page shows them (audio elided); past it the oldest messages are
	// forgotten. If zero or negative, 16 MiB is used.
	MaxLogBytes int
	// MaxWatchers is how many pages may watch at once; another gets HTTP
	// 503. If zero or negative, 4 is used.
	MaxWatchers int
}

// Fixed bounds, not worth an option.
const (
	maxNotes        = 256     // session notes kept (replies keep theirs)
	maxReplyNotes   = 64      // notes kept per reply
	maxNoteBytes    = 1 << 10 // one note's text
	maxCharacters   = 256     // characters remembered
	maxCapSamples   = 1024    // capacity samples kept (the chart spans capWindow)
	capWindow       = 5 * time.Minute
	maxChunks       = 4096    // chunks of one segment (32 KiB each: 128 MiB)
	maxSegments     = 1024    // segments of one reply
	maxLineBytes    = 9 << 20 // one recorded line: a message is at most 8 MiB
	maxWatcherBytes = 8 << 20 // events queued for one page before it is dropped as slow
	heardEvery      = 50 * time.Millisecond
	maxSpeakers     = 8
)

type options struct{ Options }

func (o *Options) withDefaults() options {
	var d options
	if o != nil {
		d.Options = *o
	}
	for _, f := range []struct {
		p   *int
		def int
	}{
		{&d.MaxReplies, DefaultMaxReplies},
		{&d.MaxReplyBytes, DefaultMaxReplyBytes},
		{&d.MaxLogBytes, DefaultMaxLogBytes},
		{&d.MaxWatchers, DefaultMaxWatchers},
	} {
		if *f.p <= 0 {
			*f.p = f.def
		}
	}
	return d
}
