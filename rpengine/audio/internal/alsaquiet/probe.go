//go:build cgo && linux

package alsaquiet

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

// probe opens a PCM device that cannot exist through libasound, which
// makes ALSA report an error through its error handler; it returns -1
// when libasound is not installed.
static int probe(void) {
	void *lib = dlopen("libasound.so.2", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) return -1;
	int (*open)(void **, const char *, int, int) = (int (*)(void **, const char *, int, int))dlsym(lib, "snd_pcm_open");
	if (open == NULL) return -1;
	void *pcm = NULL;
	return open(&pcm, "hw:97,0", 0, 0);
}
*/
import "C"

// probeMissingCard makes libasound report an error by opening a PCM device
// that cannot exist. It is used by the tests, to check that Do keeps that
// report off stderr; it returns -1 when libasound is not installed.
func probeMissingCard() int { return int(C.probe()) }
