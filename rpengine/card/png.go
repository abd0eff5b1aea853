package card

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// ErrNoCard is returned by [ExtractPNG] for a well-formed PNG that holds
// no card.
var ErrNoCard = errors.New("card: the PNG holds no character card (no tEXt chunk named ccv3 or chara)")

// ExtractPNG returns the card JSON embedded in a PNG image: the base64 of
// UTF-8 JSON in a tEXt chunk named "ccv3" (preferred) or "chara",
// wherever the chunk is in the file. Whether the card is V2 or V3 is up to
// its decoded spec field, not the chunk name: pass the result to
// [Repair] to read a V3 card as V2, or to [Parse]. The PNG's structure
// and every chunk's CRC are checked; a malformed file gets an error saying
// where. A file over [MaxSize] is refused before it is read, with an
// error matching [ErrTooLarge]. [Load] keeps the image as the card's
// [Card.Portrait].
func ExtractPNG(png []byte) ([]byte, error) {
	card, _, err := extractPNG(png)
	return card, err
}

// extractPNG returns the card JSON of a PNG card, and the PNG without its
// card's chunks: the portrait.
func extractPNG(png []byte) (card, image []byte, err error) {
	if err := checkSize(png, "PNG"); err != nil {
		return nil, nil, err
	}
	if !bytes.HasPrefix(png, pngSignature) {
		return nil, nil, errors.New("card: not a PNG file (bad signature)")
	}
	found := map[string][]byte{}
	image = append([]byte(nil), pngSignature...)
	for off := len(pngSignature); ; {
		if len(png)-off < 12 {
			return nil, nil, fmt.Errorf("card: malformed PNG: truncated chunk header at byte %d", off)
		}
		n := binary.BigEndian.Uint32(png[off:])
		typ := png[off+4 : off+8]
		if uint64(n) > uint64(len(png)-off-12) {
			return nil, nil, fmt.Errorf("card: malformed PNG: chunk %q at byte %d claims %d bytes, past the end of the file", typ, off, n)
		}
		body := png[off+8 : off+8+int(n)]
		crc := binary.BigEndian.Uint32(png[off+8+int(n):])
		if crc32.ChecksumIEEE(png[off+4:off+8+int(n)]) != crc {
			return nil, nil, fmt.Errorf("card: malformed PNG: bad CRC in chunk %q at byte %d", typ, off)
		}
		next := off + 12 + int(n)
		k, v, ok := bytes.Cut(body, []byte{0})
		if isCard := string(typ) == "tEXt" && ok && (string(k) == "ccv3" || string(k) == "chara"); isCard {
			found[string(k)] = v
		} else {
			image = append(image, png[off:next]...)
		}
		if string(typ) == "IEND" {
			break
		}
		off = next
	}
	for _, k := range []string{"ccv3", "chara"} {
		if v, ok := found[k]; ok {
			card, err := decodeCardText(k, v)
			return card, image, err
		}
	}
	return nil, nil, ErrNoCard
}

func decodeCardText(chunk string, v []byte) ([]byte, error) {
	v = bytes.TrimSpace(v)
	enc := base64.StdEncoding
	if len(v)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	out := make([]byte, enc.DecodedLen(len(v)))
	n, err := enc.Decode(out, v)
	if err != nil {
		return nil, fmt.Errorf("card: PNG tEXt chunk %q is not valid base64: %w", chunk, err)
	}
	return out[:n], nil
}
