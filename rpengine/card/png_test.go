package card

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func chunk(typ string, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	b = append(b, typ...)
	b = append(b, body...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

func textChunk(key string, card []byte) []byte {
	return chunk("tEXt", append([]byte(key+"\x00"), base64.StdEncoding.EncodeToString(card)...))
}

// makePNG encodes a 1x1 image and inserts the extra chunks after IHDR
// (early) or before IEND (late).
func makePNG(t *testing.T, early, late [][]byte) []byte {
	var buf bytes.Buffer
	testutil.Success(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))))
	b := buf.Bytes()
	ihdrEnd := 8 + 12 + 13
	iend := len(b) - 12
	out := append([]byte(nil), b[:ihdrEnd]...)
	out = append(out, bytes.Join(early, nil)...)
	out = append(out, b[ihdrEnd:iend]...)
	out = append(out, bytes.Join(late, nil)...)
	return append(out, b[iend:]...)
}

func TestExtractPNG(t *testing.T) {
	t.Parallel()
	v2 := readCard(t, "minimal.json")
	v3 := readCard(t, "broken-v3.json")
	good := makePNG(t, nil, [][]byte{textChunk("chara", v2)})
	tests := []struct {
		name string
		png  []byte
		want []byte
		err  string
	}{
		{"chara after IDAT", good, v2, ""},
		{"chara before IDAT", makePNG(t, [][]byte{textChunk("chara", v2)}, nil), v2, ""},
		{"ccv3 preferred wherever it is", makePNG(t, [][]byte{textChunk("chara", v2)}, [][]byte{textChunk("ccv3", v3)}), v3, ""},
		{"other text chunks ignored", makePNG(t, [][]byte{textChunk("Comment", []byte("hi"))}, [][]byte{textChunk("chara", v2)}), v2, ""},
		{"no card", makePNG(t, nil, nil), nil, "no character card"},
		{"not a png", []byte("GIF89a"), nil, "not a PNG"},
		{"truncated", good[:len(good)-20], nil, "malformed PNG"},
		{"truncated header", good[:len(good)-5], nil, "truncated chunk header"},
		{"bad crc", func() []byte { b := bytes.Clone(good); b[len(b)-20] ^= 1; return b }(), nil, "bad CRC"},
		{"length past end", append(bytes.Clone(good[:33]), 0x7f, 0xff, 0xff, 0xff, 't', 'E', 'X', 't', 0, 0, 0, 0), nil, "past the end"},
		{"unpadded base64", makePNG(t, nil, [][]byte{chunk("tEXt", append([]byte("chara\x00"), base64.RawStdEncoding.EncodeToString(v2[:len(v2)-1])...))}), v2[:len(v2)-1], ""},
		{"bad base64", makePNG(t, nil, [][]byte{chunk("tEXt", []byte("chara\x00!!!!"))}), nil, "not valid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ExtractPNG(tt.png)
			if tt.err != "" {
				testutil.Error(t, err)
				if !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %q does not say %q", err, tt.err)
				}
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "card", got, tt.want)
		})
	}
	// A V3 card from ccv3 becomes V2 by its spec field, through Repair.
	got, _ := ExtractPNG(tests[2].png)
	c, _, err := Repair(got)
	testutil.Success(t, err)
	testutil.Success(t, c.Validate())
}
