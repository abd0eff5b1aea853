package bench

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

const (
	chunkBytes   = enginetest.MaxChunkBytes // 32 KiB of PCM16 per message
	chunkSamples = chunkBytes / 2
	segChunks    = 8 // chunks per sentence: 3 s of speech
	replySegs    = 4
	replyID      = "req-1"
)

// chunkAudio is the audio in one chunk message.
var chunkAudio = time.Duration(chunkSamples) * time.Second / enginetest.SampleRate

// replyMessages returns the text of the reply.audio.chunk messages of one
// reply (replySegs sentences of segChunks chunks), as an engine sends
// them: envelope first, then the payload, data last.
func replyMessages() [][]byte {
	var msgs [][]byte
	seq := 0
	for s := range replySegs {
		pcm := enginetest.Synthesize(s, float64(segChunks*chunkSamples)/enginetest.SampleRate)
		for c := range segChunks {
			msgs = append(msgs, chunkMessage(seq, s, c, segChunks, pcm[c*chunkBytes:(c+1)*chunkBytes]))
			seq++
		}
	}
	return msgs
}

func chunkMessage(seq, seg, pos, count int, pcm []byte) []byte {
	return fmt.Appendf(nil, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.chunk",`+
		`"messageId":"6f1c2a4e-8d3b-4c5a-9e7f-%012d","sessionId":"0b8e5d2c-4f6a-4e1b-8c3d-7a9f1e2b3c4d",`+
		`"timestamp":"2026-07-14T00:00:00.000Z","requestId":%q,"sequence":%d,"segmentSequence":%d,`+
		`"segmentChunkSequence":%d,"segmentChunkCount":%d,"data":%q}`,
		seq, replyID, seq, seg, pos, count, base64.StdEncoding.EncodeToString(pcm))
}

// chunkJSON is the straightforward decoding target: the envelope and the
// payload in one struct.
type chunkJSON struct {
	Protocol        string `json:"protocol"`
	ProtocolVersion int    `json:"protocolVersion"`
	Type            string `json:"type"`
	MessageID       string `json:"messageId"`
	SessionID       string `json:"sessionId"`
	Timestamp       string `json:"timestamp"`

	RequestID            string `json:"requestId"`
	Sequence             int    `json:"sequence"`
	SegmentSequence      int    `json:"segmentSequence"`
	SegmentChunkSequence int    `json:"segmentChunkSequence"`
	SegmentChunkCount    int    `json:"segmentChunkCount"`
	Data                 string `json:"data"`
}

// playback stands for the speaker's queue: the samples are converted to
// float32 (as audio.Speaker.Enqueue does) into a preallocated ring.
type playback struct {
	ring    []float32
	samples int
}

func newPlayback() *playback {
	return &playback{ring: make([]float32, 0, segChunks*chunkSamples)}
}

func (p *playback) write(s []int16) {
	p.ring = audio.AppendFloat32(p.ring[:0], s)
	p.samples += len(s)
}

// replyPath is one way of turning chunk messages into queued samples.
type replyPath interface {
	chunk(msg []byte) error
	reset() // a new reply
}

// decoderPath is ours: stream.Assembler.Push, which decodes a chunk
// message without encoding/json straight into the segment's samples.
type decoderPath struct {
	a  *stream.Assembler
	pb *playback
}

func (p *decoderPath) reset() {
	a, err := stream.NewAssembler(&stream.Options{RequestID: replyID})
	if err != nil {
		panic(err)
	}
	p.a = a
	if err := p.a.Push(audioStart); err != nil {
		panic(err)
	}
}

// audioStart is the reply.audio.start of the benchmark's reply.
var audioStart = []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.audio.start","messageId":"start",` +
	`"timestamp":"2026-07-14T00:00:00.000Z","requestId":"` + replyID + `","format":"pcm_s16le","sampleRate":44100,"channels":1}`)

func (p *decoderPath) chunk(msg []byte) error {
	if err := p.a.Push(msg); err != nil {
		return err
	}
	for out, ok := p.a.Next(); ok; out, ok = p.a.Next() {
		switch out.Kind {
		case stream.OutputSegment:
			p.pb.write(out.Segment.Samples)
		case stream.OutputAnomaly:
			return fmt.Errorf("anomaly %v", out.Anomaly)
		}
	}
	return nil
}

// naivePath is the straightforward path: encoding/json into a struct,
// base64.StdEncoding.Decode, samples appended to the sentence.
type naivePath struct {
	seg []int16
	pb  *playback
}

func (p *naivePath) reset() { p.seg = nil }

func (p *naivePath) chunk(msg []byte) error {
	var m chunkJSON
	if err := json.Unmarshal(msg, &m); err != nil {
		return err
	}
	pcm := make([]byte, base64.StdEncoding.DecodedLen(len(m.Data)))
	n, err := base64.StdEncoding.Decode(pcm, []byte(m.Data))
	if err != nil {
		return err
	}
	for i := 0; i+1 < n; i += 2 {
		p.seg = append(p.seg, int16(binary.LittleEndian.Uint16(pcm[i:])))
	}
	if m.SegmentChunkSequence == m.SegmentChunkCount-1 {
		p.pb.write(p.seg)
		p.seg = nil
	}
	return nil
}

// base64Path is the floor: base64 decoding of the data alone.
type base64Path struct{ buf []byte }

func (p *base64Path) reset() {}

func (p *base64Path) chunk(msg []byte) error {
	i := len(msg) - 2 - base64.StdEncoding.EncodedLen(chunkBytes) // the data string ends the message
	_, err := base64.StdEncoding.Decode(p.buf, msg[i:len(msg)-2])
	return err
}

// BenchmarkReplyPCM measures the reply audio path per reply.audio.chunk
// message (32 KiB of PCM, 0.37 s of speech): from the WebSocket message
// text to the samples queued for playback.
//
//   - decoder: ours, stream.Assembler.Push of the message text;
//   - naive: the straightforward path, encoding/json into a struct, then
//     base64.StdEncoding.Decode, appending samples to the sentence;
//   - base64: decoding the data alone, the floor.
//
// allocs/chunk is exact (the segment buffer, allocated once per sentence,
// is shared by its chunks).
func BenchmarkReplyPCM(b *testing.B) {
	msgs := replyMessages()
	paths := []struct {
		name string
		path replyPath
	}{
		{"decoder", &decoderPath{pb: newPlayback()}},
		{"naive", &naivePath{pb: newPlayback()}},
		{"base64", &base64Path{buf: make([]byte, chunkBytes)}},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			p.path.reset()
			b.SetBytes(chunkBytes)
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mallocs := ms.Mallocs
			i := 0
			cpu := startCPU()
			for b.Loop() {
				if i == len(msgs) {
					i = 0
					p.path.reset()
				}
				if err := p.path.chunk(msgs[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			cpu.report(b)
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(b.N), "allocs/chunk")
			reportRealtime(b, chunkAudio)
		})
	}
}

// reportRealtime reports how many seconds of audio one second of work
// handles.
func reportRealtime(b *testing.B, audioPerOp time.Duration) {
	if perOp := b.Elapsed() / time.Duration(b.N); perOp > 0 {
		b.ReportMetric(float64(audioPerOp)/float64(perOp), "x_realtime")
	}
}

// TestReplyPaths checks that every path of BenchmarkReplyPCM queues the
// same samples, those the engine synthesized.
func TestReplyPaths(t *testing.T) {
	t.Parallel()
	msgs := replyMessages()
	var want []int16
	for s := range replySegs {
		pcm := enginetest.Synthesize(s, float64(segChunks*chunkSamples)/enginetest.SampleRate)
		for i := 0; i+1 < segChunks*chunkBytes; i += 2 {
			want = append(want, int16(binary.LittleEndian.Uint16(pcm[i:])))
		}
	}
	for name, p := range map[string]replyPath{
		"decoder": &decoderPath{pb: newPlayback()}, "naive": &naivePath{pb: newPlayback()},
	} {
		var got []int16
		pb := &playback{}
		switch q := p.(type) {
		case *decoderPath:
			q.pb = pb
		case *naivePath:
			q.pb = pb
		}
		p.reset()
		for _, m := range msgs {
			before := pb.samples
			if err := p.chunk(m); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if pb.samples > before {
				got = append(got, audio.AppendInt16(nil, pb.ring)...)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d samples queued, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: sample %d is %d, want %d", name, i, got[i], want[i])
			}
		}
	}
}
