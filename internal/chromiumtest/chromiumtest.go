// Package chromiumtest starts a headless Chromium for the real-browser
// tests, driven with chromedp. A test that calls [New] is skipped, saying
// why, when no Chromium is found or under -short (CI installs Debian's
// chromium; the Windows and arm64 passes run -short).
package chromiumtest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path returns the Chromium to use: $RPENGINE_CHROMIUM, or the first of
// /usr/bin/chromium, chromium, chromium-browser and google-chrome found;
// "" when there is none.
func Path() string {
	if p := os.Getenv("RPENGINE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a headless Chromium with a fresh profile, with flags added
// to the ones every test uses, and returns the chromedp context of its
// first tab (chromedp.NewContext of it opens another tab). The browser
// has started when New returns, and is stopped when the test ends. It
// skips the test when there is no Chromium or under -short.
func New(t testing.TB, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := Path()
	if path == "" {
		t.Skip("no Chromium found (/usr/bin/chromium, chromium, chromium-browser, google-chrome or RPENGINE_CHROMIUM): " +
			"the real-browser test is skipped; on Debian: apt-get install -y chromium")
	}
	if testing.Short() {
		t.Skip("-short: the real-browser test starts Chromium")
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-dev-shm-usage", true),
	}, flags...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}
