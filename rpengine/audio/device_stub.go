//go:build !cgo

package audio

import "fmt"

// defaultOpener reports that there is no device: without cgo malgo cannot
// be built.
var defaultOpener opener = func(deviceConfig) (device, error) {
	return nil, fmt.Errorf("%w: built without cgo", ErrNoDevice)
}

// nullBackendOpener is the same stub; with cgo it opens miniaudio's null
// backend, which tests use.
var nullBackendOpener = defaultOpener
