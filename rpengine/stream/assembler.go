package stream

// Options bound what an [Assembler] holds back. Nil means defaults.
type Options struct{}

// Assembler assembles one reply. Work in progress.
type Assembler struct {
	queue []Output
	done  bool
}

// NewAssembler returns an assembler for one reply. nil opts means defaults.
func NewAssembler(opts *Options) *Assembler { return &Assembler{} }

// Push feeds one decoded message of this reply. Work in progress: it ends
// the reply as failed.
func (a *Assembler) Push(ev Event) {
	if a.done {
		return
	}
	a.done = true
	a.queue = append(a.queue, Output{Kind: OutputEnd, End: End{State: EndFailed, Code: "not_implemented", Message: "stream: assembler not implemented yet"}})
}

// Next pops the next output, in order; ok is false when none is pending.
func (a *Assembler) Next() (out Output, ok bool) {
	if len(a.queue) == 0 {
		return Output{}, false
	}
	out = a.queue[0]
	a.queue = a.queue[1:]
	return out, true
}

// Text returns the display text so far.
func (a *Assembler) Text() string { return "" }

// Done reports whether an End has been produced.
func (a *Assembler) Done() bool { return a.done }
