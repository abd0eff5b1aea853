package card

// Fuzz targets added by the hardening work (issue #9) for the card entry
// points that had none: PNG extraction and repair.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// hardPNG builds a minimal PNG (signature, IHDR, one tEXt chunk named key
// holding base64(payload), IEND) with valid CRCs.
func hardPNG(key string, payload []byte) []byte {
	chunk := func(b []byte, typ string, body []byte) []byte {
		start := len(b)
		b = binary.BigEndian.AppendUint32(b, uint32(len(body)))
		b = append(b, typ...)
		b = append(b, body...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start+4:]))
	}
	b := append([]byte(nil), pngSignature...)
	b = chunk(b, "IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0})
	b = chunk(b, "tEXt", append([]byte(key+"\x00"), base64.StdEncoding.EncodeToString(payload)...))
	return chunk(b, "IEND", nil)
}

const hardCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`

// FuzzExtractPNG feeds arbitrary bytes as a PNG (no panic, no result
// without an error), and embeds them as a card in a well-formed PNG, which
// must give them back exactly, under either chunk name.
func FuzzExtractPNG(f *testing.F) {
	f.Add([]byte(hardCard))
	f.Add(hardPNG("chara", []byte(hardCard)))
	f.Add(hardPNG("ccv3", []byte(`{"spec":"chara_card_v3"}`)))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00IEND\xaeB`\x82"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if out, err := ExtractPNG(data); err == nil && out == nil {
			t.Fatal("no card and no error")
		}
		for _, key := range []string{"chara", "ccv3"} {
			out, err := ExtractPNG(hardPNG(key, data))
			if err != nil {
				t.Fatalf("%s chunk: %v", key, err)
			}
			if !bytes.Equal(out, data) {
				t.Fatalf("%s chunk: got %q, want %q", key, out, data)
			}
		}
	})
}

// FuzzRepair: no panic; a card Repair returns without error is valid,
// parses to the same hash, and repairing it again changes nothing.
func FuzzRepair(f *testing.F) {
	f.Add([]byte(hardCard))
	f.Add([]byte("\xef\xbb\xbf" + hardCard))
	f.Add([]byte(`{"name":"V1","description":"d","personality":"p","scenario":"s","first_mes":"f","mes_example":"m"}`))
	f.Add([]byte(`{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ari","character_book":{"entries":[{"keys":["a"],"content":"c"}]}}}`))
	f.Add([]byte(`{"spec":"chara_card_v2","data":{"name":"  ","tags":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := Repair(data)
		if err != nil || c == nil {
			return
		}
		if verr := c.Validate(); verr != nil {
			t.Fatalf("repaired card is invalid: %v\n%s", verr, c.Bytes())
		}
		h := c.Hash()
		p, err := Parse(c.Bytes())
		if err != nil {
			t.Fatalf("repaired card does not parse: %v", err)
		}
		if h2 := p.Hash(); h2 != h {
			t.Fatalf("hash changed on reparse: %v != %v", h2, h)
		}
		c2, changes, err := Repair(c.Bytes())
		if err != nil || len(changes) != 0 || !bytes.Equal(c2.Bytes(), c.Bytes()) {
			t.Fatalf("repair is not idempotent: %v %v\n%s\n%s", err, changes, c.Bytes(), c2.Bytes())
		}
	})
}
