package wire

// A chunk's data is standard, padded base64 (docs/rpengine-protocol.md,
// "reply.audio.chunk"): about 44 KB of text for 32 KiB of PCM, nearly all
// of a reply's bytes. ChunkDecoder decodes it while it scans the message,
// in one pass that also finds where the string ends: decodeRun takes the
// groups of four alphabet characters (32 at a time with AVX2), and what
// it stops at (padding, the closing quote, or anything else) goes to
// encoding/base64, so that every result, error included, is exactly that
// of finding the end of the string and decoding it with encoding/base64.

// b64Invalid marks a byte outside the standard alphabet in b64Values.
const b64Invalid = 0xff

// b64Values maps each byte to its 6-bit value in the standard alphabet
// (A-Z, a-z, 0-9, '+', '/'), or to b64Invalid.
var b64Values = func() (t [256]byte) {
	for i := range t {
		t[i] = b64Invalid
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for v, c := range []byte(alphabet) {
		t[c] = byte(v)
	}
	return t
}()

// decodeRun decodes the longest prefix of src made of whole groups of four
// alphabet characters (no padding) that fits in dst, and returns the
// characters it consumed (a multiple of 4) and the bytes it wrote (3 per
// group). It stops at the first group holding any other byte.
func decodeRun(dst, src []byte) (nsrc, ndst int) {
	if hasAVX2 {
		nsrc = decodeAVX2(dst, src)
		ndst = nsrc / 4 * 3
	}
	n, m := decodeGeneric(dst[ndst:], src[nsrc:])
	return nsrc + n, ndst + m
}

// decodeGeneric is decodeRun in pure Go, a group at a time: the reference
// for the assembly kernel, and the tail after it.
func decodeGeneric(dst, src []byte) (nsrc, ndst int) {
	for nsrc+4 <= len(src) && ndst+3 <= len(dst) {
		a, b := b64Values[src[nsrc]], b64Values[src[nsrc+1]]
		c, d := b64Values[src[nsrc+2]], b64Values[src[nsrc+3]]
		if (a|b|c|d)&0xc0 != 0 { // b64Invalid has the top bits
			return nsrc, ndst
		}
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		dst[ndst], dst[ndst+1], dst[ndst+2] = byte(v>>16), byte(v>>8), byte(v)
		nsrc, ndst = nsrc+4, ndst+3
	}
	return nsrc, ndst
}
