// Package jcs writes the RFC 8785 JSON Canonicalization Scheme form of a
// JSON text: no white space, object members sorted by the UTF-16 code
// units of their names (section 3.2.3), strings with the fewest escapes
// (3.2.2.2) and numbers as ECMAScript prints a double (3.2.2.3). It
// knows nothing of what the JSON means.
//
// It refuses what RFC 8785 refuses, as github.com/gowebpki/jcs does:
// invalid JSON, duplicate member names (also after unescaping), invalid
// UTF-8, lone surrogates and numbers beyond the double range; nesting is
// bounded by [MaxDepth]. Each error is a *[SyntaxError] with the byte
// offset and the RFC 6901 pointer of the value at fault.
//
// [Append] makes two passes and builds no tree of values: the first
// writes every value in its canonical form, members in source order, and
// sorts the members of each object that is out of order as offsets; the
// second, needed only when some object was out of order, copies the
// output once in sorted order. Time is linear in the input, plus the
// sorts; a compact document in canonical order is its own output.
package jcs
