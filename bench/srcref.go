//go:build srcref && cgo

package bench

/*
#cgo pkg-config: speexdsp soxr samplerate
#include <stdlib.h>
#include <speex/speex_resampler.h>
#include <soxr.h>
#include <samplerate.h>

static int speex_run(SpeexResamplerState *st, const float *in, int n, float *out, int cap) {
	int total = 0;
	while (n > 0 && total < cap) {
		spx_uint32_t ilen = n, olen = cap - total;
		speex_resampler_process_float(st, 0, in, &ilen, out + total, &olen);
		if (ilen == 0 && olen == 0) break;
		in += ilen; n -= ilen; total += olen;
	}
	return total;
}

static soxr_t soxr_hq(double in, double out) {
	soxr_error_t err;
	soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
	soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
	soxr_t s = soxr_create(in, out, 1, &err, &io, &q, NULL);
	return err ? NULL : s;
}

static int soxr_run(soxr_t s, const float *in, int n, float *out, int cap) {
	size_t total = 0;
	while (n > 0 && total < (size_t)cap) {
		size_t idone = 0, odone = 0;
		if (soxr_process(s, in, n, &idone, out + total, cap - total, &odone)) return -1;
		if (idone == 0 && odone == 0) break;
		in += idone; n -= idone; total += odone;
	}
	return (int)total;
}

static int lsr_run(SRC_STATE *st, const float *in, int n, float *out, int cap, double ratio) {
	SRC_DATA d = {0};
	d.data_in = in; d.input_frames = n;
	d.data_out = out; d.output_frames = cap;
	d.src_ratio = ratio;
	int total = 0;
	for (;;) {
		if (src_process(st, &d)) return -1;
		total += d.output_frames_gen;
		d.data_in += d.input_frames_used; d.input_frames -= d.input_frames_used;
		d.data_out += d.output_frames_gen; d.output_frames -= d.output_frames_gen;
		if (d.input_frames == 0 || (d.input_frames_used == 0 && d.output_frames_gen == 0)) break;
	}
	return total;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

func init() {
	RefEngines = append(RefEngines,
		Engine{"speexdsp-q3", func(in, out int) (Converter, error) { return newSpeex(in, out, 3) }},
		Engine{"speexdsp-q5", func(in, out int) (Converter, error) { return newSpeex(in, out, 5) }},
		Engine{"soxr-hq", newSoxr},
		Engine{"lsr-best", newLSR},
	)
}

// grow makes room for the output of n input samples at ratio out/in.
func grow(dst []float32, n, in, out int) []float32 {
	need := n*out/in + 64
	if cap(dst)-len(dst) < need {
		dst = append(dst[:cap(dst)], make([]float32, need)...)[:len(dst)]
	}
	return dst
}

func ptr(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

type speex struct {
	st      *C.SpeexResamplerState
	in, out int
}

func newSpeex(in, out, q int) (Converter, error) {
	var err C.int
	st := C.speex_resampler_init(1, C.spx_uint32_t(in), C.spx_uint32_t(out), C.int(q), &err)
	if st == nil || err != 0 {
		return nil, errors.New("speex_resampler_init failed")
	}
	return &speex{st, in, out}, nil
}

func (s *speex) Process(dst, src []float32) []float32 {
	dst = grow(dst, len(src), s.in, s.out)
	free := dst[len(dst):cap(dst)]
	n := C.speex_run(s.st, ptr(src), C.int(len(src)), ptr(free), C.int(len(free)))
	return dst[:len(dst)+int(n)]
}

func (s *speex) Close() { C.speex_resampler_destroy(s.st) }

type soxr struct {
	s       C.soxr_t
	in, out int
}

func newSoxr(in, out int) (Converter, error) {
	s := C.soxr_hq(C.double(in), C.double(out))
	if s == nil {
		return nil, errors.New("soxr_create failed")
	}
	return &soxr{s, in, out}, nil
}

func (s *soxr) Process(dst, src []float32) []float32 {
	dst = grow(dst, len(src), s.in, s.out)
	free := dst[len(dst):cap(dst)]
	n := C.soxr_run(s.s, ptr(src), C.int(len(src)), ptr(free), C.int(len(free)))
	if n < 0 {
		panic("soxr_process failed")
	}
	return dst[:len(dst)+int(n)]
}

func (s *soxr) Close() { C.soxr_delete(s.s) }

type lsr struct {
	st      *C.SRC_STATE
	in, out int
}

func newLSR(in, out int) (Converter, error) {
	var err C.int
	st := C.src_new(C.SRC_SINC_BEST_QUALITY, 1, &err)
	if st == nil {
		return nil, errors.New("src_new failed")
	}
	return &lsr{st, in, out}, nil
}

func (l *lsr) Process(dst, src []float32) []float32 {
	dst = grow(dst, len(src), l.in, l.out)
	free := dst[len(dst):cap(dst)]
	n := C.lsr_run(l.st, ptr(src), C.int(len(src)), ptr(free), C.int(len(free)), C.double(float64(l.out)/float64(l.in)))
	if n < 0 {
		panic("src_process failed")
	}
	return dst[:len(dst)+int(n)]
}

func (l *lsr) Close() { C.src_delete(l.st) }
