package main

import (
	"fmt"
	"os"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
)

// outputLost is how long Ebitengine may stop pulling the mixer, while the
// game runs, before the sound device counts as lost: the library's own
// Device waits as long (rpengine/audio, Device).
const outputLost = 2 * time.Second

// watchOutput runs once per tick. When the sound device is lost (the sound
// server died: Ebitengine's driver stops pulling the mixer), it says so in
// one line and then reads the mixer in real time itself, as --mute does,
// so the reply goes on in silence and the character's mouth and subtitles
// with it (issue #35). Ebitengine's audio context cannot be opened again
// in a running game, so the speech stays muted until the game restarts.
func (v *voice) watchOutput(now time.Time) {
	if v.player == nil || v.silent != nil {
		return
	}
	if n := v.pulled.Load(); n != v.lastPulled || v.pulledAt.IsZero() {
		v.lastPulled, v.pulledAt = n, now
		return
	}
	if quiet := now.Sub(v.pulledAt); quiet >= outputLost {
		fmt.Fprintf(os.Stderr, "ebiten-tavern: sound device lost: no audio pulled for %v; speech is muted until the game restarts\n", quiet.Round(100*time.Millisecond))
		v.player.Pause()
		v.silent = make([]byte, 4*sampleRate/ebiten.TPS()) // one tick, as --mute
	}
}
