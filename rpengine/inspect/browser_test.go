package inspect_test

// The page in a real browser (issue #36): headless Chromium, driven with
// chromedp, watches while the fake engine streams a voiced reply over each
// transport.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gamelink-go/gamelink/internal/chromiumtest"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

var screenshot = flag.String("screenshot", "", "write the WebSocket case's screenshot of the page to this file (docs/inspector.png: -screenshot ../../docs/inspector.png)")

// eval evaluates expr in the tab, bounded.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitJS waits until expr is truthy in the tab, bounded (a guard against
// a hang, not a timing assertion).
func waitJS(t *testing.T, tab context.Context, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("page never %s (%s): %v", what, expr, err)
	}
}

func TestBrowser_page(t *testing.T) {
	t.Parallel()
	browser := chromiumtest.New(t, chromedp.WindowSize(1500, 1100),
		// evil.test resolves to loopback: a DNS-rebinding page's Host.
		chromedp.Flag("host-resolver-rules", "MAP evil.test 127.0.0.1"))
	for _, transport := range []string{"websocket", "mailbox"} {
		t.Run(transport, func(t *testing.T) {
			dir := ""
			if transport == "mailbox" {
				dir = filepath.Join(testutil.TempDir(t), "mbx")
			}
			g, p := newInspected(t, nil, dir)
			mixer, err := audio.NewMixer(nil)
			testutil.Success(t, err)
			t.Cleanup(func() { mixer.Close() })
			speaker, err := mixer.NewSpeaker(nil)
			testutil.Success(t, err)
			p.in.AddSpeaker(speaker)
			// A request the engine fails, for an error row.
			eopts := &enginetest.Options{Responder: func(r enginetest.Request) enginetest.Script {
				if r.Text == "Break, please." {
					return enginetest.Script{Error: "request_failed", ErrorMessage: "the model stopped"}
				}
				return enginetest.DefaultScript(r)
			}}
			if dir == "" {
				g.dialWS(t, eopts)
			} else {
				g.dialMailbox(t, dir, eopts)
			}
			tab, cancel := chromedp.NewContext(browser)
			defer cancel()
			testutil.Success(t, chromedp.Do(tab, chromedp.Navigate(p.in.URL(p.addr))))
			waitJS(t, tab, "went live", `document.querySelector("#live").textContent === "live"`)
			testutil.Equal(t, "transport shown", eval[string](t, tab, `document.querySelector('#session [data-field="transport"]').textContent`), transport)

			// The reply streams while the page watches.
			ctx := ctxT(t)
			r, err := g.srv.Reply(ctx, audioReq(testCard(t), "Where is the inn?"))
			testutil.Success(t, err)
			var segs []int
			for ev := range r.Events() {
				switch ev.Kind {
				case rpengine.EventSegment:
					segs = append(segs, len(ev.Segment.Samples))
					testutil.Success(t, speaker.Enqueue(r.RequestID(), ev.Segment))
				case rpengine.EventAudioEnd:
					testutil.Success(t, speaker.End(r.RequestID()))
				}
			}
			res, err := r.Wait(ctx)
			testutil.Success(t, err)
			row := fmt.Sprintf(`document.querySelector('.reply[data-id=%q]')`, r.RequestID())
			waitJS(t, tab, "showed the reply completed", row+`?.querySelector(".status").textContent === "completed"`)

			// Its timeline rows, in order and in time order.
			points := eval[[]string](t, tab, `[...`+row+`.querySelectorAll(".timeline li[data-point]")].map(li => li.dataset.point)`)
			testutil.Equal(t, "timeline", points, []string{"submitted", "sent", "accepted", "first text", "first audio", "text completed", "audio completed", "completed"})
			times := eval[[]int64](t, tab, `[...`+row+`.querySelectorAll(".timeline li[data-point]")].map(li => +li.dataset.t)`)
			testutil.Equal(t, "points in time order", slices.IsSorted(times), true)
			testutil.Equal(t, "full text", eval[string](t, tab, row+`.querySelector(".text").textContent`), res.Text)

			// One waveform per segment, drawn from the WAV the game serves,
			// and a play button that decodes to the segment's duration.
			testutil.Equal(t, "segments", eval[int](t, tab, row+`.querySelectorAll(".segment").length`), len(segs))
			waitJS(t, tab, "drew every waveform", `[...`+row+`.querySelectorAll(".segment")].every(s => s.dataset.drawn)`)
			for i, n := range segs {
				drawn := eval[string](t, tab, fmt.Sprintf(row+`.querySelector('.segment[data-index="%d"]').dataset.drawn`, i))
				if want := fmt.Sprintf("%.4f", float64(n)/44100); drawn != want {
					t.Errorf("segment %d drawn from %s s, want %s", i, drawn, want)
				}
			}
			play := fmt.Sprintf(`.reply[data-id=%q] .segment[data-index="1"] .play`, r.RequestID())
			testutil.Success(t, chromedp.Do(tab, chromedp.Click(chromedp.CSS(play))))
			waitJS(t, tab, "played segment 1", row+`.querySelector('.segment[data-index="1"]').dataset.played`)
			played := eval[string](t, tab, row+`.querySelector('.segment[data-index="1"]').dataset.played`)
			testutil.Equal(t, "played duration", played, fmt.Sprintf("%.4f", float64(segs[1])/44100))

			// The speaker's heard position moves across the waveforms as the
			// mixer plays (reads) the reply.
			buf := make([]byte, 192000/10) // 0.1 s of the mixer's 48 kHz stereo PCM16
			for range 3 {
				_, _ = mixer.Read(buf)
			}
			waitJS(t, tab, "showed the heard position", row+`.dataset.heardMs > 0`)
			first := eval[float64](t, tab, "+"+row+`.dataset.heardMs`)
			for range 20 {
				_, _ = mixer.Read(buf)
			}
			waitJS(t, tab, "moved the heard position", fmt.Sprintf(`+%s.dataset.heardMs > %g`, row, first))
			waitJS(t, tab, "showed the reply heard", `[...`+row+`.querySelectorAll(".segment")].every(s => s.classList.contains("heard") && s.querySelector(".cursor").style.left === "100%")`)

			// An engine error ends its row, beside the reply before it.
			broken, err := g.srv.Reply(ctx, audioReq(testCard(t), "Break, please."))
			testutil.Success(t, err)
			_, err = broken.Wait(ctx)
			if err == nil {
				t.Fatal("the broken request succeeded")
			}
			brow := fmt.Sprintf(`document.querySelector('.reply[data-id=%q]')`, broken.RequestID())
			waitJS(t, tab, "showed the error", brow+`?.querySelector(".status").textContent === "error"`)
			testutil.Equal(t, "error timeline", eval[[]string](t, tab, `[...`+brow+`.querySelectorAll(".timeline li[data-point]")].map(li => li.dataset.point)`),
				[]string{"submitted", "sent", "accepted", "error"})
			if detail := eval[string](t, tab, brow+`.querySelector('.timeline li[data-point="error"]').textContent`); !strings.Contains(detail, "request_failed: the model stopped") {
				t.Errorf("error point says %q", detail)
			}

			// The protocol log narrows to one request, then to one type.
			want := 0
			for _, e := range p.snapshot(t).Log {
				if e.Request == r.RequestID() {
					want++
				}
			}
			selectValue(t, tab, "#log-request", r.RequestID())
			rows := eval[[]string](t, tab, `[...document.querySelectorAll("#log tbody tr")].map(tr => tr.dataset.request)`)
			if len(rows) != want || slices.IndexFunc(rows, func(s string) bool { return s != r.RequestID() }) >= 0 {
				t.Errorf("filtered to the request: %d rows %v, want %d of %s", len(rows), rows, want, r.RequestID())
			}
			selectValue(t, tab, "#log-type", "reply.text.delta")
			types := eval[[]string](t, tab, `[...document.querySelectorAll("#log tbody tr")].map(tr => tr.dataset.type)`)
			if len(types) == 0 || slices.IndexFunc(types, func(s string) bool { return s != "reply.text.delta" }) >= 0 {
				t.Errorf("filtered to reply.text.delta: %v", types)
			}
			// A message's JSON on click, its audio elided.
			selectValue(t, tab, "#log-type", map[string]string{"websocket": "reply.audio.chunk", "mailbox": "reply.audio.segment"}[transport])
			testutil.Success(t, chromedp.Do(tab, chromedp.Click(chromedp.CSS("#log tbody tr"))))
			waitJS(t, tab, "showed the JSON", `document.querySelector("#json").textContent.includes('"requestId"')`)
			js := eval[string](t, tab, `document.querySelector("#json").textContent`)
			if transport == "websocket" && (!strings.Contains(js, "base64 audio elided") || len(js) > 2000) {
				t.Errorf("chunk JSON: %.500s", js)
			}
			selectValue(t, tab, "#log-type", "")
			selectValue(t, tab, "#log-request", "")

			shot, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
			testutil.Success(t, err)
			checkNotBlank(t, shot)
			if *screenshot != "" && transport == "websocket" {
				testutil.Success(t, os.WriteFile(*screenshot, shot, 0o644))
			}

			// A wrong token, and a Host that is not the listener's (DNS
			// rebinding), are refused.
			refused := func(u, want string) {
				t.Helper()
				res, err := chromedp.RunResponse(tab, chromedp.Navigate(u))
				testutil.Success(t, err)
				testutil.Equal(t, u+": status", res.Status, int64(403))
				if body := eval[string](t, tab, `document.body.innerText`); !strings.Contains(body, want) {
					t.Errorf("%s: page says %q", u, body)
				}
			}
			refused(strings.Replace(p.in.URL(p.addr), "token=", "token=x", 1), "wrong or missing token")
			_, port, _ := net.SplitHostPort(p.addr)
			refused(strings.Replace(p.in.URL(p.addr), p.addr, "evil.test:"+port, 1), "is not this listener's loopback address")
		})
	}
}

// selectValue picks an option of a select, as a user does.
func selectValue(t *testing.T, tab context.Context, sel, value string) {
	t.Helper()
	eval[bool](t, tab, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event("change")); return s.value === %q })()`, sel, value, value))
}

// checkNotBlank fails unless the PNG shot has a few distinct colours over
// a good part of it.
func checkNotBlank(t *testing.T, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	testutil.Success(t, err)
	b := img.Bounds()
	colours := map[uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>12<<8|g>>12<<4|bl>>12]++
		}
	}
	most := 0
	for _, n := range colours {
		most = max(most, n)
	}
	total := (b.Dx() / 4) * (b.Dy() / 4)
	if len(colours) < 8 || float64(most) > 0.97*float64(total) {
		t.Errorf("screenshot %v looks blank: %d colours, the commonest on %d of %d samples", b, len(colours), most, total)
	}
}
