package xiaotangyuan

import (
	"fmt"
	"sync"

	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// A chat the caller gave up on (its ctx expired, or its ChatTimeout) is
// abandoned: its stream events must never reach Events afterwards, and its
// late result is dropped (issue #20). The Harness cannot be told (protocol
// v1.1 has no cancel, see docs/xiaotangyuan-protocol.md, "Interrupting a pending chat"), and
// its events carry an interactionId the caller never learnt, so the
// client tells them apart itself:
//
//   - the Harness runs one request at a time per connection, in the order
//     they were written, so the stream events with source "chat" or
//     "retry" belong to the oldest chat.send or chat.retry not yet
//     answered;
//   - the writes of those calls are ordered with their place in that line
//     (streamMu), and the reader ties each new interactionId to the head of
//     the line;
//   - an event is emitted under its call's lock only while the call is not
//     abandoned, and abandoning takes that lock, so no event of it follows
//     the abandonment; if some were shown, one EventCancel with Reason
//     "abandoned" closes its stream on Events.

// maxStreaming bounds the chat.send and chat.retry calls waiting on one
// connection, abandoned ones included (they hold their place until the
// Harness answers them).
const maxStreaming = 32

// errTooManyChats refuses a chat beyond maxStreaming.
var errTooManyChats = fmt.Errorf("%d chats already waiting on this connection, which the Harness answers one at a time: wait for one to end", maxStreaming)

// ReasonAbandoned is the Reason of the EventCancel that ends, on Events,
// the stream of a chat whose caller gave up (see [Client.Chat]).
const ReasonAbandoned = "abandoned"

// streamCall is the state of a chat.send or chat.retry call shared by its
// caller and the reader.
type streamCall struct {
	mu          sync.Mutex // guards following
	abandoned   bool       // the caller gave up; drop its events and result
	resolved    bool       // its result was handed to the caller
	interaction string     // its interactionId, once an event named it
	shown       bool       // one of its events reached Events
}

func isStreamMethod(m string) bool { return m == wire.MethodChat || m == wire.MethodRetry }

// sourceMethod is the method whose stream events carry src.
func sourceMethod(src Source) string {
	switch src {
	case SourceChat:
		return wire.MethodChat
	case SourceRetry:
		return wire.MethodRetry
	}
	return ""
}

// enqueueLocked puts p at the end of the line of streaming calls. cn.mu
// must be held.
func (cn *conn) enqueueLocked(p *pendingCall) error {
	if len(cn.streaming) >= maxStreaming {
		return errTooManyChats
	}
	cn.streaming = append(cn.streaming, p)
	return nil
}

// dequeueLocked removes p from the line. cn.mu must be held.
func (cn *conn) dequeueLocked(p *pendingCall) {
	for i, q := range cn.streaming {
		if q == p {
			cn.streaming = append(cn.streaming[:i], cn.streaming[i+1:]...)
			return
		}
	}
}

// owner returns the call whose stream carries the event ev, or nil (voice
// and proactive replies, compose, a Harness that breaks the rules). It runs
// on the reader, which owns cn.owners.
func (cn *conn) owner(ev Event) *pendingCall {
	if p, ok := cn.owners[ev.InteractionID]; ok && ev.InteractionID != "" {
		return p
	}
	m := sourceMethod(ev.Source)
	if m == "" {
		return nil
	}
	cn.mu.Lock()
	var head *pendingCall
	if len(cn.streaming) > 0 && cn.streaming[0].method == m {
		head = cn.streaming[0]
	}
	cn.mu.Unlock()
	if head == nil {
		return nil
	}
	if ev.InteractionID == "" {
		// assistant.present names no interaction; chat.retry's comes
		// between its text.done and its result (docs/xiaotangyuan-protocol.md, "Streaming").
		if ev.Kind == EventPresent {
			return head
		}
		return nil
	}
	head.s.mu.Lock()
	taken := head.s.interaction != ""
	if !taken {
		head.s.interaction = ev.InteractionID
	}
	head.s.mu.Unlock()
	if taken {
		return nil
	}
	cn.owners[ev.InteractionID] = head
	return head
}

// emitOwned emits ev unless it belongs to an abandoned call; it runs on
// the reader, after the message was recorded.
func (cn *conn) emitOwned(ev Event) {
	p := cn.owner(ev)
	if p == nil {
		cn.c.emit(ev)
		return
	}
	p.s.mu.Lock()
	abandoned, queued := p.s.abandoned, false
	if !abandoned {
		queued = cn.c.tryEmit(ev) // never blocks
		p.s.shown = true
	}
	p.s.mu.Unlock()
	switch {
	case abandoned:
		cn.c.rec.RecordNote(jsonl.In, fmt.Sprintf("dropped: %s event of an abandoned %s", ev.Kind, p.method), nil)
	case !queued:
		cn.c.dropped(ev)
	}
}

// abandon marks p abandoned when its caller gives up, unless its result
// was already handed over (then it returns false and the caller takes the
// result). It ends p's stream on Events with an EventCancel when some of
// it was shown. It runs on the caller's goroutine.
func (cn *conn) abandon(p *pendingCall) bool {
	p.s.mu.Lock()
	if p.s.resolved {
		p.s.mu.Unlock()
		return false
	}
	p.s.abandoned = true
	id, shown := p.s.interaction, p.s.shown
	p.s.mu.Unlock()
	if shown {
		cn.c.emit(Event{Kind: EventCancel, InteractionID: id, Reason: ReasonAbandoned})
	}
	return true
}

// settle is the reader's side of a streaming call's response: it leaves
// the line, and its result goes to the caller unless the call was
// abandoned (then it is dropped, and the note says so).
func (cn *conn) settle(p *pendingCall, r callResult) string {
	cn.mu.Lock()
	cn.dequeueLocked(p)
	cn.mu.Unlock()
	p.s.mu.Lock()
	delete(cn.owners, p.s.interaction)
	abandoned := p.s.abandoned
	p.s.resolved = !abandoned
	p.s.mu.Unlock()
	if abandoned {
		return "dropped: result of an abandoned " + p.method
	}
	p.ch <- r
	return ""
}
