package wire

// FastScan reports whether the fast scanner takes msg (the rest goes to
// encoding/json).
func FastScan(msg []byte) bool {
	var f rawFields
	return len(msg) <= MaxMessageBytes && f.scan(msg)
}
