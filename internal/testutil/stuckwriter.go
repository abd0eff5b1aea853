package testutil

import "sync"

// StuckWriter is an io.Writer whose Write blocks until Release, as a pipe
// nobody reads: a Recorder that must not stall a client (issue #17).
type StuckWriter struct {
	once sync.Once
	ch   chan struct{}
}

// NewStuckWriter returns a StuckWriter whose Writes block.
func NewStuckWriter() *StuckWriter { return &StuckWriter{ch: make(chan struct{})} }

// Write waits for Release, then reports p written.
func (w *StuckWriter) Write(p []byte) (int, error) {
	<-w.ch
	return len(p), nil
}

// Release lets every Write, waiting or later, return. It is idempotent.
func (w *StuckWriter) Release() { w.once.Do(func() { close(w.ch) }) }
