package inspect_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

// view is what the page receives (a subset).
type view struct {
	Session struct {
		Transport, State, ID, ClientVersion, MailboxDir string
		QueueDepth, QueueLimit                          int
	}
	Capacity   []struct{ Depth, Limit int }
	Characters []struct {
		Key, Name, Hash, Mode string
		Bytes                 int
	}
	Replies []replyView
	Notes   []struct{ Level, Text string }
	Log     []struct {
		ID                 int64
		Dir, Type, Request string
		Bytes              int
		Note               string
	}
}

type replyView struct {
	ID, Kind, Character, Text, Error string
	Ended, TextFull                  bool
	Points                           []struct {
		Name, Detail string
		T            int64
	}
	Card *struct {
		Mode       string
		Bytes      int
		HashPrefix string
	}
	Prompt   map[string]string
	Segments []struct {
		Index, SampleRate, Samples int
		Complete                   bool
		Dropped, SpokenText        string
	}
	Notes []struct{ Level, Text string }
}

func (v *view) reply(id string) *replyView {
	for i := range v.Replies {
		if v.Replies[i].ID == id {
			return &v.Replies[i]
		}
	}
	return nil
}

func (r *replyView) points() []string {
	var names []string
	for _, p := range r.Points {
		names = append(names, p.Name)
	}
	return names
}

// page serves in on a loopback port until the test ends.
type page struct {
	in   *inspect.Inspector
	srv  *httptest.Server
	addr string // host:port
}

func servePage(t testing.TB, in *inspect.Inspector) *page {
	t.Helper()
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	return &page{in: in, srv: srv, addr: srv.Listener.Addr().String()}
}

// get fetches path (with the token) and returns the status and body.
func (p *page) get(t testing.TB, path string, q url.Values) (int, string) {
	t.Helper()
	u, _ := url.Parse(p.in.URL(p.addr))
	v := u.Query()
	for k, x := range q {
		v[k] = x
	}
	u.Path, u.RawQuery = path, v.Encode()
	res, err := http.Get(u.String())
	testutil.Success(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// snapshot opens the event stream and returns its first event.
func (p *page) snapshot(t testing.TB) view {
	t.Helper()
	u, _ := url.Parse(p.in.URL(p.addr))
	u.Path = "/events"
	req, _ := http.NewRequestWithContext(ctxT(t), "GET", u.String(), nil)
	res, err := http.DefaultClient.Do(req)
	testutil.Success(t, err)
	defer res.Body.Close()
	testutil.Equal(t, "events status", res.StatusCode, 200)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var v view
			testutil.Success(t, json.Unmarshal([]byte(data), &v))
			return v
		}
	}
	t.Fatalf("no snapshot: %v", sc.Err())
	return view{}
}

// waitFor takes snapshots until ok holds (the recorder writes its lines
// on its own goroutine), bounded as a guard against a hang.
func (p *page) waitFor(t testing.TB, what string, ok func(v *view) bool) view {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := p.snapshot(t)
		if ok(&v) {
			return v
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(v, "", " ")
			t.Fatalf("never %s:\n%s", what, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ended(id string) func(v *view) bool {
	return func(v *view) bool { r := v.reply(id); return r != nil && r.Ended }
}

// newInspected starts a game whose Recorder, Logger and OnSession are an
// Inspector's, with its page served; mailbox dir selects file mode.
func newInspected(t testing.TB, opts *inspect.Options, mailbox string) (*game, *page) {
	t.Helper()
	in := inspect.New(opts)
	t.Cleanup(func() { in.Close() })
	so := &rpengine.ServerOptions{Recorder: in, Logger: in.Logger(slog.New(slog.DiscardHandler)), OnSession: in.OnSession}
	if mailbox != "" {
		so.Mailbox = &rpengine.MailboxOptions{Dir: mailbox, IntegrationID: "game", ActivePoll: 5 * time.Millisecond, IdlePoll: 20 * time.Millisecond}
	}
	return startGame(t, so), servePage(t, in)
}

// Every request needs the token, a loopback listener and its own Host.
func TestInspector_ServeHTTP_refuses(t *testing.T) {
	t.Parallel()
	in := inspect.New(nil)
	p := servePage(t, in)
	_, port, _ := net.SplitHostPort(p.addr)
	get := func(host, path, token string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+p.addr+path+"?token="+url.QueryEscape(token), nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		testutil.Success(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	token := strings.TrimPrefix(in.URL(p.addr), "http://"+p.addr+"/?token=")
	for _, c := range []struct {
		name, host, path, token string
		status                  int
		body                    string
	}{
		{"page", p.addr, "/", token, 200, `app.js?token=` + token},
		{"localhost", "localhost:" + port, "/app.js", token, 200, "EventSource"},
		{"no token", p.addr, "/", "", 403, "wrong or missing token"},
		{"wrong token", p.addr, "/", token + "x", 403, "wrong or missing token"},
		{"wrong token, events", p.addr, "/events", "AAAA", 403, "wrong or missing token"},
		{"wrong token, wav", p.addr, "/wav", "", 403, "wrong or missing token"},
		{"DNS rebinding", "evil.example:" + port, "/", token, 403, "is not this listener's loopback address"},
		{"other port", "127.0.0.1:1", "/", token, 403, "is not this listener's loopback address"},
		{"no port", "127.0.0.1", "/", token, 403, "is not this listener's loopback address"},
		{"unknown path", p.addr, "/nothing", token, 404, "404"},
	} {
		status, body := get(c.host, c.path, c.token)
		testutil.Equal(t, c.name+": status", status, c.status)
		if !strings.Contains(body, c.body) {
			t.Errorf("%s: body has no %q:\n%.300s", c.name, c.body, body)
		}
	}
	res, err := http.Post(in.URL(p.addr), "text/plain", strings.NewReader("x"))
	testutil.Success(t, err)
	res.Body.Close()
	testutil.Equal(t, "POST", res.StatusCode, 405)
	req, _ := http.NewRequest("HEAD", "http://"+p.addr+"/events?token="+token, nil)
	res, err = http.DefaultClient.Do(req)
	testutil.Success(t, err)
	res.Body.Close()
	testutil.Equal(t, "HEAD of the event stream", res.StatusCode, 405)
	// Not on a loopback listener (nor any TCP one): refused whatever the
	// Host and token.
	rec := httptest.NewRecorder()
	in.ServeHTTP(rec, httptest.NewRequest("GET", in.URL("127.0.0.1:80"), nil))
	testutil.Equal(t, "no loopback listener", rec.Code, 403)
	if strings.Contains(in.URL(p.addr), "token=&") || len(token) < 26 {
		t.Errorf("token %q is not 128 bits", token)
	}
	testutil.Equal(t, "another Inspector's token differs", inspect.New(nil).URL(p.addr) != in.URL(p.addr), true)
}

// A voiced reply over each transport: its timeline, text, card, prompt,
// segments (served as WAV, bit-exact) and protocol log with the audio
// elided.
func TestInspector_reply(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"websocket", "mailbox"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			dir := ""
			if transport == "mailbox" {
				dir = filepath.Join(testutil.TempDir(t), "mbx")
			}
			g, p := newInspected(t, nil, dir)
			var eng interface{ Close() error }
			if dir == "" {
				eng = g.dialWS(t, nil)
			} else {
				eng = g.dialMailbox(t, dir, nil)
			}
			ctx := ctxT(t)
			req := audioReq(testCard(t), "Where is the inn?")
			req.PlayerName = "Sam"
			r, err := g.srv.Reply(ctx, req)
			testutil.Success(t, err)
			var segs [][]int16
			for ev := range r.Events() {
				if ev.Kind == rpengine.EventSegment {
					segs = append(segs, ev.Segment.Samples)
				}
			}
			res, err := r.Wait(ctx)
			testutil.Success(t, err)
			v := p.waitFor(t, "saw the reply end", ended(r.RequestID()))
			rv := v.reply(r.RequestID())
			testutil.Equal(t, "transport", v.Session.Transport, transport)
			testutil.Equal(t, "engine state", v.Session.State, "connected")
			testutil.Equal(t, "client version", v.Session.ClientVersion, "enginetest")
			info, _ := g.srv.Session()
			testutil.Equal(t, "session id", v.Session.ID, info.ID)
			testutil.Equal(t, "timeline", rv.points(), []string{"submitted", "sent", "accepted", "first text", "first audio", "text completed", "audio completed", "completed"})
			if !slices.IsSortedFunc(rv.Points, func(a, b struct {
				Name, Detail string
				T            int64
			}) int {
				return int(a.T - b.T)
			}) {
				t.Errorf("points out of time order: %+v", rv.Points)
			}
			testutil.Equal(t, "text", rv.Text, res.Text)
			testutil.Equal(t, "text is the completed one", rv.TextFull, true)
			testutil.Equal(t, "card mode", rv.Card.Mode, "snapshot")
			testutil.Equal(t, "card hash prefix", rv.Card.HashPrefix, res.CardHash.String()[:12])
			testutil.Equal(t, "prompt event", rv.Prompt["event.text"], "Where is the inn?")
			testutil.Equal(t, "prompt voice", rv.Prompt["output.audio.voice"], "F1")
			testutil.Equal(t, "prompt player", rv.Prompt["player.displayName"], "Sam")
			testutil.Equal(t, "segments", len(rv.Segments), len(segs))
			for i, s := range rv.Segments {
				testutil.Equal(t, "segment complete", s.Complete, true)
				testutil.Equal(t, "segment samples", s.Samples, len(segs[i]))
				status, body := p.get(t, "/wav", url.Values{"reply": {r.RequestID()}, "segment": {strconv.Itoa(s.Index)}})
				testutil.Equal(t, "wav status", status, 200)
				pcm := []byte(body)[44:]
				want := make([]byte, 2*len(segs[i]))
				for j, x := range segs[i] {
					binary.LittleEndian.PutUint16(want[2*j:], uint16(x))
				}
				testutil.Equal(t, "wav samples are the reply's", string(pcm) == string(want), true)
				testutil.Equal(t, "wav rate", binary.LittleEndian.Uint32([]byte(body)[24:]), uint32(44100))
			}
			testutil.Equal(t, "character", v.Characters[0].Name, "Ari")
			testutil.Equal(t, "character mode", v.Characters[0].Mode, "snapshot")
			if len(v.Capacity) == 0 || v.Capacity[len(v.Capacity)-1].Limit != 20 {
				t.Errorf("capacity samples %+v", v.Capacity)
			}
			// The log has the reply's messages both ways, and a chunk's JSON
			// (WebSocket) or a segment's (mailbox) without its audio.
			var types []string
			for _, e := range v.Log {
				if e.Request == r.RequestID() {
					types = append(types, e.Dir+" "+e.Type)
				}
			}
			for _, want := range []string{"out reply.request", "in reply.accepted", "in reply.text.delta", "in reply.completed"} {
				if !slices.Contains(types, want) {
					t.Errorf("log of the request has no %s: %v", want, types)
				}
			}
			audioType := map[string]string{"websocket": "reply.audio.chunk", "mailbox": "reply.audio.segment"}[transport]
			i := slices.IndexFunc(v.Log, func(e struct {
				ID                 int64
				Dir, Type, Request string
				Bytes              int
				Note               string
			}) bool {
				return e.Type == audioType
			})
			if i < 0 {
				t.Fatalf("no %s in the log", audioType)
			}
			status, body := p.get(t, "/log", url.Values{"id": {strconv.FormatInt(v.Log[i].ID, 10)}})
			testutil.Equal(t, "log entry status", status, 200)
			if transport == "websocket" {
				if !strings.Contains(body, `"data":"(base64 audio elided: `) || len(body) > 1000 {
					t.Errorf("chunk not elided: %.400s", body)
				}
			} else if !strings.Contains(body, `"slotIndex"`) {
				t.Errorf("segment entry: %.400s", body)
			}
			// The engine going away (OnSession: no message says it).
			if transport == "websocket" {
				testutil.Success(t, eng.Close())
				p.waitFor(t, "saw the session end", func(v *view) bool { return v.Session.State == "ended" })
			}
		})
	}
}
