// Package mailbox is the file transport v1 (docs/rpengine-protocol.md,
// "File transport"): the game's side of a mailbox folder (Server:
// setup, lock, polling, each session's connection; server.go,
// segment.go), and the primitives it shares with the fake engine
// (enginetest): the folder layout and manifest, message file names
// (<13-digit ms>-<messageId>.json plus its .ready marker), the atomic
// write (temporary name, rename, then marker), reading a marked message
// with its size limit, and the audio slots' PCM16 WAV files (read and
// written with internal/wav).
//
// Every function works through an *os.Root opened on the mailbox folder,
// so no name can reach outside it: ".." and symlinks that leave the
// folder are refused by the kernel-backed os.Root checks, and message and
// slot files must moreover be regular files (a symlink inside the folder
// is not followed either).
package mailbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Layout and manifest constants (docs/rpengine-protocol.md, "File
// transport").
const (
	Schema        = "gemtavern.rp_engine.file_transport"
	Version       = 1
	ManifestName  = "manifest.json"
	ToEngine      = "integration-to-engine"
	FromEngine    = "engine-to-integration"
	AudioDir      = "audio"
	SlotPattern   = "slot_%04d.wav"
	AudioFormat   = "wav_pcm_s16le"
	SlotCount     = 2048
	SampleRate    = 44100
	ReadySuffix   = ".ready"
	JSONSuffix    = ".json"
	TempPrefix    = ".tmp-"
	MaxSlotBytes  = 64 << 20 // a WAV slot larger than this is refused (6 min of speech)
	stemMillisLen = 13
)

// Manifest is manifest.json.
type Manifest struct {
	Schema        string    `json:"schema"`
	Version       int       `json:"version"`
	IntegrationID string    `json:"integrationId"`
	DisplayName   string    `json:"displayName"`
	Mailboxes     Mailboxes `json:"mailboxes"`
	Audio         Audio     `json:"audio"`
}

// Mailboxes names the two message folders.
type Mailboxes struct {
	IntegrationToEngine string `json:"integrationToEngine"`
	EngineToIntegration string `json:"engineToIntegration"`
}

// Audio describes the audio slots.
type Audio struct {
	Format      string `json:"format"`
	Directory   string `json:"directory"`
	SlotPattern string `json:"slotPattern"`
	SlotCount   int    `json:"slotCount"`
	SampleRate  int    `json:"sampleRate"`
	Channels    int    `json:"channels"`
}

// NewManifest returns the manifest of this layout.
func NewManifest(integrationID, displayName string, slots int) Manifest {
	return Manifest{
		Schema: Schema, Version: Version, IntegrationID: integrationID, DisplayName: displayName,
		Mailboxes: Mailboxes{IntegrationToEngine: ToEngine, EngineToIntegration: FromEngine},
		Audio: Audio{Format: AudioFormat, Directory: AudioDir, SlotPattern: SlotPattern,
			SlotCount: slots, SampleRate: SampleRate, Channels: 1},
	}
}

// SlotName returns the file name of slot i (slot_0007.wav).
func SlotName(i int) string {
	s := strconv.Itoa(i)
	for len(s) < 4 {
		s = "0" + s
	}
	return "slot_" + s + ".wav"
}

// SlotPath returns the mailbox-relative path of slot i, as the engine
// puts it in reply.audio.segment (audio/slot_0007.wav).
func SlotPath(i int) string { return AudioDir + "/" + SlotName(i) }

// Stem returns the file stem of a message: 13-digit milliseconds, a dash,
// the messageId.
func Stem(ms int64, messageID string) string {
	s := strconv.FormatInt(ms, 10)
	for len(s) < stemMillisLen {
		s = "0" + s
	}
	return s + "-" + messageID
}

// ParseStem splits a stem; ok is false when it is not 13 digits, a dash
// and a non-empty messageId of safe characters ([A-Za-z0-9._-]).
func ParseStem(stem string) (ms int64, messageID string, ok bool) {
	if len(stem) < stemMillisLen+2 || stem[stemMillisLen] != '-' {
		return 0, "", false
	}
	for i := 0; i < stemMillisLen; i++ {
		if stem[i] < '0' || stem[i] > '9' {
			return 0, "", false
		}
	}
	id := stem[stemMillisLen+1:]
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return 0, "", false
		}
	}
	ms, err := strconv.ParseInt(stem[:stemMillisLen], 10, 64)
	return ms, id, err == nil
}

// Entry is a marked message file in a mailbox folder.
type Entry struct {
	Stem string
	MS   int64
	ID   string
}

// List returns the stems of dir (relative to root) that have both their
// .ready marker and a well-formed name, in stem order, plus every name
// present (for callers that prune what they remember).
func List(root *os.Root, dir string) (ready []Entry, names map[string]bool, err error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	names = make(map[string]bool, len(des))
	for _, de := range des {
		names[de.Name()] = true
	}
	for n := range names {
		stem, ok := strings.CutSuffix(n, ReadySuffix)
		if !ok {
			continue
		}
		ms, id, ok := ParseStem(stem)
		if !ok || !names[stem+JSONSuffix] {
			continue
		}
		ready = append(ready, Entry{Stem: stem, MS: ms, ID: id})
	}
	slices.SortFunc(ready, func(a, b Entry) int { return strings.Compare(a.Stem, b.Stem) })
	return ready, names, nil
}

// ErrTooBig is returned by ReadMessage for a file over its limit.
var ErrTooBig = errors.New("file over the size limit")

// ErrNotRegular is returned for a message or slot that is not a regular
// file (a symlink, a folder, a device): it is never followed.
var ErrNotRegular = errors.New("not a regular file")

// ReadRegular reads name (relative to root), which must be a regular file
// (symlinks are not followed) of at most max bytes.
func ReadRegular(root *os.Root, name string, max int64) ([]byte, error) {
	f, _, err := OpenRegular(root, name, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w: grew past %d bytes", name, ErrTooBig, max)
	}
	return b, nil
}

// Write publishes one message in dir: data goes to a temporary name
// (which readers ignore), is published as <stem>.json once complete and
// closed (never replacing an existing message), and only then is the
// empty <stem>.ready marker created. On
// error nothing stays behind that a reader would take (the temporary or
// unmarked file is removed) and the error names the file.
func Write(root *os.Root, dir, stem string, data []byte) error {
	tmp := path.Join(dir, TempPrefix+stem+JSONSuffix)
	final := path.Join(dir, stem+JSONSuffix)
	if err := writeFile(root, tmp, data); err != nil {
		_ = removeFile(root, tmp)
		return err
	}
	// Publish without replacing: a hard link fails when the name exists
	// (messages are immutable); where links are not supported, check and
	// rename.
	if err := root.Link(tmp, final); err == nil {
		_ = removeFile(root, tmp)
	} else {
		if _, lerr := root.Lstat(final); errors.Is(err, fs.ErrExist) || lerr == nil {
			_ = removeFile(root, tmp)
			return fmt.Errorf("%s: %w", final, fs.ErrExist)
		}
		if err := renameFile(root, tmp, final); err != nil {
			_ = removeFile(root, tmp)
			return err
		}
	}
	if err := writeFile(root, path.Join(dir, stem+ReadySuffix), nil); err != nil {
		_ = removeFile(root, final)
		return err
	}
	return nil
}

func writeFile(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// Remove removes a message: marker first (so no reader takes a JSON
// that is about to vanish), then the JSON. Missing files are fine.
func Remove(root *os.Root, dir, stem string) error {
	err1 := removeFile(root, path.Join(dir, stem+ReadySuffix))
	err2 := removeFile(root, path.Join(dir, stem+JSONSuffix))
	if errors.Is(err1, fs.ErrNotExist) {
		err1 = nil
	}
	if errors.Is(err2, fs.ErrNotExist) {
		err2 = nil
	}
	return errors.Join(err1, err2)
}

// ReplaceFile writes data to name through a temporary file and a rename,
// so a reader sees the old or the new content, never a mix. A symlink at
// name is replaced, not followed.
func ReplaceFile(root *os.Root, name string, data []byte) error {
	dir, file := path.Split(name)
	tmp := path.Join(dir, TempPrefix+file)
	_ = removeFile(root, tmp)
	if err := writeFile(root, tmp, data); err != nil {
		_ = removeFile(root, tmp)
		return err
	}
	if err := renameFile(root, tmp, name); err != nil {
		_ = removeFile(root, tmp)
		return err
	}
	return nil
}

// RemoveFile removes the file name (relative to root). On Windows it
// copes with files another process holds open and with systems whose
// kernel lacks POSIX delete (see fs_windows.go).
func RemoveFile(root *os.Root, name string) error { return removeFile(root, name) }

// RenameFile renames oldname to newname (relative to root), replacing
// newname. On Windows a sharing violation is retried briefly.
func RenameFile(root *os.Root, oldname, newname string) error {
	return renameFile(root, oldname, newname)
}

// OpenRegular opens name (relative to root) for reading: it must be a
// regular file (symlinks are not followed) of at most max bytes, and the
// file opened must be the one checked (not one swapped in meanwhile).
// The returned FileInfo is the open file's.
func OpenRegular(root *os.Root, name string, max int64) (*os.File, os.FileInfo, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (%v)", name, ErrNotRegular, fi.Mode().Type())
	}
	if fi.Size() > max {
		return nil, nil, fmt.Errorf("%s: %w: %d bytes, limit %d", name, ErrTooBig, fi.Size(), max)
	}
	f, err := root.OpenFile(name, readFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi2, err := f.Stat()
	if err != nil || !os.SameFile(fi, fi2) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (replaced while opening)", name, ErrNotRegular)
	}
	if fi2.Size() > max {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w: %d bytes, limit %d", name, ErrTooBig, fi2.Size(), max)
	}
	return f, fi2, nil
}

// ErrLinked is returned for a slot that is a hard link: a name the file
// shares with another folder, perhaps outside the mailbox, whose content
// the game must not read as the engine's.
var ErrLinked = errors.New("file has other hard links")

// CheckSingleLink returns ErrLinked (wrapped, with the count) when the
// open file f has more than one name.
func CheckSingleLink(f *os.File) error {
	n, err := linkCount(f)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("%s: %w (%d names)", f.Name(), ErrLinked, n)
	}
	return nil
}
