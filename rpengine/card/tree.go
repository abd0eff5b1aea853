package card

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The kinds of a node that are not the first byte of its JSON text; the
// same bytes the validator's kind uses.
const (
	nodeNumber = '0'
	nodeNull   = 'n'
)

// node is an order-preserving JSON value, used where a card is edited and
// re-emitted (repair): members keep their source order, numbers their
// literal text.
type node struct {
	kind  byte   // '{', '[', '"', 't', 'f', nodeNumber or nodeNull
	text  string // string value or number literal
	keys  []string
	items []*node // members' values or elements
}

// decodeTree decodes a document that AppendCanonical accepted.
func decodeTree(data []byte) (*node, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return decodeNode(d)
}

func decodeNode(d *json.Decoder) (*node, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for d.More() {
			if t == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := decodeNode(d)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := d.Token()
		return n, err
	case string:
		return &node{kind: '"', text: t}, nil
	case json.Number:
		return &node{kind: nodeNumber, text: string(t)}, nil
	case bool:
		if t {
			return &node{kind: 't'}, nil
		}
		return &node{kind: 'f'}, nil
	}
	return &node{kind: nodeNull}, nil
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
				dst = appendCanonicalString(dst, n.keys[i])
				dst = append(dst, ':')
			}
			dst = v.append(dst)
		}
		return append(dst, n.kind+2) // '}' and ']' follow '{' and '[' by 2
	case '"':
		return appendCanonicalString(dst, n.text)
	case nodeNumber:
		return append(dst, n.text...)
	case 't':
		return append(dst, "true"...)
	case 'f':
		return append(dst, "false"...)
	}
	return append(dst, "null"...)
}

func strNode(s string) *node { return &node{kind: '"', text: s} }

func (n *node) String() string { return strconv.Quote(string(n.append(nil))) }
