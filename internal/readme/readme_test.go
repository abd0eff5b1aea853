package readme

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// A snippet's harness: what its README block leaves out. The block itself
// is compiled as it is written, as the body of
//
//	func snippet() error { <before> <block> <after> return nil }
//
// in a main package of its own, and the program is run. A harness is found
// by a line of its block (match); a block without a harness, a harness
// without a block, or a substitution that no longer applies fails the
// test, so README and harness cannot drift apart silently.
type harness struct {
	match   string      // a line of the block, trimmed
	imports []string    // besides errors, fmt and os
	decls   string      // package-level declarations the block uses
	before  string      // statements before the block (in snippet)
	after   string      // statements after it: uses of its variables
	replace [][2]string // substitutions, each applied exactly once (say why)
	// allowErr are errors the snippet may return where this machine lacks
	// what it needs (a sound device), as expressions for errors.Is.
	allowErr []string
	output   string // the run must print this
}

var harnesses = []harness{
	{
		// The README's first program, against the fake engine on a free port.
		match:   "server, err := rpengine.NewServer(nil) // ws://127.0.0.1:38471/rp-engine/socket, loopback only",
		imports: []string{"context", "time", "github.com/gamelink-go/gamelink/rpengine", "github.com/gamelink-go/gamelink/rpengine/card", "github.com/gamelink-go/gamelink/rpengine/enginetest"},
		replace: [][2]string{{"rpengine.NewServer(nil)", `rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0"})`},
			{"server.Start()", "startEngine(server)"}},
		decls: `
func startEngine(s *rpengine.Server) error {
	if err := s.Start(); err != nil {
		return err
	}
	_, err := enginetest.Dial(context.Background(), s.SocketURL(), nil) // closed with the process
	return err
}`,
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()`,
		output: "Wren: I hear you. You said: Is the lamp lit?\n",
	},
	{
		match:   "server, err := rpengine.NewServer(nil) // 127.0.0.1:38471, production origins",
		imports: []string{"context", "math", "time", "github.com/gamelink-go/gamelink/rpengine", "github.com/gamelink-go/gamelink/rpengine/audio", "github.com/gamelink-go/gamelink/rpengine/card", "github.com/gamelink-go/gamelink/rpengine/enginetest"},
		// A test may not bind the fixed port, and has no RPEngine page:
		// a free port, and the fake engine dialled in once Start returns.
		// CI has no microphone: a Recorder fed a tone stands in for it, so
		// the answer in recorded speech runs too, and a shorter press.
		replace: [][2]string{{"rpengine.NewServer(nil)", `rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0"})`},
			{"server.Start()", "startWithEngine(server)"},
			{"audio.OpenRecorder(nil)", "toneMicrophone()"},
			{"time.Sleep(3 * time.Second)", "time.Sleep(300 * time.Millisecond)"}},
		decls: `
func startWithEngine(s *rpengine.Server) error {
	if err := s.Start(); err != nil {
		return err
	}
	_, err := enginetest.Dial(context.Background(), s.SocketURL(), nil) // closed with the process
	return err
}

// toneMicrophone is a Recorder fed 10 ms of a 440 Hz tone every 5 ms until
// it is closed, as a capture callback would feed it.
func toneMicrophone() (*audio.Recorder, error) {
	rec, err := audio.NewRecorder(nil) // 16 kHz mono
	if err != nil {
		return nil, err
	}
	go func() {
		frames := make([]float32, 160)
		for n := 0; ; n++ {
			for i := range frames {
				frames[i] = float32(0.3 * math.Sin(2*math.Pi*440*float64(n*160+i)/16000))
			}
			if rec.Push(frames) != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return rec, nil
}`,
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()`,
		after: `fmt.Printf("answered with %d samples of speech\n", len(speech.Samples))`,
		// The second reply, to the recorded speech, ended: the first did; the
		// fake says how long the speech was (Issue #32).
		output: "seconds of speech)\nanswered with ",
	},
	{
		match:   "eng, err := enginetest.Dial(ctx, server.SocketURL(), &enginetest.Options{",
		imports: []string{"context", "time", "github.com/gamelink-go/gamelink/rpengine", "github.com/gamelink-go/gamelink/rpengine/enginetest"},
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()`,
		after:  `fmt.Println("engine", eng.SessionID() != "")`,
		output: "engine true",
	},
	{
		match:   "l := enginetest.NewListener() // reports 127.0.0.1:38471; opens no port",
		imports: []string{"context", "log/slog", "time", "github.com/gamelink-go/gamelink/rpengine", "github.com/gamelink-go/gamelink/rpengine/enginetest"},
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer server.Close()`,
		after: `if err != nil { return err }
	defer eng.Close()
	info, err := server.WaitSession(ctx)
	if err != nil { return err }
	fmt.Println("in memory:", info.ID == eng.SessionID(), server.SocketURL() == l.URL)`,
		output: "in memory: true true",
	},
	{
		match:   "in := inspect.New(nil) // Recorder, Logger and OnSession feed it; the page's URL carries its token",
		imports: []string{"io", "net/http", "strings", "github.com/gamelink-go/gamelink/rpengine", "github.com/gamelink-go/gamelink/rpengine/inspect"},
		// The page answers, with the token, and refuses without it.
		after: `if err != nil {
		return err
	}
	defer stop()
	defer server.Close()
	page, err := http.Get(url)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(page.Body)
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	refused, err := http.Get("http://" + host + "/")
	if err != nil {
		return err
	}
	fmt.Println("inspector", page.StatusCode, strings.Contains(string(body), "RPEngine inspector"), refused.StatusCode)`,
		output: "inspector 200 true 403",
	},
	{
		match:   "Mailbox: &rpengine.MailboxOptions{Dir: filepath.Join(saveDir, \"rpengine\"), IntegrationID: \"my-game\"},",
		imports: []string{"path/filepath", "github.com/gamelink-go/gamelink/rpengine"},
		before: `saveDir, err := os.MkdirTemp("", "readme-mailbox")
	if err != nil {
		return err
	}
	defer os.RemoveAll(saveDir)`,
		after: `if _, err := os.Stat(filepath.Join(saveDir, "rpengine", "manifest.json")); err != nil {
		return err // Start returned before the folder was ready
	}
	fmt.Println("mailbox ready")`,
		output: "mailbox ready",
	},
	{
		match:   "c, notes, err := card.Load(downloaded) // JSON or PNG, V1/V2/V3, repaired on load",
		imports: []string{"log", "github.com/gamelink-go/gamelink/rpengine/card"},
		// A SillyTavern export whose lorebook lacks its extensions.
		before: "downloaded := []byte(`" + `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"",` +
			`"personality":"","scenario":"","first_mes":"Hi.","mes_example":"","creator_notes":"","system_prompt":"",` +
			`"post_history_instructions":"","alternate_greetings":[],"tags":[],"creator":"","character_version":"",` +
			`"extensions":{},"character_book":{"entries":[]}}}` + "`)\n\tlog.SetOutput(os.Stdout)",
		output: "card repaired on load: /data/character_book/extensions: added missing required field with {}",
	},
	{
		match:   "a, err := stream.NewAssembler(&stream.Options{RequestID: reqID})",
		imports: []string{"github.com/gamelink-go/gamelink/rpengine/stream"},
		before: `reqID := "req-1"
	msg := []byte(` + "`" + `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"reply.text.delta","messageId":"m1",` +
			`"timestamp":"2026-12-01T00:00:00.000Z","requestId":"req-1","sequence":0,"delta":"Hello"}` + "`" + `)
	var texts []string`,
		replace: [][2]string{{"case stream.OutputText:     // out.Text: the whole display text so far",
			"case stream.OutputText: texts = append(texts, out.Text) // out.Text: the whole display text so far"}},
		after:  `fmt.Println(texts)`,
		output: "[Hello]",
	},
	{
		match:   "dev, err := audio.OpenDevice(nil) // native rate, stereo",
		imports: []string{"io", "time", "github.com/gamelink-go/gamelink/rpengine/audio", "github.com/gamelink-go/gamelink/rpengine/stream"},
		// Stand-ins for what the block takes from its surroundings: the
		// reply and event of an rpengine event loop, and Ebitengine's audio
		// context (not a dependency of this module), which reads the Mixer.
		decls: `
type replyStandIn struct{}

func (replyStandIn) RequestID() string { return "req-1" }

var reply replyStandIn

var ev = struct{ Segment stream.Segment }{stream.Segment{SampleRate: 44100, Samples: make([]int16, 4410)}}

type ebitenPlayer struct{ src io.Reader }

func (p *ebitenPlayer) SetBufferSize(time.Duration) {}
func (p *ebitenPlayer) Play()                       { _, _ = p.src.Read(make([]byte, 4096)) }

type ebitenContext struct{}

func (ebitenContext) NewPlayer(src io.Reader) (*ebitenPlayer, error) { return &ebitenPlayer{src}, nil }

var ebitenAudioContext ebitenContext`,
		after:    `_, _ = cut, speech; if err != nil && !errors.Is(err, audio.ErrSilentInput) { return err }; fmt.Println("audio ran")`,
		allowErr: []string{"audio.ErrNoDevice"},
		output:   "audio ran",
	},
	{
		match:   `c, err := neuro.New("Tic-Tac-Toe", &neuro.Options{Prefix: "tictactoe_"}) // URL: $NEURO_SDK_WS_URL or ws://localhost:8000`,
		imports: []string{"context", "time", "github.com/gamelink-go/gamelink/neuro", "github.com/gamelink-go/gamelink/neuro/neurotest"},
		decls: "\ntype place struct{ Cell int `json:\"cell\"` }\n" + `
var board [10]bool

func taken(cell int) bool { return board[cell] }
func apply(p place) { board[p.Cell] = true }
func show(any)      {}

const boardMarkdown = "| | | |"`,
		// place is declared inside the block; apply needs it at package
		// level, so the block's declaration moves there.
		replace: [][2]string{{"type place struct{ Cell int `json:\"cell\"` }", ""}},
		// The fake Neuro on a loopback port, not ws://localhost:8000.
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := neurotest.NewServer(&neurotest.Options{Delay: time.Millisecond, Seed: 1, Addr: "127.0.0.1:0"})
	defer srv.Close()
	os.Setenv("NEURO_SDK_WS_URL", srv.URL)`,
		after:  `if err != nil { return err }; fmt.Println("outcome", outcome)`,
		output: "outcome completed",
	},
	{
		match:   `c, err := xiaotangyuan.New(&xiaotangyuan.Options{AdapterID: "mygame-adapter", GameID: "mygame", Version: "1.0.0"})`,
		imports: []string{"context", "time", "github.com/gamelink-go/gamelink/xiaotangyuan", "github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"},
		decls: `
var harness = xtytest.NewServer(nil) // the fake Harness, in memory

func show(any) {}`,
		// The real Harness's port is fixed; the fake one answers in memory.
		replace: [][2]string{{"AdapterID: \"mygame-adapter\",", "URL: harness.URL, HTTPClient: harness.Client(), AdapterID: \"mygame-adapter\","}},
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer harness.Close()`,
		after:  `if err != nil { return err }; fmt.Println("reply:", reply.Text)`,
		output: "reply: You said: Where is the key?",
	},
	{
		match:   "c, err := xiaotangyuan.New(&xiaotangyuan.Options{",
		imports: []string{"context", "encoding/json", "time", "github.com/gamelink-go/gamelink/xiaotangyuan", "github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"},
		decls: `
var harness = xtytest.NewServer(nil) // the fake Harness, in memory

type ui struct{}

func (ui) SetText(string)     {}
func (ui) Final(s string)     { fmt.Println("final:", s) }
func (ui) Hide()              {}
func (ui) Show(any, string)   {}

var bubble, mic ui

func observe() any { return map[string]string{"room": "cellar"} }

func openDoor(ctx context.Context, args json.RawMessage) (any, error) { return "opened", nil }`,
		// The real Harness's port is fixed; the fake one answers in memory.
		replace: [][2]string{{"AdapterID: \"mygame-adapter\",", "URL: harness.URL, HTTPClient: harness.Client(), AdapterID: \"mygame-adapter\","}},
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer harness.Close()
	saveSlotName := "slot-1"`,
		after:  `if err != nil { return err }; fmt.Println("reply:", reply)`,
		output: "reply:",
	},
	{
		match:   `c, err := neurosan.New("http://localhost:8080", nil)                          // https:// for remote hosts`,
		imports: []string{"context", "time", "github.com/gamelink-go/gamelink/neurosan", "github.com/gamelink-go/gamelink/neurosan/neurosantest"},
		decls:   "\nfunc show(any) {}",
		// The server is the fake, in memory.
		replace: [][2]string{{`neurosan.New("http://localhost:8080", nil)`, `neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})`}},
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fake := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents()})
	defer fake.Close()
	agent := "games/quest_designer"`,
		after: `if err != nil { return err }
	ans, err := st.Answer(ctx)
	if err != nil { return err }
	fmt.Println(ans.Text)`,
		output: `Quest 1: about "Hello"`,
	},
	{
		match:   `conv := neurosan.NewConversation(c, "games/quest_designer", nil)`,
		imports: []string{"context", "time", "github.com/gamelink-go/gamelink/neurosan", "github.com/gamelink-go/gamelink/neurosan/neurosantest"},
		before: `ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fake := neurosantest.NewServer(&neurosantest.Options{Agents: neurosantest.DemoAgents()})
	defer fake.Close()
	c, err := neurosan.New(fake.URL, &neurosan.Options{HTTPClient: fake.Client()})
	if err != nil {
		return err
	}
	defer c.Close()`,
		after:  `if err != nil { return err }; fmt.Println("slot", len(slot) > 0)`,
		output: "slot true",
	},
}

// goBlocks returns the ```go blocks of the README, in order.
func goBlocks(t *testing.T, readme string) []string {
	t.Helper()
	var blocks []string
	var cur []string
	in := false
	for line := range strings.Lines(readme) {
		switch l := strings.TrimRight(line, "\n"); {
		case !in && l == "```go":
			in, cur = true, nil
		case in && l == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, l)
		}
	}
	if in {
		t.Fatal("README.md: a ```go block is not closed")
	}
	return blocks
}

// program returns the source of the program that runs block with h.
func program(t *testing.T, block string, h harness) string {
	t.Helper()
	for _, r := range h.replace {
		if n := strings.Count(block, r[0]); n != 1 {
			t.Fatalf("the README block with %q holds %q %d times, not once: update the harness", h.match, r[0], n)
		}
		block = strings.Replace(block, r[0], r[1], 1)
	}
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\t\"os\"\n")
	for _, imp := range h.imports {
		fmt.Fprintf(&b, "\t%q\n", imp)
	}
	b.WriteString(")\n\nvar _ = errors.Is\n")
	b.WriteString(h.decls + "\n\nfunc main() {\n\tif err := snippet(); err != nil {\n")
	for _, allowed := range h.allowErr {
		fmt.Fprintf(&b, "\t\tif errors.Is(err, %s) {\n\t\t\tfmt.Println(%q, err)\n\t\t\treturn\n\t\t}\n", allowed, "skipped on this machine:")
	}
	b.WriteString("\t\tfmt.Fprintln(os.Stderr, \"snippet:\", err)\n\t\tos.Exit(1)\n\t}\n}\n\n")
	fmt.Fprintf(&b, "func snippet() error {\n\t%s\n\t// README.md:\n%s\n\t// end of README.md\n\t%s\n\treturn nil\n}\n", h.before, block, h.after)
	return b.String()
}

// Issue #18: every Go snippet of the README compiles and runs.
func TestREADME_goSnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs programs: not in -short")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	// The README's snippets, then those of the docs/ pages it links to.
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	testutil.Success(t, err)
	var blocks []string
	for _, page := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		text, err := os.ReadFile(page)
		testutil.Success(t, err)
		blocks = append(blocks, goBlocks(t, string(text))...)
	}

	dir := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	testutil.Success(t, err)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	testutil.Success(t, err)
	// The repository's own requirements, plus itself from the working tree.
	mod := strings.Replace(string(gomod), "module github.com/gamelink-go/gamelink", "module readmesnippets", 1) +
		"\nrequire github.com/gamelink-go/gamelink v0.0.0\n\nreplace github.com/gamelink-go/gamelink => " + root + "\n"
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))

	used := map[int]bool{}
	names := make([]string, len(blocks))
	for i, block := range blocks {
		h := -1
		for j, hs := range harnesses {
			for l := range strings.Lines(block) {
				if strings.TrimSpace(l) == hs.match {
					if h >= 0 && h != j {
						t.Fatalf("README block %d matches two harnesses", i+1)
					}
					h = j
				}
			}
		}
		if h < 0 {
			t.Fatalf("README block %d has no harness in readme_test.go (add one):\n%s", i+1, block)
		}
		if used[h] {
			t.Fatalf("two README blocks match the harness of %q", harnesses[h].match)
		}
		used[h] = true
		names[i] = fmt.Sprintf("snippet%02d", i+1)
		src := program(t, block, harnesses[h])
		testutil.Success(t, os.MkdirAll(filepath.Join(dir, names[i]), 0o755))
		testutil.Success(t, os.WriteFile(filepath.Join(dir, names[i], "main.go"), []byte(src), 0o644))
	}
	for j, h := range harnesses {
		if !used[j] {
			t.Errorf("no README block holds the line %q: remove or update its harness", h.match)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	goCmd := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		return cmd.CombinedOutput()
	}
	bin := filepath.Join(dir, "bin")
	if out, err := goCmd("build", "-o", bin+string(filepath.Separator), "./..."); err != nil {
		t.Fatalf("the README's Go snippets do not compile:\n%s", numbered(dir, out))
	}
	for i, name := range names {
		h := harnesses[indexOf(t, blocks[i])]
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, filepath.Join(bin, name))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("README block %d (%q) fails: %v\n%s", i+1, h.match, err, out.String())
			}
			if len(h.allowErr) > 0 && strings.HasPrefix(out.String(), "skipped on this machine:") {
				// It ran up to the device it needs; CI has no sound card.
				t.Logf("README block %d ran until %s", i+1, out.String())
				return
			}
			if !strings.Contains(out.String(), h.output) {
				t.Fatalf("README block %d printed %q, want it to contain %q", i+1, out.String(), h.output)
			}
			t.Logf("%s", out.String())
		})
	}
}

func indexOf(t *testing.T, block string) int {
	for j, h := range harnesses {
		for l := range strings.Lines(block) {
			if strings.TrimSpace(l) == h.match {
				return j
			}
		}
	}
	t.Fatal("unreachable: block without harness")
	return -1
}

// numbered follows a compiler's output with the source line each error
// names, so a failure shows the README text at fault.
func numbered(dir string, out []byte) string {
	var b strings.Builder
	for line := range strings.Lines(string(out)) {
		b.WriteString(line)
		file, rest, ok := strings.Cut(strings.TrimPrefix(line, "./"), ".go:")
		if !ok {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(rest, "%d", &n); err != nil {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, file+".go"))
		if err != nil {
			continue
		}
		if lines := strings.Split(string(src), "\n"); n >= 1 && n <= len(lines) {
			b.WriteString("\t> " + strings.TrimSpace(lines[n-1]) + "\n")
		}
	}
	return b.String()
}
