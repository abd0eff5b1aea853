package stream

import "github.com/gamelink-go/gamelink/rpengine/internal/wire"

// PushEvent pushes a decoded message: the tests build messages as values.
func (a *Assembler) PushEvent(ev wire.Event) { a.pushEvent(ev, nil) }

// Held reports what a holds back, for the bounded-memory checks of the
// tests: held audio in samples (with bookkeeping), its bound, held text in
// bytes (with bookkeeping), and pending outputs.
func (a *Assembler) Held() (audio, maxAudio, text, pending int) {
	return a.aud.held, a.aud.maxHeld, a.txt.heldCost, len(a.queue) - a.head
}

// Reserved reports the sample capacity reserved ahead by pending segments
// (see newSegment), which shares the held-audio bound as its budget.
func (a *Assembler) Reserved() int { return a.aud.reserved }
