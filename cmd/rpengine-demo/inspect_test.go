package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

var pageRE = regexp.MustCompile(`rpengine-demo: inspector page: (http://127\.0\.0\.1:\d+/\?token=\S+)\n`)

// Issue #36: with --inspect the demo serves the inspector page, in both
// transports, and prints its URL at start: the page opens with the token
// and is refused without it, and its event stream, read while the reply
// streams (the simulated engine waits 200 ms before each message), shows
// the reply's row and its text.
func TestInspect(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"websocket", "mailbox"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			args := []string{"--engine", "sim", "--say", "Hello there", "--inspect", "127.0.0.1:0", "--no-playback", "--sim-faults", "delay=200ms"}
			if transport == "mailbox" {
				args = append(args, "--mailbox", filepath.Join(t.TempDir(), "mailbox"))
			}
			d := startDemo(t, false, args...)
			stderr := d.waitFor(&d.stderr, pageRE.MatchString, "the inspector's URL")
			page, err := url.Parse(pageRE.FindStringSubmatch(stderr)[1])
			testutil.Success(t, err)

			code, body := get(t, page.String())
			testutil.Equal(t, "page status", code, http.StatusOK)
			if !strings.Contains(body, "app.js") {
				t.Errorf("the page does not load its script:\n%s", body)
			}
			wrong := *page
			wrong.RawQuery = url.Values{"token": {"0123456789abcdef0123456789abcdef"}}.Encode()
			code, _ = get(t, wrong.String())
			testutil.Equal(t, "wrong token status", code, http.StatusForbidden)

			events := *page
			events.Path = "/events"
			seen := watch(t, events.String(), "You said: Hello there")
			testutil.Equal(t, "transport", seen.transport, transport)
			testutil.Equal(t, "exit code", d.exitCode(), exitOK)
			testutil.Equal(t, "stdout", d.stdout.String(), echo("Hello there")+"\n")
		})
	}
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	testutil.Success(t, err)
	defer res.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(res.Body).WriteTo(&b)
	testutil.Success(t, err)
	return res.StatusCode, b.String()
}

// seenOnPage is what an event stream said.
type seenOnPage struct {
	transport string
	rows      map[string]bool   // reply ids with a row
	text      map[string]string // a reply's text as it streamed
}

type pageReply struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// watch reads the inspector's event stream at u until a reply with a row
// has text containing want, and fails if the stream ends first.
func watch(t *testing.T, u, want string) seenOnPage {
	t.Helper()
	res, err := http.Get(u)
	testutil.Success(t, err)
	defer res.Body.Close()
	testutil.Equal(t, "event stream status", res.StatusCode, http.StatusOK)
	s := seenOnPage{rows: map[string]bool{}, text: map[string]string{}}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 16<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch event {
		case "snapshot":
			var v struct {
				Session struct{ Transport string }
				Replies []pageReply
			}
			testutil.Success(t, json.Unmarshal([]byte(data), &v))
			s.transport = v.Session.Transport
			for _, r := range v.Replies {
				s.rows[r.ID], s.text[r.ID] = true, r.Text
			}
		case "session":
			var v struct{ Transport string }
			testutil.Success(t, json.Unmarshal([]byte(data), &v))
			s.transport = v.Transport
		case "reply":
			var r pageReply
			testutil.Success(t, json.Unmarshal([]byte(data), &r))
			s.rows[r.ID] = true
		case "text":
			var v struct {
				ID, Text string
				Whole    bool
			}
			testutil.Success(t, json.Unmarshal([]byte(data), &v))
			if v.Whole {
				s.text[v.ID] = v.Text
			} else {
				s.text[v.ID] += v.Text
			}
		}
		for id, text := range s.text {
			if s.rows[id] && strings.Contains(text, want) {
				return s
			}
		}
	}
	t.Fatalf("the event stream ended (%v) before a reply's text said %q: rows %v, text %q", sc.Err(), want, s.rows, s.text)
	return s
}
