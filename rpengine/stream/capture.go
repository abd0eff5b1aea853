package stream

// Capture folds the voice.capture.* messages of one capture request into
// its latest level, state and transcript. The zero value is ready to use.
// Like [Assembler] it is passive and not safe for concurrent use.
type Capture struct {
	requestID  string
	level      CaptureLevel
	state      CaptureState
	transcript CaptureTranscript
	has        [3]bool // level, state, transcript received
	ignored    int
}

// Push records ev when it is a *CaptureLevel, *CaptureState or
// *CaptureTranscript of the capture (the first non-empty requestId is
// adopted). Anything else, nil, or another request's event is counted in
// [Capture.Ignored]. Push copies the event.
func (c *Capture) Push(ev Event) {
	switch e := ev.(type) {
	case *CaptureLevel:
		if e != nil && c.owns(e.RequestID) {
			c.level, c.has[0] = *e, true
			return
		}
	case *CaptureState:
		if e != nil && c.owns(e.RequestID) {
			c.state, c.has[1] = *e, true
			return
		}
	case *CaptureTranscript:
		if e != nil && c.owns(e.RequestID) {
			c.transcript, c.has[2] = *e, true
			return
		}
	}
	c.ignored++
}

func (c *Capture) owns(id string) bool {
	if c.requestID == "" {
		c.requestID = id
	}
	return id == "" || id == c.requestID
}

// Level returns the latest voice.capture.level; ok is false before one.
func (c *Capture) Level() (l CaptureLevel, ok bool) { return c.level, c.has[0] }

// State returns the latest voice.capture.state; ok is false before one.
func (c *Capture) State() (s CaptureState, ok bool) { return c.state, c.has[1] }

// Transcript returns the voice.capture.transcript; ok is false before it.
func (c *Capture) Transcript() (t CaptureTranscript, ok bool) { return c.transcript, c.has[2] }

// Ignored counts the events Push did not record.
func (c *Capture) Ignored() int { return c.ignored }
