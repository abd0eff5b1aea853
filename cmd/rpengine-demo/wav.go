package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/gamelink-go/gamelink/internal/wav"
	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// wavOut streams a reply's speech to a PCM16 mono WAV file as segments
// arrive, so a long session needs no memory for it. The sizes in the
// header are written on Close. Samples are written exactly as received.
type wavOut struct {
	f          *os.File
	sampleRate int
	bytes      int64
	buf        []byte
	err        error
}

const wavHeaderBytes = wav.HeaderSize

func createWAV(name string) (*wavOut, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w := &wavOut{f: f, sampleRate: 44100}
	if _, err := f.Write(make([]byte, wavHeaderBytes)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Mark returns the current end of the audio, for Rewind.
func (w *wavOut) Mark() int64 { return w.bytes }

// Rewind drops the audio written since mark: the turn is being sent again
// and only the reply that completes is kept.
func (w *wavOut) Rewind(mark int64) error {
	if w.err != nil {
		return w.err
	}
	if mark > w.bytes {
		return fmt.Errorf("rewind to %d beyond %d bytes", mark, w.bytes)
	}
	w.bytes = mark
	if w.err = w.f.Truncate(wavHeaderBytes + mark); w.err != nil {
		return w.err
	}
	_, w.err = w.f.Seek(wavHeaderBytes+mark, io.SeekStart)
	return w.err
}

// Write appends one segment's samples.
func (w *wavOut) Write(samples []int16, sampleRate int) error {
	if w.err != nil {
		return w.err
	}
	if w.bytes == 0 {
		w.sampleRate = sampleRate
	} else if sampleRate != w.sampleRate {
		w.err = fmt.Errorf("segment at %d Hz after segments at %d Hz", sampleRate, w.sampleRate)
		return w.err
	}
	if w.bytes+2*int64(len(samples)) > math.MaxUint32-wavHeaderBytes {
		w.err = errors.New("audio beyond the 4 GiB WAV limit")
		return w.err
	}
	w.buf = w.buf[:0]
	for _, s := range samples {
		w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(s))
	}
	_, w.err = w.f.Write(w.buf)
	w.bytes += int64(len(w.buf))
	return w.err
}

// Close writes the header and closes the file.
func (w *wavOut) Close() error {
	err := w.err
	if err == nil {
		err = w.writeHeader()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeHeader writes the header, with the sizes, over the placeholder.
func (w *wavOut) writeHeader() error {
	h, err := wav.AppendHeader(make([]byte, 0, wavHeaderBytes), wav.Format{SampleRate: w.sampleRate, Channels: 1, BitsPerSample: 16}, w.bytes)
	if err != nil {
		return err
	}
	_, err = w.f.WriteAt(h, 0)
	return err
}

// maxSpeech is the longest event.audio the engine takes.
const maxSpeech = 30 // seconds

// readSpeech reads a WAV file of any rate and channel count and returns it
// as the 16 kHz mono PCM16 the engine hears.
func readSpeech(name, lang string) (*speech, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := audio.ReadWAV(f, 0) // 0: at most 30 s, the engine's limit
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	mono, err := audio.AppendDownmix(nil, w.Samples, w.Channels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pcm, err := resampleTo16k(mono, w.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(pcm) == 0 {
		return nil, fmt.Errorf("%s: no samples", name)
	}
	if len(pcm) > maxSpeech*audio.CaptureRate {
		return nil, fmt.Errorf("%s: %.1f s of speech; the engine takes at most %d s per event",
			name, float64(len(pcm))/audio.CaptureRate, maxSpeech)
	}
	sp := &speech{samples: audio.AppendInt16(nil, pcm)}
	if speechLanguage(lang) {
		sp.lang = lang
	}
	return sp, nil
}

// resampleTo16k converts mono samples at rate Hz to 16 kHz, keeping the
// whole filter tail and dropping the filter's delay so the speech starts
// on time.
func resampleTo16k(mono []float32, rate int) ([]float32, error) {
	if rate == audio.CaptureRate {
		return mono, nil
	}
	r, err := audio.NewResampler(rate, audio.CaptureRate, 1)
	if err != nil {
		return nil, err
	}
	out, err := r.Append(make([]float32, 0, r.MaxOutFrames(len(mono))), mono)
	if err != nil {
		return nil, err
	}
	out = r.Flush(out)
	want := int(int64(len(mono)) * audio.CaptureRate / int64(rate))
	delay := int(r.Delay().Seconds()*audio.CaptureRate + 0.5)
	if delay > len(out) {
		delay = len(out)
	}
	out = out[delay:]
	if len(out) > want {
		out = out[:want]
	}
	return out, nil
}

// speechLanguage reports whether lang is a valid event.audio language
// hint (docs/rpengine-protocol.md, "Game to engine").
func speechLanguage(lang string) bool {
	switch lang {
	case "en", "ar", "es", "ja", "ko", "vi", "uk", "zh":
		return true
	}
	return false
}
