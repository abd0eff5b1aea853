package wire_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

const rid = "r1"

// pcm is samples as base64 PCM16 little-endian, as chunks carry them.
func pcm(samples ...int16) string {
	b := make([]byte, 2*len(samples))
	for i, v := range samples {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return base64.StdEncoding.EncodeToString(b)
}

const chunkEnv = `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m-1","sessionId":"s-1","timestamp":"2026-07-14T00:00:00.000Z",`

// chunkMsg is the text of a chunk message as engines send it.
func chunkMsg(seq, seg, pos, count int, data string) []byte {
	b, _ := json.Marshal(wire.AudioChunk{RequestID: rid, Sequence: seq, SegmentSequence: seg,
		SegmentChunkSequence: pos, SegmentChunkCount: count, Data: data})
	return append([]byte(chunkEnv), b[1:]...)
}

// refDecode is the reference: encoding/json and the server's envelope
// rules (wire.DecodeHeader), then the type check.
func refDecode(msg []byte) (wire.AudioChunk, wire.ChunkEnvelope, error) {
	var f struct {
		Protocol        string          `json:"protocol"`
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
		Type            string          `json:"type"`
		MessageID       string          `json:"messageId"`
		SessionID       *string         `json:"sessionId"`
		Timestamp       string          `json:"timestamp"`
		wire.AudioChunk
	}
	if t := bytes.TrimLeft(msg, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return wire.AudioChunk{}, wire.ChunkEnvelope{}, errors.New("not an object")
	}
	if err := json.Unmarshal(msg, &f); err != nil {
		return wire.AudioChunk{}, wire.ChunkEnvelope{}, err
	}
	switch {
	case f.Protocol != "gemtavern.rp_engine", string(f.ProtocolVersion) != "3",
		f.Type == "", f.MessageID == "", f.Timestamp == "":
		return wire.AudioChunk{}, wire.ChunkEnvelope{}, errors.New("bad envelope")
	case f.Type != "reply.audio.chunk":
		return wire.AudioChunk{}, wire.ChunkEnvelope{}, wire.ErrNotAudioChunk
	}
	env := wire.ChunkEnvelope{MessageID: []byte(f.MessageID), Timestamp: []byte(f.Timestamp)}
	if f.SessionID != nil {
		env.SessionID = []byte(*f.SessionID)
	}
	return f.AudioChunk, env, nil
}

// checkDecode compares ChunkDecoder.Decode with the reference on msg,
// with d as it is and with each way Lend can answer: no buffer, a buffer
// of the size it asked, a larger one, and a smaller one.
func checkDecode(t *testing.T, d *wire.ChunkDecoder, msg []byte) {
	t.Helper()
	checkDecodeLend(t, d, msg)
	lends := map[string]func(n int) []byte{
		"nil":     func(int) []byte { return nil },
		"exact":   func(n int) []byte { return make([]byte, n) },
		"larger":  func(n int) []byte { return make([]byte, n+100) },
		"smaller": func(n int) []byte { return make([]byte, max(0, n-1)) },
	}
	for name, lend := range lends {
		var asked []int
		d2 := &wire.ChunkDecoder{Lend: func(h *wire.ChunkHead, n int) []byte {
			asked = append(asked, n)
			return lend(n)
		}}
		checkDecodeLend(t, d2, msg)
		if want := expectLend(msg); want >= 0 && !slices.Contains(asked, want) {
			t.Fatalf("Lend %s: asked for %v bytes, want %d (%q)", name, asked, want, msg)
		}
	}
}

// expectLend returns the size a decoder with AVX2 asks Lend for, and
// decodes, when msg is a chunk that the fast scanner takes and whose data
// string is plain base64 of at most MaxChunkBytes and ends the message;
// otherwise -1.
func expectLend(msg []byte) int {
	if !wire.DecodesData() {
		return -1
	}
	if !wire.FastScan(msg) {
		return -1 // encoding/json decodes it
	}
	c, _, err := refDecode(msg)
	const ws = " \t\r\n"
	end := bytes.TrimRight(msg, ws)
	if err != nil || !bytes.HasSuffix(end, []byte("}")) ||
		!bytes.HasSuffix(bytes.TrimRight(end[:len(end)-1], ws), []byte(`"data":"`+c.Data+`"`)) {
		return -1
	}
	pcm, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil || strings.ContainsAny(c.Data, "\r\n") || len(pcm) > wire.MaxChunkBytes {
		return -1
	}
	return len(pcm)
}

func checkDecodeLend(t *testing.T, d *wire.ChunkDecoder, msg []byte) {
	t.Helper()
	orig := bytes.Clone(msg)
	wantC, wantEnv, wantErr := refDecode(msg)
	c := wire.AudioChunk{Data: "untouched"}
	env, err := d.Decode(&c, msg)
	if !bytes.Equal(msg, orig) {
		t.Fatalf("Decode modified its input %q", orig)
	}
	if (err == nil) != (wantErr == nil) || errors.Is(err, wire.ErrNotAudioChunk) != errors.Is(wantErr, wire.ErrNotAudioChunk) {
		t.Fatalf("Decode(%q): error %v, reference %v", msg, err, wantErr)
	}
	if err != nil {
		if c != (wire.AudioChunk{Data: "untouched"}) {
			t.Fatalf("Decode(%q) failed but changed the chunk to %+v", msg, c)
		}
		return
	}
	if c != wantC {
		t.Fatalf("Decode(%q) = %+v, reference %+v", msg, c, wantC)
	}
	if pcm := d.PCM(); pcm != nil {
		want, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || !bytes.Equal(pcm, want) {
			t.Fatalf("Decode(%q): PCM %x, encoding/base64 %x (%v)", msg, pcm, want, err)
		}
	} else if n := expectLend(msg); n >= 0 {
		t.Fatalf("Decode(%q) left %d bytes of plain base64 undecoded", msg, n)
	}
	if env.Checked && !utf8.Valid(msg) {
		t.Fatalf("Decode(%q) says it checked invalid UTF-8", msg)
	}
	if !bytes.Equal(env.MessageID, wantEnv.MessageID) || !bytes.Equal(env.Timestamp, wantEnv.Timestamp) ||
		!bytes.Equal(env.SessionID, wantEnv.SessionID) || (env.SessionID == nil) != (wantEnv.SessionID == nil) {
		t.Fatalf("Decode(%q) envelope %+v, reference %+v", msg, env, wantEnv)
	}
}

var decodeCases = []struct{ name, msg string }{
	{"plain", string(chunkMsg(7, 2, 1, 3, pcm(1, 2, 3)))},
	{"whitespace", " \r\n{ \"protocol\" : \"gemtavern.rp_engine\" ,\t\"protocolVersion\":3,\"type\":\"reply.audio.chunk\",\"messageId\":\"m\",\"timestamp\":\"t\",\"requestId\":\"r1\",\"data\":\"AAA=\" } \n"},
	{"no session", `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk","messageId":"m","timestamp":"t","data":""}`},
	{"null session", chunkEnv + `"sessionId":null,"data":"AAAA"}`},
	{"session then null", chunkEnv + `"sessionId":"x","sessionId":null}`},
	{"duplicate data, last wins", chunkEnv + `"data":"AAAA","data":"BBBB"}`},
	{"null keeps value", chunkEnv + `"data":"AAAA","data":null,"sequence":4,"sequence":null}`},
	{"unknown scalars", chunkEnv + `"x":1.5e-3,"y":true,"z":false,"w":"é\u0000","v":null,"data":"AAAA"}`},
	{"unknown nested", chunkEnv + `"x":{"a":[1,2]},"data":"AAAA"}`},
	{"unknown with invalid utf8", chunkEnv + "\"x\":\"\xff\",\"data\":\"AAAA\"}"},
	{"unknown with valid utf8", chunkEnv + "\"x\":\"\u00e9t\u00e9\",\"data\":\"AAAA\"}"},
	{"escaped slash in data", chunkEnv + `"data":"AA\/A"}`},
	{"data not whole groups", chunkEnv + `"data":"0000="}`},
	{"data padding inside", chunkEnv + `"data":"AA=A"}`},
	{"data padding only", chunkEnv + `"data":"="}`},
	{"data too much padding", chunkEnv + `"data":"A==="}`},
	{"data after padding", chunkEnv + `"data":"AA==AAAA"}`},
	{"escape in id", chunkEnv + `"requestId":"r\u0031"}`},
	{"utf8 id", chunkEnv + `"requestId":"rés"}`},
	{"invalid utf8 id", chunkEnv + "\"requestId\":\"r\xe9\"}"},
	{"control char in data", chunkEnv + "\"data\":\"AA\nAA\"}"},
	{"control char in key", chunkEnv + "\"da\tta\":\"AAAA\"}"},
	{"case-folded key", chunkEnv + `"Data":"AAAA","SEQUENCE":3}`},
	{"kelvin key", chunkEnv + "\"\u212aey\":1,\"data\":\"AAAA\"}"},
	{"negative ints", chunkEnv + `"sequence":-1,"segmentSequence":-0}`},
	{"float int", chunkEnv + `"sequence":1.0}`},
	{"exponent int", chunkEnv + `"sequence":1e2}`},
	{"leading zero", chunkEnv + `"sequence":01}`},
	{"huge int", chunkEnv + `"sequence":123456789012345678901234}`},
	{"string int", chunkEnv + `"sequence":"1"}`},
	{"version 3.0", strings.Replace(chunkEnv, `"protocolVersion":3`, `"protocolVersion":3.0`, 1) + `"data":""}`},
	{"version string", strings.Replace(chunkEnv, `"protocolVersion":3`, `"protocolVersion":"3"`, 1) + `"data":""}`},
	{"version null", strings.Replace(chunkEnv, `"protocolVersion":3`, `"protocolVersion":null`, 1) + `"data":""}`},
	{"wrong protocol", strings.Replace(chunkEnv, "gemtavern.rp_engine", "other", 1) + `"data":""}`},
	{"no message id", strings.Replace(chunkEnv, `"messageId":"m-1"`, `"messageId":""`, 1) + `"data":""}`},
	{"other type", strings.Replace(chunkEnv, "reply.audio.chunk", "reply.text.delta", 1) + `"delta":"hi"}`},
	{"empty object", `{}`},
	{"array", `[1]`},
	{"trailing garbage", chunkEnv + `"data":""}x`},
	{"two objects", chunkEnv + `"data":""}{}`},
	{"unterminated", chunkEnv + `"data":"AAAA`},
	{"missing colon", chunkEnv + `"data" "AAAA"}`},
	{"trailing comma", chunkEnv + `"data":"AAAA",}`},
	{"bad literal", chunkEnv + `"x":tru,"data":""}`},
	{"bad number", chunkEnv + `"x":-,"data":""}`},
	{"empty", ``},
}

func TestChunkDecoder_Decode(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkDecode(t, new(wire.ChunkDecoder), []byte(tc.msg))
		})
	}
}

func TestChunkDecoder_NotAudioChunk(t *testing.T) {
	t.Parallel()
	msg := strings.Replace(chunkEnv, "reply.audio.chunk", "reply.text.delta", 1) + `"delta":"hi"}`
	var c wire.AudioChunk
	_, err := new(wire.ChunkDecoder).Decode(&c, []byte(msg))
	testutil.ErrorIs(t, err, wire.ErrNotAudioChunk)
}

// TestChunkDecoder_RequestIDShared checks that the chunks of one reply
// share one requestId string and that it does not alias the message.
func TestChunkDecoder_RequestIDShared(t *testing.T) {
	t.Parallel()
	var d wire.ChunkDecoder
	var a, b wire.AudioChunk
	m1, m2 := chunkMsg(0, 0, 0, 2, "AAAA"), chunkMsg(1, 0, 1, 2, "AAAA")
	_, err := d.Decode(&a, m1)
	testutil.Success(t, err)
	_, err = d.Decode(&b, m2)
	testutil.Success(t, err)
	for i := range m1 {
		m1[i], m2[i] = 'x', 'x'
	}
	testutil.Equal(t, "first requestId", a.RequestID, rid)
	testutil.Equal(t, "second requestId", b.RequestID, rid)
	testutil.Equal(t, "data aliases the message", a.Data, "xxxx")
}

func FuzzChunkDecoder(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.msg))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		checkDecode(t, new(wire.ChunkDecoder), msg)
	})
}

// TestChunkDecoder_LongData puts a byte encoding/json treats specially at
// every offset of a long data string, so that each lane of the scanner's
// word-at-a-time check meets it.
func TestChunkDecoder_LongData(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("ABCD", 40)
	for _, bad := range []string{"\x00", "\x1f", "\n", "\\/", "é", "\xff", "\x7f", "\""} {
		for at := 0; at <= len(base); at++ {
			msg := []byte(chunkEnv + `"data":"` + base[:at] + bad + base[at:] + `"}`)
			checkDecode(t, new(wire.ChunkDecoder), msg)
		}
	}
}

// TestChunkDecoder_DataSizes decodes data of every length from 0 to 200
// bytes (every padding, both sides of the 32-character blocks of the AVX2
// kernel) and around the 32 KiB limit, data last and data first, each
// checked against encoding/json and encoding/base64 with every kind of
// Lend: the fused decoding gives what decoding the string gives (issue
// #24).
func TestChunkDecoder_DataSizes(t *testing.T) {
	t.Parallel()
	sizes := []int{wire.MaxChunkBytes - 2, wire.MaxChunkBytes - 1, wire.MaxChunkBytes, wire.MaxChunkBytes + 1, wire.MaxChunkBytes + 2, 3 * wire.MaxChunkBytes}
	for n := range 201 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		data := base64.StdEncoding.EncodeToString(b)
		checkDecode(t, new(wire.ChunkDecoder), []byte(chunkEnv+`"requestId":"r1","sequence":1,"data":"`+data+`"}`))
		checkDecode(t, new(wire.ChunkDecoder), []byte(chunkEnv+`"data":"`+data+`","requestId":"r1","sequence":1}`))
	}
}

// TestChunkDecoder_LendHead checks what Lend is told when data ends the
// message: the fields before it, and the decoded size.
func TestChunkDecoder_LendHead(t *testing.T) {
	t.Parallel()
	if !wire.DecodesData() {
		t.Skip("the data is decoded in the scan only with AVX2")
	}
	var got wire.ChunkHead
	var size int
	buf := make([]byte, 64)
	d := &wire.ChunkDecoder{Lend: func(h *wire.ChunkHead, n int) []byte {
		got, size = *h, n
		got.RequestID = bytes.Clone(h.RequestID)
		return buf
	}}
	var c wire.AudioChunk
	_, err := d.Decode(&c, chunkMsg(7, 2, 1, 3, pcm(1, 2, 3)))
	testutil.Success(t, err)
	testutil.Equal(t, "head", got, wire.ChunkHead{RequestID: []byte(rid), Sequence: 7, SegmentSequence: 2, SegmentChunkSequence: 1, SegmentChunkCount: 3})
	testutil.Equal(t, "size", size, 6)
	testutil.Equal(t, "PCM in the lent buffer", &d.PCM()[0] == &buf[0] && len(d.PCM()) == 6, true)
	testutil.Equal(t, "PCM", d.PCM(), []byte{1, 0, 2, 0, 3, 0})
}
