package card

import "github.com/gamelink-go/gamelink/rpengine/card/internal/jcs"

// nodeNull is the kind of null (kind's).
const nodeNull = 'n'

// node is an order-preserving JSON value, used where a card is edited and
// re-emitted (repair): members keep their source order, numbers their
// literal text.
type node struct {
	kind  byte   // as kind reports it
	text  string // a string's value, or another scalar's literal
	keys  []string
	items []*node // members' values or elements
}

// decodeTree decodes a document that Parse accepted.
func decodeTree(data []byte) *node {
	n, _ := decodeNode(data, space(data, 0))
	return n
}

// decodeNode decodes the value at data[i] and returns it and its end.
func decodeNode(data []byte, i int) (*node, int) {
	switch k := kind(data, i); k {
	case '{', '[':
		n := &node{kind: k}
		end := items(data, i, func(it item) int {
			if k == '{' {
				n.keys = append(n.keys, text(data, it.ks, it.ke))
			}
			v, end := decodeNode(data, it.vs)
			n.items = append(n.items, v)
			return end
		})
		return n, end
	case '"':
		e := skipString(data, i)
		return strNode(text(data, i, e)), e
	default:
		e := skipValue(data, i)
		return &node{kind: k, text: string(data[i:e])}, e
	}
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.items[i]
		}
	}
	return nil
}

func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.items[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.items = append(n.items, v)
}

func (n *node) append(dst []byte) []byte {
	switch n.kind {
	case '{', '[':
		dst = append(dst, n.kind)
		for i, v := range n.items {
			if i > 0 {
				dst = append(dst, ',')
			}
			if n.kind == '{' {
				dst = jcs.AppendString(dst, n.keys[i])
				dst = append(dst, ':')
			}
			dst = v.append(dst)
		}
		return append(dst, n.kind+2) // '}' and ']' follow '{' and '[' by 2
	case '"':
		return jcs.AppendString(dst, n.text)
	}
	return append(dst, n.text...)
}

func strNode(s string) *node { return &node{kind: '"', text: s} }
