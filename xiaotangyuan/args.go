package xiaotangyuan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Limits of the skill runtime on atom argument values (spec §2.2). The
// Harness should never exceed them; a request that does is refused before
// the handler sees it, so handlers may rely on them.
const (
	maxArgDepth   = 8   // containers nested inside the arguments object
	maxArgString  = 500 // UTF-16 units, as JavaScript counts
	maxArgArray   = 50
	maxArgObjKeys = 50
)

// checkArgs verifies that args is a JSON object within the skill
// runtime's limits, streaming over its tokens without building values.
func checkArgs(args json.RawMessage) error {
	if !bytes.HasPrefix(bytes.TrimSpace(args), []byte("{")) {
		return errors.New("arguments must be an object")
	}
	d := json.NewDecoder(bytes.NewReader(args))
	type level struct {
		obj bool
		n   int // elements, or keys and values for objects
	}
	var stack []level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if len(stack) > 0 {
				return errors.New("arguments: unexpected end")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
		if t, ok := tok.(json.Delim); ok && (t == '}' || t == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) == 0 { // the arguments object ended: nothing may follow
				if _, err := d.Token(); err != io.EOF {
					return errors.New("arguments: data after the object")
				}
				return nil
			}
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			top.n++
			if !top.obj && top.n > maxArgArray {
				return fmt.Errorf("arguments: array longer than %d", maxArgArray)
			}
			if top.obj && top.n > 2*maxArgObjKeys {
				return fmt.Errorf("arguments: object with more than %d keys", maxArgObjKeys)
			}
		}
		switch t := tok.(type) {
		case json.Delim: // '{' or '['
			if len(stack) == maxArgDepth+1 { // the arguments object itself is depth 0
				return fmt.Errorf("arguments: deeper than %d", maxArgDepth)
			}
			stack = append(stack, level{obj: t == '{'})
		case string:
			if n := utf16Len(t); n > maxArgString {
				return fmt.Errorf("arguments: string of %d characters, limit %d", n, maxArgString)
			}
		}
	}
}
