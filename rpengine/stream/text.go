package stream

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// textState assembles reply.text.delta in sequence order.
type textState struct {
	// text is the display text: deltas [0,len(ends)) or the completed
	// text. A strings.Builder only appends, so String shares its bytes and
	// costs nothing: each OutputText carries the whole text without
	// copying it (a copy per delta made a reply of n deltas cost O(n²)).
	text     strings.Builder
	ends     []int               // ends[i]: end of delta i in buf
	held     map[int]string      // deltas after a gap, by sequence
	heldCost int                 // bytes charged for held (see Options.MaxHeldText)
	final    *wire.TextCompleted // reply.text.completed, once arrived
}

func (t *textState) next() int { return len(t.ends) }

// delta returns the text of assembled delta seq.
func (t *textState) delta(seq int) string {
	start := 0
	if seq > 0 {
		start = t.ends[seq-1]
	}
	return t.text.String()[start:t.ends[seq]]
}

// stringOf returns the first n bytes of the text, sharing its memory.
func (t *textState) stringOf(n int) string { return t.text.String()[:n] }

func (t *textState) release() {
	t.held, t.heldCost = nil, 0
}

// missing returns the sequences absent from [next, max held) (at most
// maxListed), for gap reports.
func (t *textState) missing() []int {
	if len(t.held) == 0 {
		return nil
	}
	var out []int
	hi := slices.Max(slices.Collect(maps.Keys(t.held)))
	for s := t.next(); s < hi && len(out) < maxListed; s++ {
		if _, ok := t.held[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// heldInOrder returns the held deltas concatenated in sequence order.
func (t *textState) heldInOrder() string {
	var b []byte
	for _, s := range slices.Sorted(maps.Keys(t.held)) {
		b = append(b, t.held[s]...)
	}
	return string(b)
}

func (a *Assembler) pushDelta(e *wire.TextDelta) {
	t := &a.txt
	seq := e.Sequence
	switch {
	case seq < 0:
		a.anomaly(Anomaly{Kind: AnomalyInvalidDelta, Sequences: []int{seq}, Detail: fmt.Sprintf("reply.text.delta sequence %d is negative", seq)})
	case t.final != nil:
		a.anomaly(Anomaly{Kind: AnomalyLateDelta, Sequences: []int{seq}, Detail: fmt.Sprintf("reply.text.delta %d after reply.text.completed", seq)})
	case seq < t.next():
		a.duplicateDelta(seq, t.delta(seq) == e.Delta)
	default:
		if h, ok := t.held[seq]; ok {
			a.duplicateDelta(seq, h == e.Delta)
			return
		}
		if seq == t.next() {
			a.appendDelta(e.Delta)
			return
		}
		a.holdDelta(seq, e.Delta)
	}
}

func (a *Assembler) duplicateDelta(seq int, same bool) {
	if same {
		a.stats.Duplicates++
		return
	}
	a.anomaly(Anomaly{Kind: AnomalyConflictingDelta, Sequences: []int{seq}, Detail: fmt.Sprintf("reply.text.delta %d repeated with a different delta; the first is kept", seq)})
}

func (a *Assembler) holdDelta(seq int, d string) {
	t := &a.txt
	cost := len(d) + deltaOverheadBytes
	if t.heldCost+cost > a.opts.MaxHeldText {
		a.fail(CodeHeldTextLimit, "text held behind a gap before delta %d exceeds %d bytes", t.next(), a.opts.MaxHeldText)
		return
	}
	if t.held == nil {
		t.held = make(map[int]string)
	}
	t.held[seq] = d
	t.heldCost += cost
}

// appendDelta appends the next delta and every held one it unblocks, then
// queues one text output.
func (a *Assembler) appendDelta(d string) {
	t := &a.txt
	for {
		if t.text.Len()+len(d)+deltaBookkeeping*(len(t.ends)+1) > a.opts.MaxText {
			a.fail(CodeTextLimit, "display text exceeds %d bytes at delta %d", a.opts.MaxText, t.next())
			return
		}
		t.text.WriteString(d)
		t.ends = append(t.ends, t.text.Len())
		h, ok := t.held[t.next()]
		if !ok {
			break
		}
		delete(t.held, t.next())
		t.heldCost -= len(h) + deltaOverheadBytes
		d = h
	}
	a.queueText()
}

// queueText queues an OutputText of the whole text, or extends a text
// output that is still pending at the tail of the queue.
func (a *Assembler) queueText() {
	if n := len(a.queue); n > a.head && a.queue[n-1].textLen >= 0 {
		a.queue[n-1].textLen = a.txt.text.Len()
		return
	}
	a.enqueue(item{out: Output{Kind: OutputText}, textLen: a.txt.text.Len()})
}

func (a *Assembler) pushTextCompleted(e *wire.TextCompleted) {
	t := &a.txt
	if t.final != nil {
		a.repeated(sameTextCompleted(t.final, e), "reply.text.completed")
		return
	}
	t.final = e
	assembled := t.text.String() + t.heldInOrder()
	switch {
	case assembled == e.Text:
		if len(t.held) == 0 {
			return // the text on display is already final
		}
	case t.next() == 0 && len(t.held) == 0:
		// No delta came before it: with buffered responseProcessing the
		// engine sends none, and the completed text is the reply (issue
		// #15). Not an anomaly.
	case strings.TrimSpace(assembled) == e.Text:
		// The engine trims the completed text but streams the deltas as
		// the model wrote them, surrounding whitespace included (engine
		// source, see docs/rpengine-protocol.md). Not an anomaly.
	default:
		a.anomaly(Anomaly{Kind: AnomalyTextMismatch, Sequences: t.missing(),
			Detail: fmt.Sprintf("reply.text.completed (%d bytes) differs from the assembled deltas (%d bytes, %d received in order, %d held); the completed text wins",
				len(e.Text), len(assembled), t.next(), len(t.held))})
	}
	a.setText(e.Text)
}

// setText replaces the display text, after materialising pending text
// outputs that refer to the old one.
func (a *Assembler) setText(s string) {
	t := &a.txt
	for i := a.head; i < len(a.queue); i++ {
		if it := &a.queue[i]; it.textLen >= 0 {
			it.out.Text, it.textLen = t.stringOf(it.textLen), -1
		}
	}
	t.text.Reset() // strings already handed out keep the old bytes
	t.text.WriteString(s)
	t.release()
	a.queueText()
}

// flushText ends the text at reply.completed: without
// reply.text.completed, gaps are reported and skipped.
func (a *Assembler) flushText() {
	t := &a.txt
	if t.final != nil || len(t.held) == 0 {
		return
	}
	a.anomaly(Anomaly{Kind: AnomalyTextGap, Sequences: t.missing(),
		Detail: fmt.Sprintf("reply ended without reply.text.completed and with deltas missing from %d; %d held deltas appended", t.next(), len(t.held))})
	a.setText(t.text.String() + t.heldInOrder())
}

func sameTextCompleted(x, y *wire.TextCompleted) bool {
	return x.Text == y.Text && x.TokenCount == y.TokenCount &&
		x.ElapsedMs == y.ElapsedMs && maps.EqualFunc(x.ExtractedContent, y.ExtractedContent, slices.Equal)
}
