//go:build unix || windows

package rpengine_test

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
)

// TestMailbox_createdPrivate: what the game creates is private to its
// user: folders 0700, files 0600 (on Windows the inherited ACL, which
// TestMailbox_notPrivate checks). Issue #16: they were 0755 and 0644, so
// other users could read the conversation.
func TestMailbox_createdPrivate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		eng := l.dialMailbox(t, nil)
		r, err := l.srv.Reply(ctxT(t), textReq(testCard(t), "hi"))
		testutil.Success(t, err)
		_, err = r.Wait(ctxT(t))
		testutil.Success(t, err)
		eng.Close()
		// Stopped first: a running server keeps writing (acks under a
		// temporary name, renamed into place) while the folder is walked.
		testutil.Success(t, l.srv.Close())
		if _, ok := modeOf(t, dir); !ok {
			t.Log("modes not checked: Windows has none (the ACL is checked by TestMailbox_notPrivate)")
			return
		}
		files := 0
		testutil.Success(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			mode, _ := modeOf(t, p)
			want := os.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			} else if strings.HasPrefix(p, filepath.Join(dir, mbx.FromEngine)) {
				return nil // the engine's
			} else {
				files++
			}
			if mode != want {
				t.Errorf("%s: mode %v, want %v", p, mode, want)
			}
			return nil
		}))
		if files < 32 {
			t.Errorf("only %d files checked", files)
		}
	})
}

// TestMailbox_notPrivate: a mailbox folder, or one of its sub-folders,
// that another user owns or other users can write into is refused with
// ErrMailboxNotPrivate naming it, and nothing is written into it, unless
// InsecureSkipOwnerCheck allows it. Issue #16: a 0777 folder made
// beforehand by another user was adopted silently.
func TestMailbox_notPrivate(t *testing.T) {
	t.Parallel()
	serve := func(t *testing.T, dir string, insecure bool) (*logBuf, error) {
		lb := &logBuf{}
		o := testMailboxOptions(dir)
		o.InsecureSkipOwnerCheck = insecure
		srv, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: slog.New(slog.NewTextHandler(lb, nil)), Mailbox: o})
		testutil.Success(t, err)
		defer srv.Close()
		return lb, srv.Start() // Issue #17: a setup error is Start's
	}
	refused := func(t *testing.T, err error, path string) {
		t.Helper()
		var me *fs.PathError
		testutil.ErrorAs(t, err, &me)
		testutil.ErrorIs(t, err, rpengine.ErrMailboxNotPrivate)
		testutil.Equal(t, "op", me.Op, "setup")
		testutil.Equal(t, "path", me.Path, path)
		if !strings.Contains(err.Error(), "InsecureSkipOwnerCheck") {
			t.Errorf("error %q does not name the option that allows it", err)
		}
	}
	t.Run("othersCanWrite", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(testutil.TempDir(t), "mb")
		testutil.Success(t, os.Mkdir(dir, 0o700))
		makeOthersWritable(t, dir)
		_, err := serve(t, dir, false)
		refused(t, err, dir)
		ents, _ := os.ReadDir(dir)
		testutil.Equal(t, "nothing written into it, not even the lock", len(ents), 0)
	})
	t.Run("subFolderOthersCanWrite", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(testutil.TempDir(t), "mb")
		sub := filepath.Join(dir, mbx.FromEngine)
		testutil.Success(t, os.MkdirAll(sub, 0o700))
		makeOthersWritable(t, sub)
		_, err := serve(t, dir, false)
		refused(t, err, sub)
		_, err = os.Lstat(filepath.Join(dir, mbx.ManifestName))
		testutil.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("anotherUsersFolder", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(testutil.TempDir(t), "mb")
		testutil.Success(t, os.Mkdir(dir, 0o700))
		if !giveAway(t, dir) {
			return
		}
		_, err := serve(t, dir, false)
		refused(t, err, dir)
		if !strings.Contains(err.Error(), "owned by") {
			t.Errorf("error %q does not say who owns it", err)
		}
	})
	t.Run("allowedByTheLoudOption", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(testutil.TempDir(t), "mb")
		testutil.Success(t, os.Mkdir(dir, 0o700))
		makeOthersWritable(t, dir)
		lb, err := serve(t, dir, true)
		testutil.Success(t, err)
		if !strings.Contains(lb.String(), "InsecureSkipOwnerCheck is set") {
			t.Errorf("no warning logged:\n%s", lb)
		}
		_, err = os.Lstat(filepath.Join(dir, mbx.ManifestName))
		testutil.Success(t, err)
	})
}

// TestMailbox_notPrivateOnRecreate: the check runs at every setup: an
// engine-to-integration folder that others can write into, found when the
// folder is set up again, is refused (logged once) and nothing in it is
// read until it is private again. Issue #16: another user swapped in
// their own engine-to-integration folder and their hello got a welcome.
func TestMailbox_notPrivateOnRecreate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(testutil.TempDir(t), "mb")
		l := newMailboxServer(t, nil, dir)
		e := newRawEngine(t, dir)
		e.hello()
		// Theirs is ready beside it; the game's goes, and theirs takes its
		// place (if the game recreated its own in between, again).
		in := filepath.Join(dir, mbx.FromEngine)
		theirs := in + ".theirs"
		testutil.Success(t, os.Mkdir(theirs, 0o700))
		makeOthersWritable(t, theirs)
		for {
			testutil.Success(t, testutil.RemoveAll(in))
			if err := os.Rename(theirs, in); err == nil {
				break
			} else if !errors.Is(err, fs.ErrExist) && !strings.Contains(err.Error(), "not empty") && !strings.Contains(err.Error(), "denied") {
				t.Fatal(err)
			}
		}
		l.log.waitFor(t, "not private to this user")
		mark := len(l.log.String())
		id, _ := e.send("hello", "", map[string]string{"clientVersion": "theirs"})
		time.Sleep(100 * time.Millisecond) // about 20 polls
		testutil.Equal(t, "their hello not read", countAcks(e.gameMessages(), id), 0)
		testutil.Equal(t, "logged once", strings.Count(l.log.since(mark), "not private"), 0)
		// Private again (its owner's choice): served, and the hello answered.
		testutil.Success(t, testutil.RemoveAll(in))
		l.log.waitFor(t, "mailbox recreated")
		e.hello()
	})
}
