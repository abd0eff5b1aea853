package readme

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// mdLink is an inline Markdown link or image: [text](target) or
// [text](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// brokenLinks returns the relative links of the Markdown file at path that
// point at no file or folder, or at no heading of a Markdown file. Links
// inside code (fenced blocks, `spans`) and links with a scheme are left out.
func brokenLinks(path string) ([]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var broken []string
	fenced := false
	for i, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(outsideCode(line), -1) {
			if reason := checkLink(path, m[1]); reason != "" {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", filepath.Base(path), i+1, m[1], reason))
			}
		}
	}
	return broken, nil
}

// outsideCode blanks the `code spans` of line.
func outsideCode(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// checkLink says what is wrong with target, a link of the file from, or "".
func checkLink(from, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	dest := from
	if file != "" {
		dest = filepath.Join(filepath.Dir(from), filepath.FromSlash(file))
	}
	if _, err := os.Stat(dest); err != nil {
		return "no such file"
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	text, err := os.ReadFile(dest)
	if err != nil {
		return err.Error()
	}
	if !slices.Contains(anchors(string(text)), anchor) {
		return "no such heading in " + filepath.Base(dest)
	}
	return ""
}

// anchors returns the anchors GitHub gives the headings of a Markdown
// text, in order: see slug; a repeated slug gets -1, -2, ...
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		h := strings.TrimLeft(line, "#")
		if fenced || len(h) == len(line) || len(line)-len(h) > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		s := slug(h)
		if n := seen[s]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", s, n))
		} else {
			out = append(out, s)
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading's text: lowercased, with every
// character but letters, digits, '_', '-' and spaces dropped, and each
// space made a '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func Test_slug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ heading, want string }{
		{" Platforms\n", "platforms"},
		{"macOS", "macos"},
		{"What is verified against real RPEngine, and what is not", "what-is-verified-against-real-rpengine-and-what-is-not"},
		{"XiaoTangYuan (小汤圆) companion: `xiaotangyuan`", "xiaotangyuan-小汤圆-companion-xiaotangyuan"},
		{"Game side: `rpengine`", "game-side-rpengine"},
		{"Testing your game: `rpengine/enginetest`", "testing-your-game-rpengineenginetest"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func Test_brokenLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testutil.Success(t, os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other\n\n## Part\n\n## Part\n"), 0o644))
	doc := "# Doc\n\n[ok](other.md) [ok](other.md#part-1) [ok](#doc) [ok](https://example.com/x)\n" +
		"`[code](missing.md)`\n```\n[code](missing.md)\n```\n" +
		"[bad](missing.md) [bad](other.md#part-2) [bad](#nowhere)\n"
	path := filepath.Join(dir, "doc.md")
	testutil.Success(t, os.WriteFile(path, []byte(doc), 0o644))
	got, err := brokenLinks(path)
	testutil.Success(t, err)
	want := []string{
		"doc.md:8: missing.md: no such file",
		"doc.md:8: other.md#part-2: no such heading in other.md",
		"doc.md:8: #nowhere: no such heading in doc.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("brokenLinks = %q, want %q", got, want)
	}
}

// Issue #32: README.md and the docs/ pages it links to stay a map: every
// relative link points at a file that exists, and at a heading it has.
func TestLinks(t *testing.T) {
	t.Parallel()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	testutil.Success(t, err)
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "README.md"))
	testutil.Success(t, err)
	pages = append(pages, examples...)
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md"))
	for _, page := range pages {
		broken, err := brokenLinks(page)
		testutil.Success(t, err)
		for _, b := range broken {
			t.Error(b)
		}
	}
}

// exampleFunc is the declaration of a runnable example in a test file.
var exampleFunc = regexp.MustCompile(`(?m)^func (Example\w*)\(\)`)

// Issue #32: go doc does not show runnable examples, so the README lists
// every one, in the row of its package (| `./pkg` | `ExampleX`, ... |), and
// names none that does not exist.
func TestREADME_examples(t *testing.T) {
	t.Parallel()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	have := map[string][]string{} // package folder -> its examples
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "examples" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range exampleFunc.FindAllSubmatch(src, -1) {
			have[filepath.ToSlash(rel)] = append(have[filepath.ToSlash(rel)], string(m[1]))
		}
		return nil
	})
	testutil.Success(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	testutil.Success(t, err)
	rows := map[string]string{}
	for _, line := range strings.Split(string(readme), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `./"); ok {
			if pkg, cells, ok := strings.Cut(rest, "` |"); ok {
				rows[pkg] = cells
			}
		}
	}
	for pkg, names := range have {
		row, ok := rows[pkg]
		if !ok {
			t.Errorf("README.md: no row | `./%s` | for its examples %v", pkg, names)
			continue
		}
		for _, n := range names {
			if !strings.Contains(row, "`"+n+"`") {
				t.Errorf("README.md: the row of ./%s does not list %s", pkg, n)
			}
		}
	}
	for pkg, row := range rows {
		for _, m := range regexp.MustCompile("`(Example\\w*)`").FindAllStringSubmatch(row, -1) {
			if !slices.Contains(have[pkg], m[1]) {
				t.Errorf("README.md: the row of ./%s lists %s, which ./%s does not have", pkg, m[1], pkg)
			}
		}
	}
	if len(have) == 0 {
		t.Fatal("found no runnable examples at all")
	}
}
