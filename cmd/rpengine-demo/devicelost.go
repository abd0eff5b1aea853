package main

import (
	"errors"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// watchDevice tells the player in one line when the sound device is lost
// (its sound server died, it was unplugged) and when it is back (issue
// #35). rpengine/audio keeps the speech going in silence meanwhile and
// opens the device again by itself, so the demo goes on without a
// restart; before, it said nothing and stayed silent for the rest of the
// session. The watch ends at exit.
func (a *app) watchDevice(dev *audio.Device) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		lost := false
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			switch err := dev.Err(); {
			case errors.Is(err, audio.ErrDeviceLost) && !lost:
				lost = true
				why := strings.TrimPrefix(oneLine(err), audio.ErrDeviceLost.Error()+": ")
				a.con.Printf("rpengine-demo: sound device lost: %s; speech is muted until it comes back", why)
			case err == nil && lost:
				lost = false
				a.con.Printf("rpengine-demo: sound device is back; speech is heard again")
			}
		}
	}()
	a.closers = append(a.closers, func() { close(stop); <-done })
}
