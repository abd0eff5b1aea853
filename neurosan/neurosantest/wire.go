package neurosantest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// done ends an object the fake built; its own values always encode.
func done(o *wire.Object) []byte {
	b, err := o.Bytes()
	if err != nil {
		panic(err)
	}
	return b
}

// writeDict answers as Tornado's RequestHandler.write(dict) does.
func writeDict(w http.ResponseWriter, code int, obj []byte) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write(tornadoJSON(obj))
}

// writeError answers {"error": msg}. The server HTML-escapes the messages
// it passes through its do_finish; none of the fake's contain a character
// that escaping changes, except where the caller escaped it.
func writeError(w http.ResponseWriter, code int, msg string) {
	var o wire.Object
	o.Value(wire.Error, msg)
	writeDict(w, code, done(&o))
}

// writeEmpty answers a status with an empty body and Tornado's default
// content type, as the server's 403 and 404 do.
func writeEmpty(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(code)
}

// writePage answers Tornado's default error page, which the server sends
// for a path no route matches (404) and a route's wrong method (405).
func writePage(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<html><title>%d: %s</title><body>%d: %s</body></html>", code, http.StatusText(code), code, http.StatusText(code))
}

func readBody(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(io.LimitReader(r, 64<<20))
	return buf.Bytes(), err
}

// errClientGone is a write to a stream whose client has left.
var errClientGone = errors.New("neurosantest: client went away")

// lineWriter writes stream lines with the configured framing traps. The
// server notices a client that left only when a write to it fails: a
// write here fails once Go's server has seen the connection close.
type lineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	client  context.Context // the request's: done once the client left
	server  context.Context // the Server's: done on Close
	opts    *Options
	pending []byte    // TwoPerLine: a response waiting for its line-mate
	last    time.Time // when a line was last written, for the heartbeat
}

func (lw *lineWriter) response(b []byte) error {
	if lw.opts.TwoPerLine {
		if lw.pending == nil {
			lw.pending = b
			return nil
		}
		b = append(lw.pending, b...)
		lw.pending = nil
	}
	return lw.line(append(b, '\n'))
}

// flushPending ends a half-filled TwoPerLine line.
func (lw *lineWriter) flushPending() error {
	if lw.pending == nil {
		return nil
	}
	b := append(lw.pending, '\n')
	lw.pending = nil
	return lw.line(b)
}

// line writes one line, then pauses LineDelay. The pause is not cut short
// when the client leaves (the server's was an asyncio.sleep), only by Close.
func (lw *lineWriter) line(b []byte) error {
	if err := lw.write(b); err != nil {
		return err
	}
	lw.last = time.Now()
	d := lw.opts.LineDelay
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-lw.server.Done():
		return lw.server.Err()
	}
}

func (lw *lineWriter) write(b []byte) error {
	n := lw.opts.SplitWrites
	if n <= 0 {
		n = len(b)
	}
	for len(b) > 0 {
		if lw.client.Err() != nil {
			return errClientGone
		}
		k := min(n, len(b))
		if _, err := lw.w.Write(b[:k]); err != nil {
			return errClientGone
		}
		if err := lw.rc.Flush(); err != nil {
			return errClientGone
		}
		b = b[k:]
	}
	return nil
}

// cut closes the connection without ending the chunked body.
func (lw *lineWriter) cut() {
	conn, _, err := lw.rc.Hijack()
	if err == nil {
		conn.Close()
	}
}
