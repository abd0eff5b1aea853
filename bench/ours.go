package bench

import "github.com/gamelink-go/gamelink/rpengine/audio"

// Ours is audio.Resampler behind the Converter harness.
var Ours = Engine{Name: "ours", New: func(inRate, outRate int) (Converter, error) {
	r, err := audio.NewResampler(inRate, outRate, 1)
	if err != nil {
		return nil, err
	}
	return goConverter{r}, nil
}}

type goConverter struct{ r *audio.Resampler }

func (g goConverter) Process(dst, src []float32) []float32 {
	dst, _ = g.r.Append(dst, src) // src is mono: always whole frames
	return dst
}

func (g goConverter) Close() {}
