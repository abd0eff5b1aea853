package card

// planPatch returns a verified RFC 6902 patch from the canonical base to
// target, shorter than limit bytes, or false.
func planPatch(base []byte, target *Card, limit int) ([]byte, bool) {
	return nil, false
}
