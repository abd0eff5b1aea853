//go:build cgo

// Package alsaquiet keeps libasound's error printing off the game's stderr
// while a miniaudio device opens. On a Linux machine without a sound card,
// ALSA otherwise writes some thirty "ALSA lib ... cannot find card '0'"
// lines for every device it probes. The first message is kept, so the
// diagnostic goes into the returned error instead of being lost.
//
// libasound is loaded with dlopen, as miniaudio itself does, so nothing
// links against it and no -dev package is needed to build.
package alsaquiet

/*
#cgo linux LDFLAGS: -ldl
#include <stddef.h>

#ifdef __linux__
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

// libasound's snd_lib_error_handler_t.
typedef void (*alsaHandler)(const char *file, int line, const char *function, int err, const char *fmt, ...);

static void *alsaLib;
static int (*alsaSetHandler)(alsaHandler);
static alsaHandler *alsaCurrent; // libasound's snd_lib_error variable
static alsaHandler alsaSaved;
static char alsaFirst[256]; // first message seen while quiet

static void alsaRecord(const char *file, int line, const char *function, int err, const char *fmt, ...) {
	if (alsaFirst[0] != 0 || fmt == NULL) return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(alsaFirst, sizeof alsaFirst, fmt, ap);
	va_end(ap);
}

// alsaQuiet replaces libasound's error handler (which prints to stderr)
// with alsaRecord; it returns 0 when libasound is not installed.
static int alsaQuiet(void) {
	if (alsaLib == NULL) {
		alsaLib = dlopen("libasound.so.2", RTLD_NOW | RTLD_LOCAL); // kept open: the handler must outlive miniaudio's handle
		if (alsaLib == NULL) return 0;
		alsaSetHandler = (int (*)(alsaHandler))dlsym(alsaLib, "snd_lib_error_set_handler");
		alsaCurrent = (alsaHandler *)dlsym(alsaLib, "snd_lib_error");
	}
	if (alsaSetHandler == NULL || alsaCurrent == NULL) return 0;
	alsaSaved = *alsaCurrent;
	alsaFirst[0] = 0;
	alsaSetHandler(alsaRecord);
	return 1;
}

// alsaRestore puts back the handler alsaQuiet replaced and returns the
// first message recorded meanwhile ("" if none).
static const char *alsaRestore(void) {
	alsaSetHandler(alsaSaved);
	return alsaFirst;
}
#else
static int alsaQuiet(void) { return 0; }
static const char *alsaRestore(void) { return ""; }
#endif
*/
import "C"

import "sync"

// alsaMu serialises device opening, so the ALSA error handler is replaced
// and restored by one opener at a time.
var alsaMu sync.Mutex

// Do runs open with libasound's error printing diverted: on a
// machine without a sound card, ALSA otherwise writes about 30 lines of
// "ALSA lib ... cannot find card '0'" to the game's stderr for every
// device it probes. The first message is kept and
// returned as reason, so the diagnostic is not lost but goes into the
// error. The previous handler (the default, or the game's own) is restored
// before Do returns; ALSA errors from other threads during the open
// are recorded or dropped too. Without libasound (or off Linux) it just
// calls open.
func Do(open func() error) (reason string, err error) {
	alsaMu.Lock()
	defer alsaMu.Unlock()
	if C.alsaQuiet() == 0 {
		return "", open()
	}
	err = open()
	return C.GoString(C.alsaRestore()), err
}
