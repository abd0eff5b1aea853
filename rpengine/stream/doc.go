// Package stream assembles an RPEngine reply stream (protocol v3, spec
// section 6) into ordered display text, playable per-sentence audio
// segments and a clear end.
package stream
