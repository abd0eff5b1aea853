package stream

// Capture folds the voice.capture.* messages of one capture request into
// its latest level, state and transcript. The zero value is ready to use.
type Capture struct {
	level      *CaptureLevel
	state      *CaptureState
	transcript *CaptureTranscript
}

// Push records ev when it is a capture event.
func (c *Capture) Push(ev Event) {
	switch e := ev.(type) {
	case *CaptureLevel:
		c.level = e
	case *CaptureState:
		c.state = e
	case *CaptureTranscript:
		c.transcript = e
	}
}
