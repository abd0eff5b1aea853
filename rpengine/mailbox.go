package rpengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Default values of MailboxOptions.
const (
	DefaultMailboxActivePoll = 50 * time.Millisecond
	DefaultMailboxIdlePoll   = 250 * time.Millisecond
	DefaultMailboxActiveFor  = 2 * time.Second
	DefaultMailboxLockStale  = 15 * time.Second
	DefaultMailboxSlotCount  = mbx.SlotCount
)

// MailboxLockName is the lock file the server keeps in the mailbox folder
// while it serves it; see [ErrMailboxLocked].
const MailboxLockName = ".gamelink.lock"

// MailboxOptions selects the file-mailbox transport
// (docs/rpengine-protocol.md, "File transport") instead of WebSocket
// (ServerOptions.Mailbox): for games that cannot open a local socket. The
// player selects Dir in the RPEngine page.
type MailboxOptions struct {
	// Dir is the mailbox folder. Required. Its parent must exist; the
	// folder itself is created when missing, private to the user (0700;
	// on Windows with the ACL it inherits, which in the user's profile
	// is private), and so are its sub-folders and files (0600). It must
	// not be a symlink, and it and its sub-folders must be the user's own
	// with no other user allowed to write into them: see
	// InsecureSkipOwnerCheck and [ErrMailboxNotPrivate].
	Dir string
	// IntegrationID goes into manifest.json. Required.
	IntegrationID string
	// DisplayName goes into manifest.json. If empty, IntegrationID.
	DisplayName string
	// SlotCount is the number of audio slots. If zero, 2048 (as the
	// engine's page expects).
	SlotCount int
	// ActivePoll and IdlePoll are the polling intervals while messages
	// flow and while idle. If zero, 50 ms and 250 ms (as the engine polls).
	ActivePoll, IdlePoll time.Duration
	// ActiveFor is how long polling stays at ActivePoll after a message
	// in either direction. If zero, 2 s.
	ActiveFor time.Duration
	// LockStale is how old the lock file's heartbeat may be before
	// another process may take the folder over (a crashed game). The
	// holder refreshes it every LockStale/4. A lock whose holder process
	// is gone from this machine is stale at once. If zero, 15 s. It must
	// be at least 4 IdlePoll (the heartbeat is sent at polls).
	LockStale time.Duration
	// InsecureSkipOwnerCheck serves a mailbox folder, or sub-folder, that
	// another user owns or that other users can write into (as ssh's
	// StrictModes no). Such a user can read the conversation, or swap in
	// their own engine-to-integration folder and talk to the game as the
	// engine. Only for a folder deliberately shared between accounts.
	InsecureSkipOwnerCheck bool
}

func (o *MailboxOptions) withDefaults() (MailboxOptions, error) {
	d := *o
	if d.Dir == "" {
		return d, &ConfigError{"Mailbox.Dir", "is empty"}
	}
	abs, err := filepath.Abs(d.Dir)
	if err != nil {
		return d, &ConfigError{"Mailbox.Dir", err.Error()}
	}
	d.Dir = abs
	if d.IntegrationID == "" {
		return d, &ConfigError{"Mailbox.IntegrationID", "is empty (manifest.json needs it)"}
	}
	if d.DisplayName == "" {
		d.DisplayName = d.IntegrationID
	}
	if d.SlotCount == 0 {
		d.SlotCount = DefaultMailboxSlotCount
	}
	if d.SlotCount < 1 || d.SlotCount > 10000 {
		return d, &ConfigError{"Mailbox.SlotCount", strconv.Itoa(d.SlotCount) + " is not within 1..10000 (slot names have four digits)"}
	}
	setDur(&d.ActivePoll, DefaultMailboxActivePoll)
	setDur(&d.IdlePoll, DefaultMailboxIdlePoll)
	setDur(&d.ActiveFor, DefaultMailboxActiveFor)
	setDur(&d.LockStale, DefaultMailboxLockStale)
	if d.ActivePoll < 0 || d.IdlePoll < 0 || d.LockStale < 0 || d.ActiveFor < 0 {
		return d, &ConfigError{"Mailbox", "durations must not be negative"}
	}
	if d.LockStale < 4*d.IdlePoll {
		// The heartbeat is sent at polls: with polls further apart the
		// lock would go stale while its holder is alive.
		return d, &ConfigError{"Mailbox.LockStale", d.LockStale.String() + " is under 4 IdlePoll (" + d.IdlePoll.String() + ")"}
	}
	return d, nil
}

// ErrMailboxLocked is the cause of the error Start returns when
// another live process serves the same mailbox folder (its lock file's
// heartbeat is fresher than MailboxOptions.LockStale), or took it over.
var ErrMailboxLocked = errors.New("rpengine: mailbox folder is in use by another process")

// ErrMailboxNotPrivate is the cause of the *fs.PathError (Op "setup")
// returned when the mailbox folder or one of its sub-folders is owned by
// another user or other users can write into it, unless
// MailboxOptions.InsecureSkipOwnerCheck is set. It is checked at every
// setup, including when the folder is created again.
var ErrMailboxNotPrivate = errors.New("rpengine: mailbox folder is not private to this user")

// mailbox is the game side of one mailbox folder. Fields marked "reader"
// are used by the serving goroutine only.
type mailbox struct {
	srv  *Server
	o    MailboxOptions
	log  *slog.Logger
	peer string // peerInstanceId: new per process (per Server)
	root atomic.Pointer[os.Root]
	tok  string // lock token

	wmu    sync.Mutex // serialises writes; guards following
	last   int64      // last stem milliseconds written
	active time.Time  // when polling may drop back to idle
	retry  [][]byte   // acks whose write failed (full disk), retried each poll
	outbox recurring  // writes failing

	// reader
	cur      *mailboxConn
	seen     map[string]bool      // stems already handled, pruned to the listing
	bad      map[string]time.Time // unparsable stems: first seen (a racing writer gets a grace period)
	nextSlot int
	offsets  map[*Reply]time.Duration
	beat     time.Time
	dirInfo  os.FileInfo
	inInfo   os.FileInfo // engine-to-integration as set up
	broken   string      // why recreating the folder last failed; "" when set up
	inbox    recurring
	beatErr  recurring

	listFault atomic.Pointer[error] // tests: listing the inbox fails with it
}

// maxAckRetries bounds the acks held for a retry after a failed write.
const maxAckRetries = 1024

// badGrace is how long an unparsable marked file is retried before it is
// skipped (a writer that marks before it finishes is racing us).
const badGrace = time.Second

// startMailbox is Start in mailbox mode: it sets up the folder, returning
// its errors (ErrMailboxLocked among them), and then serves it on a
// goroutine of its own until Shutdown.
func (s *Server) startMailbox() error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrServerClosed
	case s.mbox != nil:
		s.mu.Unlock()
		return errAlreadyServing
	}
	m := &mailbox{srv: s, o: *s.opts.mailbox, log: s.opts.Logger, peer: wire.NewID(), tok: wire.NewID(),
		seen: map[string]bool{}, bad: map[string]time.Time{}, offsets: map[*Reply]time.Duration{},
		inbox:   recurring{what: "mailbox inbox cannot be read"},
		beatErr: recurring{what: "mailbox lock heartbeat fails"},
		outbox:  recurring{what: "mailbox outbox cannot be written"}}
	s.mbox = m
	s.mu.Unlock()
	if err := m.setup(); err != nil {
		m.dropRoot()
		s.mu.Lock()
		s.mbox = nil
		s.mu.Unlock()
		errd.Wrap(&err, "rpengine: start")
		return err
	}
	s.mu.Lock()
	if s.closed { // Shutdown came during the setup
		s.mu.Unlock()
		m.shutdown()
		return ErrServerClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	s.rec.Start()
	m.log.Info("rpengine: serving mailbox", "dir", m.o.Dir, "peerInstanceId", m.peer)
	if m.o.InsecureSkipOwnerCheck {
		m.log.Warn("rpengine: MailboxOptions.InsecureSkipOwnerCheck is set: the mailbox folder may be another user's or writable by others")
	}
	go func() {
		defer s.wg.Done()
		err := s.pollMailbox(m)
		m.shutdown()
		if err != nil {
			s.stopped("rpengine: stopped serving the mailbox", err)
		}
	}()
	return nil
}

// pollMailbox serves the folder until Shutdown (nil) or until it cannot
// go on: another process took the folder over, or it cannot be set up
// again.
func (s *Server) pollMailbox(m *mailbox) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		s.mu.Lock()
		closed, ch := s.closed, s.changed
		s.mu.Unlock()
		if closed {
			return nil
		}
		if err := m.tick(); err != nil {
			return err
		}
		d := m.o.IdlePoll
		m.wmu.Lock()
		if time.Now().Before(m.active) {
			d = m.o.ActivePoll
		}
		m.wmu.Unlock()
		t.Reset(d)
		select {
		case <-ch:
			if !t.Stop() {
				<-t.C
			}
		case <-t.C:
		}
	}
}

func (m *mailbox) abs(name string) string { return filepath.Join(m.o.Dir, filepath.FromSlash(name)) }

func (m *mailbox) fail(op, name string, err error) error {
	// A file-system failure of the mailbox transport says which operation
	// failed, on which file, and why (a full disk): an *fs.PathError, as
	// the os package's, whose text says where it came from. A failed
	// write leaves no partial message behind and is reported to the
	// caller of the request that wrote it; nothing is silently dropped.
	return fmt.Errorf("rpengine: mailbox %w", &fs.PathError{Op: op, Path: m.abs(name), Err: err})
}

// setup creates the folder layout, takes the lock, cleans what a crashed
// predecessor left half-done, and writes the manifest and every slot.
func (m *mailbox) setup() error {
	if err := os.Mkdir(m.o.Dir, mbx.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return m.fail("setup", "", err)
	}
	fi, err := os.Lstat(m.o.Dir)
	if err != nil {
		return m.fail("setup", "", err)
	}
	if !fi.IsDir() {
		return m.fail("setup", "", fmt.Errorf("not a folder (%v); symlinks are not followed", fi.Mode().Type()))
	}
	root, err := os.OpenRoot(m.o.Dir)
	if err != nil {
		return m.fail("setup", "", err)
	}
	// OpenRoot follows a symlink: the folder opened must be the one
	// checked above, not a link swapped in meanwhile.
	if rfi, err := root.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		root.Close()
		return m.fail("setup", "", errors.New("replaced while opening; symlinks are not followed"))
	}
	m.dirInfo = fi
	if old := m.root.Swap(root); old != nil {
		old.Close()
	}
	// Private before anything is read or written in it: the lock file
	// included (issue #16: another user's folder was adopted silently).
	if err := m.checkPrivate(root, "."); err != nil {
		return err
	}
	if err := m.lock(root); err != nil {
		return err
	}
	m.beat = time.Now()
	for _, d := range []string{mbx.ToEngine, mbx.FromEngine, mbx.AudioDir} {
		if err := root.Mkdir(d, mbx.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return m.fail("setup", d, err)
		}
		sub, err := root.Lstat(d)
		if err == nil && !sub.IsDir() {
			err = fmt.Errorf("not a folder (%v); symlinks are not followed", sub.Mode().Type())
		}
		if err != nil {
			return m.fail("setup", d, err)
		}
		if err := m.checkPrivate(root, d); err != nil {
			return err
		}
		if d == mbx.FromEngine {
			m.inInfo = sub
		}
	}
	if err := m.cleanOutbox(root); err != nil {
		return err
	}
	silent := mbx.Silent(mbx.SampleRate)
	for i := range m.o.SlotCount {
		name := path.Join(mbx.AudioDir, mbx.SlotName(i))
		if err := mbx.ReplaceFile(root, name, silent); err != nil {
			return m.fail("setup", name, err)
		}
		if err := m.keepLock(root, false); err != nil {
			return err
		}
		if h := m.srv.slotHook; h != nil {
			h(i)
		}
	}
	// The manifest goes last: an engine that sees it finds every slot.
	man, _ := json.MarshalIndent(mbx.NewManifest(m.o.IntegrationID, m.o.DisplayName, m.o.SlotCount), "", "  ")
	if err := mbx.ReplaceFile(root, mbx.ManifestName, man); err != nil {
		return m.fail("setup", mbx.ManifestName, err)
	}
	return m.keepLock(root, true)
}

// keepLock refreshes the lock during setup when a heartbeat is due, and
// at its end (force): the lock file was written before the slots, and
// writing thousands of them can take longer than LockStale on a slow or
// loaded disk, when another process would take a live holder's lock as
// stale (a second demo did, after a setup of 11 s under load). Only a
// lock taken over fails the setup; another failure is left to the next
// heartbeat, which reports it.
func (m *mailbox) keepLock(root *os.Root, force bool) error {
	if !force && time.Since(m.beat) < m.o.LockStale/4 {
		return nil
	}
	m.beat = time.Now()
	if err := m.heartbeat(root); errors.Is(err, ErrMailboxLocked) {
		return err
	}
	return nil
}

// checkPrivate refuses the folder name (relative to root) when another
// user owns it or can write into it, unless the option allows it.
func (m *mailbox) checkPrivate(root *os.Root, name string) error {
	if m.o.InsecureSkipOwnerCheck {
		return nil
	}
	f, err := root.Open(name)
	if err != nil {
		return m.fail("setup", name, err)
	}
	defer f.Close()
	if err := mbx.CheckPrivate(f); err != nil {
		return m.fail("setup", name, fmt.Errorf("%w: %v (MailboxOptions.InsecureSkipOwnerCheck serves it anyway)", ErrMailboxNotPrivate, err))
	}
	return nil
}

// cleanOutbox removes what a crashed writer of ours left in
// integration-to-engine: temporary files and JSON without its marker
// (the engine ignores both), and finds the last stem so stems keep
// increasing across restarts.
func (m *mailbox) cleanOutbox(root *os.Root) error {
	_, names, err := mbx.List(root, mbx.ToEngine)
	if err != nil {
		return m.fail("setup", mbx.ToEngine, err)
	}
	for n := range names {
		full := path.Join(mbx.ToEngine, n)
		if strings.HasPrefix(n, mbx.TempPrefix) {
			m.log.Warn("rpengine: removed a partial mailbox file left by a crash", "file", m.abs(full))
			_ = mbx.RemoveFile(root, full)
			continue
		}
		stem, ok := strings.CutSuffix(n, mbx.JSONSuffix)
		if !ok {
			stem, _ = strings.CutSuffix(n, mbx.ReadySuffix)
		}
		ms, _, ok := mbx.ParseStem(stem)
		if !ok {
			continue
		}
		if strings.HasSuffix(n, mbx.JSONSuffix) && !names[stem+mbx.ReadySuffix] {
			m.log.Warn("rpengine: removed an unmarked mailbox message left by a crash", "file", m.abs(full))
			_ = mbx.RemoveFile(root, full)
			continue
		}
		m.last = max(m.last, ms)
	}
	m.dropUnread(root, "of a previous game process")
	return nil
}

// dropUnread removes our marked messages that the engine has not read:
// they belong to a session that ended (a previous process, or the engine
// session a new hello replaces), and a new engine session must not
// process them. Markers go first so the engine never takes a half-removed
// message.
func (m *mailbox) dropUnread(root *os.Root, whose string) {
	ready, _, err := mbx.List(root, mbx.ToEngine)
	if err != nil || len(ready) == 0 {
		return
	}
	for _, e := range ready {
		_ = mbx.Remove(root, mbx.ToEngine, e.Stem)
	}
	m.log.Info("rpengine: removed unread mailbox messages "+whose, "count", len(ready), "dir", m.abs(mbx.ToEngine))
}

type lockInfo struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Token   string `json:"token"`
	Started string `json:"started"`
}

// lock takes the folder's lock file, or fails with ErrMailboxLocked when
// another process holds it and its heartbeat is fresh. A stale lock (a
// crashed process) is taken over.
func (m *mailbox) lock(root *os.Root) error {
	host, _ := os.Hostname()
	info, _ := json.Marshal(lockInfo{PID: os.Getpid(), Host: host, Token: m.tok, Started: wire.Timestamp(time.Now())})
	for attempt := 0; ; attempt++ {
		f, err := root.OpenFile(MailboxLockName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mbx.FileMode)
		if err == nil {
			_, err = f.Write(info)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = mbx.RemoveFile(root, MailboxLockName)
				return m.fail("lock", MailboxLockName, err)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt >= 2 {
			return m.fail("lock", MailboxLockName, err)
		}
		fi, err := root.Lstat(MailboxLockName)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return m.fail("lock", MailboxLockName, err)
		}
		age := time.Since(fi.ModTime())
		var held lockInfo
		b, err := mbx.ReadRegular(root, MailboxLockName, 4096)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			// Unreadable for now (on Windows, a lock file being removed
			// stays until its last handle closes): not proof of another
			// holder; setup is tried again.
			return m.fail("lock", MailboxLockName, err)
		}
		_ = json.Unmarshal(b, &held)
		if held.Token == m.tok {
			// Ours: setup runs again after the folder's contents were
			// removed, and the hidden lock file may have stayed.
			now := time.Now()
			if err := root.Chtimes(MailboxLockName, now, now); err != nil {
				return m.fail("lock", MailboxLockName, err)
			}
			return nil
		}
		// A holder on this machine whose process is gone crashed: its
		// lock is stale at once (a restarted game need not wait).
		dead := held.Host == host && held.PID > 0 && held.PID != os.Getpid() && !processAlive(held.PID)
		if fi.Mode().IsRegular() && age < m.o.LockStale && !dead {
			return m.fail("lock", MailboxLockName, fmt.Errorf("%w (pid %d on %q, heartbeat %v ago; a crashed holder's lock goes stale after %v)",
				ErrMailboxLocked, held.PID, held.Host, age.Round(time.Millisecond), m.o.LockStale))
		}
		m.takeStale(root, fi, age, held.PID, dead)
	}
}

// takeStale moves the stale lock fi aside under a unique name (one taker
// wins the rename) so that lock can create its own. A second taker that
// judged the same stale lock may, by the time it renames, move the fresh
// lock the first taker just created: it puts that one back (a hard link
// never replaces a lock created meanwhile) and lock then refuses.
func (m *mailbox) takeStale(root *os.Root, fi os.FileInfo, age time.Duration, pid int, dead bool) {
	aside := MailboxLockName + ".stale-" + m.tok
	if err := mbx.RenameFile(root, MailboxLockName, aside); err != nil {
		return
	}
	if afi, err := root.Lstat(aside); err == nil && !os.SameFile(fi, afi) {
		_ = root.Link(aside, MailboxLockName)
		_ = mbx.RemoveFile(root, aside)
		return
	}
	_ = mbx.RemoveFile(root, aside)
	m.log.Warn("rpengine: took over a stale mailbox lock", "file", m.abs(MailboxLockName), "age", age.Round(time.Millisecond),
		"pid", pid, "processGone", dead)
}

// heartbeat refreshes the lock's mtime and checks that it is still ours.
func (m *mailbox) heartbeat(root *os.Root) error {
	b, err := mbx.ReadRegular(root, MailboxLockName, 4096)
	var held lockInfo
	if err == nil {
		err = json.Unmarshal(b, &held)
	}
	if err != nil || held.Token != m.tok {
		if err == nil {
			err = fmt.Errorf("%w: pid %d on %q took it over", ErrMailboxLocked, held.PID, held.Host)
		}
		return m.fail("lock", MailboxLockName, err)
	}
	now := time.Now()
	if err := root.Chtimes(MailboxLockName, now, now); err != nil {
		return m.fail("lock", MailboxLockName, err)
	}
	return nil
}

// tick is one poll: folder check, heartbeat, inbound messages.
func (m *mailbox) tick() error {
	if err := m.checkFolder(); err != nil || m.broken != "" {
		return err
	}
	root := m.root.Load()
	if time.Since(m.beat) >= m.o.LockStale/4 {
		if err := m.heartbeat(root); err != nil {
			if errors.Is(err, ErrMailboxLocked) {
				m.endSession(err)
				return err
			}
			m.beatErr.fail(m.log, err.Error())
		} else {
			m.beatErr.ok(m.log)
		}
		m.beat = time.Now()
	}
	m.retryAcks()
	m.poll(root)
	return nil
}

// retryAcks writes again the acks whose write failed.
func (m *mailbox) retryAcks() {
	m.wmu.Lock()
	msgs := m.retry
	m.retry = nil
	m.wmu.Unlock()
	for i, b := range msgs {
		if err := m.write(b); err != nil { // requeues it
			m.wmu.Lock()
			m.retry = append(m.retry, msgs[i+1:]...)
			m.wmu.Unlock()
			return
		}
	}
}

// checkFolder notices a mailbox folder deleted or replaced underneath:
// the session ends (its files are gone) and the layout is created again
// so the engine can reconnect. A setup that fails (a full disk, the
// parent folder gone) is retried at each poll, logged once per reason,
// and nothing is read meanwhile.
func (m *mailbox) checkFolder() error {
	fi, err := os.Lstat(m.o.Dir)
	if m.broken == "" && err == nil && os.SameFile(fi, m.dirInfo) {
		// The inbox swapped for another folder is set up (and
		// checked) again too.
		if in, err := m.root.Load().Lstat(mbx.FromEngine); err == nil && os.SameFile(in, m.inInfo) {
			return nil
		}
	}
	if m.broken == "" {
		m.log.Warn("rpengine: mailbox folder was removed or replaced; creating it again", "dir", m.o.Dir)
	}
	m.endSession(fmt.Errorf("%w: the mailbox folder was removed", ErrConnectionLost))
	clear(m.seen)
	clear(m.bad)
	// Our handle on the old folder goes first: where a folder deleted
	// while open only goes once its last handle closes (Windows without
	// POSIX delete, wine), keeping it would keep the old folder forever.
	m.dropRoot()
	err = m.setup()
	switch {
	case errors.Is(err, ErrMailboxLocked):
		return err
	case err != nil:
		if err.Error() != m.broken {
			m.log.Error("rpengine: cannot recreate the mailbox; retrying at each poll", "reason", err.Error())
		}
		m.broken = err.Error()
	case m.broken != "":
		m.log.Info("rpengine: mailbox recreated", "dir", m.o.Dir)
		m.broken = ""
	}
	return nil
}

// dropRoot closes the handle on the mailbox folder; writes fail until
// setup opens it again.
func (m *mailbox) dropRoot() {
	m.wmu.Lock()
	old := m.root.Swap(nil)
	m.wmu.Unlock()
	if old != nil {
		old.Close()
	}
}

// endSession ends the mailbox's live session, if any.
func (m *mailbox) endSession(err error) {
	c := m.cur
	if c == nil {
		return
	}
	m.cur = nil
	c.closed.Store(true)
	if c.sess != nil {
		c.sess.end(err)
	}
	m.srv.unregister(c, false)
}

// shutdown ends the session and releases the lock. The folder is closed
// once the session's writer has stopped: a write it had begun finishes
// (issue #31: the ack of the last engine message, cut short, was logged
// as an outbox failure at every exit).
func (m *mailbox) shutdown() {
	if c := m.cur; c != nil && c.sess != nil {
		m.endSession(ErrServerClosed)
		<-c.sess.w.done
	}
	m.endSession(ErrServerClosed)
	root := m.root.Load()
	if root == nil {
		return
	}
	if b, err := mbx.ReadRegular(root, MailboxLockName, 4096); err == nil {
		var held lockInfo
		if json.Unmarshal(b, &held) == nil && held.Token == m.tok {
			_ = mbx.RemoveFile(root, MailboxLockName)
		}
	}
	root.Close()
}

// poll reads every new marked engine message, in stem order.
func (m *mailbox) poll(root *os.Root) {
	ready, names, err := mbx.List(root, mbx.FromEngine)
	if f := m.listFault.Load(); f != nil && *f != nil {
		err = *f
	}
	if err != nil {
		m.inbox.fail(m.log, err.Error(), "dir", m.abs(mbx.FromEngine))
		return
	}
	m.inbox.ok(m.log, "dir", m.abs(mbx.FromEngine))
	for stem := range m.seen {
		if !names[stem+mbx.ReadySuffix] {
			delete(m.seen, stem)
		}
	}
	for stem := range m.bad {
		if !names[stem+mbx.ReadySuffix] {
			delete(m.bad, stem)
		}
	}
	for _, e := range ready {
		if m.seen[e.Stem] {
			continue
		}
		name := path.Join(mbx.FromEngine, e.Stem+mbx.JSONSuffix)
		data, err := mbx.ReadRegular(root, name, wire.MaxMessageBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the engine removed it (its acks go after 2 s)
		}
		if err != nil {
			m.seen[e.Stem] = true
			m.log.Warn("rpengine: skipped engine mailbox file", "file", m.abs(name), "reason", peertext.Clip(err.Error(), peertext.LineBytes))
			continue
		}
		h, err := wire.DecodeHeader(data)
		if errors.Is(err, wire.ErrNotJSON) {
			first, ok := m.bad[e.Stem]
			if !ok {
				m.bad[e.Stem] = time.Now()
			}
			if !ok || time.Since(first) < badGrace {
				// Retried on the next polls; later files go on
				// meanwhile: a bad file never delays a good one
				// (issue #16: eight of them held the hello back 8 s).
				continue
			}
		}
		m.seen[e.Stem] = true
		delete(m.bad, e.Stem)
		if err != nil {
			m.log.Warn("rpengine: skipped engine mailbox file", "file", m.abs(name), "reason", peertext.Clip(err.Error(), peertext.LineBytes))
			continue
		}
		if h.MessageID != e.ID {
			m.log.Warn("rpengine: engine mailbox file name and messageId differ", "file", m.abs(name), "messageId", peertext.Clip(h.MessageID, peertext.LogBytes))
		}
		m.touch()
		m.deliver(h, data)
	}
}

func (m *mailbox) touch() {
	m.wmu.Lock()
	m.active = time.Now().Add(m.o.ActiveFor)
	m.wmu.Unlock()
}

// deliver hands one engine message to the session, or starts one.
func (m *mailbox) deliver(h wire.Header, data []byte) {
	if h.Type == wire.TypeHello {
		m.srv.rec.Record(jsonl.In, data)
		m.handshake(h, data)
		return
	}
	c := m.cur
	var sess *session
	if c != nil {
		sess = c.sess
		sess.mu.Lock()
		ended := sess.ended != nil
		sess.mu.Unlock()
		if ended {
			sess = nil
		}
	}
	foreign := sess != nil && h.SessionID != nil && *h.SessionID != sess.info.ID
	if sess == nil || foreign {
		// No session to process it, but the engine deletes its files
		// only once acked: ack it so the folder does not grow.
		m.srv.rec.Record(jsonl.In, data)
		m.log.Debug("rpengine: engine mailbox message outside the live session acked and dropped", "type", peertext.Clip(h.Type, peertext.LogBytes),
			"messageId", peertext.Clip(h.MessageID, peertext.LogBytes))
		if h.Type != wire.TypeAck {
			b, err := wire.Encode(wire.TypeAck, wire.NewID(), "", time.Now(), wire.Ack{AcknowledgedMessageID: h.MessageID})
			if err == nil {
				m.srv.rec.Record(jsonl.Out, b)
				_ = m.write(b) // a failure is retried and logged by write
			}
		}
		return
	}
	// A segment of a reply that already ended (cancelled, failed) is
	// still answered, so that the engine puts the silent placeholder back
	// instead of leaving the sentence on disk.
	orphan := h.Type == typeAudioSegment && (h.RequestID == nil || sess.reply(*h.RequestID) == nil)
	sess.receive(data)
	if orphan {
		c.consumeOrphan(data)
	}
}

func (m *mailbox) handshake(h wire.Header, data []byte) {
	version, err := parseHello(data)
	if err != nil {
		m.log.Warn("rpengine: ignored mailbox hello", "reason", "bad hello: "+peertext.Clip(err.Error(), peertext.LineBytes))
		return
	}
	m.dropUnread(m.root.Load(), "of the previous engine session")
	c := &mailboxConn{m: m}
	if err := m.srv.register(c); err != nil {
		m.log.Warn("rpengine: ignored mailbox hello", "reason", err.Error())
		return
	}
	sess, err := m.srv.attach(c, h.MessageID, version)
	if err != nil {
		m.srv.unregister(c, true)
		return
	}
	c.sess = sess
	if old := m.cur; old != nil {
		// attach superseded and ended it; forget its connection.
		old.closed.Store(true)
		m.srv.unregister(old, false)
	}
	m.cur = c
}

// write publishes one outbound message with a strictly increasing stem.
func (m *mailbox) write(msg []byte) error {
	var id struct {
		MessageID string `json:"messageId"`
		Type      string `json:"type"`
	}
	if err := json.Unmarshal(msg, &id); err != nil || id.MessageID == "" {
		return fmt.Errorf("rpengine: mailbox write: message without messageId")
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	ms := max(time.Now().UnixMilli(), m.last+1)
	stem := mbx.Stem(ms, id.MessageID)
	if err := m.writeLocked(stem, msg); err != nil {
		err = m.fail("write", path.Join(mbx.ToEngine, stem+mbx.JSONSuffix), err)
		if id.Type == wire.TypeAck && len(m.retry) < maxAckRetries {
			// The engine deletes its file only once acked: try again
			// on the next polls rather than leave it forever.
			m.retry = append(m.retry, bytes.Clone(msg)) // the writer reuses msg
		}
		m.outbox.fail(m.log, err.Error(), "dir", m.abs(mbx.ToEngine), "acksToRetry", len(m.retry))
		return err
	}
	m.outbox.ok(m.log, "dir", m.abs(mbx.ToEngine))
	m.last = ms
	m.active = time.Now().Add(m.o.ActiveFor)
	return nil
}

// writeLocked writes one message file; m.wmu must be held.
func (m *mailbox) writeLocked(stem string, msg []byte) error {
	root := m.root.Load()
	if root == nil {
		return errors.New("the mailbox folder is being created again")
	}
	return mbx.Write(root, mbx.ToEngine, stem, msg)
}

// mailboxConn is one session's connection over the mailbox: the
// transport the session sees. A new hello makes a new one.
type mailboxConn struct {
	m      *mailbox
	sess   *session // set by the reader once attached
	closed atomic.Bool
}

func (c *mailboxConn) send(msg []byte) error {
	if c.closed.Load() {
		return errors.New("mailbox session ended")
	}
	return c.m.write(msg)
}

// close ends the connection: nothing more is written for it. A mailbox
// has no close frame; the engine learns of a new session from welcome.
func (c *mailboxConn) close(code int, reason string) {
	if !c.closed.Swap(true) {
		c.m.log.Debug("rpengine: mailbox session closed", "code", code, "reason", reason)
	}
}

func (*mailboxConn) mustAck() bool { return true }

func (c *mailboxConn) welcomeExtra() map[string]any {
	return map[string]any{"peerInstanceId": c.m.peer, "nextAudioSlot": c.m.nextSlot}
}
