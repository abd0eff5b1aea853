package xiaotangyuan

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// AtomFunc executes one game ability for the Harness (game.atom.execute).
// args is the request's arguments object ("{}" when absent); the function
// owns it. Its size is bounded only by the read limit of the whole message
// (Options.ReadLimit, 4 MiB by default): the Harness checks its skill
// limits (8 levels of nesting, strings of 500 characters, 50 items or
// keys) before filling in earlier atoms' results, so arguments built from
// results can exceed them, and are passed on as they are. Arguments that
// are not a JSON object are answered with CodeInvalidParams without
// calling the function. The returned value is encoded as the JSON-RPC
// result; an error becomes a CodeAtomFailed error whose message is
// err.Error(), which the Harness shows as the failed step's text, clipped
// to 2 KiB with control characters escaped (it may quote the Harness's
// arguments).
//
// It runs on its own goroutine, concurrently with other atoms and with
// the game's pending calls (the Harness calls atoms while chat.send is
// still pending). ctx expires after Options.AtomTimeout (15 s) or when
// the connection ends; a result produced after that is not sent, since
// the Harness has already failed the step.
type AtomFunc func(ctx context.Context, args json.RawMessage) (any, error)

// HandleAtom registers fn under name, which must match
// ^[a-z0-9][a-z0-9._-]{2,79}$ (for example "dst.find_nearest_butterfly")
// and must not start with "assistant." or "speech.": the Harness takes
// those for protocol features and never calls them.
// Registered names are advertised as capabilities in adapter.hello, so
// HandleAtom must be called before Connect. Registering a name again
// replaces its handler.
func (c *Client) HandleAtom(name string, fn AtomFunc) (err error) {
	defer wrap(&err, "handle atom")
	if err := validateAtomName(name); err != nil {
		return err
	}
	if fn == nil {
		return &ValidationError{Field: "atom", Reason: "nil handler for " + name}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errStarted
	}
	c.atoms[name] = fn
	return nil
}

// serve decides how to answer a Harness request; the returned func does
// it, once the request is recorded. Only game.atom.execute exists; atom
// handlers run on their own goroutines so the reader keeps reading.
func (cn *conn) serve(f wire.Frame) (string, func()) {
	refuse := func(e *wire.Error) func() { return func() { cn.queueReply(f.ID, e) } }
	if f.Method != wire.MethodAtom {
		return "answered: unknown method", refuse(&wire.Error{Code: CodeMethodNotFound, Message: "unknown method: " + peertext.Clip(f.Method, peertext.LogBytes)})
	}
	var p wire.Atom
	if err := json.Unmarshal(f.Params, &p); err != nil || p.Atom == "" {
		return "answered: invalid params", refuse(&wire.Error{Code: CodeInvalidParams, Message: "game.atom.execute needs {atom, arguments}"})
	}
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		if err := checkArgs(p.Arguments); err != nil {
			return "answered: arguments not an object", refuse(&wire.Error{Code: CodeInvalidParams, Message: "atom " + peertext.Clip(p.Atom, peertext.LogBytes) + ": " + err.Error()})
		}
	}
	cn.c.mu.Lock()
	fn := cn.c.atoms[p.Atom]
	cn.c.mu.Unlock()
	if fn == nil {
		return "answered: unknown atom", refuse(&wire.Error{Code: CodeAtomFailed, Message: "unknown atom: " + peertext.Clip(p.Atom, peertext.LogBytes)})
	}
	select {
	case cn.atomSem <- struct{}{}:
	default:
		return "answered: busy", refuse(&wire.Error{Code: CodeAtomFailed, Message: fmt.Sprintf("adapter busy: %d atoms already running", cap(cn.atomSem))})
	}
	// Counted now, on the reader, which the connection's wait joins; the
	// goroutine starts once the request is recorded.
	cn.wg.Add(1)
	return "", func() {
		go func() {
			defer cn.wg.Done()
			defer func() { <-cn.atomSem }()
			cn.runAtom(f.ID, p, fn)
		}()
	}
}

func (cn *conn) runAtom(id json.RawMessage, p wire.Atom, fn AtomFunc) {
	ctx, cancel := context.WithTimeout(cn.ctx, cn.c.o.AtomTimeout)
	defer cancel()
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	v, err := fn(ctx, args)
	if ctx.Err() != nil {
		// The Harness failed the step at its own 15 s deadline and would
		// answer a late response with -32700; on disconnect nobody listens.
		cn.c.rec.RecordNote(jsonl.Out, fmt.Sprintf("not sent: atom %s finished after its deadline or disconnect", p.Atom), nil)
		return
	}
	if err != nil {
		// Clipped: it may quote the Harness's own arguments (issue #31).
		cn.reply(id, nil, &wire.Error{Code: CodeAtomFailed, Message: peertext.Clip(err.Error(), peertext.LineBytes)})
		return
	}
	res, err := json.Marshal(v)
	if err != nil {
		cn.reply(id, nil, &wire.Error{Code: CodeAtomFailed, Message: "atom " + p.Atom + ": result is not JSON: " + err.Error()})
		return
	}
	if len(res) > MaxMessageSize-256 {
		cn.reply(id, nil, &wire.Error{Code: CodeAtomFailed, Message: fmt.Sprintf("atom %s: result is %d bytes, over the 1 MiB message limit", p.Atom, len(res))})
		return
	}
	cn.reply(id, json.RawMessage(res), nil)
}

// queueReply hands an answer produced on the reader goroutine to
// replyLoop, waiting for room in the queue (see replyQueue) until the
// connection ends. An answer over MaxMessageSize (an id that big) cannot
// be sent and is noted instead.
func (cn *conn) queueReply(id json.RawMessage, e *wire.Error) {
	b, err := wire.EncodeResponse(id, nil, e)
	if err == nil {
		err = checkSize(b)
	}
	if err != nil {
		cn.c.rec.RecordNote(jsonl.Out, "not answered: "+errd.Text(err, prefix), nil)
		return
	}
	for cn.queued.Load()+int64(len(b)) > replyBytes {
		select {
		case <-cn.room:
		case <-cn.ctx.Done():
			return
		}
	}
	cn.queued.Add(int64(len(b)))
	select {
	case cn.replies <- b:
	case <-cn.ctx.Done():
	}
}

// reply answers a Harness request. Failures are recorded, not returned:
// the reader cannot do more than the write already did (a failed write
// ends the connection).
func (cn *conn) reply(id json.RawMessage, result any, e *wire.Error) {
	b, err := wire.EncodeResponse(id, result, e)
	if err == nil {
		err = cn.write(b, "response")
	}
	if err != nil {
		cn.c.rec.RecordNote(jsonl.Out, "reply failed: "+err.Error(), nil)
	}
}
