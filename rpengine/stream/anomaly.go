package stream

// AnomalyKind names a stream inconsistency. The assembler reports it and
// keeps going with what is consistent.
type AnomalyKind int

// Anomaly kinds. See the doc of each for what Anomaly.Sequences holds.
const (
	// AnomalyWrongRequest: the event's requestId differs from the reply's.
	// The event is dropped.
	AnomalyWrongRequest AnomalyKind = iota + 1
)

// Anomaly is a stream inconsistency: what kind, the sequence numbers
// involved (see each [AnomalyKind]), and a human-readable detail.
type Anomaly struct {
	Kind      AnomalyKind
	Sequences []int
	Detail    string
}
