package neurosan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchStream builds a MAXIMAL-like body: n lines, each echoing a request
// whose chat_context holds ctxBytes of history.
func benchStream(n, ctxBytes int) []byte {
	hist := fmt.Sprintf(`{"chat_histories":[{"origin":[{"tool":"front","instantiation_index":1}],"messages":[{"type":"HUMAN","text":%q}]}]}`, strings.Repeat("h", ctxBytes))
	var b bytes.Buffer
	for i := range n {
		typ := "AI"
		if i == n-1 {
			typ = "AGENT_FRAMEWORK"
		}
		fmt.Fprintf(&b, `{"response":{"type":%q,"text":"step %d","origin":[{"tool":"front","instantiation_index":0},{"tool":"tool","instantiation_index":1}],"structure":{"k":%d}},"request":{"user_message":{"text":"hi"},"chat_context":%s}}`+"\n", typ, i, i, hist)
	}
	return b.Bytes()
}

func benchmarkDecoder(b *testing.B, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d := newDecoder(bytes.NewReader(body), 0)
		for {
			if _, err := d.next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchmarkScanner is the reference: what most clients write, a line
// scanner (with its buffer raised so it does not fail) and one Unmarshal a
// line. It cannot handle two objects on a line or an error object without
// newline; it is here only as a speed yardstick.
func benchmarkScanner(b *testing.B, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var v struct {
				Response *ChatMessage    `json:"response"`
				Request  json.RawMessage `json:"request"`
			}
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkDecoder(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		body := benchStream(20, size)
		b.Run(fmt.Sprintf("ctx=%dKiB/decoder", size>>10), func(b *testing.B) { benchmarkDecoder(b, body) })
		b.Run(fmt.Sprintf("ctx=%dKiB/scanner-reference", size>>10), func(b *testing.B) { benchmarkScanner(b, body) })
	}
}
