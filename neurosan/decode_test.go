package neurosan

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// decodeAll runs the decoder to its end, returning the texts of messages
// ("type:text"), the heartbeat and empty counts, and the final error (nil
// at a clean end).
func decodeAll(r io.Reader, max int64) (msgs []string, heartbeats, empties int, err error) {
	d := newDecoder(r, max)
	for {
		kind, err := d.next()
		if err == io.EOF {
			return msgs, heartbeats, empties, nil
		}
		if err != nil {
			return msgs, heartbeats, empties, err
		}
		switch kind {
		case frameHeartbeat:
			heartbeats++
		case frameEmpty:
			empties++
		default:
			msgs = append(msgs, string(d.msg.Type)+":"+d.msg.Text)
		}
	}
}

var decodeCases = []struct {
	name       string
	in         string
	msgs       []string
	heartbeats int
	empties    int
	streamErr  string // *StreamError message
	decodeErr  bool   // *DecodeError
}{
	{name: "one line", in: `{"response":{"type":"AGENT_FRAMEWORK","text":"hi"}}` + "\n", msgs: []string{"AGENT_FRAMEWORK:hi"}},
	{name: "no final newline", in: `{"response":{"type":"AI","text":"a"}}`, msgs: []string{"AI:a"}},
	{name: "two on one line", in: `{"response":{"type":"AI","text":"a"}}{"response":{"type":"AGENT_FRAMEWORK","text":"b"}}` + "\n", msgs: []string{"AI:a", "AGENT_FRAMEWORK:b"}},
	{name: "two on one line with space", in: `{"response":{"type":"AI","text":"a"}} {"response":{"type":"AI","text":"b"}}`, msgs: []string{"AI:a", "AI:b"}},
	{name: "numeric types", in: `{"response":{"type":101,"text":"x"}}` + "\n" + `{"response":{"type":4}}` + "\n" + `{"response":{"type":999}}`, msgs: []string{"AGENT_FRAMEWORK:x", "AI:", "999:"}},
	{name: "unknown type name passes", in: `{"response":{"type":"UNKNOWN_MESSAGE_TYPE","text":"q"}}`, msgs: []string{"UNKNOWN_MESSAGE_TYPE:q"}},
	{name: "empty object", in: "{}", empties: 1},
	{name: "empty then answer", in: "{}\n{\"response\":{\"type\":\"AGENT_FRAMEWORK\",\"text\":\"z\"}}\n", empties: 1, msgs: []string{"AGENT_FRAMEWORK:z"}},
	{name: "null response", in: `{"response":null}`, empties: 1},
	{name: "heartbeat skipped", in: `{"response":{"type":"AGENT_PROGRESS","text":""}}` + "\n" + `{"response":{"type":"AGENT_PROGRESS"}}` + "\n", heartbeats: 2},
	{name: "progress with only an origin is a message", in: `{"response":{"type":"AGENT_PROGRESS","origin":[{"tool":"calc"}]}}`, msgs: []string{"AGENT_PROGRESS:"}},
	{name: "progress with structure is a message", in: `{"response":{"type":"AGENT_PROGRESS","structure":{"progress":0.5}}}`, msgs: []string{"AGENT_PROGRESS:"}},
	{name: "error without newline after answer", in: `{"response":{"type":"AI","text":"partial"}}` + "\n" + `{"error":"Request timeout"}`, msgs: []string{"AI:partial"}, streamErr: "Request timeout"},
	{name: "error on the same line", in: `{"response":{"type":"AI","text":"p"}}{"error":"Internal server error"}`, msgs: []string{"AI:p"}, streamErr: "Internal server error"},
	{name: "error object value", in: `{"error":{"code":5}}`, streamErr: `{"code":5}`},
	{name: "blank lines and CRLF", in: "\r\n\n{\"response\":{\"type\":\"AI\",\"text\":\"c\"}}\r\n\r\n", msgs: []string{"AI:c"}},
	{name: "truncated object", in: `{"response":{"type":"AI","te`, decodeErr: true},
	{name: "not JSON", in: "<html>502 Bad Gateway</html>", decodeErr: true},
	{name: "array not object", in: `[1,2]`, decodeErr: true},
	{name: "string not object", in: `"hi"`, decodeErr: true},
	{name: "null not object", in: `null`, decodeErr: true},
	{name: "number after answer", in: `{"response":{"type":"AI","text":"a"}} 42`, msgs: []string{"AI:a"}, decodeErr: true},
	{name: "bad type", in: `{"response":{"type":true}}`, decodeErr: true},
	{name: "empty body", in: ""},
	// Issue #25: what Python's json.dumps writes for non-finite floats.
	{name: "NaN and Infinity", in: `{"response": {"type": "AGENT_FRAMEWORK", "text": "n", "structure": {"a": NaN, "b": [Infinity, -Infinity]}, "sly_data": {"m": NaN}}}` + "\n", msgs: []string{"AGENT_FRAMEWORK:n"}},
	{name: "NaN in the error value", in: `{"error": NaN}`, streamErr: "NaN"},
	{name: "not NaN", in: `{"response": {"type": "AI", "structure": Nope}}`, decodeErr: true},
	{name: "NaN for a text", in: `{"response": {"type": "AI", "text": NaN}}`, decodeErr: true},
}

func Test_decoder(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeCases {
		for _, mode := range []string{"whole", "one byte"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				var r io.Reader = strings.NewReader(tc.in)
				if mode == "one byte" {
					r = iotest.OneByteReader(r)
				}
				msgs, hb, empties, err := decodeAll(r, 1<<20)
				testutil.Equal(t, "messages", msgs, tc.msgs)
				testutil.Equal(t, "heartbeats", hb, tc.heartbeats)
				testutil.Equal(t, "empties", empties, tc.empties)
				var se *StreamError
				var de *DecodeError
				switch {
				case tc.streamErr != "":
					testutil.ErrorAs(t, err, &se)
					testutil.Equal(t, "stream error", se.Message, tc.streamErr)
					testutil.Equal(t, "offset is just past the object", tc.in[se.Offset-1], byte('}'))
				case tc.decodeErr:
					testutil.ErrorAs(t, err, &de)
				default:
					testutil.Success(t, err)
				}
			})
		}
	}
}

func Test_decoder_hugeLine(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("y", 1<<20+100) // far over bufio.Scanner's 64 KiB
	in := `{"response":{"type":"AGENT_FRAMEWORK","text":"` + big + `"}}`
	d := newDecoder(strings.NewReader(in), 2<<20)
	kind, err := d.next()
	testutil.Success(t, err)
	testutil.Equal(t, "kind", kind, frameMessage)
	testutil.Equal(t, "text length", len(d.msg.Text), len(big))

	d = newDecoder(strings.NewReader(`{}`+"\n"+in), 1<<20)
	_, err = d.next()
	testutil.Success(t, err)
	_, err = d.next()
	testutil.ErrorIs(t, err, ErrMessageTooBig)
	testutil.Equal(t, "read stopped near the limit", d.lr.read <= 1<<20+8, true)
}

// A transport error must surface as a cut connection wrapping itself, not
// as a JSON syntax error or a bad stream. Issue #25.
func Test_decoder_transportError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(`{"response":{"ty`), iotest.ErrReader(boom))
	_, err := newDecoder(r, 0).next()
	testutil.ErrorIs(t, err, boom)
	testutil.ErrorIs(t, err, ErrConnectionCut)
	testutil.Equal(t, "message", err.Error(), "neurosan: connection cut at byte 16: connection reset")
	var de *DecodeError
	testutil.Equal(t, "not a DecodeError", errors.As(err, &de), false)
}

// FuzzDecoder checks that the decoder never panics, and that how the bytes
// are cut into reads never changes what it decodes. CI runs the seeds.
func FuzzDecoder(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in), uint8(3))
	}
	f.Add([]byte(`{"response":{"type":"AI","origin":[{"tool":"a","instantiation_index":1}],"sly_data":{"k":[1]},"extra":{"n":null}}}`), uint8(1))
	f.Add([]byte(`{"response": {"structure": {"x": -Infinity, "s": "NaN\" E", "n": 1E5}, "sly_data": {"k": NaN}}}`), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		n := int(chunk%16) + 1
		whole, hb1, e1, err1 := decodeAll(bytes.NewReader(in), 1<<16)
		cut, hb2, e2, err2 := decodeAll(&chunkReader{b: in, n: n}, 1<<16)
		if !equalStrings(whole, cut) || hb1 != hb2 || e1 != e2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("chunk %d changed the result: %q %d %d %v vs %q %d %d %v", n, whole, hb1, e1, err1, cut, hb2, e2, err2)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

// A stream cut inside an object is a *DecodeError matching
// io.ErrUnexpectedEOF, as the DecodeError.Unwrap doc says.
func Test_decoder_cutObject(t *testing.T) {
	t.Parallel()
	_, err := newDecoder(strings.NewReader(`{"response":{"type":"AI","te`), 0).next()
	var de *DecodeError
	testutil.ErrorAs(t, err, &de)
	testutil.ErrorIs(t, err, io.ErrUnexpectedEOF)
	testutil.Equal(t, "offset at the cut", de.Offset, int64(28))
}

// A DecodeError's Offset is where decoding failed, not where the object
// began.
func Test_decoder_errorOffset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		max  int64
		want int64
	}{
		{name: "syntax error: just past the bad byte", in: `{} {"response":x}`, want: 16},
		{name: "not an object: end of the value", in: `{} [1,2]`, want: 8},
		{name: "too big: where reading stopped", in: `{}` + strings.Repeat(" ", 10) + `{"response":{"text":"` + strings.Repeat("z", 100) + `"}}`, max: 50, want: 2 + 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, _, err := decodeAll(strings.NewReader(tc.in), tc.max)
			var de *DecodeError
			testutil.ErrorAs(t, err, &de)
			testutil.Equal(t, "offset", de.Offset, tc.want)
		})
	}
}
