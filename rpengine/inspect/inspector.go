package inspect

import (
	"crypto/rand"
	"sync"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Inspector keeps what a game's rpengine.Server and the engine said to
// each other, and serves it as a live page. It is three things at once:
//
//   - an io.Writer for [rpengine.ServerOptions.Recorder]: the JSON Lines
//     of every message in and out (use io.MultiWriter to record to a file
//     too);
//   - a slog.Logger wrapper for [rpengine.ServerOptions.Logger]
//     ([Inspector.Logger]): warnings, anomalies and errors, shown beside
//     the reply they name;
//   - an http.Handler serving the page, to mount on a loopback listener
//     of the game's own ([Inspector.ServeHTTP], [Inspector.URL]).
//
// [Inspector.OnSession] fits [rpengine.ServerOptions.OnSession], and
// [Inspector.AddSpeaker] shows a speaker's heard position.
//
// All methods may be called concurrently. An Inspector starts no
// goroutine: the recorder's goroutine parses the lines it writes, and each
// open page is served on its own request's goroutine.
type Inspector struct {
	o     options
	token string
	done  chan struct{} // closed by Close
	once  sync.Once

	wmu     sync.Mutex // guards partial and chunks, and serializes Writes
	partial []byte     // a line not yet ended by '\n'
	chunks  wire.ChunkDecoder

	mu         sync.Mutex // guards following
	closed     bool
	sess       sessionView
	caps       []capSample // oldest first
	chars      map[string]*character
	notes      []note // session notes, oldest first
	replies    []*reply
	byID       map[string]*reply
	replyBytes int
	log        logRing
	unacked    []pendingOut      // outbound messages not acked yet, oldest first
	syncs      map[string]string // character.sync messageId: character key
	watchers   map[*watcher]struct{}
	speakers   []Speaker
}

// pendingOut is an outbound message awaiting its ack, for attributing a
// request.error that names nothing (invalid_payload: the engine refuses the
// oldest message it has not acked).
type pendingOut struct{ id, requestID string }

const maxUnacked = 2048

// New returns an Inspector with a new unguessable token (128 bits from
// crypto/rand) that every request to its page must present. Nil opts
// means the defaults. It starts nothing and serves nothing until the game
// mounts it.
func New(opts *Options) *Inspector {
	in := &Inspector{
		o:        opts.withDefaults(),
		token:    rand.Text(),
		done:     make(chan struct{}),
		chars:    map[string]*character{},
		byID:     map[string]*reply{},
		syncs:    map[string]string{},
		watchers: map[*watcher]struct{}{},
	}
	in.log.max = in.o.MaxLogBytes
	in.sess.State = "waiting for the engine"
	return in
}

// Close ends every page's event stream, refuses requests from then on
// (HTTP 503), forgets what was kept and ignores later lines and log
// records. It is idempotent and returns nil.
func (in *Inspector) Close() error {
	in.once.Do(func() {
		close(in.done)
		in.mu.Lock()
		in.closed = true
		in.replies, in.byID, in.chars, in.notes, in.caps = nil, map[string]*reply{}, map[string]*character{}, nil, nil
		in.log = logRing{}
		in.replyBytes = 0
		in.mu.Unlock()
	})
	return nil
}

// OnSession records that a session started or ended; its signature is
// that of [rpengine.ServerOptions.OnSession], so that the connection
// panel shows when the engine goes away (no message says it). A game
// with an OnSession of its own calls this from it. It does not block.
func (in *Inspector) OnSession(info rpengine.SessionInfo, ended bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	if ended {
		if info.ID == in.sess.ID {
			in.sess.State = "ended"
		}
	} else {
		in.sess.ID, in.sess.ClientVersion, in.sess.State = info.ID, info.ClientVersion, "connected"
		in.sess.Started = ms(info.Started)
	}
	in.emitLocked("session", in.sess)
}
