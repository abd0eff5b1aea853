package mailbox

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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// LockName is the lock file the server keeps in the mailbox folder while
// it serves it; see ErrLocked.
const LockName = ".gamelink.lock"

// Options are package rpengine's MailboxOptions with their defaults
// applied, and what the game's server gives the transport.
type Options struct {
	Dir, IntegrationID, DisplayName string
	SlotCount                       int
	ActivePoll, IdlePoll, ActiveFor time.Duration
	LockStale                       time.Duration
	InsecureSkipOwnerCheck          bool
	Logger                          *slog.Logger
	// SlotHook, when set, is called after the setup writes each audio
	// slot (tests).
	SlotHook func(slot int)
}

// ErrLocked is the cause of the error Setup returns when another process
// serves the same mailbox folder (alive on this machine, or, where that
// cannot be known, with a lock heartbeat fresher than LockStale), or
// took it over.
var ErrLocked = errors.New("rpengine: mailbox folder is in use by another process")

// ErrNotPrivate is the cause of the *fs.PathError (Op "setup") returned
// when the mailbox folder or one of its sub-folders is owned by another
// user or other users can write into it, unless InsecureSkipOwnerCheck.
var ErrNotPrivate = errors.New("rpengine: mailbox folder is not private to this user")

// Server is the game side of one mailbox folder: the file transport
// (docs/rpengine-protocol.md, "File transport"). Fields marked "reader"
// are used by the serving goroutine only (Setup, then Run).
type Server struct {
	host transport.Host
	o    Options
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
	cur      *conn
	seen     map[string]bool      // stems already handled, pruned to the listing
	bad      map[string]time.Time // unparsable stems: first seen (a racing writer gets a grace period)
	nextSlot int
	beat     time.Time
	dirInfo  os.FileInfo
	inInfo   os.FileInfo // engine-to-integration as set up
	broken   string      // why recreating the folder last failed; "" when set up
	inbox    recurring
	beatErr  recurring

	listFault atomic.Pointer[error] // tests: listing the inbox fails with it
}

// maxAckRetries bounds the acks held for a retry after a failed write,
// and maxAckRetryBytes their bytes (an ack holds the engine's messageId,
// of any length; issue #31).
const (
	maxAckRetries    = 1024
	maxAckRetryBytes = 1 << 20
)

// badGrace is how long an unparsable marked file is retried before it is
// skipped (a writer that marks before it finishes is racing us).
const badGrace = time.Second

// New returns the transport for the folder o.Dir; Setup prepares it.
func New(host transport.Host, o Options) *Server {
	return &Server{host: host, o: o, log: o.Logger, peer: wire.NewID(), tok: wire.NewID(),
		seen: map[string]bool{}, bad: map[string]time.Time{},
		inbox:   recurring{what: "mailbox inbox cannot be read"},
		beatErr: recurring{what: "mailbox lock heartbeat fails"},
		outbox:  recurring{what: "mailbox outbox cannot be written"}}
}

// Setup sets the folder up for the engine, or says what stopped it:
// ErrLocked when another process serves it, a *fs.PathError for a
// file-system failure. After a failure, Close releases what it took.
func (m *Server) Setup() error {
	if err := m.setup(); err != nil {
		return err
	}
	m.log.Info("rpengine: serving mailbox", "dir", m.o.Dir, "peerInstanceId", m.peer)
	if m.o.InsecureSkipOwnerCheck {
		m.log.Warn("rpengine: MailboxOptions.InsecureSkipOwnerCheck is set: the mailbox folder may be another user's or writable by others")
	}
	return nil
}

// Close releases the folder, and the lock if Setup took it, after a
// failed Setup.
func (m *Server) Close() {
	if root := m.root.Load(); root != nil {
		m.release(root)
	}
	m.dropRoot()
}

// FailList makes listing the inbox fail with err (nil: it works again),
// for tests of a lasting condition that root, as CI runs, cannot bring
// about with permissions.
func (m *Server) FailList(err error) { m.listFault.Store(&err) }

// Run serves the folder, set up, until the server closes (nil) or until
// it cannot go on: another process took the folder over, or it cannot be
// set up again. state reports whether the server is closed, and a
// channel closed at its next change, which makes the next poll come at
// once. Run's goroutine is the reader of every session of the folder.
func (m *Server) Run(state func() (closed bool, changed <-chan struct{})) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		closed, ch := state()
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

func (m *Server) abs(name string) string { return filepath.Join(m.o.Dir, filepath.FromSlash(name)) }

func (m *Server) fail(op, name string, err error) error {
	// A file-system failure of the mailbox transport says which operation
	// failed, on which file, and why (a full disk): an *fs.PathError, as
	// the os package's, whose text says where it came from. A failed
	// write leaves no partial message behind and is reported to the
	// caller of the request that wrote it; nothing is silently dropped.
	return fmt.Errorf("rpengine: mailbox %w", &fs.PathError{Op: op, Path: m.abs(name), Err: err})
}

// setup creates the folder layout, takes the lock, cleans what a crashed
// predecessor left half-done, and writes the manifest and every slot.
// A missing folder is built whole first (build); where that fails it is
// created in place, as before.
func (m *Server) setup() error {
	if _, err := os.Lstat(m.o.Dir); !errors.Is(err, fs.ErrNotExist) || m.build() != nil {
		if err := os.Mkdir(m.o.Dir, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return m.fail("setup", "", err)
		}
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
	for _, d := range []string{ToEngine, FromEngine, AudioDir} {
		if err := root.Mkdir(d, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
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
		if d == FromEngine {
			m.inInfo = sub
		}
	}
	if err := m.cleanOutbox(root); err != nil {
		return err
	}
	// The manifest goes before the slots: the engine reads it once, when
	// the player selects the folder (a folder without it is an error the
	// page never retries: issue #33), and opens a slot only to speak into
	// it, after the welcome, which comes once setup is done. It follows
	// cleanOutbox, so a newly connected engine reads nothing of a
	// previous process.
	if err := m.writeManifest(root); err != nil {
		return err
	}
	silent := Silent(SampleRate)
	for i := range m.o.SlotCount {
		name := path.Join(AudioDir, SlotName(i))
		if err := ReplaceFile(root, name, silent); err != nil {
			return m.fail("setup", name, err)
		}
		if err := m.keepLock(root, false); err != nil {
			return err
		}
		if h := m.o.SlotHook; h != nil {
			h(i)
		}
	}
	return m.keepLock(root, true)
}

// build creates the missing mailbox folder whole, so that a player who
// selects it the moment it appears finds its manifest (issue #33): the
// lock, the three folders and the manifest are made in a temporary
// folder beside it, which is then renamed into place. On failure the
// temporary folder is removed; a folder that appeared meanwhile (another
// game's, or the player's) is left alone.
func (m *Server) build() error {
	tmp := filepath.Join(filepath.Dir(m.o.Dir), "."+filepath.Base(m.o.Dir)+TempPrefix+m.tok)
	if err := os.Mkdir(tmp, DirMode); err != nil {
		return err
	}
	root, err := os.OpenRoot(tmp)
	if err == nil {
		err = m.lock(root)
		for _, d := range []string{ToEngine, FromEngine, AudioDir} {
			if err == nil {
				err = root.Mkdir(d, DirMode)
			}
		}
		if err == nil {
			err = m.writeManifest(root)
		}
		root.Close()
	}
	if err == nil {
		err = os.Rename(tmp, m.o.Dir)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
	}
	return err
}

// writeManifest writes manifest.json, replacing any (atomically: the
// engine sees the old one or the new one, never none).
func (m *Server) writeManifest(root *os.Root) error {
	man, _ := json.MarshalIndent(NewManifest(m.o.IntegrationID, m.o.DisplayName, m.o.SlotCount), "", "  ")
	if err := ReplaceFile(root, ManifestName, man); err != nil {
		return m.fail("setup", ManifestName, err)
	}
	return nil
}

// keepLock refreshes the lock during setup when a heartbeat is due, and
// at its end (force): the lock file was written before the slots, and
// writing thousands of them can take longer than LockStale on a slow or
// loaded disk, when another process would take a live holder's lock as
// stale (a second demo did, after a setup of 11 s under load). Only a
// lock taken over fails the setup; another failure is left to the next
// heartbeat, which reports it.
func (m *Server) keepLock(root *os.Root, force bool) error {
	if !force && time.Since(m.beat) < m.o.LockStale/4 {
		return nil
	}
	m.beat = time.Now()
	if err := m.heartbeat(root); errors.Is(err, ErrLocked) {
		return err
	}
	return nil
}

// checkPrivate refuses the folder name (relative to root) when another
// user owns it or can write into it, unless the option allows it.
func (m *Server) checkPrivate(root *os.Root, name string) error {
	if m.o.InsecureSkipOwnerCheck {
		return nil
	}
	f, err := root.Open(name)
	if err != nil {
		return m.fail("setup", name, err)
	}
	defer f.Close()
	if err := CheckPrivate(f); err != nil {
		return m.fail("setup", name, fmt.Errorf("%w: %v (MailboxOptions.InsecureSkipOwnerCheck serves it anyway)", ErrNotPrivate, err))
	}
	return nil
}

// cleanOutbox removes what a crashed writer of ours left in
// integration-to-engine: temporary files and JSON without its marker
// (the engine ignores both), and finds the last stem so stems keep
// increasing across restarts.
func (m *Server) cleanOutbox(root *os.Root) error {
	_, names, err := List(root, ToEngine)
	if err != nil {
		return m.fail("setup", ToEngine, err)
	}
	for n := range names {
		full := path.Join(ToEngine, n)
		if strings.HasPrefix(n, TempPrefix) {
			m.log.Warn("rpengine: removed a partial mailbox file left by a crash", "file", m.abs(full))
			_ = RemoveFile(root, full)
			continue
		}
		stem, ok := strings.CutSuffix(n, JSONSuffix)
		if !ok {
			stem, _ = strings.CutSuffix(n, ReadySuffix)
		}
		ms, _, ok := ParseStem(stem)
		if !ok {
			continue
		}
		if strings.HasSuffix(n, JSONSuffix) && !names[stem+ReadySuffix] {
			m.log.Warn("rpengine: removed an unmarked mailbox message left by a crash", "file", m.abs(full))
			_ = RemoveFile(root, full)
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
func (m *Server) dropUnread(root *os.Root, whose string) {
	ready, _, err := List(root, ToEngine)
	if err != nil || len(ready) == 0 {
		return
	}
	for _, e := range ready {
		_ = Remove(root, ToEngine, e.Stem)
	}
	m.log.Info("rpengine: removed unread mailbox messages "+whose, "count", len(ready), "dir", m.abs(ToEngine))
}

type lockInfo struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Token   string `json:"token"`
	Started string `json:"started"`
}

// lock takes the folder's lock file, or fails with ErrLocked when
// another process holds it: one alive on this machine, or one whose
// liveness cannot be known and whose heartbeat is fresh. A crashed
// holder's lock is taken over.
func (m *Server) lock(root *os.Root) error {
	host, _ := os.Hostname()
	info, _ := json.Marshal(lockInfo{PID: os.Getpid(), Host: host, Token: m.tok, Started: wire.Timestamp(time.Now())})
	for attempt := 0; ; attempt++ {
		f, err := root.OpenFile(LockName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
		if err == nil {
			_, err = f.Write(info)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = RemoveFile(root, LockName)
				return m.fail("lock", LockName, err)
			}
			holding.Store(m.tok, true)
			return nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt >= 2 {
			return m.fail("lock", LockName, err)
		}
		fi, err := root.Lstat(LockName)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return m.fail("lock", LockName, err)
		}
		age := time.Since(fi.ModTime())
		var held lockInfo
		b, err := ReadRegular(root, LockName, 4096)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			// Unreadable for now (on Windows, a lock file being removed
			// stays until its last handle closes): not proof of another
			// holder; setup is tried again.
			return m.fail("lock", LockName, err)
		}
		_ = json.Unmarshal(b, &held)
		if held.Token == m.tok {
			// Ours: setup runs again after the folder's contents were
			// removed, and the hidden lock file may have stayed.
			now := time.Now()
			if err := root.Chtimes(LockName, now, now); err != nil {
				return m.fail("lock", LockName, err)
			}
			return nil
		}
		// A holder on this machine is alive or not, whatever the file's
		// times say (issue #31: a lock dated 1970, or a clock jump, let a
		// second game take a live holder's folder); a crashed one's lock
		// is taken at once. Only when liveness cannot be known (another
		// machine, no pid) does the heartbeat's age decide.
		live, known := holderLive(held, host)
		switch {
		case !fi.Mode().IsRegular():
		case known && live:
			return m.fail("lock", LockName, fmt.Errorf("%w (pid %d on this machine, %q, is running)", ErrLocked, held.PID, host))
		case !known && age < m.o.LockStale:
			return m.fail("lock", LockName, fmt.Errorf("%w (pid %d on %q, heartbeat %v ago; a crashed holder's lock goes stale after %v)",
				ErrLocked, held.PID, held.Host, age.Round(time.Millisecond), m.o.LockStale))
		}
		m.takeStale(root, fi, age, held.PID, known && !live)
	}
}

// holding holds the lock tokens of this process's servers, from lock
// until release: a lock naming this process is live exactly when its
// token is here.
var holding sync.Map

// holderLive reports whether the holder of a lock is alive, and known
// false when that cannot be told (another machine, no pid, or a platform
// that cannot probe processes).
func holderLive(held lockInfo, host string) (live, known bool) {
	switch {
	case held.PID <= 0 || host == "" || held.Host != host:
		return false, false
	case held.PID == os.Getpid():
		_, live = holding.Load(held.Token)
		return live, true
	}
	return processAlive(held.PID)
}

// takeStale moves the stale lock fi aside under a unique name (one taker
// wins the rename) so that lock can create its own. A second taker that
// judged the same stale lock may, by the time it renames, move the fresh
// lock the first taker just created: it puts that one back (a hard link
// never replaces a lock created meanwhile) and lock then refuses.
func (m *Server) takeStale(root *os.Root, fi os.FileInfo, age time.Duration, pid int, gone bool) {
	aside := LockName + ".stale-" + m.tok
	if err := RenameFile(root, LockName, aside); err != nil {
		return
	}
	if afi, err := root.Lstat(aside); err == nil && !os.SameFile(fi, afi) {
		_ = root.Link(aside, LockName)
		_ = RemoveFile(root, aside)
		return
	}
	_ = RemoveFile(root, aside)
	m.log.Warn("rpengine: took over a stale mailbox lock", "file", m.abs(LockName), "age", age.Round(time.Millisecond),
		"pid", pid, "processGone", gone)
}

// heartbeat refreshes the lock's mtime and checks that it is still ours.
func (m *Server) heartbeat(root *os.Root) error {
	b, err := ReadRegular(root, LockName, 4096)
	var held lockInfo
	if err == nil {
		err = json.Unmarshal(b, &held)
	}
	if err != nil || held.Token != m.tok {
		if err == nil {
			err = fmt.Errorf("%w: pid %d on %q took it over", ErrLocked, held.PID, held.Host)
		}
		return m.fail("lock", LockName, err)
	}
	now := time.Now()
	if err := root.Chtimes(LockName, now, now); err != nil {
		return m.fail("lock", LockName, err)
	}
	return nil
}

// tick is one poll: folder check, heartbeat, inbound messages.
func (m *Server) tick() error {
	if err := m.checkFolder(); err != nil || m.broken != "" {
		return err
	}
	root := m.root.Load()
	if time.Since(m.beat) >= m.o.LockStale/4 {
		if err := m.heartbeat(root); err != nil {
			if errors.Is(err, ErrLocked) {
				m.endSession(err, nil)
				return err
			}
			m.beatErr.fail(err.Error()).to(m.log)
		} else {
			m.beatErr.ok().to(m.log)
		}
		m.beat = time.Now()
	}
	m.retryAcks()
	m.poll(root)
	return nil
}

// retryAcks writes again the acks whose write failed.
func (m *Server) retryAcks() {
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
func (m *Server) checkFolder() error {
	fi, err := os.Lstat(m.o.Dir)
	if m.broken == "" && err == nil && os.SameFile(fi, m.dirInfo) {
		// The inbox swapped for another folder is set up (and
		// checked) again too.
		if in, err := m.root.Load().Lstat(FromEngine); err == nil && os.SameFile(in, m.inInfo) {
			return nil
		}
	}
	if m.broken == "" {
		m.log.Warn("rpengine: mailbox folder was removed or replaced; creating it again", "dir", m.o.Dir)
	}
	m.endSession(nil, errors.New("the mailbox folder was removed"))
	clear(m.seen)
	clear(m.bad)
	// Our handle on the old folder goes first: where a folder deleted
	// while open only goes once its last handle closes (Windows without
	// POSIX delete, wine), keeping it would keep the old folder forever.
	m.dropRoot()
	err = m.setup()
	switch {
	case errors.Is(err, ErrLocked):
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
func (m *Server) dropRoot() {
	m.wmu.Lock()
	old := m.root.Swap(nil)
	m.wmu.Unlock()
	if old != nil {
		old.Close()
	}
}

// endSession ends the mailbox's live session, if any, with err (or as
// lost, because of cause, when err is nil).
func (m *Server) endSession(err, cause error) {
	c := m.cur
	if c == nil {
		return
	}
	m.cur = nil
	c.closed.Store(true)
	switch {
	case err != nil:
		c.sess.End(err)
	default:
		c.sess.Lost(cause)
	}
	m.host.Unregister(c, false)
}

// Shutdown ends the session with err and releases the lock. The
// connection writes until the session's writer has stopped, so that what
// the session processed is acknowledged and every segment it read given
// back (issue #31: 4 to 5 messages were left unacknowledged), and the
// folder is closed only then (a write cut short was logged as an outbox
// failure at every exit).
func (m *Server) Shutdown(err error) {
	if c := m.cur; c != nil {
		m.cur = nil
		c.sess.End(err)
		<-c.sess.Done()
		c.closed.Store(true)
		m.host.Unregister(c, false)
	}
	root := m.root.Load()
	if root == nil {
		holding.Delete(m.tok)
		return
	}
	m.release(root)
	root.Close()
}

// release removes the lock file if it is still ours, and forgets its
// token: from then on this process no longer holds the folder.
func (m *Server) release(root *os.Root) {
	if b, err := ReadRegular(root, LockName, 4096); err == nil {
		var held lockInfo
		if json.Unmarshal(b, &held) == nil && held.Token == m.tok {
			_ = RemoveFile(root, LockName)
		}
	}
	holding.Delete(m.tok)
}

// poll reads every new marked engine message, in stem order.
func (m *Server) poll(root *os.Root) {
	ready, names, err := List(root, FromEngine)
	if f := m.listFault.Load(); f != nil && *f != nil {
		err = *f
	}
	if err != nil {
		m.inbox.fail(err.Error(), "dir", m.abs(FromEngine)).to(m.log)
		return
	}
	m.inbox.ok("dir", m.abs(FromEngine)).to(m.log)
	for stem := range m.seen {
		if !names[stem+ReadySuffix] {
			delete(m.seen, stem)
		}
	}
	for stem := range m.bad {
		if !names[stem+ReadySuffix] {
			delete(m.bad, stem)
		}
	}
	for _, e := range ready {
		if m.seen[e.Stem] {
			continue
		}
		name := path.Join(FromEngine, e.Stem+JSONSuffix)
		data, err := ReadRegular(root, name, wire.MaxMessageBytes)
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

func (m *Server) touch() {
	m.wmu.Lock()
	m.active = time.Now().Add(m.o.ActiveFor)
	m.wmu.Unlock()
}

// deliver hands one engine message to the session, or starts one.
func (m *Server) deliver(h wire.Header, data []byte) {
	if h.Type == wire.TypeHello {
		m.host.Record(true, data)
		m.handshake(data)
		return
	}
	var sess transport.Session
	if c := m.cur; c != nil && !c.sess.Ended() {
		sess = c.sess
	}
	if sess == nil || h.SessionID != nil && *h.SessionID != sess.ID() {
		// No session to process it, but the engine deletes its files
		// only once acked: ack it so the folder does not grow.
		m.host.Record(true, data)
		m.log.Debug("rpengine: engine mailbox message outside the live session acked and dropped", "type", peertext.Clip(h.Type, peertext.LogBytes),
			"messageId", peertext.Clip(h.MessageID, peertext.LogBytes))
		if h.Type != wire.TypeAck {
			b, err := wire.Encode(wire.TypeAck, wire.NewID(), "", time.Now(), wire.Ack{AcknowledgedMessageID: h.MessageID})
			if err == nil {
				m.host.Record(false, b)
				_ = m.write(b) // a failure is retried and logged by write
			}
		}
		return
	}
	in := session.Inbound{Msg: data}
	if h.Type == typeAudioSegment {
		var slot int
		in.File, slot = slotReader{root: m.root.Load(), count: m.o.SlotCount, peer: m.peer, log: m.log}.readSegment(data)
		m.nextSlot = max(m.nextSlot, slot+1)
	}
	sess.Receive(in)
}

func (m *Server) handshake(data []byte) {
	id, version, err := session.ParseHello(data)
	if err != nil {
		m.log.Warn("rpengine: ignored mailbox hello", "reason", "bad hello: "+peertext.Clip(err.Error(), peertext.LineBytes))
		return
	}
	m.dropUnread(m.root.Load(), "of the previous engine session")
	c := &conn{m: m}
	if err := m.host.Register(c); err != nil {
		m.log.Warn("rpengine: ignored mailbox hello", "reason", err.Error())
		return
	}
	sess, err := m.host.Attach(c, transport.Hello{MessageID: id, ClientVersion: version, MustAck: true, WholeSegments: true,
		WelcomeExtra: map[string]any{"peerInstanceId": m.peer, "nextAudioSlot": m.nextSlot}})
	if err != nil {
		m.host.Unregister(c, true)
		return
	}
	c.sess = sess
	if old := m.cur; old != nil {
		// Attach superseded and ended it; forget its connection.
		old.closed.Store(true)
		m.host.Unregister(old, false)
	}
	m.cur = c
}

// write publishes one outbound message with a strictly increasing stem.
func (m *Server) write(msg []byte) error {
	var id struct {
		MessageID string `json:"messageId"`
		Type      string `json:"type"`
	}
	if err := json.Unmarshal(msg, &id); err != nil || id.MessageID == "" {
		return fmt.Errorf("rpengine: mailbox write: message without messageId")
	}
	m.wmu.Lock()
	ms := max(time.Now().UnixMilli(), m.last+1)
	stem := Stem(ms, id.MessageID)
	if err := m.writeLocked(stem, msg); err != nil {
		err = m.fail("write", path.Join(ToEngine, stem+JSONSuffix), err)
		if id.Type == wire.TypeAck && len(m.retry) < maxAckRetries && held(m.retry)+len(msg) <= maxAckRetryBytes {
			// The engine deletes its file only once acked: try again
			// on the next polls rather than leave it forever.
			m.retry = append(m.retry, bytes.Clone(msg)) // the writer reuses msg
		}
		line := m.outbox.fail(err.Error(), "dir", m.abs(ToEngine), "acksToRetry", len(m.retry))
		m.wmu.Unlock()
		line.to(m.log) // the game's Logger, with no lock held (issue #30)
		return err
	}
	line := m.outbox.ok("dir", m.abs(ToEngine))
	m.last = ms
	m.active = time.Now().Add(m.o.ActiveFor)
	m.wmu.Unlock()
	line.to(m.log)
	return nil
}

// held returns the bytes of msgs.
func held(msgs [][]byte) (n int) {
	for _, b := range msgs {
		n += len(b)
	}
	return n
}

// writeLocked writes one message file; m.wmu must be held.
func (m *Server) writeLocked(stem string, msg []byte) error {
	root := m.root.Load()
	if root == nil {
		return errors.New("the mailbox folder is being created again")
	}
	return Write(root, ToEngine, stem, msg)
}

// conn is one session's connection over the mailbox: the transport the
// session sees. A new hello makes a new one.
type conn struct {
	m      *Server
	sess   transport.Session // set by the reader once attached
	closed atomic.Bool
}

// Send writes one message into the outbox.
func (c *conn) Send(msg []byte) error {
	if c.closed.Load() {
		return errors.New("mailbox session ended")
	}
	return c.m.write(msg)
}

// Close ends the connection: nothing more is written for it. A mailbox
// has no close frame; the engine learns of a new session from welcome.
// The server's shutdown (CloseGoingAway) is the exception: the session's
// writer goes on writing what the session processed, and Shutdown closes
// the connection once the session is done (issue #31).
func (c *conn) Close(code int, reason string) {
	if code == transport.CloseGoingAway {
		return
	}
	if !c.closed.Swap(true) {
		c.m.log.Debug("rpengine: mailbox session closed", "code", code, "reason", reason)
	}
}
