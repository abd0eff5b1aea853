package main

import (
	"bytes"
	"flag"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	xty "github.com/gamelink-go/gamelink/xiaotangyuan"
)

// runCmd runs the command in-process with stdin and returns its exit
// status, stdout and stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// timestamp matches the date log.Print puts before a line.
var timestamp = regexp.MustCompile(`\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}`)

// --help and -h print the usage on stdout, listing every flag and
// command, and exit 0. Issue #18.
func TestRun_Help(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--help", "-h", "-help"} {
		code, out, errOut := runCmd(t, "", arg)
		testutil.Equal(t, arg+" exit", code, exitOK)
		testutil.Equal(t, arg+" stderr", errOut, "")
		testutil.Equal(t, arg+" usage", strings.HasPrefix(out, "Usage: xiaotangyuan-chat [flags]\n"), true)
		newFlagSet(&config{}).VisitAll(func(f *flag.Flag) {
			listed := strings.Contains(out, "\n  --"+f.Name+" ") || strings.Contains(out, "\n  --"+f.Name+"\n")
			testutil.Equal(t, "lists --"+f.Name, listed, true)
		})
		for _, cmd := range strings.Split(commandList, ", ") {
			testutil.Equal(t, "lists "+cmd, strings.Contains(out, "  "+cmd+" "), true)
		}
	}
}

// A mistake in the command line is one line on stderr naming the flag
// and where the usage is, exit 2, no log timestamp. Issue #18.
func TestRun_Usage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		name string // what the line must name
	}{
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"-bogus"}, "unknown flag -bogus"},
		{[]string{"--url"}, "flag needs a value: --url"},
		{[]string{"--fake=maybe"}, "-fake"},
		{[]string{"hello"}, `"hello"`},
		{[]string{"--game", " "}, "--game"},
		{[]string{"--fake", "--url", "ws://127.0.0.1:4000"}, "--url"},
		{[]string{"--url", "ws://192.168.1.5:32145"}, "--url"},
		{[]string{"--url", "wss://127.0.0.1:32145"}, "--url"},
		{[]string{"--fake", "--record", filepath.Join(t.TempDir(), "missing", "wire.jsonl")}, "--record"},
	} {
		code, out, errOut := runCmd(t, "", tc.args...)
		what := strings.Join(tc.args, " ")
		testutil.Equal(t, what+": exit", code, exitUsage)
		testutil.Equal(t, what+": stdout", out, "")
		testutil.Equal(t, what+": one line", strings.Count(errOut, "\n"), 1)
		testutil.Equal(t, what+": names "+tc.name, strings.Contains(errOut, tc.name), true)
		testutil.Equal(t, what+": points at the usage", strings.HasSuffix(errOut, "; run 'xiaotangyuan-chat --help' for usage\n"), true)
		testutil.Equal(t, what+": no timestamp", timestamp.MatchString(errOut), false)
		t.Logf("%s -> %s", what, errOut)
	}
}

// End of input ends the chat cleanly, with status 0. Issue #18.
func TestRun_EOF(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCmd(t, "", "--fake")
	testutil.Equal(t, "exit", code, exitOK)
	testutil.Equal(t, "stderr", errOut, "")
	testutil.Equal(t, "connected", strings.Contains(out, "[connected]"), true)
	code, out, _ = runCmd(t, "hi\n", "--fake") // a last line without /quit
	testutil.Equal(t, "exit after a line", code, exitOK)
	testutil.Equal(t, "answered", strings.Contains(out, "reply: You said: hi\n"), true)
}

// No Harness: one line saying so and what to do, status 1. Issue #18.
func TestRun_NoHarness(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.Success(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	url := "ws://127.0.0.1:" + strconv.Itoa(port)
	code, out, errOut := runCmd(t, "", "--url", url)
	testutil.Equal(t, "exit", code, exitFailed)
	testutil.Equal(t, "stdout", out, "")
	testutil.Equal(t, "one line", strings.Count(errOut, "\n"), 1)
	testutil.Equal(t, "says where", strings.Contains(errOut, "cannot reach the Harness at "+url), true)
	testutil.Equal(t, "says what to do", strings.Contains(errOut, "start XiaoTangYuan and its game plugin, pass --url if it listens elsewhere, or try --fake"), true)
	testutil.Equal(t, "no timestamp", timestamp.MatchString(errOut), false)
}

// A mistake while chatting is one line saying what to do, and the chat
// goes on. Issue #18.
func TestRun_SessionMistakes(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "wire.jsonl")
	code, out, errOut := runCmd(t, "/save\n/nope\n/save  \nhi\n", "--fake", "--record", record)
	testutil.Equal(t, "exit", code, exitOK)
	testutil.Equal(t, "stderr", errOut, "")
	for _, want := range []string{
		"usage: /save NAME (the save slot to switch to)\n",
		"unknown command /nope; the commands are /retry, /ping, /save NAME, /proactive, /quit\n",
		"reply: You said: hi\n",
	} {
		testutil.Equal(t, "output has "+want, strings.Contains(out, want), true)
	}
	testutil.Equal(t, "nothing sent for /nope", strings.Contains(readFile(t, record), "/nope"), false)

	code, out, _ = runCmd(t, "/proactive\n", "--url", "ws://127.0.0.1:1")
	testutil.Equal(t, "low port refused", code, exitUsage)
	testutil.Equal(t, "nothing printed", out, "")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	testutil.Success(t, err)
	return string(b)
}

// Failed calls say what to do next.
func Test_nextStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&xty.DisconnectError{Reason: "not connected"}, "comes back by itself"},
		{xty.ErrTimeout, "/ping"},
		{xty.ErrMessageTooBig, "shorter"},
		{&xty.RPCError{Code: xty.CodeServer, Message: "boom"}, "say it differently"},
	} {
		testutil.Equal(t, tc.err.Error(), strings.Contains(nextStep(tc.err), tc.want), true)
	}
}

// A reply cut by a barge-in is not printed after "[interrupted]", and
// nothing waits for a text.done that was dropped (the old printer waited
// a second for it). Issue #20.
func TestOutput_CancelledReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var queued []xty.Event
		push := func(ev xty.Event) { mu.Lock(); queued = append(queued, ev); mu.Unlock() }
		poll := func(dst []xty.Event) []xty.Event {
			mu.Lock()
			defer mu.Unlock()
			dst = append(dst, queued...)
			queued = nil
			return dst
		}
		var buf bytes.Buffer
		o := newOutput(&buf, poll)
		done := make(chan struct{})
		go func() {
			defer close(done)
			o.run()
		}()
		push(xty.Event{Kind: xty.EventStart, InteractionID: "i1", Source: xty.SourceChat})
		push(xty.Event{Kind: xty.EventText, InteractionID: "i1", Text: "Hello"})
		push(xty.Event{Kind: xty.EventCancel, Reason: "barge-in"})
		start := time.Now()
		o.reply(xty.Reply{Text: "Hello there, the whole reply", InteractionID: "i1", Cancelled: true})
		testutil.Equal(t, "no wait", time.Since(start), time.Duration(0))
		push(xty.Event{Kind: xty.EventText, InteractionID: "i2", Text: "Next"})
		push(xty.Event{Kind: xty.EventDone, InteractionID: "i2", Text: "Next"})
		o.reply(xty.Reply{Text: "Next", InteractionID: "i2"})
		o.close()
		<-done
		testutil.Equal(t, "output", buf.String(), "Hello\n[interrupted]\nNext\nreply: Next\n")
	})
}
